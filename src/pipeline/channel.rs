//! One capture from bytes to rows: reading (ingest) runs on its own thread and hands batches
//! of sink calls to the model over a bounded channel; each batch is parsed on the pool while
//! the one before it is absorbed, so reading, parsing and row building overlap. Absorbed
//! frames go back to the reading thread to be freed there: it allocated them, it is the least
//! busy, and the model thread (the critical path) neither frees nor takes the allocator's
//! lock of another thread's arena. The emptied batches go back too and are filled again:
//! a batch is a large allocation, and a fresh one per batch is fresh pages to fault in.
//! Knows nothing of discovery, tables or progress.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use rayon::prelude::*;

use crate::ingest::discover::CaptureInput;
use crate::ingest::frame::{Event, Frame, FramingCategory, Sink, Skip};
use crate::ingest::run::FileReport;
use crate::model::capture::{CaptureModel, CaptureRows, ModelOptions};
use crate::model::message::Parsed;

/// Batches in flight between the reading thread and the model (memory: this many batches).
const CHANNEL_BATCHES: usize = 1;
/// A batch is sent when it holds this many payload bytes or items.
const CHANNEL_BATCH_BYTES: usize = 2 << 20;
const CHANNEL_BATCH_ITEMS: usize = 2048;

/// Reads one capture into a sink (the model's end of the channel, possibly wrapped).
pub type IngestFn<'a> = dyn Fn(&CaptureInput, &mut dyn Sink) -> Vec<FileReport> + Sync + 'a;

/// Ingests one capture into rows; `ingest` runs on the reading thread.
pub fn capture_rows(input: &CaptureInput, ingest: &IngestFn<'_>, model_opts: &Arc<ModelOptions>) -> (Vec<FileReport>, CaptureRows) {
    let mut model = CaptureModel::new(input.name(), &default_session(input), Arc::clone(model_opts));
    let files = std::thread::scope(|scope| {
        let (tx, rx) = sync_channel::<Vec<SinkItem>>(CHANNEL_BATCHES);
        let (spent_tx, spent_rx) = sync_channel::<Vec<SinkItem>>(SPENT_BATCHES);
        let reader = scope.spawn(move || {
            let mut sink = ChannelSink { tx, spent: spent_rx, batch: Vec::with_capacity(CHANNEL_BATCH_ITEMS), spare: None, batch_bytes: 0 };
            let files = ingest(input, &mut sink);
            sink.send();
            files
        });
        // Batch n+1 is parsed (on the pool) while batch n is absorbed: absorbing is sequential,
        // parsing is not, and the two need not wait for each other.
        let mut ready: Option<(Vec<SinkItem>, Vec<Option<Parsed>>)> = None;
        for batch in rx {
            let (parsed, ()) = rayon::join(|| parse_ahead(&batch), || absorb(ready.take(), &mut model, &spent_tx));
            ready = Some((batch, parsed));
        }
        absorb(ready.take(), &mut model, &spent_tx);
        reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    (files, model.finish())
}

/// The parsed message of each frame of `batch`, on all cores of the pool.
fn parse_ahead(batch: &[SinkItem]) -> Vec<Option<Parsed>> {
    batch
        .par_iter()
        .with_min_len(64)
        .map(|item| match item {
            SinkItem::Frame(f) => Some(CaptureModel::parse_frame(f)),
            _ => None,
        })
        .collect()
}

/// Applies a batch parsed by [`parse_ahead`] to the model, in order, and hands the batch with
/// its frames back to the reading thread (or frees it here when that has gone or is behind).
fn absorb(ready: Option<(Vec<SinkItem>, Vec<Option<Parsed>>)>, model: &mut CaptureModel, spent: &SyncSender<Vec<SinkItem>>) {
    let Some((mut items, parsed)) = ready else { return };
    for (item, parsed) in items.iter_mut().zip(parsed) {
        match (item, parsed) {
            (SinkItem::Frame(f), Some(p)) => model.frame_parsed(f, p),
            (item, _) => std::mem::replace(item, SinkItem::Absorbed).apply(model),
        }
    }
    let _ = spent.try_send(items);
}

/// One sink call, carried from the reading thread to the model.
enum SinkItem {
    Frame(Frame),
    Event(Event),
    Skip(Skip),
    Framing(FramingCategory, u64),
    BeginFile(String),
    /// What is left of an item the model took.
    Absorbed,
}

impl SinkItem {
    fn apply(self, sink: &mut dyn Sink) {
        match self {
            SinkItem::Frame(f) => sink.frame(f),
            SinkItem::Event(e) => sink.event(e),
            SinkItem::Skip(s) => sink.skip(s),
            SinkItem::Framing(category, bytes) => sink.framing(category, bytes),
            SinkItem::BeginFile(file) => sink.begin_file(&file),
            SinkItem::Absorbed => {}
        }
    }
}

/// Absorbed batches of frames on their way back to the reading thread.
const SPENT_BATCHES: usize = 2;

/// The reading thread's sink: batches calls and sends them to the model, and frees the frames
/// the model is done with, keeping one emptied batch to fill next.
struct ChannelSink {
    tx: SyncSender<Vec<SinkItem>>,
    spent: Receiver<Vec<SinkItem>>,
    batch: Vec<SinkItem>,
    spare: Option<Vec<SinkItem>>,
    batch_bytes: usize,
}

impl ChannelSink {
    fn push(&mut self, item: SinkItem, bytes: usize) {
        self.batch.push(item);
        self.batch_bytes += bytes;
        if self.batch_bytes >= CHANNEL_BATCH_BYTES || self.batch.len() >= CHANNEL_BATCH_ITEMS {
            self.send();
        }
    }

    fn send(&mut self) {
        for mut spent in self.spent.try_iter() {
            spent.clear();
            self.spare.get_or_insert(spent);
        }
        if !self.batch.is_empty() {
            self.batch_bytes = 0;
            let next = self.spare.take().unwrap_or_else(|| Vec::with_capacity(CHANNEL_BATCH_ITEMS));
            // The model only stops receiving when it is gone; then there is nobody to tell.
            let _ = self.tx.send(std::mem::replace(&mut self.batch, next));
        }
    }
}

impl Sink for ChannelSink {
    fn frame(&mut self, frame: Frame) {
        let bytes = frame.payload.len();
        self.push(SinkItem::Frame(frame), bytes);
    }
    fn event(&mut self, event: Event) {
        self.push(SinkItem::Event(event), 0);
    }
    fn skip(&mut self, skip: Skip) {
        self.push(SinkItem::Skip(skip), 0);
    }
    fn framing(&mut self, category: FramingCategory, bytes: u64) {
        self.push(SinkItem::Framing(category, bytes), 0);
    }
    fn begin_file(&mut self, file: &str) {
        self.push(SinkItem::BeginFile(file.to_string()), 0);
    }
}

/// The session of frames that name none: the (first) file's name.
fn default_session(input: &CaptureInput) -> String {
    match input {
        CaptureInput::File { path, .. } | CaptureInput::StdioPair { c2s: path, .. } => {
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "-".into())
        }
    }
}
