//! One module per subcommand; each parses nothing, calls the stages, prints.

pub mod check;
pub mod query;
pub mod report;
pub mod tables;

use anyhow::Context as _;

use crate::cli::InputArgs;
use mcpsift::ingest::detect::Format;
use mcpsift::ingest::run::IngestOptions;
use mcpsift::load::Loaded;
use mcpsift::model::capture::ModelOptions;
use mcpsift::model::limits::{LimitOverride, default_limits};
use mcpsift::report::stats::render_capture;

/// Loads the inputs, printing diagnostics (unless quiet) and the accounting (with --stats).
pub fn load_inputs(args: &InputArgs) -> anyhow::Result<Loaded> {
    load_inputs_streaming(args, None)
}

/// [`load_inputs`], handing finished `frames`/`calls` chunks to `chunk_sink` when given.
pub fn load_inputs_streaming(args: &InputArgs, chunk_sink: Option<std::sync::Arc<dyn mcpsift::model::capture::ChunkSink>>) -> anyhow::Result<Loaded> {
    let forced_format = match &args.input_format {
        Some(name) => Some(Format::from_name(name).with_context(|| format!("--input-format {name}: expected stdio, hostlog, jsonl or pcap"))?),
        None => None,
    };
    let opts = IngestOptions { max_frame_bytes: args.max_frame_bytes.max(1), forced_format, ports: args.port.clone() };
    let mut limits = default_limits();
    for spec in &args.limit {
        spec.parse::<LimitOverride>().map_err(|e| anyhow::anyhow!("--limit {spec}: {e}"))?.apply(&mut limits);
    }
    let mut model_opts = ModelOptions { chunk_sink, ..ModelOptions::default() };
    for pattern in &args.truncation_marker {
        model_opts.truncation_markers.push(regex::Regex::new(pattern).with_context(|| format!("--truncation-marker {pattern}"))?);
    }
    let loaded = mcpsift::progress::load_with_progress(&args.paths, &args.pair, &opts, &model_opts, &limits, args.quiet)?;
    // Expected, harmless skips are summarised per reason; everything else gets its own line.
    const SUMMARISED: &[(&str, &str)] = &[
        ("unrecognized_format", "file(s) that are not captures or logs"),
        ("non_http_stream", "TCP stream(s) that never carried HTTP"),
        ("tls_stream", "TLS-encrypted stream(s) (messages unreadable)"),
        ("http2_stream", "HTTP/2 stream(s) (not supported)"),
        ("non_tcp_packet", "non-TCP packet region(s)"),
        ("port_filtered", "packet region(s) outside --port"),
    ];
    let mut summarised = vec![0usize; SUMMARISED.len()];
    for c in &loaded.captures {
        for d in &c.rows.diagnostics {
            match SUMMARISED.iter().position(|(r, _)| *r == d.reason) {
                Some(i) if !args.stats => summarised[i] += 1,
                _ if !args.quiet => eprintln!("mcpsift: {}: byte {}: {}: {}", d.file, d.offset, d.reason, d.detail),
                _ => {}
            }
        }
        if args.stats {
            eprint!("{}", render_capture(&c.name, &c.files, &c.rows));
        }
    }
    for (n, (_, what)) in summarised.iter().zip(SUMMARISED) {
        if *n > 0 && !args.quiet {
            eprintln!("mcpsift: skipped {n} {what} (--stats lists them)");
        }
    }
    Ok(loaded)
}
