//! Writing a dataset: which inputs to read (new, or changed in size, mtime and then content
//! hash), each read capture's rows into its parts (a [`CaptureStore`] for the pipeline), then
//! the manifest, last, and the removal of parts no manifest names. An interrupted run leaves
//! the previous manifest, which names only complete parts.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use polars::prelude::DataFrame;

use super::error::DatasetError;
use super::lock::Lock;
use super::open::part_problem;
use super::manifest::{INPUT_TABLES, InputEntry, InputFile, Manifest, Part, schema_version};
use super::parts::TableParts;
use super::summary::CaptureSummary;
use crate::ingest::discover::CaptureInput;
use crate::model::capture::{Chunk, ChunkSink};
use crate::model::rows::{CallRow, EventRow, FrameRow, PageRow, SessionRow, ToolRow};
use crate::model::schema::Table;
use crate::model::tables::ReaderLimit;
use crate::model::loaded::LoadedCapture;
use crate::pipeline::{CaptureStore, Stored, observe::files_of};

#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Drop the parts of inputs not given this time (else they are kept).
    pub prune: bool,
    /// Hash inputs and reuse unchanged ones (off for a run's temporary dataset).
    pub incremental: bool,
}

/// What a write did.
#[derive(Debug, Default)]
pub struct WriteSummary {
    /// Inputs read this time.
    pub read: usize,
    /// Inputs whose parts were kept because they did not change.
    pub unchanged: usize,
    /// Inputs of the dataset not given this time: kept (or dropped with `--prune`).
    pub missing: Vec<String>,
    pub pruned: bool,
    /// Why every input was read again (other schema or options), if so.
    pub rebuilt: Option<String>,
    /// Rows and parts per table, in table order.
    pub tables: Vec<(&'static str, u64, usize)>,
}

/// One capture's streaming parts.
struct CaptureParts {
    frames: TableParts,
    calls: TableParts,
}

impl ChunkSink for CaptureParts {
    fn frames(&self, chunk: Chunk) {
        self.frames.write(chunk);
    }
    fn calls(&self, chunk: Chunk) {
        self.calls.write(chunk);
    }
}

/// A dataset being written; holds its lock until dropped.
pub struct Writer {
    dir: PathBuf,
    options: WriteOptions,
    fingerprint: String,
    /// The previous manifest when its parts can be kept (same schema and options).
    old: Option<Manifest>,
    rebuilt: Option<String>,
    files: Mutex<HashMap<String, Vec<InputFile>>>,
    reused: Mutex<HashMap<String, InputEntry>>,
    written: Mutex<HashMap<String, InputEntry>>,
    sinks: Mutex<HashMap<String, Arc<CaptureParts>>>,
    _lock: Lock,
}

impl Writer {
    /// Opens (or creates) `dir` for writing rows read with the options `fingerprint` names.
    pub fn open(dir: &Path, fingerprint: String, options: WriteOptions) -> Result<Writer, DatasetError> {
        std::fs::create_dir_all(dir).map_err(|source| DatasetError::Io { path: dir.to_path_buf(), source })?;
        let lock = Lock::take(dir)?;
        let previous = Manifest::read(dir)?;
        let (old, rebuilt) = match previous {
            Some(m) if !m.same_schema() => (None, Some(format!("written by mcpsift {} with another schema ({}, now {})", m.mcpsift_version, m.schema_version, schema_version()))),
            Some(m) if m.options != fingerprint => (None, Some(format!("written with other options ({}; now {})", m.options, fingerprint))),
            other => (other, None),
        };
        Ok(Writer {
            dir: dir.to_path_buf(),
            options,
            fingerprint,
            old,
            rebuilt,
            files: Mutex::default(),
            reused: Mutex::default(),
            written: Mutex::default(),
            sinks: Mutex::default(),
            _lock: lock,
        })
    }

    fn old_entry(&self, capture: &str) -> Option<&InputEntry> {
        self.old.as_ref()?.inputs.iter().find(|e| e.capture == capture)
    }

