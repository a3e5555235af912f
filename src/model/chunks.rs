//! Columnar chunking: frame and call rows go straight into column builders ([`Columns`]) and
//! become compact polars chunks (16,384 rows at a time), handed to a [`ChunkSink`] (`tables`
//! streams them to Parquet) or kept for the tables. It decides nothing about which rows are
//! ready; the capture model does.
#![allow(clippy::vec_box, reason = "answered calls stay in the boxes they were held in: moving a large row out of its box is a copy (measured, bench/README.md)")]

use std::sync::{Arc, Mutex};

use polars::prelude::{DataFrame, PolarsResult};

use super::rows::{CallRow, FrameRow};
use super::schema::{FileChunk, Table, Target};

/// Frame rows are turned into a compact columnar chunk this often, so a capture of millions
/// of messages holds its frames as Arrow columns, not as row structs.
pub const FRAME_CHUNK_ROWS: usize = 1 << 14;
/// Answered calls are turned into columnar chunks once this many calls are held as rows.
pub const CALL_CHUNK_ROWS: usize = 1 << 14;

/// Receives finished chunks of `frames` and `calls` instead of the capture keeping them:
/// `tables` streams them to Parquet, so its memory does not grow with the row count.
pub trait ChunkSink: Send + Sync {
    fn frames(&self, chunk: Chunk);
    fn calls(&self, chunk: Chunk);
}

/// One chunk of a table on its way to a file: columns, or answered calls still rows, made
/// row groups by whoever writes the chunk ([`Chunk::into_file`]) so that the model thread (the
/// critical path of a capture) does not convert them.
pub struct Chunk {
    data: ChunkData,
}

enum ChunkData {
    Columns(DataFrame),
    File(FileChunk),
    Calls(Vec<Box<CallRow>>, Arc<Spares>),
}

impl Chunk {
    pub fn of_columns(df: DataFrame) -> Self {
        Chunk { data: ChunkData::Columns(df) }
    }

    fn of_file(chunk: FileChunk) -> Self {
        Chunk { data: ChunkData::File(chunk) }
    }

    fn of_calls(rows: Vec<Box<CallRow>>, spares: Arc<Spares>) -> Self {
        Chunk { data: ChunkData::Calls(rows, spares) }
    }

    /// Rows in the chunk.
    pub fn height(&self) -> usize {
        match &self.data {
            ChunkData::Columns(df) => df.height(),
            ChunkData::File(chunk) => chunk.height,
            ChunkData::Calls(rows, _) => rows.len(),
        }
    }

    /// The chunk as a Parquet part's row group.
    pub fn into_file(self) -> PolarsResult<FileChunk> {
        match self.data {
            ChunkData::Columns(df) => Ok(FileChunk::of_df(&df)),
            ChunkData::File(chunk) => Ok(chunk),
            ChunkData::Calls(rows, spares) => {
                let chunk = CallRow::to_file_chunk(&rows.iter().map(|r| &**r).collect::<Vec<_>>());
                spares.give_back(rows);
                chunk
            }
        }
    }
}

/// Boxes of answered calls made columns, handed back to the capture model that boxed them: a
/// new request's row goes into one ([`Spares::take_all`]) instead of a new allocation. A box
/// freed on the writer's thread and a new one allocated on the model's cost an allocation, a
/// free from another thread, and fresh pages faulted in after the allocator returned the old
/// ones. At most [`CALL_CHUNK_ROWS`] are kept (with the texts of the calls they held, dropped
/// as a box is reused).
#[derive(Default)]
pub(crate) struct Spares(Mutex<Vec<Box<CallRow>>>);

impl Spares {
    fn give_back(&self, mut rows: Vec<Box<CallRow>>) {
        let mut spares = self.0.lock().unwrap_or_else(|p| p.into_inner());
        rows.truncate(CALL_CHUNK_ROWS.saturating_sub(spares.len()));
        if spares.is_empty() {
            *spares = rows;
        } else {
            spares.append(&mut rows);
        }
    }

    /// Every box handed back so far.
    pub(crate) fn take_all(&self) -> Vec<Box<CallRow>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Answered calls as columns.
fn calls_df(rows: &[Box<CallRow>]) -> PolarsResult<DataFrame> {
    CallRow::to_df(&rows.iter().map(|r| &**r).collect::<Vec<_>>())
}

/// Rows pushed straight into a table's column builders, [`FRAME_CHUNK_ROWS`] at a time: a
/// row's strings are copied into the columns' buffers (and freed) as it comes, so no chunk of
/// row structs is ever held.
pub(crate) struct Columns<T: Table> {
    builders: Option<T::Builders>,
    height: usize,
    target: Target,
}

impl<T: Table> Columns<T> {
    /// Columns for `target`: [`Columns::take`] for memory, [`Columns::take_file`] for a file.
    pub(crate) fn new(target: Target) -> Self {
        Columns { builders: None, height: 0, target }
    }

    pub(crate) fn push(&mut self, row: &T) {
        let target = self.target;
        T::push(self.builders.get_or_insert_with(|| T::builders(FRAME_CHUNK_ROWS, target)), row);
        self.height += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.height
    }

    /// The rows pushed so far as columns (none left in the builders).
    pub(crate) fn take(&mut self) -> PolarsResult<DataFrame> {
        self.height = 0;
        match self.builders.take() {
            Some(b) => T::finish(b),
            None => T::to_df(&[]),
        }
    }

    /// The rows pushed so far as a Parquet part's row group (none left in the builders).
    pub(crate) fn take_file(&mut self) -> PolarsResult<FileChunk> {
        self.height = 0;
        match self.builders.take() {
            Some(b) => T::finish_file(b),
            None => T::to_file_chunk(&[]),
        }
    }
}

/// Turns the frames pushed into a chunk once there are [`FRAME_CHUNK_ROWS`] of them; the chunk
/// goes to `sink` or into `kept`.
pub(crate) fn chunk_frames(frames: &mut Columns<FrameRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> PolarsResult<()> {
    if frames.len() < FRAME_CHUNK_ROWS {
        return Ok(());
    }
    take_frames(frames, sink, kept)
}

/// Turns the frames pushed into a chunk for `sink` (a row group: the columns were built for a
/// file) or `kept`.
pub(crate) fn take_frames(frames: &mut Columns<FrameRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> PolarsResult<()> {
    match sink {
        Some(sink) => sink.frames(Chunk::of_file(frames.take_file()?)),
        None => kept.push(frames.take()?),
    }
    Ok(())
}

/// Turns finished calls into one chunk for `sink` (as rows: the sink's writer makes them
/// columns) or `kept`; on a (never expected) conversion error hands the rows back so nothing
/// is lost.
/// Either way the boxes come back to `spares`.
pub(crate) fn chunk_calls(rows: Vec<Box<CallRow>>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>, spares: &Arc<Spares>) -> Result<(), Vec<Box<CallRow>>> {
    if let Some(sink) = sink {
        sink.calls(Chunk::of_calls(rows, Arc::clone(spares)));
        return Ok(());
    }
    match calls_df(&rows) {
        Ok(chunk) => {
            kept.push(chunk);
            spares.give_back(rows);
            Ok(())
        }
        Err(_) => Err(rows),
    }
}
