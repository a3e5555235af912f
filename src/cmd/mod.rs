//! One module per subcommand; each parses nothing, calls the stages, prints.

pub mod check;
pub mod query;
pub mod report;
pub mod tables;

use anyhow::Context as _;

use crate::cli::InputArgs;
use crate::progress::Bar;
use mcpsift::ingest::run::IngestOptions;
use mcpsift::model::capture::{ChunkSink, ModelOptions};
use mcpsift::model::limits::default_limits;
use mcpsift::pipeline::{Loaded, Request};
use mcpsift::report::stats::render_capture;

/// Loads the inputs, printing diagnostics (unless quiet) and the accounting (with --stats).
pub fn load_inputs(args: &InputArgs) -> anyhow::Result<Loaded> {
    load_inputs_streaming(args, None)
}

/// The pipeline request the flags describe.
fn request(args: &InputArgs, chunk_sink: Option<std::sync::Arc<dyn ChunkSink>>) -> anyhow::Result<Request> {
    let ingest = IngestOptions { max_frame_bytes: args.max_frame_bytes.max(1), forced_format: args.input_format, ports: args.port.clone() };
    let mut limits = default_limits();
    for limit in &args.limit {
        limit.apply(&mut limits);
    }
    let mut model = ModelOptions { chunk_sink, ..ModelOptions::default() };
    for pattern in &args.truncation_marker {
        model.truncation_markers.push(regex::Regex::new(pattern).with_context(|| format!("--truncation-marker {pattern}"))?);
    }
    Ok(Request { paths: args.paths.clone(), pairs: args.pair.clone(), ingest, model, limits, jobs: args.jobs.map(usize::from) })
}

/// [`load_inputs`], handing finished `frames`/`calls` chunks to `chunk_sink` when given.
pub fn load_inputs_streaming(args: &InputArgs, chunk_sink: Option<std::sync::Arc<dyn ChunkSink>>) -> anyhow::Result<Loaded> {
    let loaded = mcpsift::pipeline::run(&request(args, chunk_sink)?, &Bar::stderr(args.quiet))?;
    if !args.quiet {
        for link in &loaded.symlink_loops {
            eprintln!("mcpsift: {}: symlink loop (leads back to a folder being read): not followed", link.display());
        }
    }
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
        for d in &c.rows.accounting.diagnostics {
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
