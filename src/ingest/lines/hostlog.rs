//! Host application logs (Claude Desktop per-server and combined logs, VS Code's MCP output
//! channel): message lines become frames, every other line an event.
//!
//! Line shapes:
//! `<RFC3339> [server] [level] Message from client: <JSON>[ { metadata: ... }]`,
//! `<RFC3339> [level] [server] Message from server: <JSON>`,
//! `<date time> [info] [Client Says] <JSON>` / `[Server Says]`.
//! The JSON may be pretty-printed over the following lines. A body the host cut
//! (`...[N chars truncated]...`) stays a frame; model will find it invalid JSON.
//! The one MCP fact used here is spotting `initialize`, because a host log's session is
//! "server name + each initialize" (DESIGN.md).

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use serde::de::IgnoredAny;

use crate::ingest::time::starts_with_timestamp;
use crate::ingest::frame::{Direction, Event, Frame, FramingCategory, Sink, Skip, SkipReason, Transport};
use super::line_loop::{LineReader, account_log_line_end, read_lines};
use super::split::Line;
use crate::ingest::time::parse_rfc3339_us;

const LEVELS: &[&str] = &["trace", "debug", "info", "notice", "warn", "warning", "error", "fatal", "critical"];

/// Whether a log line carries an MCP message (used by format detection).
pub fn is_message_line(line: &[u8]) -> bool {
    let finder = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
    finder(b"Message from client:") || finder(b"Message from server:") || finder(b"[Client Says]") || finder(b"[Server Says]")
}

/// The parts of one timestamped line.
struct Header<'a> {
    ts_us: Option<i64>,
    level: Option<String>,
    server: Option<String>,
    direction: Option<Direction>,
    /// Byte index in the line where the JSON (or the event text) starts.
    body_start: usize,
    line: &'a [u8],
}

fn parse_header(line: &[u8]) -> Option<Header<'_>> {
    if !starts_with_timestamp(line) {
        return None;
    }
    let ts_end = line[11..].iter().position(|&b| b == b' ').map(|p| p + 11).unwrap_or(line.len());
    let ts_us = std::str::from_utf8(&line[..ts_end]).ok().and_then(parse_rfc3339_us);
    let mut i = ts_end;
    let (mut level, mut server, mut direction) = (None, None, None);
    loop {
        while line.get(i) == Some(&b' ') {
            i += 1;
        }
        if line.get(i) != Some(&b'[') {
            break;
        }
        let Some(close) = line[i..].iter().position(|&b| b == b']') else { break };
        let token = String::from_utf8_lossy(&line[i + 1..i + close]).into_owned();
        i += close + 1;
        let lower = token.to_ascii_lowercase();
        if lower == "client says" {
            direction = Some(Direction::ClientToServer);
            break;
        } else if lower == "server says" {
            direction = Some(Direction::ServerToClient);
            break;
        } else if level.is_none() && LEVELS.contains(&lower.as_str()) {
            level = Some(lower);
        } else if server.is_none() {
            server = Some(token);
        }
    }
    while line.get(i) == Some(&b' ') {
        i += 1;
    }
    if direction.is_none() {
        for (phrase, dir) in [(&b"Message from client:"[..], Direction::ClientToServer), (b"Message from server:", Direction::ServerToClient)] {
            if line[i..].starts_with(phrase) {
                direction = Some(dir);
                i += phrase.len();
                while line.get(i) == Some(&b' ') {
                    i += 1;
                }
                break;
            }
        }
    }
    Some(Header { ts_us, level, server, direction, body_start: i, line })
}

/// Result of looking for one JSON value at the start of `bytes`.
pub(super) enum JsonEnd {
    /// The value ends at this byte index.
    Complete(usize),
    /// The input ended inside the value (it may continue on the next lines).
    NeedMore,
    /// Not a JSON value (or a cut one).
    Invalid,
}