    fn stem(&self, capture: &str) -> String {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        let mut key = format!("{capture}\0{}\0{}", self.fingerprint, schema_version());
        // Size and mtime, not the hash (computed while the capture is read): an input read
        // again has changed one of them, so its new parts never overwrite the old ones.
        for f in files.get(capture).into_iter().flatten() {
            key.push_str(&format!("\0{}\0{}\0{}", f.path, f.size, f.mtime_ns));
        }
        if !self.options.incremental {
            key.push_str(&format!("\0{}", std::process::id()));
        }
        format!("part-{}", &blake3::hash(key.as_bytes()).to_hex()[..16])
    }

    /// Writes the manifest for the run `stored` describes (with the `limits` of its flags),
    /// then removes the parts it no longer names.
    pub fn finish(self, stored: &Stored, limits: &[ReaderLimit]) -> Result<WriteSummary, DatasetError> {
        let mut summary = WriteSummary { rebuilt: self.rebuilt.clone(), pruned: self.options.prune, ..WriteSummary::default() };
        let mut written = std::mem::take(&mut *self.written.lock().unwrap_or_else(|p| p.into_inner()));
        let mut reused = std::mem::take(&mut *self.reused.lock().unwrap_or_else(|p| p.into_inner()));
        let mut manifest = Manifest::new(self.fingerprint.clone());
        let given: HashSet<&str> = stored.inputs.iter().map(|i| i.name()).collect();
        for input in &stored.inputs {
            if let Some(entry) = written.remove(input.name()) {
                summary.read += 1;
                manifest.inputs.push(entry);
            } else if let Some(entry) = reused.remove(input.name()) {
                summary.unchanged += 1;
                manifest.inputs.push(entry);
            }
        }
        if let Some(old) = &self.old {
            for entry in old.inputs.iter().filter(|e| !given.contains(e.capture.as_str())) {
                summary.missing.push(entry.capture.clone());
                if !self.options.prune {
                    manifest.inputs.push(entry.clone());
                }
            }
        }
        let limits_df = ReaderLimit::to_df(&limits.iter().collect::<Vec<_>>()).map_err(|e| DatasetError::Write { table: ReaderLimit::NAME, reason: e.to_string() })?;
        let limits_stem = format!("part-limits-{}", &blake3::hash(format!("{limits:?}").as_bytes()).to_hex()[..16]);
        manifest.limits = TableParts::new(&self.dir, ReaderLimit::NAME, &limits_stem).finish(limits_df)?.into_iter().next();
        for table in INPUT_TABLES {
            let parts: Vec<&Part> = manifest.inputs.iter().flat_map(|e| e.parts.get(table).into_iter().flatten()).collect();
            summary.tables.push((table, parts.iter().map(|p| p.rows).sum(), parts.len()));
        }
        let inputs_key = manifest.inputs_key();
        manifest.tool_changes = tool_changes_part(&self.dir, &manifest, &inputs_key)?;
        manifest.tool_changes_over = Some(inputs_key);
        write_schema_files(&self.dir)?;
        manifest.write(&self.dir)?;
        remove_unnamed(&self.dir, &manifest);
        Ok(summary)
    }
}

/// The `tool_changes` table over every capture the manifest names (it compares sessions
/// across captures, so it is the dataset's, not a capture's), for engines other than mcpsift;
/// its part is named after `inputs_key` ([`Manifest::inputs_key`]).
fn tool_changes_part(dir: &Path, manifest: &Manifest, inputs_key: &str) -> Result<Option<Part>, DatasetError> {
    use crate::model::tool_changes::{server_tools, tool_changes};
    use polars::prelude::*;
    let write_err = |e: PolarsError| DatasetError::Write { table: TOOL_CHANGES, reason: e.to_string() };
    let none = DataFrame::empty();
    let scan = |table: &'static str| super::open::scan(dir, &manifest.inputs, &none, table).map_err(write_err);
    let listed = server_tools(scan("tools")?, scan("sessions")?, scan("pages")?).map_err(write_err)?;
    let df = tool_changes(&listed, None).map_err(write_err)?;
    let stem = format!("part-changes-{inputs_key}");
    Ok(TableParts::new(dir, TOOL_CHANGES, &stem).finish(df)?.into_iter().next())
}

/// The dataset-wide table of tool definition changes.
pub const TOOL_CHANGES: &str = "tool_changes";

/// `TABLE/schema.parquet`, zero rows, in every table folder: other engines (DuckDB, Spark)
/// globbing `TABLE/*.parquet` see the columns even of a table with no parts.
fn write_schema_files(dir: &Path) -> Result<(), DatasetError> {
    for table in INPUT_TABLES.into_iter().chain([ReaderLimit::NAME, TOOL_CHANGES]) {
        let schema = match table {
            TOOL_CHANGES => crate::model::tool_changes::tool_changes(&[], None).map(|df| (**df.schema()).clone()).unwrap_or_default(),
            _ => crate::model::tables::schema_of(table).unwrap_or_default(),
        };
        let folder = dir.join(table);
        std::fs::create_dir_all(&folder).map_err(|source| DatasetError::Io { path: folder.clone(), source })?;
        let (tmp, path) = (folder.join(".schema.parquet.tmp"), folder.join(SCHEMA_FILE));
        let file = std::fs::File::create(&tmp).map_err(|source| DatasetError::Io { path: tmp.clone(), source })?;
        polars::prelude::ParquetWriter::new(std::io::BufWriter::new(file))
            .finish(&mut DataFrame::empty_with_schema(&schema))
            .map_err(|e| DatasetError::Write { table, reason: e.to_string() })?;
        std::fs::rename(&tmp, &path).map_err(|source| DatasetError::Io { path, source })?;
    }
    Ok(())
}

/// The zero-row file of each table folder.
pub const SCHEMA_FILE: &str = "schema.parquet";

/// Removes part files (and temporary files of interrupted runs) no manifest entry names.
/// Only files named like parts are touched.
fn remove_unnamed(dir: &Path, manifest: &Manifest) {
    let named: HashSet<&str> = manifest.inputs.iter().flat_map(|e| e.all_parts()).chain(&manifest.limits).chain(&manifest.tool_changes).map(|p| p.file.as_str()).collect();
    for table in INPUT_TABLES.iter().chain([&ReaderLimit::NAME, &TOOL_CHANGES]) {
        let Ok(entries) = std::fs::read_dir(dir.join(table)) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let ours = (name.starts_with("part-") && name.ends_with(".parquet")) || (name.starts_with(".part-") && name.ends_with(".parquet.tmp"));
            if ours && !named.contains(format!("{table}/{name}").as_str()) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Size and mtime of a file, without its hash.
fn stat(path: &Path) -> Option<InputFile> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime_ns = meta.modified().ok()?.duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0);
    Some(InputFile { path: path.display().to_string(), size: meta.len(), mtime_ns, blake3: String::new() })
}

/// blake3 of a file's bytes, read (a memory map would count the whole file in the resident
/// memory the bench bounds).
fn hash_file(path: &Path) -> Option<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::open(path).ok()?).ok()?;
    Some(hasher.finalize().to_hex().to_string())
}

