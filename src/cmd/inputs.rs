//! The inputs of every reading command: a dataset folder as it is, raw inputs through a
//! temporary dataset; the pipeline request the flags describe; the diagnostics, the
//! accounting and the no-capture error told on stderr.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;

use crate::cli::InputArgs;
use crate::progress::Bar;
use mcpsift::ingest::run::IngestOptions;
use mcpsift::model::capture::{ChunkSink, ModelOptions};
use mcpsift::model::limits::default_limits;
use mcpsift::dataset::manifest::options_fingerprint;
use mcpsift::dataset::{Dataset, DatasetSource, WriteOptions, Writer, is_dataset};
use mcpsift::model::loaded::LoadedCapture;
use mcpsift::pipeline::{Loaded, Request};
use mcpsift::report::stats::render_capture;

/// A run's captures and tables, read from a dataset (given, or written for raw inputs into a
/// temporary one): memory holds what a query keeps, not the input.
pub struct Audit {
    pub captures: Vec<LoadedCapture>,
    pub source: DatasetSource,
    _temp: Option<TempDataset>,
}

/// A dataset folder removed when the command ends.
struct TempDataset(PathBuf);

impl TempDataset {
    fn new() -> anyhow::Result<Self> {
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("mcpsift-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create a temporary dataset", dir.display()))?;
        Ok(TempDataset(dir))
    }
}

