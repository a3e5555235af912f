//! Raw stdio tee logs: one JSON-RPC message per line, one file per direction (or a lone file).

use std::io::Read;
use std::sync::Arc;

use super::line_loop::{account_plain_line, read_owned_lines};
use super::split::OwnedLine;
use crate::ingest::frame::{Direction, Frame, Sink, Transport};

/// Feeds every line of `reader` to `sink` as a stdio frame. `direction` is `None` for a lone
/// file whose direction model infers per message. `session` names the pair.
pub fn read_stdio(reader: impl Read, direction: Option<Direction>, session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let session: Arc<str> = Arc::from(session);
    read_owned_lines(reader, max_frame_bytes, &mut |line, sink| stdio_line(line, direction, &session, sink), sink);
}

/// Every non-blank line is one frame, its payload the line itself.
fn stdio_line(line: OwnedLine, direction: Option<Direction>, session: &Arc<str>, sink: &mut dyn Sink) {
    if account_plain_line(&line.line(), sink) {
        return;
    }
    let incomplete = if line.capped {
        Some(format!("line of {} bytes exceeds --max-frame-bytes; first {} bytes kept", line.wire_bytes, line.bytes.len()))
    } else if !line.terminated {
        Some("stream ended without a newline".to_string())
    } else {
        None
    };
    let mut frame = Frame::new(Transport::Stdio, direction, line.offset, line.bytes);
    frame.wire_bytes = line.wire_bytes;
    frame.session = Some(Arc::clone(session));
    frame.incomplete = incomplete;
    if line.had_cr {
        frame.note = Some("CRLF line ending".to_string());
    }
    sink.frame(frame);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

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
