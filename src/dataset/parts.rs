//! Part files of one table of one capture: chunks go over a bounded channel to a writer
//! thread that encodes them into `TABLE/.part-ID-NNNN.parquet.tmp`, starting a new part every
//! [`PART_ROWS`] rows; [`TableParts::finish`] renames them to their final names. Knows nothing
//! of manifests or which captures to read.
//!
//! Encoding runs on its own thread, never on the reading pool under a lock: a pool worker
//! waiting for encode jobs can steal another capture, which then waits on that lock (the hang
//! `tables` had on several large captures).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use polars::prelude::*;
use polars_parquet::read::ParquetError;
use polars_parquet::write::{
    CompressionOptions, Compressor, DynIter, DynStreamingIterator, Encoding, FallibleStreamingIterator, FileWriter, ParquetType, StatisticsOptions, Version,
    WriteOptions, array_to_columns, get_dtype_encoding, to_parquet_schema,
};

use super::error::DatasetError;
use super::manifest::Part;
use crate::model::capture::Chunk;
use crate::model::schema::FileChunk;

/// A capture's table is split into parts of about this many rows (a large capture's frames
/// become several files, which other engines read in parallel); `MCPSIFT_PART_ROWS` overrides.
pub const PART_ROWS: u64 = 1 << 20;

/// [`PART_ROWS`], or `MCPSIFT_PART_ROWS` when set to a positive number.
fn part_rows() -> u64 {
    std::env::var("MCPSIFT_PART_ROWS").ok().and_then(|v| v.parse::<u64>().ok()).filter(|n| *n > 0).unwrap_or(PART_ROWS)
}
/// Bytes buffered before a write to the part file. The Parquet writer writes its metadata a
/// few bytes at a time (thrift fields): unbuffered, `tables` on a 50 MB log made 93,300 write
/// calls. The writer's footer flushes it, so a finished part is complete on disk.
pub(crate) const WRITE_BUFFER: usize = 1 << 20;

/// A part file being written: polars-parquet's file writer, one row group per chunk, the
/// columns encoded as polars' own `ParquetWriter` encodes them, with the same footer. Not
/// that writer itself because it takes a DataFrame, whose text columns are strings it hashes
/// again to find each dictionary (a tenth of `tables small.log`'s CPU); a [`FileChunk`]'s
/// text columns may be dictionaries already, built from the texts the model shares.
///
/// Through a [`WRITE_BUFFER`] buffer, on the writer thread, Snappy pages. polars' default,
/// zstd, made files a little over half as large but creates a compression context for every
/// page: `tables small.log` took 5% more CPU with it. Snappy is Spark's and DuckDB's default,
/// read by every Parquet reader.
struct PartFile {
    writer: FileWriter<BufWriter<File>>,
    /// The schema the part declares (its footer's Arrow schema), which every chunk must have.
    schema: Schema,
    fields: Vec<ParquetType>,
    encodings: Vec<Vec<Encoding>>,
    options: WriteOptions,
}

impl PartFile {
    fn create(out: File, schema: &Schema) -> PolarsResult<Self> {
        let arrow = schema.to_arrow(CompatLevel::newest());
        let fields = to_parquet_schema(&arrow)?.fields().to_vec();
        let encodings = arrow.iter_values().map(|f| get_dtype_encoding(&f.dtype)).collect();
        // What `part_writer` sets: Snappy, polars' default statistics, format version 1.
        let options = WriteOptions { statistics: StatisticsOptions::default(), compression: CompressionOptions::Snappy, version: Version::V1, data_page_size: None };
        let writer = FileWriter::try_new(BufWriter::with_capacity(WRITE_BUFFER, out), arrow, options)?;
        Ok(PartFile { writer, schema: schema.clone(), fields, encodings, options })
    }

    fn write(&mut self, chunk: &FileChunk) -> PolarsResult<()> {
        if chunk.height == 0 {
            return Ok(());
        }
        polars_ensure!(chunk.schema == self.schema, SchemaMismatch: "a chunk's columns differ from its part's: {:?} against {:?}", chunk.schema, self.schema);
        let options = self.options;
        let mut columns = Vec::with_capacity(chunk.arrays.len());
        for ((array, field), encoding) in chunk.arrays.iter().zip(&self.fields).zip(&self.encodings) {
            for pages in array_to_columns(array, field.clone(), options, encoding)? {
                let pages = pages.map(|page| page.map_err(|e| ParquetError::FeatureNotSupported(format!("reraised in polars: {e}"))));
                columns.push(Ok(DynStreamingIterator::new(Compressor::new_from_vec(pages, options.compression, Vec::new()).map_err(PolarsError::from))));
            }
        }
        self.writer.write(chunk.height as u64, DynIter::new(columns.into_iter()))
    }

    fn finish(mut self) -> PolarsResult<u64> {
        self.writer.end(None)
    }
}