#[cfg(test)]
thread_local! {
    /// JSON parse attempts on this thread (tests assert the work done is linear).
    static PARSE_ATTEMPTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

pub(super) fn json_end(bytes: &[u8]) -> JsonEnd {
    #[cfg(test)]
    PARSE_ATTEMPTS.with(|c| c.set(c.get() + 1));
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
    match it.next() {
        Some(Ok(_)) => JsonEnd::Complete(it.byte_offset()),
        Some(Err(e)) if e.is_eof() => JsonEnd::NeedMore,
        _ => JsonEnd::Invalid,
    }
}

/// A message whose JSON continues over the next lines.
struct Pending {
    frame: Frame,
    server: String,
    scan: BracketScan,
}

/// Where a pretty-printed JSON value closes, found by scanning each byte once (brackets
/// outside strings), so a long body is parsed once when it closes, not on every line.
#[derive(Default)]
pub(super) struct BracketScan {
    /// Payload bytes already scanned.
    scanned: usize,
    depth: u64,
    in_string: bool,
    escaped: bool,
    opened: bool,
    /// The value's bracket closed (the body can be parsed).
    pub(super) closed: bool,
    /// The body was parsed once and is not a complete value: it never will be.
    pub(super) hopeless: bool,
}

impl BracketScan {
    /// Scans the payload bytes not yet seen.
    pub(super) fn advance(&mut self, payload: &[u8]) {
        if self.closed {
            return;
        }
        for &b in &payload[self.scanned.min(payload.len())..] {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.opened = true;
                    self.depth += 1;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.opened && self.depth == 0 {
                        self.closed = true;
                        break;
                    }
                }
                _ => {}
            }
        }
        self.scanned = payload.len();
    }
}

struct HostLogState {
    default_server: String,
    /// `initialize` requests seen per server: the session counter.
    inits: HashMap<String, u32>,
    max_frame_bytes: usize,
    /// A message whose JSON continues on the next lines.
    pending: Option<Pending>,
    /// The rest of a multi-line message cut at `max_frame_bytes`, skipped up to the next
    /// timestamped line.
    skipping: Option<Skip>,
}

impl HostLogState {
    fn session(&self, server: &str) -> String {
        match self.inits.get(server).copied().unwrap_or(0) {
            0 | 1 => server.to_string(),
            n => format!("{server}#{n}"),
        }
    }

    fn emit(&mut self, mut frame: Frame, server: &str, sink: &mut dyn Sink) {
        if frame.direction == Some(Direction::ClientToServer) && is_initialize(&frame.payload) {
            *self.inits.entry(server.to_string()).or_default() += 1;
        }
        frame.session = Some(Arc::from(self.session(server)));
        if let Some(marker) = host_cut_marker(&frame.payload) {
            frame.note = Some(format!("host cut the body: {marker}"));
        }
        sink.frame(frame);
    }

