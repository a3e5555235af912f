//! The one pipeline entry: discover → ingest → model → tables, once per run, for a
//! [`Request`]; progress is an [`Observer`] passed in (the binary draws it). Captures are read
//! in parallel, one reading thread and one model per capture ([`channel`]).

pub mod channel;
pub mod observe;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::ingest::discover::{CaptureInput, DiscoverError, Discovery, PairSpec, discover};
use crate::ingest::run::{IngestOptions, ingest_capture};
use crate::model::capture::{CaptureRows, ChunkSink, ModelOptions};
use crate::model::loaded::LoadedCapture;
use crate::model::tables::{ReaderLimit, Tables, build_tables, default_limits};
pub use observe::{Observer, Unobserved};

/// What to read and how: the inputs and every option of ingest and model.
#[derive(Debug, Clone)]
pub struct Request {
    /// Files and folders (walked recursively).
    pub paths: Vec<PathBuf>,
    /// Explicit stdio tee pairs.
    pub pairs: Vec<PairSpec>,
    pub ingest: IngestOptions,
    pub model: ModelOptions,
    pub limits: Vec<ReaderLimit>,
    /// Captures read at once (`--jobs`); `None`: one per core.
    pub jobs: Option<usize>,
}

impl Request {
    /// `paths` with every option at its default.
    pub fn new(paths: Vec<PathBuf>) -> Self {
        Request { paths, pairs: Vec::new(), ingest: IngestOptions::default(), model: ModelOptions::default(), limits: default_limits(), jobs: None }
    }
}

/// Everything a run loaded.
pub struct Loaded {
    pub captures: Vec<LoadedCapture>,
    pub tables: Tables,
    /// Symlinks that point back into a folder being walked: not followed.
    pub symlink_loops: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error("no input paths given")]
    NoInputs,
    #[error("building tables: {0}")]
    Tables(#[from] polars::prelude::PolarsError),
    #[error("cannot start {jobs} reading threads: {source}")]
    Pool { jobs: usize, source: rayon::ThreadPoolBuildError },
    #[error("{capture}: storing its rows: {source}")]
    Store { capture: String, source: Box<dyn std::error::Error + Send + Sync> },
}

/// Where a run's rows go capture by capture instead of into one set of tables (the dataset
/// writer): the pipeline asks which inputs to read, hands each capture's finished chunks to
/// the store's sink while reading, then the capture's remaining rows.
pub trait CaptureStore: Sync {
    /// Whether `input` must be read (false: the store holds its rows already).
    fn wanted(&self, input: &CaptureInput) -> bool;
    /// Where `input`'s finished `frames`/`calls` chunks go while it is read.
    fn chunk_sink(&self, input: &CaptureInput) -> Arc<dyn ChunkSink>;
    /// Takes the capture's remaining rows (leaving its accounting in `capture`).
    fn store(&self, input: &CaptureInput, capture: &mut LoadedCapture) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;
}

/// What a run into a store read: every discovered input, whether it was read, and the read
/// ones' accounting (their rows are in the store).
pub struct Stored {
    pub inputs: Vec<CaptureInput>,
    pub read: Vec<Option<LoadedCapture>>,
    pub symlink_loops: Vec<PathBuf>,
}

/// Runs the pipeline over `request`, telling `observer` how far it got. With `jobs`, the
/// captures are read on a pool of that many threads (each capture also has its reading thread).
pub fn run(request: &Request, observer: &dyn Observer) -> Result<Loaded, LoadError> {
    on_pool(request, || run_here(request, observer))
}

/// [`run`], with each capture's rows handed to `store` as it is read: memory holds the
/// captures being read, not the run.
pub fn run_into(request: &Request, observer: &dyn Observer, store: &dyn CaptureStore) -> Result<Stored, LoadError> {
    on_pool(request, || store_here(request, observer, store))
}

fn on_pool<T: Send>(request: &Request, work: impl FnOnce() -> Result<T, LoadError> + Send) -> Result<T, LoadError> {
    if request.paths.is_empty() && request.pairs.is_empty() {
        return Err(LoadError::NoInputs);
    }
    match request.jobs {
        Some(jobs) => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs.max(1)).build().map_err(|source| LoadError::Pool { jobs, source })?;
            pool.install(work)
        }
        None => work(),
    }
}

