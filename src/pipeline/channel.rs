//! One capture from bytes to rows: reading (ingest) runs on its own thread and hands batches
//! of sink calls over a bounded channel; they are parsed on the pool and go over a second
//! bounded channel to the model, which absorbs them on a thread of its own, so reading,
//! parsing and row building overlap. Parsing runs up to two batches ahead of absorbing, so
//! neither waits for the other batch by batch (they took turns in one `rayon::join` per
//! batch before: `small.log` 2.745 -> 2.607 s, best of 6 in turns). Absorbed
//! frames go back to the reading thread to be freed there: it allocated them, it is the least
//! busy, and the model's thread (sequential) neither frees nor takes the allocator's
//! lock of another thread's arena. The model's thread uses no pool: a pool thread waiting to
//! hand it a batch never waits on the pool. The emptied batches go back too and are filled again:
//! a batch is a large allocation, and a fresh one per batch is fresh pages to fault in. So do
//! large payloads: the reading thread copies the next large line into one it got back
//! ([`Sink::copy_payload`]) instead of into fresh pages (`large.log`: 0.262 -> 0.239 s), or
//! reads on into one ([`Sink::spare_payload`]) when the line splitter hands its buffer over
//! with a long stdio line. Small payloads come back too, kept by size class (`SmallPayloads`).
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
/// Parsed batches waiting to be absorbed (memory: this many batches and their messages).
const PARSED_AHEAD: usize = 2;
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
            let mut sink = ChannelSink { tx, spent: spent_rx, batch: Vec::with_capacity(CHANNEL_BATCH_ITEMS), spare: Vec::new(), batch_bytes: 0, payloads: Vec::new(), small: SmallPayloads::default() };
            let files = ingest(input, &mut sink);
            sink.send();
            files
        });
        // Parsing (on the pool) runs ahead of absorbing (on a thread of its own, sequential) by
        // up to PARSED_AHEAD batches: neither waits for the other batch by batch.
        let (parsed_tx, parsed_rx) = sync_channel::<(Vec<SinkItem>, Vec<Option<Parsed>>)>(PARSED_AHEAD);
        let model = &mut model;
        let absorber = scope.spawn(move || {
            for ready in parsed_rx {
                absorb(ready, model, &spent_tx);
            }
        });
        for batch in rx {
            let parsed = parse_ahead(&batch);
            // Fails only when the absorbing thread has gone (it panicked): joined below.
            if parsed_tx.send((batch, parsed)).is_err() {
                break;
            }
        }
        drop(parsed_tx);
        absorber.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
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
fn absorb((mut items, parsed): (Vec<SinkItem>, Vec<Option<Parsed>>), model: &mut CaptureModel, spent: &SyncSender<Vec<SinkItem>>) {
    for (item, parsed) in items.iter_mut().zip(parsed) {
        match (item, parsed) {
            (SinkItem::Frame(f), Some(p)) => {
                model.frame_parsed(f, p);
                if f.payload.capacity() > RECYCLE_BUDGET_BYTES {
                    free_huge(std::mem::take(&mut f.payload));
                }
            }
            (item, _) => std::mem::replace(item, SinkItem::Absorbed).apply(model),
        }
    }
    let _ = spent.try_send(items);
}

