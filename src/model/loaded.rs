//! One capture as a run loaded it: its name, the files read with their byte accounting, and its
//! rows (or, when they went to a dataset, their count of events).

use crate::ingest::run::{FileReport, is_not_a_capture};
use crate::model::capture::CaptureRows;

/// One capture's result.
pub struct LoadedCapture {
    pub name: String,
    pub files: Vec<FileReport>,
    pub rows: CaptureRows,
    /// Events of the capture (kept when its rows go to a dataset).
    pub events: usize,
}

impl LoadedCapture {
    pub fn new(name: String, files: Vec<FileReport>, rows: CaptureRows) -> Self {
        let events = rows.events.len();
        LoadedCapture { name, files, rows, events }
    }

    /// Whether this input is a capture at all (see [`is_not_a_capture`]): listed as skipped
    /// when not, counted as a capture when it is.
    pub fn is_capture(&self) -> bool {
        !is_not_a_capture(&self.files, !self.rows.accounting.frames_by_kind.is_empty() || self.events > 0)
    }
}
