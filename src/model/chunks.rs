//! Columnar chunking: frame and call rows go straight into column builders ([`Columns`]) and
//! become compact polars chunks (16,384 rows at a time), handed to a [`ChunkSink`] (`tables`
//! streams them to Parquet) or kept for the tables. It decides nothing about which rows are
//! ready; the capture model does.
#![allow(clippy::vec_box, reason = "answered calls stay in the boxes they were held in: moving a large row out of its box is a copy (measured, bench/README.md)")]

use std::sync::Arc;

use polars::prelude::{DataFrame, PolarsResult};

use super::rows::{CallRow, FrameRow};
use super::schema::Table;

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
/// columns by whoever writes the chunk ([`Chunk::into_df`]) so that the model thread (the
/// critical path of a capture) does not convert them.
pub struct Chunk {
    data: ChunkData,
}

enum ChunkData {
    Columns(DataFrame),
    Calls(Vec<Box<CallRow>>),
}

impl Chunk {
    pub fn of_columns(df: DataFrame) -> Self {
        Chunk { data: ChunkData::Columns(df) }
    }

    fn of_calls(rows: Vec<Box<CallRow>>) -> Self {
        Chunk { data: ChunkData::Calls(rows) }
    }

    /// Rows in the chunk.
    pub fn height(&self) -> usize {
        match &self.data {
            ChunkData::Columns(df) => df.height(),
            ChunkData::Calls(rows) => rows.len(),
        }
    }

    /// The chunk as columns.
    pub fn into_df(self) -> PolarsResult<DataFrame> {
        match self.data {
            ChunkData::Columns(df) => Ok(df),
            ChunkData::Calls(rows) => calls_df(&rows),
        }
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
}

impl<T: Table> Default for Columns<T> {
    fn default() -> Self {
        Columns { builders: None, height: 0 }
    }
}

impl<T: Table> Columns<T> {
    pub(crate) fn push(&mut self, row: &T) {
        T::push(self.builders.get_or_insert_with(|| T::builders(FRAME_CHUNK_ROWS)), row);
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
}

/// Turns the frames pushed into a chunk once there are [`FRAME_CHUNK_ROWS`] of them; the chunk
/// goes to `sink` or into `kept`.
pub(crate) fn chunk_frames(frames: &mut Columns<FrameRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> PolarsResult<()> {
    if frames.len() < FRAME_CHUNK_ROWS {
        return Ok(());
    }
    let chunk = frames.take()?;
    match sink {
        Some(sink) => sink.frames(Chunk::of_columns(chunk)),
        None => kept.push(chunk),
    }
    Ok(())
}

/// Turns finished calls into one chunk for `sink` (as rows: the sink's writer makes them
/// columns) or `kept`; on a (never expected) conversion error hands the rows back so nothing
/// is lost.
pub(crate) fn chunk_calls(rows: Vec<Box<CallRow>>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> Result<(), Vec<Box<CallRow>>> {
    if let Some(sink) = sink {
        sink.calls(Chunk::of_calls(rows));
        return Ok(());
    }
    match calls_df(&rows) {
        Ok(chunk) => {
            kept.push(chunk);
            Ok(())
        }
        Err(_) => Err(rows),
    }
}