/// Frees a payload too large to be recycled now, and has the allocator give its pages back at
/// once: a 256 MiB frame (a decompression bomb at the cap) stayed resident for mimalloc's purge
/// delay while the capture's rows were written, 20 MiB over the frame. Huge frames are rare, so
/// the forced collection costs nothing on small messages; with another global allocator the
/// call finds an empty mimalloc heap and does nothing.
fn free_huge(payload: Vec<u8>) {
    drop(payload);
    // SAFETY: mi_collect takes no pointers; it frees and purges what mimalloc holds unused.
    unsafe { libmimalloc_sys::mi_collect(true) };
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

/// Absorbed batches of frames on their way back to the reading thread, and emptied batches it
/// keeps to fill: the reading thread runs up to five batches ahead of the model (one filling,
/// one in the channel, two parsed ahead, one parsing), so with two of each 286 of `small.log`'s
/// 500 batches were new allocations (640 KiB each: fresh pages faulted in, 13% of the page
/// faults of `tables`) and 284 were freed.
const SPENT_BATCHES: usize = 4;
/// Payloads at least this large come back to the reading thread to be filled again by the
/// smallest that fits ([`Sink::copy_payload`]); smaller ones come back by size class
/// ([`SmallPayloads`]).
const RECYCLE_MIN_BYTES: usize = 64 << 10;
/// At most this many bytes of payloads wait to be filled again (memory: this much more).
const RECYCLE_BUDGET_BYTES: usize = 32 << 20;
/// Smaller payloads are made with room for a size class (a power of two, at least this), so
/// that one handed back holds any line of its class.
const SMALL_CLASS_MIN: usize = 256;
/// Size classes of small payloads: `SMALL_CLASS_MIN << k` below [`RECYCLE_MIN_BYTES`].
const SMALL_CLASSES: usize = (RECYCLE_MIN_BYTES / SMALL_CLASS_MIN).trailing_zeros() as usize;
/// At most this many bytes of small payloads wait to be filled again (memory: this much more).
const SMALL_BUDGET_BYTES: usize = 8 << 20;

/// The reading thread's sink: batches calls and sends them to the model, and frees the frames
/// the model is done with, keeping emptied batches to fill next.
struct ChannelSink {
    tx: SyncSender<Vec<SinkItem>>,
    spent: Receiver<Vec<SinkItem>>,
    batch: Vec<SinkItem>,
    /// Emptied batches to fill next, at most [`SPENT_BATCHES`].
    spare: Vec<Vec<SinkItem>>,
    batch_bytes: usize,
    /// Large payloads of absorbed frames, their old contents still in them, to be filled again.
    payloads: Vec<Vec<u8>>,
    /// Small payloads of absorbed frames, emptied, by size class, to be filled again.
    small: SmallPayloads,
}

/// Emptied small payloads by size class: a log of small messages copies each line into one
/// instead of allocating it, and frees none. Freeing a batch's payloads together emptied whole
/// pages of the allocator, which gave them back to the system after its purge delay (10 ms
/// then), so the next batch's lines faulted in and zeroed fresh pages (`small.log`: 18% of the
/// page faults of `tables`, plus a malloc and a free per line).
#[derive(Default)]
struct SmallPayloads {
    classes: [Vec<Vec<u8>>; SMALL_CLASSES],
    kept_bytes: usize,
}

impl SmallPayloads {
    /// The class of a payload of `len` bytes, and its capacity; `None` at or above
    /// [`RECYCLE_MIN_BYTES`].
    fn class_of(len: usize) -> Option<(usize, usize)> {
        let capacity = len.max(SMALL_CLASS_MIN).checked_next_power_of_two()?;
        (capacity < RECYCLE_MIN_BYTES).then(|| ((capacity / SMALL_CLASS_MIN).trailing_zeros() as usize, capacity))
    }

    /// `bytes` in a kept payload of their class, or in a new one with the class's room.
    fn copy(&mut self, bytes: &[u8]) -> Option<Vec<u8>> {
        let (class, capacity) = Self::class_of(bytes.len())?;
        let mut payload = match self.classes[class].pop() {
            Some(kept) => {
                self.kept_bytes -= kept.capacity();
                kept
            }
            None => Vec::with_capacity(capacity),
        };
        payload.extend_from_slice(bytes);
        Some(payload)
    }

    /// Keeps `payload`, emptied, if it is a whole class's room and the budget allows.
    fn keep(&mut self, mut payload: Vec<u8>) {
        if let Some((class, capacity)) = Self::class_of(payload.capacity())
            && capacity == payload.capacity()
            && self.kept_bytes + capacity <= SMALL_BUDGET_BYTES
        {
            payload.clear();
            self.kept_bytes += capacity;
            self.classes[class].push(payload);
        }
    }
}

impl ChannelSink {
    fn push(&mut self, item: SinkItem, bytes: usize) {
        self.batch.push(item);
        self.batch_bytes += bytes;
        if self.batch_bytes >= CHANNEL_BATCH_BYTES || self.batch.len() >= CHANNEL_BATCH_ITEMS {
            self.send();
        }
    }

    /// Takes back the batches the model is done with: their payloads to fill again, up to
    /// [`SPENT_BATCHES`] emptied batches to fill next.
    fn take_spent(&mut self) {
        while let Ok(mut spent) = self.spent.try_recv() {
            for item in spent.drain(..) {
                if let SinkItem::Frame(f) = item {
                    self.recycle(f.payload);
                }
            }
            if self.spare.len() < SPENT_BATCHES {
                self.spare.push(spent);
            }
        }
    }

    fn send(&mut self) {
        self.take_spent();
        if !self.batch.is_empty() {
            self.batch_bytes = 0;
            let next = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(CHANNEL_BATCH_ITEMS));
            // The model only stops receiving when it is gone; then there is nobody to tell.
            let _ = self.tx.send(std::mem::replace(&mut self.batch, next));
        }
    }

    /// Keeps a payload to be filled again: a small one by class ([`SmallPayloads::keep`]), a
    /// large one within [`RECYCLE_BUDGET_BYTES`] with its old contents still in it (a spare
    /// payload's length is bytes the line splitter need not zero again,
    /// [`Sink::spare_payload`]).
    fn recycle(&mut self, payload: Vec<u8>) {
        if payload.capacity() < RECYCLE_MIN_BYTES {
            return self.small.keep(payload);
        }
        let kept: usize = self.payloads.iter().map(Vec::capacity).sum();
        if kept + payload.capacity() <= RECYCLE_BUDGET_BYTES {
            self.payloads.push(payload);
        }
    }
}

