//! Raw stdio tee logs: one JSON-RPC message per line, one file per direction (or a lone file).

use std::io::Read;

use super::line_loop::{LineReader, account_plain_line, read_lines};
use super::split::Line;
use crate::ingest::frame::{Direction, Frame, Sink, Transport};

/// Feeds every line of `reader` to `sink` as a stdio frame. `direction` is `None` for a lone
/// file whose direction model infers per message. `session` names the pair.
pub fn read_stdio(reader: impl Read, direction: Option<Direction>, session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    read_lines(reader, max_frame_bytes, &mut StdioLines { direction, session }, sink);
}

/// Every non-blank line is one frame.
struct StdioLines<'a> {
    direction: Option<Direction>,
    session: &'a str,
}

impl LineReader for StdioLines<'_> {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        if account_plain_line(line, sink) {
            return;
        }
        let mut frame = Frame::new(Transport::Stdio, self.direction, line.offset, sink.copy_payload(line.bytes));
        frame.wire_bytes = line.wire_bytes;
        frame.session = Some(self.session.to_string());
        if line.capped {
            frame.incomplete = Some(format!(
                "line of {} bytes exceeds --max-frame-bytes; first {} bytes kept",
                line.wire_bytes,
                line.bytes.len()
            ));
        } else if !line.terminated {
            frame.incomplete = Some("stream ended without a newline".to_string());
        }
        if line.had_cr {
            frame.note = Some("CRLF line ending".to_string());
        }
        sink.frame(frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::frame::CollectSink;

    #[test]
    fn frames_carry_offsets_sizes_and_incompleteness() {
        let mut sink = CollectSink::default();
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\r\n\nbanner\n{\"jsonrpc\"";
        read_stdio(&input[..], Some(Direction::ServerToClient), "s", 1 << 20, &mut sink);
        let got: Vec<_> = sink.frames.iter().map(|f| (f.offset, f.wire_bytes, f.incomplete.is_some())).collect();
        assert_eq!(got, vec![(0, 41, false), (43, 6, false), (50, 10, true)]);
        assert_eq!(sink.framing.get("line_terminators"), Some(&3));
        let framed: u64 = sink.frames.iter().map(|f| f.wire_bytes).sum::<u64>() + 3;
        assert_eq!(framed, input.len() as u64, "every byte accounted");
    }
}
