//! A packet capture read into a sink with its accounting closed: whatever the capture reader
//! read and did not account for (its header, the rest of an unreadable file, a buffer it could
//! not parse before a read error) becomes one counted skip.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::pcap::{PcapError, PcapOptions, read_capture};
use crate::ingest::accounting::accounted_bytes;
use crate::ingest::frame::{Event, Frame, FramingCategory, Sink, Skip, SkipReason};
use crate::ingest::input::{Counting, drain};

/// Reads a packet capture into `sink`; what the capture reader read and could not use (its
/// header, the rest of an unreadable file) is one counted skip.
pub fn read_pcap(reader: impl Read + Send, ports: &[u16], max_frame_bytes: usize, sink: &mut dyn Sink) {
    let pcap_opts = PcapOptions { ports: ports.to_vec(), max_frame_bytes: max_frame_bytes as u64 };
    let count = Arc::new(AtomicU64::new(0));
    let mut reader = Counting { inner: reader, count: Arc::clone(&count) };
    let mut tally = Tally { inner: sink, accounted: 0 };
    let Err(e) = read_capture(&mut reader, &pcap_opts, &mut tally) else { return };
    // Whatever the capture reader read and did not account for (its header, the rest of an
    // unreadable file, a buffer it could not parse before a read error) is one counted skip.
    let reason = match e {
        PcapError::Io { .. } => SkipReason::ReadError,
        _ => SkipReason::UnreadableCapture,
    };
    if reason == SkipReason::UnreadableCapture {
        drain(&mut reader);
    }
    let read = i128::from(count.load(Ordering::Relaxed));
    let (offset, bytes) = (u64::try_from(tally.accounted.clamp(0, read)).unwrap_or(0), u64::try_from(read - tally.accounted).unwrap_or(0));
    tally.inner.skip(Skip { offset, bytes, reason, detail: e.to_string() });
}

/// A sink that passes everything on and sums the input bytes it accounts for.
struct Tally<'s> {
    inner: &'s mut dyn Sink,
    accounted: i128,
}

impl Sink for Tally<'_> {
    fn frame(&mut self, frame: Frame) {
        self.accounted += i128::from(frame.wire_bytes);
        self.inner.frame(frame);
    }
    fn event(&mut self, event: Event) {
        self.inner.event(event);
    }
    fn skip(&mut self, skip: Skip) {
        self.accounted += i128::from(skip.bytes);
        self.inner.skip(skip);
    }
    fn framing(&mut self, category: FramingCategory, bytes: u64) {
        self.accounted += accounted_bytes(0, [(category.as_str(), bytes)], 0);
        self.inner.framing(category, bytes);
    }
    fn begin_file(&mut self, file: &str) {
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
