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
        // What polars' ParquetWriter sets with Snappy: its default statistics, format version 1.
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::model::rows::{CallRow, FrameRow};
    use crate::model::schema::Table;

    /// Rows of a real capture set, in chunks of `size`.
    fn chunks<T: Table + Clone>(rows: &[T], size: usize) -> Vec<Vec<T>> {
        rows.chunks(size).map(|c| c.to_vec()).collect()
    }

    /// polars' own writer over the string tables: what parts were before they were written
    /// from dictionaries, and what they must still be.
    fn by_polars(path: &Path, tables: &[DataFrame]) {
        let out = BufWriter::new(File::create(path).expect("create"));
        let mut w = ParquetWriter::new(out).set_parallel(false).with_compression(ParquetCompression::Snappy).batched(tables[0].schema()).expect("batched");
        for t in tables {
            w.write_batch(t).expect("write");
        }
        w.finish().expect("finish");
    }

    fn by_parts(path: &Path, chunks: Vec<FileChunk>) {
        let mut part = PartFile::create(File::create(path).expect("create"), &chunks[0].schema).expect("part");
        for c in &chunks {
            part.write(c).expect("write");
        }
        part.finish().expect("finish");
    }

    /// The samples' frames and calls, their texts shared as the model shares them, except
    /// that every third row's method, tool and id are copies (one text under two allocations).
    fn sample_rows() -> (Vec<FrameRow>, Vec<CallRow>) {
        let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples");
        let loaded = crate::pipeline::load(&[samples], &[], &Default::default(), &Default::default(), &crate::model::tables::default_limits()).expect("samples load");
        let copy = |t: &Option<Arc<str>>| t.as_deref().map(Arc::from);
        let mut frames = FrameRow::rows_from_df(&loaded.tables.frames).expect("frames");
        for f in frames.iter_mut().step_by(3) {
            (f.method, f.tool, f.rpc_id) = (copy(&f.method), copy(&f.tool), copy(&f.rpc_id));
        }
        let mut calls = CallRow::rows_from_df(&loaded.tables.calls).expect("calls");
        for c in calls.iter_mut().step_by(3) {
            c.tool = copy(&c.tool);
        }
        (frames, calls)
    }

    fn same_file<T: Table + Clone>(rows: &[T], size: usize, dir: &Path) {
        let chunks = chunks(rows, size);
        let tables: Vec<DataFrame> = chunks.iter().map(|c| T::to_df(&c.iter().collect::<Vec<_>>()).expect("df")).collect();
        let files: Vec<FileChunk> = chunks.iter().map(|c| T::to_file_chunk(&c.iter().collect::<Vec<_>>()).expect("file chunk")).collect();
        let (a, b) = (dir.join(format!("{}-{size}-polars.parquet", T::NAME)), dir.join(format!("{}-{size}-parts.parquet", T::NAME)));
        by_polars(&a, &tables);
        by_parts(&b, files);
        let (a, b) = (std::fs::read(&a).expect("read"), std::fs::read(&b).expect("read"));
        assert!(a == b, "{} in chunks of {size}: the part from dictionaries ({} bytes) differs from polars' file of the strings ({} bytes)", T::NAME, b.len(), a.len());
    }

    #[test]
    fn a_part_from_dictionaries_is_the_file_polars_writes_from_strings() {
        let (frames, calls) = sample_rows();
        assert!(frames.len() > 500 && calls.len() > 200, "samples hold {} frames and {} calls", frames.len(), calls.len());
        // A text column null in every row of a chunk, an id, a handful of values: the three
        // ways a text column is finished.
        assert!(frames.chunks(100).any(|c| c.iter().all(|f| f.hdr_method.is_none())));
        assert!(frames.iter().any(|f| f.method.is_some()) && frames.iter().any(|f| f.rpc_id.is_some()));
        let dir = std::env::temp_dir().join(format!("mcpsift-parts-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        // Chunks of 100 rows (dictionaries everywhere: 128 rows or fewer), 300 and 5,000.
        for size in [100, 300, 5000] {
            same_file(&frames, size, &dir);
            same_file(&calls, size, &dir);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_id_column_falls_back_to_strings_and_reads_back_the_same() {
        // Every row a new id: past 256 rows the builder pushes strings.
        let method: Arc<str> = Arc::from("tools/call");
        let rows: Vec<FrameRow> = (0..1000).map(|i| FrameRow { rpc_id: (i % 7 != 0).then(|| Arc::from(format!("id-{i}"))), method: Some(Arc::clone(&method)), ..FrameRow::default() }).collect();
        let refs: Vec<&FrameRow> = rows.iter().collect();
        let chunk = FrameRow::to_file_chunk(&refs).expect("chunk");
        let ids = chunk.arrays[FrameRow::schema().index_of("rpc_id").expect("rpc_id")].clone();
        assert!(matches!(ids.dtype(), polars_arrow::datatypes::ArrowDataType::Utf8View), "ids as strings, not a dictionary: {:?}", ids.dtype());
        let method = chunk.arrays[FrameRow::schema().index_of("method").expect("method")].clone();
        assert!(matches!(method.dtype(), polars_arrow::datatypes::ArrowDataType::Dictionary(..)), "one method as a dictionary: {:?}", method.dtype());
        let dir = std::env::temp_dir().join(format!("mcpsift-parts-ids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        same_file(&rows, 1000, &dir);
        let back = ParquetReader::new(File::open(dir.join("frames-1000-parts.parquet")).expect("open")).finish().expect("read");
        assert_eq!(FrameRow::rows_from_df(&back).expect("rows"), rows);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