    fn interpret(&mut self, offset: u64, line: &[u8], pending: &mut Option<Pending>, sink: &mut dyn Sink) {
        if let Some(p) = pending.as_mut() {
            if !starts_with_timestamp(line) {
                p.frame.payload.extend_from_slice(line);
                p.frame.wire_bytes += line.len() as u64;
                p.scan.advance(&p.frame.payload);
                // Parsed once, on the first line starting with `}`/`]` after the value's
                // brackets closed (a line never holds more than `max_frame_bytes`).
                let closing = line.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|&b| b == b'}' || b == b']');
                let complete = if closing && p.scan.closed && !p.scan.hopeless {
                    let end = json_end(&p.frame.payload);
                    p.scan.hopeless = !matches!(end, JsonEnd::Complete(_));
                    end
                } else {
                    JsonEnd::NeedMore
                };
                if let JsonEnd::Complete(end) = complete {
                    let tail = p.frame.payload.len() - end;
                    p.frame.payload.truncate(end);
                    p.frame.wire_bytes -= tail as u64;
                    sink.framing(FramingCategory::HostlogMetadata, tail as u64);
                    let Pending { mut frame, server, .. } = pending.take().expect("checked above");
                    // The line that closed the message can carry it past the cap.
                    if frame.payload.len() > self.max_frame_bytes {
                        let cut = frame.payload.len() - self.max_frame_bytes;
                        frame.payload.truncate(self.max_frame_bytes);
                        frame.wire_bytes -= cut as u64;
                        sink.skip(Skip {
                            offset: frame.offset + frame.wire_bytes,
                            bytes: cut as u64,
                            reason: SkipReason::LineOverCap,
                            detail: "multi-line message exceeds --max-frame-bytes".into(),
                        });
                        frame.incomplete = Some("multi-line message exceeds --max-frame-bytes".into());
                    }
                    self.emit(frame, &server, sink);
                } else if p.frame.payload.len() > self.max_frame_bytes {
                    let Pending { mut frame, server, .. } = pending.take().expect("checked above");
                    let cut = frame.payload.len() - self.max_frame_bytes;
                    frame.payload.truncate(self.max_frame_bytes);
                    frame.wire_bytes -= cut as u64;
                    self.skipping = Some(Skip {
                        offset: frame.offset + frame.wire_bytes,
                        bytes: cut as u64,
                        reason: SkipReason::LineOverCap,
                        detail: "multi-line message exceeds --max-frame-bytes; the rest of its lines are not read".into(),
                    });
                    frame.incomplete = Some("multi-line message exceeds --max-frame-bytes".into());
                    self.emit(frame, &server, sink);
                }
                return;
            }
            let Pending { mut frame, server, .. } = pending.take().expect("checked above");
            frame.incomplete = Some("multi-line JSON never closed before the next log line".into());
            self.emit(frame, &server, sink);
        }
        let Some(h) = parse_header(line) else {
            sink.event(Event {
                offset,
                level: "info".into(),
                kind: "unparsed_line".into(),
                text: String::from_utf8_lossy(line).into_owned(),
                ..Event::default()
            });
            sink.framing(FramingCategory::HostlogEventLines, line.len() as u64);
            return;
        };
        let server = h.server.clone().unwrap_or_else(|| self.default_server.clone());
        let body = &h.line[h.body_start..];
        let Some(direction) = h.direction else {
            let text = String::from_utf8_lossy(body).into_owned();
            let level = h.level.clone().unwrap_or_else(|| "info".into());
            let kind = classify_event(&text, &level);
            sink.event(Event {
                session: Some(self.session(&server)),
                ts_us: h.ts_us,
                offset,
                level,
                server: Some(server),
                kind: kind.into(),
                text,
                ..Event::default()
            });
            sink.framing(FramingCategory::HostlogEventLines, line.len() as u64);
            return;
        };
        sink.framing(FramingCategory::HostlogLinePrefix, h.body_start as u64);
        let mut frame = Frame::new(Transport::Hostlog, Some(direction), offset + h.body_start as u64, Vec::new());
        frame.ts_us = h.ts_us;
        match json_end(body) {
            JsonEnd::Complete(end) => {
                frame.payload = body[..end].to_vec();
                frame.wire_bytes = end as u64;
                sink.framing(FramingCategory::HostlogMetadata, (body.len() - end) as u64);
                self.emit(frame, &server, sink);
            }
            JsonEnd::NeedMore if body.len() < self.max_frame_bytes => {
                frame.payload = body.to_vec();
                frame.wire_bytes = body.len() as u64;
                *pending = Some(Pending { frame, server, scan: BracketScan::default() });
            }
            _ => {
                // Invalid (e.g. cut by the host): keep the body without a metadata suffix.
                let end = memchr::memmem::rfind(body, b" { metadata:").unwrap_or(body.len());
                frame.payload = body[..end].to_vec();
                frame.wire_bytes = end as u64;
                sink.framing(FramingCategory::HostlogMetadata, (body.len() - end) as u64);
                self.emit(frame, &server, sink);
            }
        }
    }
}

fn is_initialize(payload: &[u8]) -> bool {
    let head = &payload[..payload.len().min(4096)];
    memchr::memmem::find(head, b"\"method\":\"initialize\"").is_some() || memchr::memmem::find(head, b"\"method\": \"initialize\"").is_some()
}

/// Claude Desktop's in-log cut marker `...[N chars truncated]...`, if present.
pub fn host_cut_marker(payload: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(payload, b" chars truncated]")?;
    let open = payload[..at].iter().rposition(|&b| b == b'[')?;
    let end = at + b" chars truncated]".len();
    Some(String::from_utf8_lossy(&payload[open..end]).into_owned())
}

