//! One module per subcommand; each parses nothing, calls the stages, prints.

pub mod check;
pub mod query;
pub mod tables;

use anyhow::Context as _;

use crate::cli::InputArgs;
use mcpsift::ingest::detect::Format;
use mcpsift::ingest::run::IngestOptions;
use mcpsift::load::{Loaded, load};
use mcpsift::model::capture::ModelOptions;
use mcpsift::model::tables::{apply_limit_override, default_limits};
use mcpsift::report::stats::render_capture;

/// Loads the inputs, printing diagnostics (unless quiet) and the accounting (with --stats).
pub fn load_inputs(args: &InputArgs) -> anyhow::Result<Loaded> {
    let forced_format = match &args.input_format {
        Some(name) => Some(Format::from_name(name).with_context(|| format!("--input-format {name}: expected stdio, hostlog, jsonl or pcap"))?),
        None => None,
    };
    let opts = IngestOptions { max_frame_bytes: args.max_frame_bytes.max(1), forced_format, ports: args.port.clone() };
    let mut limits = default_limits();
    for spec in &args.limit {
        apply_limit_override(&mut limits, spec).map_err(anyhow::Error::msg)?;
    }
    let mut model_opts = ModelOptions::default();
    for pattern in &args.truncation_marker {
        model_opts.truncation_markers.push(regex::Regex::new(pattern).with_context(|| format!("--truncation-marker {pattern}"))?);
    }
    let loaded = load(&args.paths, &args.pair, &opts, &model_opts, &limits)?;
    let mut unrecognized = 0usize;
    for c in &loaded.captures {
        for d in &c.rows.diagnostics {
            if d.reason == "unrecognized_format" && !args.stats {
                unrecognized += 1;
            } else if !args.quiet {
                eprintln!("mcpsift: {}: byte {}: {}: {}", d.file, d.offset, d.reason, d.detail);
            }
        }
        if args.stats {
            eprint!("{}", render_capture(&c.name, &c.files, &c.rows));
        }
    }
    if unrecognized > 0 && !args.quiet {
        eprintln!("mcpsift: skipped {unrecognized} file(s) that are not captures or logs (--stats lists them)");
    }
    Ok(loaded)
}