fn store_here(request: &Request, observer: &dyn Observer, store: &dyn CaptureStore) -> Result<Stored, LoadError> {
    let Discovery { inputs, symlink_loops } = discover(&request.paths, &request.pairs)?;
    let wanted: Vec<bool> = inputs.par_iter().map(|i| store.wanted(i)).collect();
    let opts = &request.ingest;
    let expected: HashMap<String, u64> = if observer.watching() {
        inputs.iter().zip(&wanted).filter(|(_, w)| **w).flat_map(|(i, _)| observe::files_of(i)).map(|p| (p.display().to_string(), observe::expected_bytes(p))).collect()
    } else {
        HashMap::new()
    };
    observer.started(expected.values().sum());
    let read_one = |input: &CaptureInput| -> Result<LoadedCapture, LoadError> {
        let model_opts = Arc::new(ModelOptions { chunk_sink: Some(store.chunk_sink(input)), ..request.model.clone() });
        let mut capture = if observer.watching() {
            let ingest = |input: &CaptureInput, model: &mut dyn crate::ingest::frame::Sink| {
                let mut sink = observe::Counting::new(model, observer, &expected);
                let files = ingest_capture(input, opts, &mut sink);
                sink.end_file();
                files
            };
            load_capture(input, &ingest, &model_opts)
        } else {
            load_capture(input, &|input, sink| ingest_capture(input, opts, sink), &model_opts)
        };
        store.store(input, &mut capture).map_err(|source| LoadError::Store { capture: input.name().to_string(), source })?;
        Ok(capture)
    };
    let read: Vec<Option<LoadedCapture>> =
        inputs.par_iter().zip(&wanted).map(|(input, w)| if *w { read_one(input).map(Some) } else { Ok(None) }).collect::<Result<_, _>>()?;
    observer.finished();
    trace_rss("stored");
    Ok(Stored { inputs, read, symlink_loops })
}

fn run_here(request: &Request, observer: &dyn Observer) -> Result<Loaded, LoadError> {
    let Discovery { inputs, symlink_loops } = discover(&request.paths, &request.pairs)?;
    let model_opts = Arc::new(request.model.clone());
    let opts = &request.ingest;
    let mut captures: Vec<LoadedCapture> = if observer.watching() {
        let expected: HashMap<String, u64> =
            inputs.iter().flat_map(observe::files_of).map(|p| (p.display().to_string(), observe::expected_bytes(p))).collect();
        observer.started(expected.values().sum());
        let ingest = |input: &CaptureInput, model: &mut dyn crate::ingest::frame::Sink| {
            let mut sink = observe::Counting::new(model, observer, &expected);
            let files = ingest_capture(input, opts, &mut sink);
            sink.end_file();
            files
        };
        inputs.par_iter().map(|i| load_capture(i, &ingest, &model_opts)).collect()
    } else {
        inputs.par_iter().map(|i| load_capture(i, &|input, sink| ingest_capture(input, opts, sink), &model_opts)).collect()
    };
    observer.finished();
    trace_rss("ingested");
    let mut rows: Vec<CaptureRows> = captures.iter_mut().map(|c| std::mem::take(&mut c.rows)).collect();
    let tables = build_tables(&mut rows, &request.limits)?;
    for (c, r) in captures.iter_mut().zip(rows) {
        c.rows = r;
    }
    trace_rss("tables built");
    if std::env::var_os("MCPSIFT_TRACE_RSS").is_some() {
        for (name, df) in tables.named() {
            eprintln!("[rss] table {name}: {} rows, {} bytes estimated", df.height(), df.estimated_size());
        }
    }
    Ok(Loaded { captures, tables, symlink_loops })
}

fn load_capture(input: &CaptureInput, ingest: &channel::IngestFn<'_>, model_opts: &Arc<ModelOptions>) -> LoadedCapture {
    let (files, rows) = channel::capture_rows(input, ingest, model_opts);
    LoadedCapture::new(input.name().to_string(), files, rows)
}

/// [`run`] unobserved, with the options given one by one (tests and library users).
pub fn load(paths: &[PathBuf], pairs: &[PairSpec], opts: &IngestOptions, model_opts: &ModelOptions, limits: &[ReaderLimit]) -> Result<Loaded, LoadError> {
    let request = Request { paths: paths.to_vec(), pairs: pairs.to_vec(), ingest: opts.clone(), model: model_opts.clone(), limits: limits.to_vec(), jobs: None };
    run(&request, &Unobserved)
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