impl Sink for ChannelSink {
    fn frame(&mut self, frame: Frame) {
        // Capacity, not length: a payload handed over by the line splitter may hold more than
        // its line, and memory in flight is what the batch size bounds.
        let bytes = frame.payload.capacity();
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
    /// `bytes` copied into the smallest recycled payload that holds them, or a small one of
    /// their class, or into a new one.
    fn copy_payload(&mut self, bytes: &[u8]) -> Vec<u8> {
        match self.payload_for(bytes.len()) {
            Some(mut payload) => {
                payload.extend_from_slice(bytes);
                payload
            }
            None => self.small.copy(bytes).unwrap_or_else(|| bytes.to_vec()),
        }
    }
    /// The smallest recycled payload that holds `len` bytes, emptied; none below
    /// [`RECYCLE_MIN_BYTES`] (small ones are kept by class instead).
    fn payload_for(&mut self, len: usize) -> Option<Vec<u8>> {
        if len < RECYCLE_MIN_BYTES {
            return None;
        }
        let fits = |payloads: &[Vec<u8>]| payloads.iter().enumerate().filter(|(_, p)| p.capacity() >= len).min_by_key(|(_, p)| p.capacity()).map(|(i, _)| i);
        // None kept fits: the model may have handed some back since the last batch was sent.
        let i = match fits(&self.payloads) {
            Some(i) => i,
            None => {
                self.take_spent();
                fits(&self.payloads)?
            }
        };
        let mut payload = self.payloads.swap_remove(i);
        payload.clear();
        Some(payload)
    }
    /// The largest recycled payload, its old contents still in it.
    fn spare_payload(&mut self) -> Option<Vec<u8>> {
        let largest = self.payloads.iter().enumerate().max_by_key(|(_, p)| p.capacity()).map(|(i, _)| i)?;
        Some(self.payloads.swap_remove(largest))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::frame::Transport;

    fn sink() -> (ChannelSink, SyncSender<Vec<SinkItem>>, Receiver<Vec<SinkItem>>) {
        let (tx, rx) = sync_channel(4);
        let (spent_tx, spent_rx) = sync_channel(4);
        (ChannelSink { tx, spent: spent_rx, batch: Vec::new(), spare: Vec::new(), batch_bytes: 0, payloads: Vec::new(), small: SmallPayloads::default() }, spent_tx, rx)
    }

    fn frame_of(payload: Vec<u8>) -> SinkItem {
        SinkItem::Frame(Frame::new(Transport::Stdio, None, 0, payload))
    }

    #[test]
    fn large_payloads_come_back_to_be_filled_again_small_ones_do_not() {
        let (mut sink, spent, _sent) = sink();
        let large = vec![7u8; 1 << 20];
        let (large_at, large_cap) = (large.as_ptr(), large.capacity());
        spent.send(vec![frame_of(large), frame_of(vec![1u8; 100])]).unwrap();
        sink.send();
        assert_eq!(sink.payloads.len(), 1, "only the large payload is kept");
        let small = sink.copy_payload(&[2u8; 100]);
        assert!(small == [2u8; 100] && small.as_ptr() != large_at, "a small payload is a new one");
        let line = vec![3u8; 300_000];
        let again = sink.copy_payload(&line);
        assert_eq!((again.as_ptr(), again.capacity()), (large_at, large_cap), "the same allocation");
        assert!(again == line, "holding only the new line's bytes");
        assert!(sink.payloads.is_empty());
        let bigger = sink.copy_payload(&vec![4u8; 2 << 20]);
        assert!(bigger.len() == 2 << 20 && bigger.as_ptr() != large_at, "nothing recycled fits: a new one");
    }

    #[test]
    fn a_payload_asked_for_is_taken_from_batches_handed_back_since_the_last_send() {
        let (mut sink, spent, _sent) = sink();
        assert!(sink.payload_for(1 << 20).is_none(), "nothing kept, nothing handed back");
        let large = vec![7u8; 2 << 20];
        let large_at = large.as_ptr();
        spent.send(vec![frame_of(large)]).unwrap();
        // No batch sent since: the payload asked for still comes from the one handed back.
        let room = sink.payload_for(1 << 20).expect("the handed-back payload fits");
        assert!(room.is_empty() && room.as_ptr() == large_at && room.capacity() >= 2 << 20);
        assert!(sink.payload_for(64).is_none(), "none below RECYCLE_MIN_BYTES");
    }

    #[test]
    fn small_payloads_come_back_by_size_class_within_their_budget() {
        let (mut sink, spent, _sent) = sink();
        let line = sink.copy_payload(&[5u8; 300]);
        assert!(line == [5u8; 300] && line.capacity() == 512, "room for the class of 300 bytes");
        let at = line.as_ptr();
        let odd = vec![6u8; 300];
        spent.send(vec![frame_of(line), frame_of(odd)]).unwrap();
        sink.send();
        assert_eq!(sink.small.kept_bytes, 512, "only the payload with a class's room is kept");
        let next_class = sink.copy_payload(&[7u8; 600]);
        assert!(next_class.capacity() == 1024 && next_class.as_ptr() != at, "600 bytes are of the next class");
        let again = sink.copy_payload(&[8u8; 257]);
        assert!(again == [8u8; 257] && again.as_ptr() == at, "the kept one, holding the new line only");
        assert_eq!(sink.small.kept_bytes, 0);
        let many = SMALL_BUDGET_BYTES / 256 + 10;
        spent.send((0..many).map(|_| frame_of(Vec::with_capacity(256))).collect()).unwrap();
        sink.send();
        assert_eq!(sink.small.kept_bytes, SMALL_BUDGET_BYTES, "no more than the budget");
    }

    #[test]
    fn recycled_payloads_stay_within_the_budget() {
        let (mut sink, spent, _sent) = sink();
        let each = 12 << 20;
        spent.send((0..4).map(|_| frame_of(Vec::with_capacity(each))).collect()).unwrap();
        sink.send();
        let kept: usize = sink.payloads.iter().map(Vec::capacity).sum();
        assert_eq!(sink.payloads.len(), RECYCLE_BUDGET_BYTES / each);
        assert!(kept <= RECYCLE_BUDGET_BYTES);
    }
}
