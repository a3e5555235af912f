//! Progress on stderr while ingesting (indicatif): a bar over the input bytes with frames,
//! rate and ETA. Hidden when stderr is not a terminal or when quiet; then [`load`] runs as is.
//!
//! The visible path runs [`load_with`] with a counting [`Sink`] around each capture's model;
//! a test keeps the two paths' tables equal.

use std::collections::HashMap;
use std::io::{IsTerminal as _, Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use crate::ingest::discover::{CaptureInput, discover};
use crate::ingest::frame::{Event, Frame, Sink, Skip};
use crate::ingest::run::{IngestOptions, ingest_capture};
use crate::load::{LoadError, Loaded, load, load_with};
use crate::model::capture::ModelOptions;
use crate::model::tables::ReaderLimit;

/// Whether progress would be drawn: stderr is a terminal and the user did not ask for quiet.
pub fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// [`load`] with a progress bar on stderr when [`visible`].
pub fn load_with_progress(paths: &[PathBuf], pairs: &[String], opts: &IngestOptions, model_opts: &ModelOptions, limits: &[ReaderLimit], quiet: bool) -> Result<Loaded, LoadError> {
    if !visible(quiet) {
        return load(paths, pairs, opts, model_opts, limits);
    }
    load_tracked(paths, pairs, opts, model_opts, limits, ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()))
}

/// Bytes a file will yield once read: its size, or for gzip the trailer's ISIZE (the
/// uncompressed size modulo 4 GiB; the bar clamps when it is off).
fn expected_bytes(path: &Path) -> u64 {
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

fn files_of(input: &CaptureInput) -> Vec<&Path> {
    match input {
        CaptureInput::File { path, .. } => vec![path.as_path()],
        CaptureInput::StdioPair { c2s, s2c, .. } => vec![c2s.as_path(), s2c.as_path()],
    }
}

fn style(frames: Arc<AtomicU64>) -> ProgressStyle {
    let template = "{spinner} ingest [{bar:28}] {binary_bytes}/{binary_total_bytes} · {frames} frames · {binary_bytes_per_sec} · ETA {eta}";
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("frames", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{}", crate::report::stats::thousands(frames.load(Ordering::Relaxed)));
        })
        .progress_chars("=> ")
}

/// [`load`], reporting bytes and frames to `bar`.
pub fn load_tracked(paths: &[PathBuf], pairs: &[String], opts: &IngestOptions, model_opts: &ModelOptions, limits: &[ReaderLimit], bar: ProgressBar) -> Result<Loaded, LoadError> {
    // Discovery runs again inside load_with; walking the folders twice is cheap.
    let inputs = discover(paths, pairs)?;
    let expected: HashMap<String, u64> = inputs.iter().flat_map(files_of).map(|p| (p.display().to_string(), expected_bytes(p))).collect();
    let frames = Arc::new(AtomicU64::new(0));
    bar.set_length(expected.values().sum());
    bar.set_style(style(Arc::clone(&frames)));
    let loaded = load_with(paths, pairs, model_opts, limits, &|input, model| {
        let mut sink = Counting { inner: model, bar: &bar, frames: &frames, expected: &expected, file_expected: 0, file_seen: 0 };
        let files = ingest_capture(input, opts, &mut sink);
        sink.end_file();
        files
    });
    bar.finish_and_clear();
    loaded
}

/// Forwards everything to the model and advances the bar by the bytes accounted, clamped to
/// each file's expected size so a file never counts for more than its share.
struct Counting<'a> {
    inner: &'a mut dyn Sink,
    bar: &'a ProgressBar,
    frames: &'a AtomicU64,
    expected: &'a HashMap<String, u64>,
    file_expected: u64,
    file_seen: u64,
}

impl Counting<'_> {
    fn advance(&mut self, bytes: u64) {
        let before = self.file_seen.min(self.file_expected);
        self.file_seen = self.file_seen.saturating_add(bytes);
        let after = self.file_seen.min(self.file_expected);
        if after > before {
            self.bar.inc(after - before);
        }
    }

    /// Counts whatever of the file's share the accounting did not reach.
    fn end_file(&mut self) {
        let done = self.file_seen.min(self.file_expected);
        self.bar.inc(self.file_expected - done);
        self.file_expected = 0;
        self.file_seen = 0;
    }
}

impl Sink for Counting<'_> {
    fn frame(&mut self, frame: Frame) {
        self.frames.fetch_add(1, Ordering::Relaxed);
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
    fn framing(&mut self, category: crate::ingest::frame::FramingCategory, bytes: u64) {
        self.advance(bytes);
        self.inner.framing(category, bytes);
    }
    fn begin_file(&mut self, file: &str) {
        self.end_file();
        self.file_expected = self.expected.get(file).copied().unwrap_or(0);
        self.inner.begin_file(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tables::default_limits;

    #[test]
    fn tracked_load_builds_the_same_tables_and_counts_every_byte() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let paths = vec![samples.join("stdio_ts"), samples.join("hostlog")];
        let (opts, model_opts, limits) = (IngestOptions::default(), ModelOptions::default(), default_limits());
        let plain = load(&paths, &[], &opts, &model_opts, &limits).expect("load samples");
        let bar = ProgressBar::hidden();
        let tracked = load_tracked(&paths, &[], &opts, &model_opts, &limits, bar.clone()).expect("load samples with progress");
        for ((name, a), (_, b)) in plain.tables.named().into_iter().zip(tracked.tables.named()) {
            assert!(a.equals_missing(b), "table {name} differs");
        }
        assert_eq!(bar.position(), bar.length().unwrap_or(0));
        assert!(bar.position() > 9_000_000, "the 9.5 MB gzip-compressed frame counts uncompressed: {}", bar.position());
    }
}
