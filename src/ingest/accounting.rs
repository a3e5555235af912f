//! Where one capture's input bytes went: bytes in frames (by frame label), framing bytes by
//! category, skipped bytes by reason, and the diagnostics behind the skips; and the sink that
//! keeps a reader's output whole to check them ([`CollectSink`]). Counts only: it reads nothing
//! and knows no MCP (frame labels are whatever the model names them).

use std::collections::BTreeMap;

use super::frame::{Event, Frame, FramingCategory, Sink, Skip};

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

/// Input bytes that frames, framing and skips account for; equals the bytes read when the
/// accounting closes. Two framing counts are not input bytes and are taken out: frames and the
/// HTTP/SSE categories of a compressed body count what it decoded to, so
/// `http_gzip_decoded_bytes` is subtracted (it is in the sum once, the decoded bytes once more
/// in frames and categories) while `http_gzip_encoded_bytes` holds its bytes on the wire; and
/// `recorded_sizes` is subtracted (sizes of messages a recorder described but did not keep).
/// Bytes lost in TCP gaps are in the `wire_bytes` of the frames they cut but were never read:
/// the caller adds them to the bytes read when it knows them.
pub fn accounted_bytes<'a>(frame_bytes: u64, framing: impl IntoIterator<Item = (&'a str, u64)>, skipped_bytes: u64) -> i128 {
    let framing: i128 = framing
        .into_iter()
        .map(|(category, bytes)| if FramingCategory::name_is_not_read(category) { -i128::from(bytes) } else { i128::from(bytes) })
        .sum();
    i128::from(frame_bytes) + framing + i128::from(skipped_bytes)
}

impl Accounting {
    /// Input bytes these counts account for (see [`accounted_bytes`]).
    pub fn accounted_bytes(&self) -> i128 {
        accounted_bytes(
            self.frame_bytes,
            self.framing.iter().map(|(k, v)| (*k, *v)),
            self.skipped_bytes.values().sum(),
        )
    }

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

/// A sink that keeps everything in memory; for tests and small tools.
#[derive(Debug, Default)]
pub struct CollectSink {
    pub frames: Vec<Frame>,
    pub events: Vec<Event>,
    pub skips: Vec<Skip>,
    /// Framing bytes by category name.
    pub framing: std::collections::BTreeMap<&'static str, u64>,
}

impl CollectSink {
    /// Input bytes its frames, framing and skips account for (see
    /// [`accounted_bytes`]).
    pub fn accounted_bytes(&self) -> i128 {
        accounted_bytes(
            self.frames.iter().map(|f| f.wire_bytes).sum(),
            self.framing.iter().map(|(k, v)| (*k, *v)),
            self.skips.iter().map(|s| s.bytes).sum(),
        )
    }
}

impl Sink for CollectSink {
    fn frame(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }
    fn skip(&mut self, skip: Skip) {
        self.skips.push(skip);
    }
    fn framing(&mut self, category: FramingCategory, bytes: u64) {
        *self.framing.entry(category.as_str()).or_default() += bytes;
    }
}
