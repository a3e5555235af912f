//! Where one capture's input bytes went: bytes in frames (by frame label), framing bytes by
//! category, skipped bytes by reason, and the diagnostics behind the skips. Counts only: it
//! reads nothing and knows no MCP (frame labels are whatever the model names them).

use std::collections::BTreeMap;

use super::frame::{FramingCategory, Skip};

/// One problem with the input, for `--stats` and stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    pub offset: u64,
    pub bytes: u64,
    pub reason: &'static str,
    pub detail: String,
}

/// The byte accounting of one capture (what `--stats` prints).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accounting {
    /// Framing overhead by category (line terminators, HTTP heads, ...).
    pub framing: BTreeMap<&'static str, u64>,
    pub diagnostics: Vec<Diagnostic>,
    /// Frames by label (the model's `kind`).
    pub frames_by_kind: BTreeMap<&'static str, u64>,
    /// Wire bytes of all frames.
    pub frame_bytes: u64,
    /// Skipped bytes by reason.
    pub skipped_bytes: BTreeMap<&'static str, u64>,
}

impl Accounting {
    /// Counts one frame of `wire_bytes`.
    pub fn frame(&mut self, kind: &'static str, wire_bytes: u64) {
        *self.frames_by_kind.entry(kind).or_default() += 1;
        self.frame_bytes += wire_bytes;
    }

    /// Counts framing overhead.
    pub fn framing(&mut self, category: FramingCategory, bytes: u64) {
        let category = category.as_str();
        *self.framing.entry(category).or_default() += bytes;
    }

    /// Counts a problem's bytes as skipped and keeps it.
    pub fn diagnostic(&mut self, d: Diagnostic) {
        *self.skipped_bytes.entry(d.reason).or_default() += d.bytes;
        self.diagnostics.push(d);
    }

    /// Counts a source's skip in `file`.
    pub fn skip(&mut self, file: &str, s: Skip) {
        self.diagnostic(Diagnostic { file: file.to_string(), offset: s.offset, bytes: s.bytes, reason: s.reason.as_str(), detail: s.detail });
    }
}