fn same_files(a: &[InputFile], b: &[InputFile], by_hash: bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.path == y.path && if by_hash { x.blake3 == y.blake3 } else { x.size == y.size && x.mtime_ns == y.mtime_ns })
}

impl CaptureStore for Writer {
    fn wanted(&self, input: &CaptureInput) -> bool {
        let Some(mut files) = files_of(input).into_iter().map(stat).collect::<Option<Vec<_>>>() else {
            // A file that cannot be stat'ed is read, and ingest says why it fails.
            return true;
        };
        // An entry whose parts are missing or damaged is read again.
        let old = self.old_entry(input.name()).filter(|o| self.options.incremental && o.all_parts().all(|p| part_problem(&self.dir, p).is_none()));
        if let Some(old) = old.filter(|o| same_files(&files, &o.files, false)) {
            self.reused.lock().unwrap_or_else(|p| p.into_inner()).insert(input.name().to_string(), old.clone());
            return false;
        }
        // An input whose size or mtime changed is hashed now: its bytes may still be the old
        // ones. A new input's hash is only for the manifest: it is taken as the input is read
        // (`IngestOptions::hash_files`, see `store`), not here, where every input is asked
        // before any is read.
        if let Some(old) = old {
            for f in &mut files {
                f.blake3 = hash_file(Path::new(&f.path)).unwrap_or_default();
            }
            // Touched, not changed: keep the parts, record the new size and mtime.
            if same_files(&files, &old.files, true) && files.iter().all(|f| !f.blake3.is_empty()) {
                let entry = InputEntry { files: files.clone(), ..old.clone() };
                self.reused.lock().unwrap_or_else(|p| p.into_inner()).insert(input.name().to_string(), entry);
                return false;
            }
        }
        self.files.lock().unwrap_or_else(|p| p.into_inner()).insert(input.name().to_string(), files);
        true
    }

