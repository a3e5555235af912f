//! The loop every line reader shares: drives the [`LineSplitter`], hands each line (with its
//! offset) to a [`LineReader`] (or, where the frame is the whole line, as a buffer of its own
//! to [`read_owned_lines`]' callback), and reports a read error that ended the input early.
//! It interprets nothing: what a line means is the reader's job.

use std::io::Read;

use super::split::{Line, LineBuffers, LineSplitter, OwnedLine};
use crate::ingest::frame::{FramingCategory, Sink, Skip, SkipReason};

/// A newline-framed format: what to do with one line, and at the end of input.
pub trait LineReader {
    /// One line as on the wire; `line.offset` is its absolute byte offset.
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink);
    /// The input ended (after the last line, before a read error is reported).
    fn finish(&mut self, _sink: &mut dyn Sink) {}
}

/// Reads `reader` line by line into `format`, lines capped at `max_frame_bytes`.
pub fn read_lines(reader: impl Read, max_frame_bytes: usize, format: &mut dyn LineReader, sink: &mut dyn Sink) {
    let mut lines = LineSplitter::new(reader, max_frame_bytes);
    while let Some(line) = lines.next_line() {
        format.line(&line, sink);
    }
    format.finish(sink);
    report_read_error(&mut lines, sink);
}

/// Reads `reader` line by line as [`read_lines`] does, each line in a payload of its own for
/// formats whose frame is the whole line: long lines are handed over, not copied
/// ([`LineSplitter::next_owned_line`]); the payloads come from the sink.
pub fn read_owned_lines(reader: impl Read, max_frame_bytes: usize, on_line: &mut dyn FnMut(OwnedLine, &mut dyn Sink), sink: &mut dyn Sink) {
    let mut lines = LineSplitter::new(reader, max_frame_bytes);
    while let Some(line) = lines.next_owned_line(&mut SinkBuffers(sink)) {
        on_line(line, sink);
    }
    report_read_error(&mut lines, sink);
}

/// Payload buffers from the sink ([`Sink::copy_payload`], [`Sink::spare_payload`]).
struct SinkBuffers<'a>(&'a mut dyn Sink);

impl LineBuffers for SinkBuffers<'_> {
    fn copy(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.0.copy_payload(bytes)
    }
    fn spare(&mut self) -> Option<Vec<u8>> {
        self.0.spare_payload()
    }
}

/// A read error that ended the input early is a skip at the position reached.
fn report_read_error<R: Read>(lines: &mut LineSplitter<R>, sink: &mut dyn Sink) {
    if let Some(e) = lines.take_error() {
        sink.skip(Skip { offset: lines.position(), bytes: 0, reason: SkipReason::ReadError, detail: format!("input ended early: {e}") });
    }
}

/// Terminator and blank-line accounting of one-message-a-line formats (stdio, JSONL): the
/// `\n` is a line terminator, a blank line (with its `\r`) is framing. True when the line is
/// blank and so needs nothing more.
pub fn account_plain_line(line: &Line<'_>, sink: &mut dyn Sink) -> bool {
    if line.terminated {
        sink.framing(FramingCategory::LineTerminators, 1);
    }
    if line.is_blank() {
        sink.framing(FramingCategory::BlankLines, line.wire_bytes);
        return true;
    }
    false
}

/// The `\r` of a log line whose reader keeps the text (host logs, client logs, embedded logs)
/// is a terminator; what the splitter cut past `--max-frame-bytes` is a `line_over_cap` skip.
pub fn account_log_line_end(line: &Line<'_>, sink: &mut dyn Sink) {
    if line.had_cr {
        sink.framing(FramingCategory::LineTerminators, 1);
    }
    if line.capped {
        let cut = line.wire_bytes - line.bytes.len() as u64 - u64::from(line.had_cr);
        sink.skip(Skip {
            offset: line.offset + line.bytes.len() as u64,
            bytes: cut,
            reason: SkipReason::LineOverCap,
            detail: format!("log line of {} bytes exceeds --max-frame-bytes; the rest is not read", line.wire_bytes),
        });
    }
}