pub(super) fn classify_event(text: &str, level: &str) -> &'static str {
    let lower = text.to_ascii_lowercase();
    if lower.contains("transport closed unexpectedly") || lower.contains("closed unexpectedly") {
        "transport_closed_unexpectedly"
    } else if lower.contains("transport closed") {
        "transport_closed"
    } else if lower.contains("disconnected") {
        "server_disconnected"
    } else if lower.contains("initializing server") {
        "server_starting"
    } else if lower.contains("connected successfully") {
        "server_connected"
    } else {
        level_kind(level)
    }
}

/// The kind of a log line that names nothing more specific: by its level.
pub(super) fn level_kind(level: &str) -> &'static str {
    if level == "error" || level == "fatal" || level == "critical" {
        "error"
    } else if level.starts_with("warn") {
        "warning"
    } else {
        "log"
    }
}

/// Reads a host log; `default_server` names the server when lines do not (VS Code, file stem).
pub fn read_hostlog(reader: impl Read, default_server: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut state = HostLogState { default_server: default_server.to_string(), inits: HashMap::new(), max_frame_bytes, pending: None, skipping: None };
    read_lines(reader, max_frame_bytes, &mut state, sink);
}

impl LineReader for HostLogState {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        account_log_line_end(line, sink);
        if let Some(skip) = self.skipping.as_mut() {
            if !starts_with_timestamp(line.bytes) {
                skip.bytes += line.bytes.len() as u64 + u64::from(line.terminated);
                return;
            }
            sink.skip(self.skipping.take().expect("checked above"));
        }
        let mut pending = self.pending.take();
        if line.is_blank() && pending.is_none() {
            sink.framing(FramingCategory::BlankLines, line.wire_bytes - u64::from(line.had_cr));
        } else {
            self.interpret(line.offset, line.bytes, &mut pending, sink);
        }
        if line.terminated {
            match pending.as_mut() {
                // The newline is inside a pretty-printed message: part of the frame.
                Some(p) if p.frame.payload.len() < self.max_frame_bytes => {
                    p.frame.payload.push(b'\n');
                    p.frame.wire_bytes += 1;
                }
                // The message is at the cap: this newline and the rest of its lines are past it.
                Some(_) => {
                    let Pending { mut frame, server, .. } = pending.take().expect("matched above");
                    self.skipping = Some(Skip {
                        offset: frame.offset + frame.wire_bytes,
                        bytes: 1,
                        reason: SkipReason::LineOverCap,
                        detail: "multi-line message exceeds --max-frame-bytes; the rest of its lines are not read".into(),
                    });
                    frame.incomplete = Some("multi-line message exceeds --max-frame-bytes".into());
                    self.emit(frame, &server, sink);
                }
                None => sink.framing(FramingCategory::LineTerminators, 1),
            }
        }
        self.pending = pending;
    }

    fn finish(&mut self, sink: &mut dyn Sink) {
        if let Some(skip) = self.skipping.take() {
            sink.skip(skip);
        }
        if let Some(Pending { mut frame, server, .. }) = self.pending.take() {
            frame.incomplete = Some("log ended inside a multi-line message".into());
            self.emit(frame, &server, sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    const LOG: &str = concat!(
        "2026-11-30T10:15:00.000Z [docs] [info] Initializing server...\n",
        "2026-11-30T10:15:00.100Z [docs] [info] Message from client: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}} { metadata: undefined }\n",
        "2026-11-30T10:15:00.200Z [docs] [info] Message from server: {\n",
        "  \"jsonrpc\": \"2.0\",\n",
        "  \"id\": 0,\n",
        "  \"result\": {}\n",
        "} { metadata: undefined }\n",
        "2026-11-30T10:15:01.000Z [info] [docs] Message from server: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"abc...[1234 chars truncated]...xyz\"}]}}\n",
        "2026-11-30 10:15:02.123 [info] [Client Says] {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":2}\n",
        "2026-11-30T10:15:03.000Z [docs] [error] Server transport closed unexpectedly, this is likely due to the process exiting early.\n",
        "    at stack frame\n",
    );

    #[test]
    fn message_lines_become_frames_and_the_rest_events() {
        let mut sink = CollectSink::default();
        read_hostlog(LOG.as_bytes(), "vscode", 1 << 20, &mut sink);
        let frames: Vec<_> = sink.frames.iter().map(|f| (f.direction, f.session.as_deref().unwrap().to_string(), f.incomplete.is_some())).collect();
        assert_eq!(frames.len(), 4);
        assert_eq!(frames[0], (Some(Direction::ClientToServer), "docs".to_string(), false));
        assert_eq!(frames[1].0, Some(Direction::ServerToClient));
        assert_eq!(frames[3].1, "vscode");
        let pretty: serde_json::Value = serde_json::from_slice(&sink.frames[1].payload).unwrap();
        assert_eq!(pretty["id"], 0);
        assert_eq!(sink.frames[2].note.as_deref(), Some("host cut the body: [1234 chars truncated]"));
        assert_eq!(sink.frames[0].ts_us, parse_rfc3339_us("2026-11-30T10:15:00.100Z"));
        let kinds: Vec<_> = sink.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, vec!["server_starting", "transport_closed_unexpectedly", "unparsed_line"]);
        let total: u64 = sink.frames.iter().map(|f| f.wire_bytes).sum::<u64>() + sink.framing.values().sum::<u64>();
        assert_eq!(total, LOG.len() as u64, "every byte accounted");
    }

    /// A log line announcing a message whose body is `body`, pretty-printed.
    fn pretty_message(body: &serde_json::Value) -> String {
        let json = serde_json::to_string_pretty(body).unwrap();
        format!("2026-11-30T10:15:00.200Z [docs] [info] Message from server: {json} {{ metadata: undefined }}\n")
    }

    #[test]
    fn a_fifty_thousand_line_body_is_parsed_once() {
        let items: Vec<serde_json::Value> = (0..17_000).map(|i| serde_json::json!({ "a": i })).collect();
        let log = pretty_message(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"items": items}}));
        assert!(log.lines().count() > 50_000);
        let before = PARSE_ATTEMPTS.with(|c| c.get());
        let mut sink = CollectSink::default();
        read_hostlog(log.as_bytes(), "vscode", 1 << 30, &mut sink);
        let attempts = PARSE_ATTEMPTS.with(|c| c.get()) - before;
        assert_eq!(sink.frames.len(), 1);
        assert!(sink.frames[0].incomplete.is_none());
        let v: serde_json::Value = serde_json::from_slice(&sink.frames[0].payload).unwrap();
        assert_eq!(v["result"]["items"][16_999]["a"], 16_999);
        assert!(attempts <= 2, "{attempts} parses of the pending body");
    }

    #[test]
    fn a_body_over_the_cap_is_cut_at_the_cap_and_the_rest_skipped() {
        let items: Vec<u32> = (0..2_000).collect();
        let log = pretty_message(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"items": items}}))
            + "2026-11-30T10:15:01.000Z [docs] [info] Message from client: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":2}\n";
        let mut sink = CollectSink::default();
        read_hostlog(log.as_bytes(), "vscode", 4096, &mut sink);
        assert_eq!(sink.frames.len(), 2);
        assert!(sink.frames[0].incomplete.is_some());
        assert_eq!(sink.frames[0].payload.len(), 4096);
        assert_eq!(sink.frames[0].wire_bytes, 4096);
        assert!(sink.events.is_empty(), "the rest of the body is not events: {:?}", sink.events.len());
        assert_eq!(sink.skips.len(), 1);
        assert_eq!(sink.skips[0].reason, SkipReason::LineOverCap);
        let total: u64 = sink.frames.iter().map(|f| f.wire_bytes).sum::<u64>() + sink.framing.values().sum::<u64>() + sink.skips.iter().map(|s| s.bytes).sum::<u64>();
        assert_eq!(total, log.len() as u64, "every byte accounted");
    }
}
