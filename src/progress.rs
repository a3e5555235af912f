//! Progress on stderr while the pipeline reads (indicatif): a bar over the input bytes with
//! frames, rate and ETA, as a pipeline [`Observer`]. Hidden when stderr is not a terminal or
//! when quiet; then the pipeline takes its unobserved path.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use mcpsift::pipeline::Observer;
use std::sync::Arc;

/// Whether progress would be drawn: stderr is a terminal and the user did not ask for quiet.
pub fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A progress bar fed by the pipeline.
pub struct Bar {
    bar: ProgressBar,
    frames: Arc<AtomicU64>,
    shown: bool,
}

impl Bar {
    /// A bar on stderr, drawn only when [`visible`].
    pub fn stderr(quiet: bool) -> Self {
        let shown = visible(quiet);
        let bar = if shown { ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()) } else { ProgressBar::hidden() };
        Bar::on(bar, shown)
    }

    fn on(bar: ProgressBar, shown: bool) -> Self {
        Bar { bar, frames: Arc::new(AtomicU64::new(0)), shown }
    }
}

fn style(frames: Arc<AtomicU64>) -> ProgressStyle {
    let template = "{spinner} ingest [{bar:28}] {binary_bytes}/{binary_total_bytes} · {frames} frames · {binary_bytes_per_sec} · ETA {eta}";
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("frames", move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{}", mcpsift::report::stats::thousands(frames.load(Ordering::Relaxed)));
        })
        .progress_chars("=> ")
}

impl Observer for Bar {
    fn watching(&self) -> bool {
        self.shown
    }
    fn started(&self, total_bytes: u64) {
        self.bar.set_length(total_bytes);
        self.bar.set_style(style(Arc::clone(&self.frames)));
    }
    fn advanced(&self, bytes: u64) {
        self.bar.inc(bytes);
    }
    fn frame(&self) {
        self.frames.fetch_add(1, Ordering::Relaxed);
    }
    fn finished(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpsift::pipeline::{Request, Unobserved, run};
    use std::path::Path;

    #[test]
    fn tracked_load_builds_the_same_tables_and_counts_every_byte() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let request = Request::new(vec![samples.join("stdio_ts"), samples.join("hostlog")]);
        let plain = run(&request, &Unobserved).expect("load samples");
        let bar = ProgressBar::hidden();
        let tracked = run(&request, &Bar::on(bar.clone(), true)).expect("load samples with progress");
        for ((name, a), (_, b)) in plain.tables.named().into_iter().zip(tracked.tables.named()) {
            assert!(a.equals_missing(b), "table {name} differs");
        }
        assert_eq!(bar.position(), bar.length().unwrap_or(0));
        assert!(bar.position() > 9_000_000, "the 9.5 MB gzip-compressed frame counts uncompressed: {}", bar.position());
    }
}
