//! Watching a run from outside: the [`Observer`] a caller passes to [`super::run`] (a progress
//! bar in the binary, nothing in tests), and the counting sink that feeds it. Draws nothing.

use std::collections::HashMap;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

use crate::ingest::discover::CaptureInput;
use crate::ingest::frame::{Event, Frame, FramingCategory, Sink, Skip};

/// What a run tells its watcher. Every method has an empty default; calls come from the
/// reading threads of several captures at once.
pub trait Observer: Sync {
    /// Whether to count at all: when false (the default) the run takes its plain path and no
    /// other method is called.
    fn watching(&self) -> bool {
        false
    }
    /// After discovery: the bytes every input file will yield once read.
    fn started(&self, _total_bytes: u64) {}
    /// Input bytes accounted for (frames, framing, skips), never more than a file's share.
    fn advanced(&self, _bytes: u64) {}
    /// One more frame read.
    fn frame(&self) {}
    /// Every capture is read; tables are being built.
    fn finished(&self) {}
}

/// The observer that watches nothing.
pub struct Unobserved;

impl Observer for Unobserved {}

/// Bytes a file will yield once read: its size, or for gzip the trailer's ISIZE (the
/// uncompressed size modulo 4 GiB; the count clamps when it is off).
pub fn expected_bytes(path: &Path) -> u64 {
    let Ok(mut f) = std::fs::File::open(path) else { return 0 };
    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut magic = [0u8; 2];
    if size < 18 || f.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        return size;
    }
    let mut isize = [0u8; 4];
    if f.seek(SeekFrom::End(-4)).is_err() || f.read_exact(&mut isize).is_err() {
        return size;
    }
    u64::from(u32::from_le_bytes(isize)).max(size)
}

/// The files of one capture.
pub fn files_of(input: &CaptureInput) -> Vec<&Path> {
    match input {
        CaptureInput::File { path, .. } => vec![path.as_path()],
        CaptureInput::StdioPair { c2s, s2c, .. } => vec![c2s.as_path(), s2c.as_path()],
    }
}

/// Forwards everything to the model and tells the observer the bytes accounted, clamped to
/// each file's expected size so a file never counts for more than its share.
pub struct Counting<'a> {
    pub inner: &'a mut dyn Sink,
    pub observer: &'a dyn Observer,
    pub expected: &'a HashMap<String, u64>,
    pub file_expected: u64,
    pub file_seen: u64,
}

impl<'a> Counting<'a> {
    pub fn new(inner: &'a mut dyn Sink, observer: &'a dyn Observer, expected: &'a HashMap<String, u64>) -> Self {
        Counting { inner, observer, expected, file_expected: 0, file_seen: 0 }
    }

    fn advance(&mut self, bytes: u64) {
        let before = self.file_seen.min(self.file_expected);
        self.file_seen = self.file_seen.saturating_add(bytes);
        let after = self.file_seen.min(self.file_expected);
        if after > before {
            self.observer.advanced(after - before);
        }
    }

    /// Counts whatever of the file's share the accounting did not reach.
    pub fn end_file(&mut self) {
        let done = self.file_seen.min(self.file_expected);
        if self.file_expected > done {
            self.observer.advanced(self.file_expected - done);
        }
        self.file_expected = 0;
        self.file_seen = 0;
    }
}

impl Sink for Counting<'_> {
    fn frame(&mut self, frame: Frame) {
        self.observer.frame();
        self.advance(frame.wire_bytes);
        self.inner.frame(frame);
    }
    fn event(&mut self, event: Event) {
        self.inner.event(event);
    }
    fn skip(&mut self, skip: Skip) {
        self.advance(skip.bytes);
        self.inner.skip(skip);
    }
    fn framing(&mut self, category: FramingCategory, bytes: u64) {
        self.advance(bytes);
        self.inner.framing(category, bytes);
    }
    fn begin_file(&mut self, file: &str) {
        self.end_file();
        self.file_expected = self.expected.get(file).copied().unwrap_or(0);
        self.inner.begin_file(file);
    }
    fn copy_payload(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.inner.copy_payload(bytes)
    }
    fn spare_payload(&mut self) -> Option<Vec<u8>> {
        self.inner.spare_payload()
    }
    fn payload_for(&mut self, len: usize) -> Option<Vec<u8>> {
        self.inner.payload_for(len)
    }
}
