//! Logs whose lines embed a whole JSON-RPC message after a prefix (docker compose, Rust
//! `tracing`, Go `log`, Python `logging`, JSON-lines records with the message in a string
//! field, Python bytes reprs of SSE chunks) and pasted excerpts of them: each message is a
//! frame, prefix and suffix are framing, other lines are events. Finding the message in a
//! line is `log_message.rs`; this file walks the lines.
//!
//! Paste markup is framing: indentation, markdown fences, `tail -f` headers (`==> f <==`),
//! headings and labels (`Request:`, `response`). A label's direction words carry to the next
//! message. A message pretty-printed over the lines after its prefix is one frame.

use std::io::Read;
use std::sync::Arc;

use super::hostlog::{BracketScan, JsonEnd, classify_event, json_end};
use super::line_loop::{LineReader, account_log_line_end, read_lines};
use super::log_message::{LineContent, direction_words, find, level_word, timestamp_us};
use super::split::Line;
use crate::ingest::frame::{Direction, Event, Frame, FramingCategory, Sink, Skip, SkipReason, Transport};

/// Lines of a pretty-printed message read before giving up on it (it stays a frame,
/// incomplete): bounds the work on a `{` that never closes.
const MAX_CONTINUATION_LINES: u32 = 100_000;

/// Reads an embedded-message log; `session` is the file stem (docker compose lines use
/// their service name).
pub fn read_embedded(reader: impl Read, session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut state = EmbeddedLog { session: session.to_string(), max_frame_bytes, pending: None, hint: None };
    read_lines(reader, max_frame_bytes, &mut state, sink);
}

struct EmbeddedLog {
    session: String,
    max_frame_bytes: usize,
    /// A message whose JSON continues on the next lines.
    pending: Option<Pending>,
    /// Direction named by the last label line, for the next message.
    hint: Option<Direction>,
}

struct Pending {
    frame: Frame,
    scan: BracketScan,
    lines: u32,
}

/// Whether a line (after indentation) is paste markup rather than log content.
pub fn is_markup(rest: &[u8]) -> bool {
    let t = rest.trim_ascii();
    if t.starts_with(b"```") || t.starts_with(b"~~~") || (t.starts_with(b"==> ") && t.ends_with(b" <==")) {
        return true;
    }
    if t.starts_with(b"#") && t.iter().take_while(|&&b| b == b'#').count() <= 6 && t.get(t.iter().take_while(|&&b| b == b'#').count()) == Some(&b' ') {
        return true;
    }
    is_label(t)
}

/// Whether the JSON value that opens in `from` (the rest of a line whose `{` does not close
/// on it, and the lines after) closes over the next lines as one JSON-RPC message, their
/// indentation taken as paste layout: format detection's test for a message wrapped or
/// pretty-printed in a paste (a source file quoting half a message is not one).
pub fn opens_wrapped_message(from: &[u8]) -> bool {
    let mut joined = Vec::new();
    for (i, l) in from.split(|&b| b == b'\n').take(64).enumerate() {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        joined.extend_from_slice(if i == 0 { l } else { l.trim_ascii_start() });
        joined.push(b'\n');
        match json_end(&joined) {
            JsonEnd::Complete(end) => return super::log_message::is_jsonrpc(&joined[..end]),
            JsonEnd::NeedMore => {}
            _ => return false,
        }
    }
    false
}

/// A short line of label words only (`Request:`, `**Response**`, `response from server`).
fn is_label(t: &[u8]) -> bool {
    const WORDS: &[&str] = &[
        "request", "requests", "response", "responses", "reply", "result", "notification", "message", "messages", "req", "resp", "res",
        "sent", "send", "received", "recv", "incoming", "outgoing", "from", "to", "client", "server", "the", "json", "json-rpc", "jsonrpc",
        "raw", "output", "input", "log", "logs", "error", "and", "->", "<-", ">>>", "<<<",
    ];
    if t.is_empty() || t.len() > 60 || t.contains(&b'{') {
        return false;
    }
    let words = t.trim_ascii_end().strip_suffix(b":").unwrap_or(t);
    let text = String::from_utf8_lossy(words).to_ascii_lowercase();
    let mut n = 0;
    for w in text.split(|c: char| c.is_whitespace() || c == '*' || c == '_' || c == '`' || c == '(' || c == ')') {
        if w.is_empty() {
            continue;
        }
        n += 1;
        if !WORDS.contains(&w) && w.parse::<u64>().is_err() {
            return false;
        }
    }
    n > 0
}