    /// Called as the capture's reading begins.
    fn chunk_sink(&self, input: &CaptureInput) -> Arc<dyn ChunkSink> {
        let stem = self.stem(input.name());
        let parts = Arc::new(CaptureParts { frames: TableParts::new(&self.dir, FrameRow::NAME, &stem), calls: TableParts::new(&self.dir, CallRow::NAME, &stem) });
        self.sinks.lock().unwrap_or_else(|p| p.into_inner()).insert(input.name().to_string(), Arc::clone(&parts));
        parts
    }

    fn store(&self, input: &CaptureInput, capture: &mut LoadedCapture) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let name = input.name();
        let stem = self.stem(name);
        let streamed = self.sinks.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        let rows = &mut capture.rows;
        let mut parts: BTreeMap<String, Vec<Part>> = BTreeMap::new();
        let mut put = |table: &'static str, found: Vec<Part>| {
            if !found.is_empty() {
                parts.insert(table.to_string(), found);
            }
        };
        let concat = |chunks: Vec<DataFrame>, mut all: DataFrame| -> Result<DataFrame, polars::prelude::PolarsError> {
            for chunk in chunks {
                all.vstack_mut_owned(chunk)?;
            }
            Ok(all)
        };
        let frames = concat(std::mem::take(&mut rows.frame_chunks), rows_df::<FrameRow>(&[])?)?;
        let mut calls = concat(std::mem::take(&mut rows.call_chunks), rows_df::<CallRow>(&[])?)?;
        calls.vstack_mut_owned(rows_df(&std::mem::take(&mut rows.calls))?)?;
        match &streamed {
            Some(s) => {
                put(FrameRow::NAME, s.frames.finish(frames)?);
                put(CallRow::NAME, s.calls.finish(calls)?);
            }
            None => {
                put(FrameRow::NAME, TableParts::new(&self.dir, FrameRow::NAME, &stem).finish(frames)?);
                put(CallRow::NAME, TableParts::new(&self.dir, CallRow::NAME, &stem).finish(calls)?);
            }
        }
        put(SessionRow::NAME, TableParts::new(&self.dir, SessionRow::NAME, &stem).finish(rows_df(&std::mem::take(&mut rows.sessions))?)?);
        put(ToolRow::NAME, TableParts::new(&self.dir, ToolRow::NAME, &stem).finish(rows_df(&std::mem::take(&mut rows.tools))?)?);
        put(EventRow::NAME, TableParts::new(&self.dir, EventRow::NAME, &stem).finish(rows_df(&std::mem::take(&mut rows.events))?)?);
        put(PageRow::NAME, TableParts::new(&self.dir, PageRow::NAME, &stem).finish(rows_df(&std::mem::take(&mut rows.pages))?)?);
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned().unwrap_or_default();
        // A new input's files, not hashed by `wanted`, were hashed as they were read
        // (`IngestOptions::hash_files`); one read only in part is hashed here.
        if self.options.incremental {
            for f in files.iter_mut().filter(|f| f.blake3.is_empty()) {
                let read = capture.files.iter().find(|r| r.path == f.path).and_then(|r| r.blake3.clone());
                f.blake3 = read.or_else(|| hash_file(Path::new(&f.path))).unwrap_or_default();
            }
        }
        let entry = InputEntry { capture: name.to_string(), files, parts, summary: CaptureSummary::of(capture) };
        self.written.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), entry);
        Ok(())
    }
}

fn rows_df<T: Table>(rows: &[T]) -> Result<DataFrame, polars::prelude::PolarsError> {
    T::to_df(&rows.iter().collect::<Vec<_>>())
}