/// Chunks waiting for the writer thread: bounds memory while a slow disk catches up.
const CHUNKS_IN_FLIGHT: usize = 4;

/// A written part before its rename.
struct Pending {
    tmp: PathBuf,
    file: String,
    rows: u64,
}

type Running = (SyncSender<Chunk>, JoinHandle<Result<Vec<Pending>, String>>);

/// The parts of one table of one capture, being written.
pub struct TableParts {
    dir: PathBuf,
    table: &'static str,
    stem: String,
    running: Mutex<Option<Running>>,
}

impl TableParts {
    /// Parts `DIR/TABLE/STEM-NNNN.parquet`.
    pub fn new(dir: &Path, table: &'static str, stem: &str) -> Self {
        TableParts { dir: dir.to_path_buf(), table, stem: stem.to_string(), running: Mutex::new(None) }
    }

    /// Hands a chunk to the writer thread, starting it on first use. Errors are kept and returned by [`TableParts::finish`].
    pub fn write(&self, chunk: Chunk) {
        if chunk.height() == 0 {
            return;
        }
        let sender = {
            let mut guard = self.running.lock().unwrap_or_else(|p| p.into_inner());
            if guard.is_none() {
                let (tx, rx) = sync_channel(CHUNKS_IN_FLIGHT);
                let (dir, table, stem) = (self.dir.clone(), self.table, self.stem.clone());
                *guard = Some((tx, std::thread::spawn(move || write_parts(&dir, table, &stem, rx))));
            }
            guard.as_ref().map(|(tx, _)| tx.clone())
        };
        // Sent outside the lock; a send fails only when the writer thread has gone, and then
        // its error is returned by `finish`.
        if let Some(tx) = sender {
            let _ = tx.send(chunk);
        }
    }

    /// Writes `rest`, closes the last part and renames every part into place.
    pub fn finish(&self, rest: DataFrame) -> Result<Vec<Part>, DatasetError> {
        self.write(Chunk::of_columns(rest));
        let Some((tx, handle)) = self.running.lock().unwrap_or_else(|p| p.into_inner()).take() else { return Ok(Vec::new()) };
        drop(tx);
        let pending = handle.join().map_err(|_| DatasetError::Write { table: self.table, reason: "the writer thread panicked".into() })?.map_err(|reason| DatasetError::Write { table: self.table, reason })?;
        let mut parts = Vec::new();
        for p in pending {
            let path = self.dir.join(&p.file);
            std::fs::rename(&p.tmp, &path).map_err(|source| DatasetError::Io { path: path.clone(), source })?;
            let bytes = std::fs::metadata(&path).map_err(|source| DatasetError::Io { path: path.clone(), source })?.len();
            parts.push(Part { file: p.file, rows: p.rows, bytes });
        }
        Ok(parts)
    }
}

/// The writer thread: every chunk received, in order, into parts of at most [`PART_ROWS`]
/// rows (a part ends after the chunk that reaches it). After an error the remaining chunks are drained (so senders never block) and the
/// first error is returned.
fn write_parts(dir: &Path, table: &str, stem: &str, chunks: Receiver<Chunk>) -> Result<Vec<Pending>, String> {
    let folder = dir.join(table);
    let mut done: Vec<Pending> = Vec::new();
    let mut current: Option<(PartFile, Pending)> = None;
    let mut error = None;
    let limit = part_rows();
    for chunk in chunks {
        if error.is_some() {
            continue;
        }
        let result = (|| -> Result<(), String> {
            let chunk = chunk.into_file().map_err(|e| format!("{table}: building a chunk's columns: {e}"))?;
            if current.is_none() {
                std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
                let n = done.len();
                let file = format!("{table}/{stem}-{n:04}.parquet");
                let tmp = folder.join(format!(".{stem}-{n:04}.parquet.tmp"));
                let out = File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
                let writer = PartFile::create(out, &chunk.schema).map_err(|e| format!("{}: {e}", tmp.display()))?;
                current = Some((writer, Pending { tmp, file, rows: 0 }));
            }
            if let Some((writer, pending)) = current.as_mut() {
                writer.write(&chunk).map_err(|e| format!("{}: {e}", pending.tmp.display()))?;
                pending.rows += chunk.height as u64;
                if pending.rows >= limit {
                    close(&mut current, &mut done)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            error = Some(e);
        }
    }
    if let Some(e) = error {
        for p in done.iter().chain(current.as_ref().map(|(_, p)| p)) {
            let _ = std::fs::remove_file(&p.tmp);
        }
        return Err(e);
    }
    close(&mut current, &mut done)?;
    Ok(done)
}

fn close(current: &mut Option<(PartFile, Pending)>, done: &mut Vec<Pending>) -> Result<(), String> {
    if let Some((writer, pending)) = current.take() {
        writer.finish().map_err(|e| format!("{}: cannot finish: {e}", pending.tmp.display()))?;
        done.push(pending);
    }
    Ok(())
}