/// Length of a docker compose prefix (`service-1  | `) at the start of `rest`, and the service.
fn compose_prefix(rest: &[u8]) -> Option<(usize, &[u8])> {
    let name_len = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')).count();
    if name_len == 0 {
        return None;
    }
    let spaces = rest[name_len..].iter().take_while(|&&b| b == b' ').count();
    if spaces == 0 || rest.get(name_len + spaces) != Some(&b'|') {
        return None;
    }
    let mut len = name_len + spaces + 1;
    if rest.get(len) == Some(&b' ') {
        len += 1;
    }
    Some((len, &rest[..name_len]))
}

/// An event line's kind: the host-log kinds, and the words SDK logs use for a connection
/// ending (`connection closed`, `EOF`, `process exited`) as `transport_closed`.
fn classify(text: &str, level: &str) -> &'static str {
    let lower = text.to_ascii_lowercase();
    let closed = ["connection closed", "stream closed", "pipe closed", "session closed", "eof", "exited", "process exit", "shutting down", "shutdown"];
    match classify_event(text, level) {
        "log" | "error" | "warning" if closed.iter().any(|w| lower.contains(w)) => "transport_closed",
        kind => kind,
    }
}

/// A line that starts a new log record, so it cannot continue a pretty-printed message.
fn starts_record(rest: &[u8]) -> bool {
    timestamp_us(&rest[..rest.len().min(32)]).is_some() && rest.first().is_some_and(u8::is_ascii_digit)
}

impl EmbeddedLog {
    fn emit(&mut self, frame: Frame, sink: &mut dyn Sink) {
        sink.frame(frame);
    }

    /// Ends a pending message that never closed.
    fn abandon(&mut self, why: &str, sink: &mut dyn Sink) {
        if let Some(Pending { mut frame, .. }) = self.pending.take() {
            frame.incomplete = Some(why.to_string());
            self.emit(frame, sink);
        }
    }

    /// A line continuing a pretty-printed message (`content` after its layers).
    fn continue_pending(&mut self, content: &[u8], sink: &mut dyn Sink) {
        let Some(p) = self.pending.as_mut() else { return };
        p.frame.payload.extend_from_slice(content);
        p.frame.wire_bytes += content.len() as u64;
        p.lines += 1;
        p.scan.advance(&p.frame.payload);
        // The bracket that closes the message may end a wrapped line (`"supported":[...]}}}`)
        // with text after it (`}}}}' | server`): the scan sees it, the parse says where it ends.
        if p.scan.closed && !p.scan.hopeless {
            match json_end(&p.frame.payload) {
                JsonEnd::Complete(end) => {
                    let tail = p.frame.payload.len() - end;
                    p.frame.payload.truncate(end);
                    p.frame.wire_bytes -= tail as u64;
                    sink.framing(FramingCategory::LogLinePrefix, tail as u64);
                    if p.frame.payload.len() <= self.max_frame_bytes {
                        let Some(Pending { frame, .. }) = self.pending.take() else { return };
                        self.emit(frame, sink);
                        return;
                    }
                    // The line that closed the message carries it past the cap: cut below.
                }
                _ => p.scan.hopeless = true,
            }
        }
        if p.frame.payload.len() > self.max_frame_bytes {
            let cut = p.frame.payload.len() - self.max_frame_bytes;
            p.frame.payload.truncate(self.max_frame_bytes);
            p.frame.wire_bytes -= cut as u64;
            sink.skip(Skip {
                offset: p.frame.offset + p.frame.wire_bytes,
                bytes: cut as u64,
                reason: SkipReason::LineOverCap,
                detail: "multi-line message exceeds --max-frame-bytes".into(),
            });
            self.abandon("multi-line message exceeds --max-frame-bytes", sink);
        } else if p.lines >= MAX_CONTINUATION_LINES || p.scan.hopeless {
            self.abandon("multi-line JSON does not parse as one message", sink);
        }
    }

