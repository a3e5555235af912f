//! Parquet: a whole result table in one file, and the streaming writer `tables` uses to
//! write `frames` and `calls` chunks while the captures are read (memory stays bounded by the
//! chunks in flight rather than by the row count).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use polars::prelude::*;

use super::{ExportError, Exporter};
use crate::model::capture::{Chunk, ChunkSink};

pub struct Parquet;

impl Exporter<DataFrame> for Parquet {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        ParquetWriter::new(out).finish(&mut df.clone())?;
        Ok(())
    }
}

/// A Parquet file receiving chunks as they come. Chunks arrive on rayon workers (one per
/// capture being read); they go through a bounded channel to one writer thread per file, which
/// encodes without polars' own parallelism. Encoding on the pool under a lock deadlocked: a
/// worker waiting for its encode jobs stole another capture, which then waited on that lock.
pub struct Stream {
    path: PathBuf,
    sender: Mutex<Option<SyncSender<Chunk>>>,
    writer: Mutex<Option<JoinHandle<Result<u64, String>>>>,
}

/// Chunks waiting for the writer thread: bounds memory while a slow disk catches up.
const CHUNKS_IN_FLIGHT: usize = 4;

impl Stream {
    fn new(path: PathBuf) -> Self {
        Stream { path, sender: Mutex::new(None), writer: Mutex::new(None) }
    }

    /// Hands a chunk to the writer thread, starting it
    /// (and the file, with the chunk's schema) on first use. Errors are kept and reported when
    /// the table is finished.
    fn write(&self, chunk: Chunk) {
        if chunk.height() == 0 {
            return;
        }
        let sender = {
            let mut guard = self.sender.lock().unwrap_or_else(|p| p.into_inner());
            if guard.is_none() {
                let (tx, rx) = sync_channel(CHUNKS_IN_FLIGHT);
                let path = self.path.clone();
                *self.writer.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::thread::spawn(move || write_all(&path, rx)));
                *guard = Some(tx);
            }
            guard.clone()
        };
        // Sent outside the lock; a send fails only when the writer thread has gone, and then
        // its error is reported by `finish`.
        if let Some(tx) = sender {
            let _ = tx.send(chunk);
        }
    }

    fn started(&self) -> bool {
        self.sender.lock().map(|g| g.is_some()).unwrap_or(false)
    }

    /// Writes the rows that stayed in memory and closes the file.
    pub fn finish(&self, rest: &DataFrame) -> Result<(PathBuf, u64), ExportError> {
        self.write(Chunk::of_columns(rest.clone()));
        drop(self.sender.lock().unwrap_or_else(|p| p.into_inner()).take());
        let rows = match self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(handle) => handle.join().map_err(|_| ExportError::Stream(format!("{}: the writer thread panicked", self.path.display())))?.map_err(ExportError::Stream)?,
            None => 0,
        };
        Ok((self.path.clone(), rows))
    }
}

/// The writer thread: every chunk received, in order, into one Parquet file. After an error the
/// remaining chunks are drained (so senders never block) and the first error is returned.
fn write_all(path: &Path, chunks: Receiver<Chunk>) -> Result<u64, String> {
    let mut writer: Option<polars::io::parquet::write::BatchedWriter<BufWriter<File>>> = None;
    let mut rows = 0u64;
    let mut error = None;
    for chunk in chunks {
        if error.is_some() {
            continue;
        }
        let result = (|| -> PolarsResult<u64> {
            let chunk = chunk.into_df()?;
            if writer.is_none() {
                let file = File::create(path)?;
                writer = Some(crate::dataset::parts::part_writer(file).batched(chunk.schema())?);
            }
            if let Some(w) = writer.as_mut() {
                w.write_batch(&chunk)?;
            }
            Ok(chunk.height() as u64)
        })();
        match result {
            Ok(n) => rows += n,
            Err(e) => error = Some(format!("{}: {e}", path.display())),
        }
    }
    if let Some(e) = error {
        return Err(e);
    }
    if let Some(w) = writer {
        w.finish().map_err(|e| format!("{}: cannot finish: {e}", path.display()))?;
    }
    Ok(rows)
}

/// Streams `frames` and `calls` chunks to `DIR/frames.parquet` and `DIR/calls.parquet`.
pub struct ParquetSpill {
    frames: Stream,
    calls: Stream,
}

impl ParquetSpill {
    pub fn new(dir: &Path) -> Self {
        ParquetSpill { frames: Stream::new(dir.join("frames.parquet")), calls: Stream::new(dir.join("calls.parquet")) }
    }

    /// The stream of a table, if chunks of it were written while reading.
    pub fn writer(&self, table: &str) -> Option<&Stream> {
        let stream = match table {
            "frames" => &self.frames,
            "calls" => &self.calls,
            _ => return None,
        };
        stream.started().then_some(stream)
    }
}

impl ChunkSink for ParquetSpill {
    fn frames(&self, chunk: Chunk) {
        self.frames.write(chunk);
    }
    fn calls(&self, chunk: Chunk) {
        self.calls.write(chunk);
    }
}
