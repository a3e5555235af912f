//! Runs ingest and model over command-line paths: one capture per file or stdio pair, in
//! parallel, then the tables.

use std::path::PathBuf;

use rayon::prelude::*;

use crate::ingest::discover::{CaptureInput, DiscoverError, discover};
use crate::ingest::frame::{Event, Frame, Sink, Skip};
use crate::ingest::run::{FileReport, IngestOptions, ingest_capture};
use crate::model::capture::{CaptureModel, CaptureRows, ModelOptions};
use crate::model::tables::{ReaderLimit, Tables, build_tables};

/// One capture's result.
pub struct LoadedCapture {
    pub name: String,
    pub files: Vec<FileReport>,
    pub rows: CaptureRows,
}

/// Everything a run loaded.
pub struct Loaded {
    pub captures: Vec<LoadedCapture>,
    pub tables: Tables,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error("no input paths given")]
    NoInputs,
    #[error("building tables: {0}")]
    Tables(#[from] polars::prelude::PolarsError),
}

/// Reads one capture into a sink (the model, possibly wrapped, e.g. by a progress counter).
pub type IngestFn<'a> = dyn Fn(&CaptureInput, &mut dyn Sink) -> Vec<FileReport> + Sync + 'a;

/// Ingests one capture into rows. Reading (ingest) runs on its own thread and hands batches
/// to the model over a bounded channel, so reading, parsing and row building overlap.
pub fn load_capture(input: &CaptureInput, ingest: &IngestFn<'_>, model_opts: &std::sync::Arc<ModelOptions>) -> LoadedCapture {
    let name = input.name().to_string();
    let mut model = CaptureModel::new(&name, &default_session(input), std::sync::Arc::clone(model_opts));
    let files = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<SinkItem>>(CHANNEL_BATCHES);
        let reader = scope.spawn(move || {
            let mut sink = ChannelSink { tx, batch: Vec::new(), batch_bytes: 0 };
            let files = ingest(input, &mut sink);
            sink.send();
            files
        });
        for batch in rx {
            for item in batch {
                item.apply(&mut model);
            }
        }
        reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    LoadedCapture { name, files, rows: model.finish() }
}

/// Batches in flight between the reading thread and the model (memory: this many batches).
const CHANNEL_BATCHES: usize = 1;
/// A batch is sent when it holds this many payload bytes or items.
const CHANNEL_BATCH_BYTES: usize = 2 << 20;
const CHANNEL_BATCH_ITEMS: usize = 2048;

/// One sink call, carried from the reading thread to the model.
enum SinkItem {
    Frame(Frame),
    Event(Event),
    Skip(Skip),
    Framing(crate::ingest::frame::FramingCategory, u64),
    BeginFile(String),
}

impl SinkItem {
    fn apply(self, sink: &mut dyn Sink) {
        match self {
            SinkItem::Frame(f) => sink.frame(f),
            SinkItem::Event(e) => sink.event(e),
            SinkItem::Skip(s) => sink.skip(s),
            SinkItem::Framing(category, bytes) => sink.framing(category, bytes),
            SinkItem::BeginFile(file) => sink.begin_file(&file),
        }
    }
}

/// The reading thread's sink: batches calls and sends them to the model.
struct ChannelSink {
    tx: std::sync::mpsc::SyncSender<Vec<SinkItem>>,
    batch: Vec<SinkItem>,
    batch_bytes: usize,
}

impl ChannelSink {
    fn push(&mut self, item: SinkItem, bytes: usize) {
        self.batch.push(item);
        self.batch_bytes += bytes;
        if self.batch_bytes >= CHANNEL_BATCH_BYTES || self.batch.len() >= CHANNEL_BATCH_ITEMS {
            self.send();
        }
    }

    fn send(&mut self) {
        if !self.batch.is_empty() {
            self.batch_bytes = 0;
            // The model only stops receiving when it is gone; then there is nobody to tell.
            let _ = self.tx.send(std::mem::take(&mut self.batch));
        }
    }
}

impl Sink for ChannelSink {
    fn frame(&mut self, frame: Frame) {
        let bytes = frame.payload.len();
        self.push(SinkItem::Frame(frame), bytes);
    }
    fn event(&mut self, event: Event) {
        self.push(SinkItem::Event(event), 0);
    }
    fn skip(&mut self, skip: Skip) {
        self.push(SinkItem::Skip(skip), 0);
    }
    fn framing(&mut self, category: crate::ingest::frame::FramingCategory, bytes: u64) {
        self.push(SinkItem::Framing(category, bytes), 0);
    }
    fn begin_file(&mut self, file: &str) {
        self.push(SinkItem::BeginFile(file.to_string()), 0);
    }
}

fn default_session(input: &CaptureInput) -> String {
    match input {
        CaptureInput::File { path, .. } | CaptureInput::StdioPair { c2s: path, .. } => {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "-".into())
        }
    }
}

/// Discovers, ingests and tabulates `paths` (plus explicit `pairs`).
pub fn load(paths: &[PathBuf], pairs: &[String], opts: &IngestOptions, model_opts: &ModelOptions, limits: &[ReaderLimit]) -> Result<Loaded, LoadError> {
    load_with(paths, pairs, model_opts, limits, &|input, sink| ingest_capture(input, opts, sink))
}

/// [`load`] with the per-capture ingest step given by the caller (progress reporting wraps
/// the sink there).
pub fn load_with(paths: &[PathBuf], pairs: &[String], model_opts: &ModelOptions, limits: &[ReaderLimit], ingest: &IngestFn<'_>) -> Result<Loaded, LoadError> {
    if paths.is_empty() && pairs.is_empty() {
        return Err(LoadError::NoInputs);
    }
    let inputs = discover(paths, pairs)?;
    let model_opts = std::sync::Arc::new(model_opts.clone());
    let mut captures: Vec<LoadedCapture> = inputs.par_iter().map(|i| load_capture(i, ingest, &model_opts)).collect();
    trace_rss("ingested");
    let mut rows: Vec<CaptureRows> = captures.iter_mut().map(|c| std::mem::take(&mut c.rows)).collect();
    let tables = build_tables(&mut rows, limits)?;
    for (c, r) in captures.iter_mut().zip(rows) {
        c.rows = r;
    }
    trace_rss("tables built");
    if std::env::var_os("MCPSIFT_TRACE_RSS").is_some() {
        for (name, df) in tables.named() {
            eprintln!("[rss] table {name}: {} rows, {} bytes estimated", df.height(), df.estimated_size());
        }
    }
    Ok(Loaded { captures, tables })
}

/// Debug aid: prints the current RSS when MCPSIFT_TRACE_RSS is set.
pub fn trace_rss(stage: &str) {
    if std::env::var_os("MCPSIFT_TRACE_RSS").is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss = status.lines().find(|l| l.starts_with("VmRSS")).unwrap_or("VmRSS: ?");
    let hwm = status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM: ?");
    eprintln!("[rss] {stage}: {rss} {hwm}");
}
