//! `mcpsift tables`: every table written to a folder as Parquet or CSV. With Parquet, the
//! `frames` and `calls` chunks are written while the captures are read, so memory stays
//! bounded by the chunks in flight rather than by the row count.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use polars::prelude::*;

use crate::cli::TablesArgs;
use mcpsift::model::capture::ChunkSink;
use mcpsift::report::table_out::{TableFileFormat, write_table_file};

pub fn run(args: &TablesArgs) -> anyhow::Result<u8> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("{}: cannot create", args.out.display()))?;
    let spill = (args.format == TableFileFormat::Parquet).then(|| Arc::new(ParquetSpill::new(&args.out)));
    let sink = spill.clone().map(|s| s as Arc<dyn ChunkSink>);
    let loaded = super::load_inputs_streaming(&args.input, sink)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (name, df) in loaded.tables.named() {
        let mut df = df.clone();
        let streamed = spill.as_ref().and_then(|s| s.writer(name));
        let (path, rows) = match streamed {
            // Chunks went out during reading: add what was left, then close the file.
            Some(stream) => stream.finish(&df)?,
            None => {
                let path = write_table_file(&mut df, &args.out, name, args.format)?;
                (path, df.height() as u64)
            }
        };
        writeln!(out, "{}\t{} rows", path.display(), rows)?;
    }
    Ok(0)
}

/// A Parquet file receiving chunks as they come.
struct Stream {
    path: PathBuf,
    writer: Mutex<Option<polars::io::parquet::write::BatchedWriter<File>>>,
    rows: Mutex<u64>,
    error: Mutex<Option<String>>,
}

impl Stream {
    fn new(path: PathBuf) -> Self {
        Stream { path, writer: Mutex::new(None), rows: Mutex::new(0), error: Mutex::new(None) }
    }

    /// Writes a chunk, opening the file with the chunk's schema on first use. Errors are kept
    /// and reported when the table is finished.
    fn write(&self, chunk: &DataFrame) {
        if chunk.height() == 0 {
            return;
        }
        let mut guard = match self.writer.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let result = (|| -> PolarsResult<()> {
            if guard.is_none() {
                let file = File::create(&self.path)?;
                *guard = Some(ParquetWriter::new(file).batched(chunk.schema())?);
            }
            if let Some(w) = guard.as_mut() {
                w.write_batch(chunk)?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => *self.rows.lock().unwrap_or_else(|p| p.into_inner()) += chunk.height() as u64,
            Err(e) => {
                let mut err = self.error.lock().unwrap_or_else(|p| p.into_inner());
                err.get_or_insert_with(|| format!("{}: {e}", self.path.display()));
            }
        }
    }

    fn started(&self) -> bool {
        self.writer.lock().map(|g| g.is_some()).unwrap_or(false)
    }

    /// Writes the rows that stayed in memory and closes the file.
    fn finish(&self, rest: &DataFrame) -> anyhow::Result<(PathBuf, u64)> {
        self.write(rest);
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            anyhow::bail!(e);
        }
        if let Some(w) = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.finish().map_err(|e| anyhow::anyhow!("{}: cannot finish: {e}", self.path.display()))?;
        }
        let rows = *self.rows.lock().unwrap_or_else(|p| p.into_inner());
        Ok((self.path.clone(), rows))
    }
}

/// Streams `frames` and `calls` chunks to `DIR/frames.parquet` and `DIR/calls.parquet`.
struct ParquetSpill {
    frames: Stream,
    calls: Stream,
}

impl ParquetSpill {
    fn new(dir: &Path) -> Self {
        ParquetSpill { frames: Stream::new(dir.join("frames.parquet")), calls: Stream::new(dir.join("calls.parquet")) }
    }

    /// The stream of a table, if chunks of it were written while reading.
    fn writer(&self, table: &str) -> Option<&Stream> {
        let stream = match table {
            "frames" => &self.frames,
            "calls" => &self.calls,
            _ => return None,
        };
        stream.started().then_some(stream)
    }
}

impl ChunkSink for ParquetSpill {
    fn frames(&self, chunk: DataFrame) {
        self.frames.write(&chunk);
    }
    fn calls(&self, chunk: DataFrame) {
        self.calls.write(&chunk);
    }
}
