//! Columnar chunking: frame and call rows become compact polars chunks (16,384 rows at a
//! time), handed to a [`ChunkSink`] (`tables` streams them to Parquet) or kept for the
//! tables. It decides nothing about which rows are ready; the capture model does.

use std::sync::Arc;

use polars::prelude::DataFrame;

use super::rows::{CallRow, FrameRow};
use super::schema::Table;

/// Frame rows are turned into a compact columnar chunk this often, so a capture of millions
/// of messages holds its frames as Arrow columns, not as row structs.
pub const FRAME_CHUNK_ROWS: usize = 1 << 14;
/// Answered calls are turned into columnar chunks once this many calls are held as rows.
pub const CALL_CHUNK_ROWS: usize = 1 << 14;

/// Receives finished columnar chunks of `frames` and `calls` instead of the capture keeping
/// them: `tables` streams them to Parquet, so its memory does not grow with the row count.
pub trait ChunkSink: Send + Sync {
    fn frames(&self, chunk: DataFrame);
    fn calls(&self, chunk: DataFrame);
}

/// Turns `rows` into a chunk once there are [`FRAME_CHUNK_ROWS`] of them; the chunk goes to
/// `sink` or into `kept`. On a (never expected) conversion error the rows simply stay rows.
pub(crate) fn chunk_frames(rows: &mut Vec<FrameRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) {
    if rows.len() < FRAME_CHUNK_ROWS {
        return;
    }
    let refs: Vec<&FrameRow> = rows.iter().collect();
    if let Ok(chunk) = FrameRow::to_df(&refs) {
        match sink {
            Some(sink) => sink.frames(chunk),
            None => kept.push(chunk),
        }
        rows.clear();
    }
}

/// Turns finished calls into one chunk for `sink` or `kept`; on a (never expected)
/// conversion error hands the rows back so nothing is lost.
pub(crate) fn chunk_calls(rows: Vec<CallRow>, sink: Option<&Arc<dyn ChunkSink>>, kept: &mut Vec<DataFrame>) -> Result<(), Vec<CallRow>> {
    match CallRow::to_df(&rows.iter().collect::<Vec<_>>()) {
        Ok(chunk) => {
            match sink {
                Some(sink) => sink.calls(chunk),
                None => kept.push(chunk),
            }
            Ok(())
        }
        Err(_) => Err(rows),
    }
}
