//! Columnar chunking: frame and call rows become compact polars chunks (16,384 rows at a
//! time), handed to a [`ChunkSink`] (`tables` streams them to Parquet) or kept for the
//! tables. Rows handed to a sink become columns on the sink's writer thread ([`Chunk`]), off
//! the model thread, which is the critical path of a large capture. It decides nothing about
//! which rows are ready; the capture model does.

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

/// One chunk of a table on its way to a file: rows still to be converted to columns (by
/// whoever writes them, on their own thread), or columns already.
pub struct Chunk {
    height: usize,
    columns: Box<dyn FnOnce() -> PolarsResult<DataFrame> + Send>,
}

impl Chunk {
    /// Rows, converted when [`Chunk::into_df`] is called.
    pub fn of_rows<T: Table + Send + 'static>(rows: Vec<T>) -> Self {
        Chunk { height: rows.len(), columns: Box::new(move || T::to_df(&rows.iter().collect::<Vec<_>>())) }
    }

    /// Columns already built.
    pub fn of_columns(df: DataFrame) -> Self {
        Chunk { height: df.height(), columns: Box::new(move || Ok(df)) }
    }

    /// Rows in the chunk.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The chunk as columns (converting its rows, if it holds rows).
    pub fn into_df(self) -> PolarsResult<DataFrame> {
        (self.columns)()
    }
}

/// Turns `rows` into a chunk once there are [`FRAME_CHUNK_ROWS`] of them; the chunk goes to
/// `sink` or into `kept`. On a (never expected) conversion error the rows simply stay rows.
pub(crate) fn chunk_frames(rows: &mut Vec<FrameRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) {
    if rows.len() < FRAME_CHUNK_ROWS {
        return;
    }
    if let Some(sink) = sink {
        sink.frames(Chunk::of_rows(std::mem::replace(rows, Vec::with_capacity(FRAME_CHUNK_ROWS))));
        return;
    }
    let refs: Vec<&FrameRow> = rows.iter().collect();
    if let Ok(chunk) = FrameRow::to_df(&refs) {
        kept.push(chunk);
        rows.clear();
    }
}

/// Turns finished calls into one chunk for `sink` or `kept`; on a (never expected)
/// conversion error hands the rows back so nothing is lost (a sink's writer reports its own).
pub(crate) fn chunk_calls(rows: Vec<CallRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> Result<(), Vec<CallRow>> {
    if let Some(sink) = sink {
        sink.calls(Chunk::of_rows(rows));
        return Ok(());
    }
    match CallRow::to_df(&rows.iter().collect::<Vec<_>>()) {
        Ok(chunk) => {
            kept.push(chunk);
            Ok(())
        }
        Err(_) => Err(rows),
    }
}