    /// One line that is not a continuation: `content` starts after `layer` bytes of
    /// indentation and docker compose prefix.
    fn record(&mut self, line: &Line<'_>, layer: usize, service: Option<&[u8]>, sink: &mut dyn Sink) {
        let content = &line.bytes[layer..];
        let session = service.map_or_else(|| self.session.clone(), |s| String::from_utf8_lossy(s).into_owned());
        if is_markup(content) && service.is_none() {
            let label = content.trim_ascii();
            if is_label(label) {
                self.hint = direction_words(label);
            }
            sink.framing(FramingCategory::PasteMarkup, line.bytes.len() as u64);
            return;
        }
        match find(content, 0) {
            LineContent::Messages(found) => {
                let hint = self.hint.take();
                let mut framed = 0u64;
                let mut prev_end = 0;
                for f in found {
                    let words = &content[prev_end.min(f.start)..f.start];
                    let mut frame = Frame::new(Transport::Log, direction_words(words).or(hint), line.offset + (layer + f.start) as u64, f.payload.into_owned());
                    frame.ts_us = timestamp_us(&content[..f.start]);
                    frame.session = Some(Arc::from(session.as_str()));
                    framed += frame.wire_bytes;
                    prev_end = f.end;
                    self.emit(frame, sink);
                }
                sink.framing(FramingCategory::LogLinePrefix, (line.bytes.len() as u64).saturating_sub(framed));
            }
            LineContent::Opens(start) => {
                let hint = self.hint.take();
                let mut frame = Frame::new(Transport::Log, direction_words(&content[..start]).or(hint), line.offset + (layer + start) as u64, content[start..].to_vec());
                frame.ts_us = timestamp_us(&content[..start]);
                frame.session = Some(Arc::from(session));
                sink.framing(FramingCategory::LogLinePrefix, (layer + start) as u64);
                if line.capped {
                    frame.incomplete = Some(format!("log line of {} bytes exceeds --max-frame-bytes", line.wire_bytes));
                    self.emit(frame, sink);
                } else {
                    let mut scan = BracketScan::default();
                    scan.advance(&frame.payload);
                    self.pending = Some(Pending { frame, scan, lines: 0 });
                }
            }
            LineContent::None => {
                let text = String::from_utf8_lossy(content).into_owned();
                let level = level_word(content).unwrap_or_else(|| "info".into());
                let kind = classify(&text, &level);
                sink.event(Event {
                    session: Some(session),
                    ts_us: timestamp_us(content),
                    offset: line.offset,
                    level,
                    server: service.map(|s| String::from_utf8_lossy(s).into_owned()),
                    kind: kind.into(),
                    text,
                    ..Event::default()
                });
                sink.framing(FramingCategory::LogEventLines, line.bytes.len() as u64);
            }
        }
    }
}

impl LineReader for EmbeddedLog {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        account_log_line_end(line, sink);
        let indent = line.bytes.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        let (compose, service) = match compose_prefix(&line.bytes[indent..]) {
            Some((len, name)) => (len, Some(name)),
            None => (0, None),
        };
        let layer = indent + compose;
        let content = &line.bytes[layer..];
        if self.pending.is_some() {
            let ends = content.trim_ascii().is_empty() || (is_markup(content) && !is_label(content.trim_ascii())) || starts_record(content);
            if ends {
                self.abandon("multi-line JSON never closed before the next log line", sink);
            } else {
                sink.framing(FramingCategory::LogLinePrefix, layer as u64);
                self.continue_pending(content, sink);
                self.newline(line, sink);
                return;
            }
        }
        if line.bytes.iter().all(u8::is_ascii_whitespace) && !line.capped {
            sink.framing(FramingCategory::BlankLines, line.bytes.len() as u64);
        } else {
            self.record(line, layer, service, sink);
        }
        self.newline(line, sink);
    }

    fn finish(&mut self, sink: &mut dyn Sink) {
        self.abandon("log ended inside a multi-line message", sink);
    }
}