impl Drop for TempDataset {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens what the flags name for reading: a dataset folder as it is, raw inputs through a
/// temporary dataset. Prints diagnostics (unless quiet) and the accounting (with --stats).
pub fn open_inputs(args: &InputArgs) -> anyhow::Result<Audit> {
    let request = request(args, None)?;
    let datasets: Vec<&PathBuf> = args.paths.iter().filter(|p| is_dataset(p)).collect();
    let (dir, temp, symlink_loops) = match datasets.as_slice() {
        [] => {
            let temp = TempDataset::new()?;
            let writer = Writer::open(&temp.0, options_fingerprint(&request.ingest, &request.model), WriteOptions { prune: false, incremental: false })?;
            let stored = mcpsift::pipeline::run_into(&request, &Bar::stderr(args.quiet), &writer)?;
            writer.finish(&stored, &request.limits)?;
            (temp.0.clone(), Some(temp), stored.symlink_loops)
        }
        [dir] if args.paths.len() == 1 && args.pair.is_empty() => ((*dir).clone(), None, Vec::new()),
        [dir, ..] => anyhow::bail!("{}: a dataset must be the only input (give raw captures, or one dataset folder)", dir.display()),
    };
    crate::allocator_for_queries();
    let dataset = Dataset::open(&dir)?;
    let captures = dataset.captures();
    tell(args, &captures, &symlink_loops)?;
    Ok(Audit { captures, source: dataset.source(&request.limits)?, _temp: temp })
}

/// Loads the inputs into memory, printing diagnostics (unless quiet) and the accounting (with
/// --stats).
pub fn load_inputs(args: &InputArgs) -> anyhow::Result<Loaded> {
    let loaded = mcpsift::pipeline::run(&request(args, None)?, &Bar::stderr(args.quiet))?;
    tell(args, &loaded.captures, &loaded.symlink_loops)?;
    Ok(loaded)
}

/// The pipeline request the flags describe.
pub fn request(args: &InputArgs, chunk_sink: Option<std::sync::Arc<dyn ChunkSink>>) -> anyhow::Result<Request> {
    let ingest = IngestOptions { max_frame_bytes: args.max_frame_bytes.max(1), forced_format: args.input_format, ports: args.port.clone(), hash_files: false };
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

/// Prints symlink loops and diagnostics (unless quiet) and the accounting (with --stats); an
/// error when no input is a capture ([`require_captures`]).
pub fn tell(args: &InputArgs, captures: &[LoadedCapture], symlink_loops: &[PathBuf]) -> anyhow::Result<()> {
    tell_only(args, captures, symlink_loops);
    require_captures(args, captures, false)
}

/// An error when no input is a capture, unless `--allow-empty` (or `held`: a dataset holds
/// captures of inputs not read again): an audit pointed at the wrong folder must not pass as
/// clean.
pub fn require_captures(args: &InputArgs, captures: &[LoadedCapture], held: bool) -> anyhow::Result<()> {
    if held || args.allow_empty || captures.iter().any(LoadedCapture::is_capture) {
        return Ok(());
    }
    anyhow::bail!("{}", no_capture_message(args, captures))
}

/// Prints symlink loops and diagnostics (unless quiet) and the accounting (with --stats).
pub fn tell_only(args: &InputArgs, captures: &[LoadedCapture], symlink_loops: &[PathBuf]) {
    if !args.quiet {
        for link in symlink_loops {
            eprintln!("mcpsift: {}: symlink loop (leads back to a folder being read): not followed", link.display());
        }
    }
    // Expected, harmless skips are summarised per reason; everything else gets its own line.
    const SUMMARISED: &[(&str, &str)] = &[
        ("unrecognized_format", "file(s) that are not captures or logs"),
        ("source_file", "program source file(s)"),
        ("non_http_stream", "TCP stream(s) that never carried HTTP"),
        ("tls_stream", "TLS-encrypted stream(s) (messages unreadable)"),
        ("http2_stream", "HTTP/2 stream(s) (not supported)"),
        ("non_tcp_packet", "non-TCP packet region(s)"),
        ("port_filtered", "packet region(s) outside --port"),
    ];
    let mut summarised = vec![0usize; SUMMARISED.len()];
    for c in captures {
        for d in &c.rows.accounting.diagnostics {
            match SUMMARISED.iter().position(|(r, _)| *r == d.reason) {
                Some(i) if !args.stats => summarised[i] += 1,
                _ if !args.quiet => eprintln!("mcpsift: {}: byte {}: {}: {}", d.file, d.offset, d.reason, d.detail),
                _ => {}
            }
        }
        if args.stats {
            eprint!("{}", render_capture(c));
        }
    }
    for (n, (_, what)) in summarised.iter().zip(SUMMARISED) {
        if *n > 0 && !args.quiet {
            eprintln!("mcpsift: skipped {n} {what} (--stats lists them)");
        }
    }
}

/// What an audit that found no capture says: the paths given, then each file read and why it
/// was skipped.
fn no_capture_message(args: &InputArgs, captures: &[LoadedCapture]) -> String {
    let mut given: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    given.extend(args.pair.iter().map(|p| format!("--pair {}:{}", p.c2s.display(), p.s2c.display())));
    let mut text = format!("no capture or log recognised in {}", given.join(" "));
    let files: Vec<_> = captures.iter().flat_map(|c| c.files.iter().map(move |f| (c, f))).collect();
    if files.is_empty() {
        text.push_str(": no files there");
    } else {
        text.push_str(&format!(": {} file(s) read, none of them MCP traffic mcpsift reads", files.len()));
        const SHOWN: usize = 20;
        for (c, f) in files.iter().take(SHOWN) {
            let why: Vec<String> = c.rows.accounting.diagnostics.iter().filter(|d| d.file == f.path).map(|d| format!("{}: {}", d.reason, d.detail)).collect();
            let why = match (why.is_empty(), &f.error) {
                (_, Some(e)) => e.clone(),
                (true, None) => f.format.as_str().to_string(),
                (false, None) => why.join("; "),
            };
            text.push_str(&format!("\n  {}: {why}", f.path));
        }
        if files.len() > SHOWN {
            text.push_str(&format!("\n  ... and {} more (--stats lists them)", files.len() - SHOWN));
        }
    }
    text.push_str("\n(--allow-empty: carry on with no captures; --input-format FORMAT: read the files as FORMAT)");
    text
}
