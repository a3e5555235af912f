//! A capture's file reports and byte accounting as the manifest keeps them, and back: what a
//! reading command needs of a capture besides its rows (`--stats`, the report's capture list,
//! the capture count). Knows nothing of parts.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::ingest::accounting::{Accounting, Diagnostic};
use crate::ingest::formats::Format;
use crate::ingest::run::FileReport;
use crate::model::capture::CaptureRows;
use crate::model::loaded::LoadedCapture;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    pub path: String,
    pub format: String,
    pub file_bytes: u64,
    pub gzip: bool,
    pub bytes_read: u64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosticSummary {
    pub file: String,
    pub offset: u64,
    pub bytes: u64,
    pub reason: String,
    pub detail: String,
}

/// Everything of a capture but its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureSummary {
    pub files: Vec<FileSummary>,
    /// Events of the capture (in the events parts).
    pub events: usize,
    pub framing: BTreeMap<String, u64>,
    pub frames_by_kind: BTreeMap<String, u64>,
    pub frame_bytes: u64,
    pub skipped_bytes: BTreeMap<String, u64>,
    pub diagnostics: Vec<DiagnosticSummary>,
}

impl CaptureSummary {
    pub fn of(capture: &LoadedCapture) -> Self {
        let a = &capture.rows.accounting;
        let owned = |m: &BTreeMap<&'static str, u64>| m.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        CaptureSummary {
            files: capture
                .files
                .iter()
                .map(|f| FileSummary { path: f.path.clone(), format: f.format.as_str().into(), file_bytes: f.file_bytes, gzip: f.gzip, bytes_read: f.bytes_read, error: f.error.clone() })
                .collect(),
            events: capture.events,
            framing: owned(&a.framing),
            frames_by_kind: owned(&a.frames_by_kind),
            frame_bytes: a.frame_bytes,
            skipped_bytes: owned(&a.skipped_bytes),
            diagnostics: a
                .diagnostics
                .iter()
                .map(|d| DiagnosticSummary { file: d.file.clone(), offset: d.offset, bytes: d.bytes, reason: d.reason.into(), detail: d.detail.clone() })
                .collect(),
        }
    }

    /// The capture as a reading command sees it: accounting and files, no rows (those are in
    /// the parts).
    pub fn to_capture(&self, name: &str) -> LoadedCapture {
        let static_keys = |m: &BTreeMap<String, u64>| m.iter().map(|(k, v)| (intern(k), *v)).collect();
        let accounting = Accounting {
            framing: static_keys(&self.framing),
            diagnostics: self
                .diagnostics
                .iter()
                .map(|d| Diagnostic { file: d.file.clone(), offset: d.offset, bytes: d.bytes, reason: intern(&d.reason), detail: d.detail.clone() })
                .collect(),
            frames_by_kind: static_keys(&self.frames_by_kind),
            frame_bytes: self.frame_bytes,
            skipped_bytes: static_keys(&self.skipped_bytes),
        };
        let files = self
            .files
            .iter()
            .map(|f| FileReport {
                path: f.path.clone(),
                format: Format::from_name(&f.format).unwrap_or(Format::Unrecognized),
                file_bytes: f.file_bytes,
                gzip: f.gzip,
                bytes_read: f.bytes_read,
                error: f.error.clone(),
                blake3: None,
            })
            .collect();
        LoadedCapture { name: name.to_string(), files, rows: CaptureRows { accounting, ..CaptureRows::default() }, events: self.events }
    }
}

/// The accounting's labels are `&'static str` (ingest names them from fixed lists); labels read
/// back from a manifest are interned: each distinct label is allocated once per process.
fn intern(label: &str) -> &'static str {
    static LABELS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut guard = LABELS.lock().unwrap_or_else(|p| p.into_inner());
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(known) = set.get(label) {
        return known;
    }
    let leaked: &'static str = Box::leak(label.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_reads_back_as_the_same_capture() {
        let mut accounting = Accounting::default();
        accounting.framing.insert("line_terminator", 7);
        accounting.frames_by_kind.insert("request", 2);
        accounting.frame_bytes = 120;
        accounting.skipped_bytes.insert("not_json", 5);
        accounting.diagnostics.push(Diagnostic { file: "a.log".into(), offset: 9, bytes: 5, reason: "not_json", detail: "x".into() });
        let files = vec![FileReport { path: "a.log".into(), format: Format::Stdio, file_bytes: 132, gzip: false, bytes_read: 132, error: None, blake3: None }];
        let capture = LoadedCapture { name: "a.log".into(), files, rows: CaptureRows { accounting, ..CaptureRows::default() }, events: 0 };
        let summary = CaptureSummary::of(&capture);
        let json = serde_json::to_string(&summary).expect("serializes");
        let back: CaptureSummary = serde_json::from_str(&json).expect("parses");
        let again = back.to_capture("a.log");
        assert_eq!(again.files, capture.files);
        assert_eq!(again.rows.accounting, capture.rows.accounting);
        assert!(again.is_capture());
    }
}