impl EmbeddedLog {
    /// The line's `\n`: inside a pretty-printed message it is part of the frame.
    fn newline(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        if !line.terminated {
            return;
        }
        match self.pending.as_mut() {
            Some(p) if p.frame.payload.len() < self.max_frame_bytes => {
                p.frame.payload.push(b'\n');
                p.frame.wire_bytes += 1;
            }
            // The message is at the cap: its newline is past it.
            Some(p) => {
                sink.skip(Skip {
                    offset: p.frame.offset + p.frame.wire_bytes,
                    bytes: 1,
                    reason: SkipReason::LineOverCap,
                    detail: "multi-line message exceeds --max-frame-bytes".into(),
                });
                self.abandon("multi-line message exceeds --max-frame-bytes", sink);
            }
            None => sink.framing(FramingCategory::LineTerminators, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    fn read(log: &str) -> CollectSink {
        let mut sink = CollectSink::default();
        read_embedded(log.as_bytes(), "app", 1 << 20, &mut sink);
        assert_eq!(sink.accounted_bytes(), log.len() as i128, "every byte accounted: {:?}", sink.framing);
        sink
    }

    fn payloads(sink: &CollectSink) -> Vec<serde_json::Value> {
        sink.frames.iter().map(|f| serde_json::from_slice(&f.payload).unwrap()).collect()
    }

    #[test]
    fn docker_compose_lines_name_their_service() {
        let s = read("mcp-1  | {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nmcp-1  | Listening on stdio\nweb-1  | {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        assert_eq!(s.frames.len(), 2);
        assert_eq!(s.frames[0].session.as_deref(), Some("mcp-1"));
        assert_eq!(s.frames[1].session.as_deref(), Some("web-1"));
        assert_eq!(s.frames[0].offset, 9);
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0].text, "Listening on stdio");
    }

    #[test]
    fn tracing_lines_carry_time_level_and_words() {
        let s = read(concat!(
            "2026-12-01T10:00:00.123456Z DEBUG rmcp::service: client sending message={\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}\n",
            "2026-12-01T10:00:00.200000Z  INFO rmcp::service: client received message={\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n",
            "2026-12-01T10:00:01.000000Z ERROR rmcp::transport: connection closed\n",
        ));
        assert_eq!(s.frames.iter().map(|f| f.direction).collect::<Vec<_>>(), vec![Some(Direction::ClientToServer), Some(Direction::ServerToClient)]);
        assert_eq!(s.frames[0].ts_us, crate::ingest::time::parse_rfc3339_us("2026-12-01T10:00:00.123456Z"));
        assert_eq!((s.events[0].level.as_str(), s.events[0].kind.as_str()), ("error", "transport_closed"));
    }

    #[test]
    fn go_and_python_logging_prefixes() {
        let s = read(concat!(
            "2026/12/01 10:00:00 -> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
            "DEBUG:mcp.client.stdio:Sending client message: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n",
            "2026-12-01 10:00:00,123 - mcp.server.lowlevel.server - DEBUG - Received message: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n",
        ));
        assert_eq!(s.frames.iter().map(|f| f.direction).collect::<Vec<_>>(), vec![None, Some(Direction::ClientToServer), Some(Direction::ClientToServer)]);
        assert_eq!(s.frames[0].ts_us, crate::ingest::time::parse_rfc3339_us("2026-12-01T10:00:00Z"));
        assert_eq!(s.frames[2].ts_us, crate::ingest::time::parse_rfc3339_us("2026-12-01T10:00:00.123Z"));
    }

    #[test]
    fn json_lines_record_with_the_message_in_a_string() {
        let s = read(concat!(
            "{\"time\":\"2026-12-01T10:00:00Z\",\"level\":\"debug\",\"msg\":\"server received\",\"message\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"method\\\":\\\"ping\\\"}\"}\n",
            "{\"time\":\"2026-12-01T10:00:01Z\",\"level\":\"info\",\"msg\":\"server session disconnected\"}\n",
        ));
        assert_eq!(payloads(&s), vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})]);
        assert_eq!(s.frames[0].direction, Some(Direction::ClientToServer));
        assert_eq!(s.events[0].kind, "server_disconnected");
    }

    #[test]
    fn sse_chunk_reprs_yield_their_messages() {
        let s = read("DEBUG:sse_starlette.sse:chunk: b'event: message\\r\\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"caf\\xc3\\xa9\"}}\\r\\n\\r\\n'\n");
        assert_eq!(payloads(&s), vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"t": "café"}})]);
    }

    #[test]
    fn fenced_paste_with_labels_and_tail_header() {
        let s = read(concat!(
            "==> server.log <==\n",
            "```json\n",
            "Request:\n",
            "  {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n",
            "## Response\n",
            "  {\n",
            "    \"jsonrpc\": \"2.0\",\n",
            "    \"id\": 1,\n",
            "    \"result\": {}\n",
            "  }\n",
            "```\n",
        ));
        assert_eq!(s.frames.len(), 2);
        assert!(s.frames.iter().all(|f| f.incomplete.is_none()));
        assert_eq!(payloads(&s)[1]["id"], 1);
        assert!(s.events.is_empty(), "labels are markup: {:?}", s.events);
        assert!(s.framing.get("paste_markup").is_some_and(|&n| n > 0));
    }

    #[test]
    fn a_message_wrapped_in_a_shell_paste_closes_mid_line() {
        let s = read(concat!(
            "$ echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\n",
            "    \"cursor\":\"a\"}}' | srv\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32022,\n",
            "  \"message\":\"Unsupported protocol version\"}}\n",
        ));
        assert_eq!(s.frames.len(), 2);
        assert!(s.frames.iter().all(|f| f.incomplete.is_none()), "{:?}", s.frames);
        assert_eq!(payloads(&s)[1]["error"]["code"], -32022);
        assert!(opens_wrapped_message(b"{\"jsonrpc\":\"2.0\",\n  \"id\":1}' | x\n"));
        assert!(!opens_wrapped_message(b"{\"jsonrpc\":\"2.0\",',\n  'x'\n"));
    }

    #[test]
    fn a_pretty_message_that_never_closes_is_one_incomplete_frame() {
        let s = read("2026-12-01T10:00:00Z DEBUG sending message={\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n2026-12-01T10:00:01Z INFO next\n");
        assert_eq!(s.frames.len(), 1);
        assert!(s.frames[0].incomplete.is_some());
        assert_eq!(s.events.len(), 1);
    }
}
