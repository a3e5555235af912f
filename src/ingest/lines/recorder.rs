//! Proxy recorders' JSONL files: mcpsnoop session logs, MCPSpy `--output` events and
//! mcptrace-rs span files, each line recognised on its own by its fields.
//!
//! - **mcpsnoop** (`internal/proxy/frame.go` `Envelope`): `session_id`, `server_label`, `seq`,
//!   `ts`, `direction` (`c2s`, `s2c`, `stderr`, `meta`), `transport` (`stdio`, `http`), the
//!   message as a JSON value in `raw` or a non-JSON line in `text`, the routing headers
//!   `mcp_method`, `mcp_name`, `mcp_protocol_version`, `mcp_param_headers`, `conn_id`, `status`,
//!   `truncated` (mcpsnoop cut its copy at its frame cap: the message's true size is unknown).
//!   mcpsnoop stores `raw` re-encoded by Go (compacted, `<>&` escaped), so sizes are the
//!   stored bytes, which can differ from the wire.
//! - **MCPSpy** (`pkg/event/mcp.go` `MCPEvent`): `timestamp`, `transport_type` (`stdio`, `sse`,
//!   `http`), `stdio_transport` (`from_pid`, `to_pid`), `http_transport.is_request`,
//!   `session` (`external_id`, `internal_id`), the parsed message fields and the message text in
//!   `raw`. Direction: HTTP requests are client to server, responses server to client; on stdio
//!   the process that receives `initialize` is the server.
//! - **mcptrace-rs** (`src/span.rs` `Span`): one call per line with `trace_id`, `span_id`,
//!   `method`, `request_id`, `tool_name`, `start_unix_nanos`, `duration_ms`, `request_bytes`,
//!   `response_bytes`, `error_code`, `status` (`ok`, `error`, `timeout`, `orphan`) and no
//!   bodies: a request frame and (for `ok`/`error`) a response frame carry the recorded facts
//!   and sizes ([`RecordedFacts`]); their sizes are `recorded_sizes`, not bytes read.
//!
//! Lines of none of these shapes (MCPSpy's LLM events, garbage) are counted skips.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::line_loop::{LineReader, account_plain_line, read_lines};
use super::split::Line;
use crate::ingest::frame::{
    Direction, Event, EventFacts, Frame, FramingCategory, HttpContext, RecordedFacts, RecordedKind, RequestExtras, Sink, Skip, SkipReason, Transport,
};
use crate::ingest::time::parse_rfc3339_us;

/// Which recorder wrote a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecorderLine {
    Mcpsnoop,
    Mcpspy,
    Span,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    seq: Option<&'a RawValue>,
    #[serde(borrow)]
    server_label: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    direction: Option<&'a RawValue>,
    #[serde(borrow)]
    transport_type: Option<&'a RawValue>,
    #[serde(borrow)]
    raw: Option<&'a RawValue>,
    #[serde(borrow)]
    span_id: Option<&'a RawValue>,
    #[serde(borrow)]
    trace_id: Option<&'a RawValue>,
    #[serde(borrow)]
    start_unix_nanos: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
}

/// The recorder whose record `line` is, if any (format detection asks this per line).
pub fn recorder_line(line: &[u8]) -> Option<RecorderLine> {
    let p: Probe = serde_json::from_slice(line).ok()?;
    if p.seq.is_some() && p.direction.is_some() && (p.session_id.is_some() || p.server_label.is_some()) {
        Some(RecorderLine::Mcpsnoop)
    } else if p.transport_type.is_some() && p.raw.is_some() {
        Some(RecorderLine::Mcpspy)
    } else if p.span_id.is_some() && p.trace_id.is_some() && p.start_unix_nanos.is_some() && p.method.is_some() {
        Some(RecorderLine::Span)
    } else {
        None
    }
}

#[derive(Deserialize)]
struct ParamHeader<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    server_label: Option<Cow<'a, str>>,
    seq: Option<u64>,
    #[serde(borrow)]
    ts: Option<Cow<'a, str>>,
    #[serde(borrow)]
    direction: Option<Cow<'a, str>>,
    #[serde(borrow)]
    transport: Option<Cow<'a, str>>,
    #[serde(borrow)]
    raw: Option<&'a RawValue>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    mcp_method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    mcp_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    mcp_protocol_version: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    mcp_param_headers: Vec<ParamHeader<'a>>,
    #[serde(borrow)]
    conn_id: Option<Cow<'a, str>>,
    #[serde(default)]
    truncated: bool,
    status: Option<u16>,
}

#[derive(Deserialize)]
struct SpyStdio {
    from_pid: Option<u32>,
    to_pid: Option<u32>,
}

#[derive(Deserialize)]
struct SpyHttp {
    #[serde(default)]
    is_request: bool,
}

#[derive(Deserialize)]
struct SpySession<'a> {
    #[serde(borrow)]
    external_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    internal_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct SpyEvent<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    transport_type: Option<Cow<'a, str>>,
    stdio_transport: Option<SpyStdio>,
    http_transport: Option<SpyHttp>,
    #[serde(borrow)]
    session: Option<SpySession<'a>>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    raw: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Span<'a> {
    #[serde(borrow)]
    trace_id: Cow<'a, str>,
    #[serde(borrow)]
    span_id: Cow<'a, str>,
    #[serde(borrow)]
    service_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    request_id: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_name: Option<Cow<'a, str>>,
    start_unix_nanos: u64,
    #[serde(default)]
    duration_ms: u64,
    #[serde(default)]
    request_bytes: u64,
    #[serde(default)]
    response_bytes: u64,
    error_code: Option<i64>,
    #[serde(borrow)]
    status: Cow<'a, str>,
}

/// Reads a recorder's JSONL file; `default_session` (the file name) names records that carry
/// no session.
pub fn read_recorder(reader: impl Read, default_session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut lines = RecorderLines { default_session, spy_servers: HashMap::new() };
    read_lines(reader, max_frame_bytes, &mut lines, sink);
}

struct RecorderLines<'a> {
    default_session: &'a str,
    /// MCPSpy stdio: session → pid of the process that received `initialize` (the server).
    spy_servers: HashMap<String, u32>,
}

impl LineReader for RecorderLines<'_> {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        if account_plain_line(line, sink) {
            return;
        }
        let skip = |sink: &mut dyn Sink, reason: SkipReason, detail: String| {
            sink.skip(Skip { offset: line.offset, bytes: line.wire_bytes, reason, detail });
        };
        let not_a_record = if line.capped {
            SkipReason::TranscriptLineOverCap
        } else if line.terminated {
            SkipReason::InvalidTranscriptLine
        } else {
            SkipReason::IncompleteTranscriptLine
        };
        match recorder_line(line.bytes) {
            Some(RecorderLine::Mcpsnoop) => match serde_json::from_slice::<Envelope>(line.bytes) {
                Ok(e) => self.envelope(e, line, sink),
                Err(err) => skip(sink, not_a_record, format!("not an mcpsnoop envelope: {err}")),
            },
            Some(RecorderLine::Mcpspy) => match serde_json::from_slice::<SpyEvent>(line.bytes) {
                Ok(e) => self.spy_event(e, line, sink),
                Err(err) => skip(sink, not_a_record, format!("not an MCPSpy event: {err}")),
            },
            Some(RecorderLine::Span) => match serde_json::from_slice::<Span>(line.bytes) {
                Ok(s) => span(s, line, sink),
                Err(err) => skip(sink, not_a_record, format!("not an mcptrace-rs span: {err}")),
            },
            None if serde_json::from_slice::<serde::de::IgnoredAny>(line.bytes).is_ok() => {
                skip(sink, SkipReason::TranscriptLineWithoutMessage, "a record of no recorder shape mcpsift reads (e.g. an MCPSpy LLM event)".into())
            }
            None => skip(sink, not_a_record, "not a JSON record".into()),
        }
    }
}

impl RecorderLines<'_> {
    fn envelope(&mut self, e: Envelope<'_>, line: &Line<'_>, sink: &mut dyn Sink) {
        let ts_us = e.ts.as_deref().and_then(parse_rfc3339_us);
        let mut session = e.session_id.as_deref().or(e.server_label.as_deref()).unwrap_or(self.default_session).to_string();
        if let Some(conn) = e.conn_id.as_deref().filter(|c| !c.is_empty()) {
            session = format!("{session}@{conn}");
        }
        let direction = match e.direction.as_deref() {
            Some("c2s") => Some(Direction::ClientToServer),
            Some("s2c") => Some(Direction::ServerToClient),
            other => {
                // stderr lines and the session's metadata: events, their records framing.
                let (kind, text) = match other {
                    Some("stderr") => ("server_stderr", e.text.as_deref().unwrap_or_default().to_string()),
                    Some("meta") => ("session_meta", e.raw.map(|r| r.get().to_string()).unwrap_or_default()),
                    _ => ("unknown_direction", format!("direction {:?}", other.unwrap_or("(none)"))),
                };
                sink.framing(FramingCategory::RecorderEnvelope, line.wire_bytes);
                sink.event(Event { session: Some(session), ts_us, offset: line.offset, level: "info".into(), server: e.server_label.map(Cow::into_owned), kind: kind.into(), text, ..Event::default() });
                return;
            }
        };
        let payload = match (e.raw, e.text) {
            (Some(raw), _) => raw.get().as_bytes().to_vec(),
            (None, Some(text)) => text.into_owned().into_bytes(),
            (None, None) => {
                sink.skip(Skip { offset: line.offset, bytes: line.wire_bytes, reason: SkipReason::TranscriptLineWithoutMessage, detail: "mcpsnoop envelope with neither raw nor text".into() });
                return;
            }
        };
        sink.framing(FramingCategory::RecorderEnvelope, line.wire_bytes.saturating_sub(payload.len() as u64));
        let mut frame = Frame::new(if e.transport.as_deref() == Some("http") { Transport::Http } else { Transport::Stdio }, direction, line.offset, payload);
        frame.ts_us = ts_us;
        frame.session = Some(Arc::from(session));
        if e.truncated {
            frame.incomplete = Some("mcpsnoop cut its copy at its frame cap: the message's true size is unknown".into());
        }
        if frame.transport == Transport::Http {
            let params: Vec<(String, String)> = e.mcp_param_headers.into_iter().map(|h| (strip_param_prefix(&h.name), h.value.into_owned())).collect();
            frame.http = Some(HttpContext {
                // No exchange is recorded: each frame its own, so an `id: null` error pairs with nothing.
                connection: u64::MAX,
                exchange: e.seq.unwrap_or(line.offset),
                status: e.status.filter(|&s| s != 0),
                protocol_version: e.mcp_protocol_version.map(Cow::into_owned).filter(|s| !s.is_empty()),
                mcp_method: e.mcp_method.map(Cow::into_owned).filter(|s| !s.is_empty()),
                mcp_name: e.mcp_name.map(Cow::into_owned).filter(|s| !s.is_empty()),
                extras: (!params.is_empty()).then(|| Box::new(RequestExtras { mcp_params: params, ..RequestExtras::default() })),
                ..HttpContext::default()
            });
        }
        sink.frame(frame);
    }

    fn spy_event(&mut self, e: SpyEvent<'_>, line: &Line<'_>, sink: &mut dyn Sink) {
        let Some(raw) = e.raw else {
            sink.skip(Skip { offset: line.offset, bytes: line.wire_bytes, reason: SkipReason::TranscriptLineWithoutMessage, detail: "MCPSpy event without raw".into() });
            return;
        };
        let session = e.session.as_ref().and_then(|s| s.external_id.as_deref().filter(|x| !x.is_empty()).or(s.internal_id.as_deref())).unwrap_or(self.default_session).to_string();
        let transport = match e.transport_type.as_deref() {
            Some("http") => Transport::Http,
            Some("sse") => Transport::Sse,
            _ => Transport::Stdio,
        };
        let direction = match (&e.http_transport, &e.stdio_transport) {
            (Some(h), _) => Some(if h.is_request { Direction::ClientToServer } else { Direction::ServerToClient }),
            (None, Some(s)) => {
                if e.method.as_deref() == Some("initialize")
                    && let Some(to) = s.to_pid
                {
                    self.spy_servers.insert(session.clone(), to);
                }
                match (self.spy_servers.get(&session), s.from_pid) {
                    (Some(server), Some(from)) => Some(if from == *server { Direction::ServerToClient } else { Direction::ClientToServer }),
                    _ => None,
                }
            }
            (None, None) => None,
        };
        let payload = raw.into_owned().into_bytes();
        sink.framing(FramingCategory::RecorderEnvelope, line.wire_bytes.saturating_sub(payload.len() as u64));
        let mut frame = Frame::new(transport, direction, line.offset, payload);
        frame.ts_us = e.timestamp.as_deref().and_then(parse_rfc3339_us);
        frame.session = Some(Arc::from(session));
        sink.frame(frame);
    }
}

/// `Mcp-Param-Region` → `Region` (the name as the request's header spelled it after the prefix).
fn strip_param_prefix(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("mcp-param-") { name["mcp-param-".len()..].to_string() } else { name.to_string() }
}

/// One span: its request (and answer) as frames with recorded facts and sizes.
fn span(s: Span<'_>, line: &Line<'_>, sink: &mut dyn Sink) {
    sink.framing(FramingCategory::RecorderEnvelope, line.wire_bytes);
    let session = s.trace_id.into_owned();
    let start_us = i64::try_from(s.start_unix_nanos / 1000).ok();
    let rpc_id = s.request_id.map(|r| r.get().to_string()).filter(|r| r != "null");
    let tool = s.tool_name.map(Cow::into_owned);
    let mut request = Frame::new(Transport::Stdio, Some(Direction::ClientToServer), line.offset, Vec::new());
    request.wire_bytes = s.request_bytes;
    request.ts_us = start_us;
    request.session = Some(Arc::from(session.as_str()));
    request.note = Some(format!("mcptrace-rs span {} of {}: no bodies recorded", s.span_id, s.service_name.as_deref().unwrap_or("mcptrace")));
    request.recorded = Some(Box::new(RecordedFacts { kind: RecordedKind::Request, method: Some(s.method.into_owned()), rpc_id: rpc_id.clone(), tool: tool.clone(), error_code: None }));
    let mut recorded = s.request_bytes;
    sink.frame(request);
    let answered = match s.status.as_ref() {
        "ok" => Some(RecordedKind::Response),
        "error" => Some(RecordedKind::Error),
        other => {
            let kind = if other == "timeout" { "request_timed_out" } else { "unanswered_at_shutdown" };
            let text = format!("mcptrace-rs status {other} after {} ms", s.duration_ms);
            let facts = EventFacts { tool, timeout_ms: Some(s.duration_ms), ..EventFacts::default() };
            sink.event(Event { session: Some(session.clone()), ts_us: start_us, offset: line.offset, level: "warn".into(), server: None, kind: kind.into(), text, facts });
            None
        }
    };
    if let (Some(kind), Some(id)) = (answered, rpc_id) {
        let mut response = Frame::new(Transport::Stdio, Some(Direction::ServerToClient), line.offset, Vec::new());
        response.wire_bytes = s.response_bytes;
        response.ts_us = start_us.and_then(|t| t.checked_add(i64::try_from(s.duration_ms).ok()?.checked_mul(1000)?));
        response.session = Some(Arc::from(session));
        response.recorded = Some(Box::new(RecordedFacts { kind, method: None, rpc_id: Some(id), tool: None, error_code: s.error_code.filter(|_| kind == RecordedKind::Error) }));
        recorded += s.response_bytes;
        sink.frame(response);
    }
    sink.framing(FramingCategory::RecordedSizes, recorded);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    fn read(input: &str) -> CollectSink {
        let mut sink = CollectSink::default();
        read_recorder(input.as_bytes(), "file.jsonl", 1 << 20, &mut sink);
        assert_eq!(sink.accounted_bytes(), input.len() as i128, "accounting closes: {:?}", sink.framing);
        sink
    }

    #[test]
    fn mcpsnoop_envelopes_become_frames_and_events() {
        let input = concat!(
            r#"{"session_id":"s1","server_label":"docs","seq":0,"ts":"2026-11-30T10:00:00.000000001Z","direction":"meta","transport":"stdio","raw":{"command":["docs-server"]}}"#, "\n",
            r#"{"session_id":"s1","server_label":"docs","seq":1,"ts":"2026-11-30T10:00:00.5Z","direction":"c2s","transport":"http","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}},"mcp_method":"tools/call","mcp_name":"search","mcp_param_headers":[{"name":"Mcp-Param-Region","value":"eu"}],"conn_id":"c7"}"#, "\n",
            r#"{"session_id":"s1","server_label":"docs","seq":2,"ts":"2026-11-30T10:00:01Z","direction":"s2c","transport":"http","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"abc","truncated":true,"status":200,"conn_id":"c7"}"#, "\n",
            r#"{"session_id":"s1","server_label":"docs","seq":3,"ts":"2026-11-30T10:00:02Z","direction":"stderr","transport":"stdio","text":"warning: cache cold"}"#, "\n",
        );
        let sink = read(input);
        assert_eq!(sink.frames.len(), 2);
        let (req, resp) = (&sink.frames[0], &sink.frames[1]);
        assert_eq!(req.payload, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search"}}"#);
        assert_eq!(req.direction, Some(Direction::ClientToServer));
        assert_eq!(req.session.as_deref(), Some("s1@c7"));
        let http = req.http.as_ref().expect("http context");
        assert_eq!((http.mcp_method.as_deref(), http.mcp_name.as_deref()), (Some("tools/call"), Some("search")));
        assert_eq!(http.extras.as_ref().map(|x| x.mcp_params.clone()), Some(vec![("Region".to_string(), "eu".to_string())]));
        assert_eq!(resp.direction, Some(Direction::ServerToClient));
        assert!(resp.incomplete.as_deref().is_some_and(|m| m.contains("true size is unknown")));
        assert_eq!(resp.http.as_ref().and_then(|h| h.status), Some(200));
        assert_eq!(resp.ts_us, Some(1_796_032_801_000_000));
        let kinds: Vec<_> = sink.events.iter().map(|e| (e.kind.as_str(), e.server.as_deref())).collect();
        assert_eq!(kinds, vec![("session_meta", Some("docs")), ("server_stderr", Some("docs"))]);
    }

    #[test]
    fn mcpspy_events_take_direction_from_transport() {
        let input = concat!(
            r#"{"timestamp":"2026-11-30T10:00:00Z","transport_type":"stdio","stdio_transport":{"from_pid":10,"from_comm":"claude","to_pid":20,"to_comm":"python"},"session":{"internal_id":"abc"},"type":"request","id":0,"method":"initialize","raw":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}"}"#, "\n",
            r#"{"timestamp":"2026-11-30T10:00:01Z","transport_type":"stdio","stdio_transport":{"from_pid":20,"from_comm":"python","to_pid":10,"to_comm":"claude"},"session":{"internal_id":"abc"},"type":"response","id":0,"raw":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"}"#, "\n",
            r#"{"timestamp":"2026-11-30T10:00:02Z","transport_type":"http","http_transport":{"pid":5,"host":"localhost:8000","is_request":true},"session":{"external_id":"sess-1","internal_id":"x"},"type":"request","id":1,"method":"ping","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}"#, "\n",
            r#"{"timestamp":"2026-11-30T10:00:03Z","provider":"anthropic","type":"request","model":"claude"}"#, "\n",
        );
        let sink = read(input);
        let got: Vec<_> = sink.frames.iter().map(|f| (f.direction, f.session.as_deref(), f.transport)).collect();
        assert_eq!(
            got,
            vec![
                (Some(Direction::ClientToServer), Some("abc"), Transport::Stdio),
                (Some(Direction::ServerToClient), Some("abc"), Transport::Stdio),
                (Some(Direction::ClientToServer), Some("sess-1"), Transport::Http),
            ]
        );
        assert_eq!(sink.frames[1].payload, br#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        assert_eq!(sink.skips.len(), 1, "the LLM event is a counted skip");
    }

    #[test]
    fn spans_become_recorded_frames_with_their_sizes() {
        let input = concat!(
            r#"{"schema_version":1,"span_id":"a1","trace_id":"t1","service_name":"mcptrace","method":"tools/call","request_id":7,"tool_name":"search","arg_bytes":12,"start_unix_nanos":1796032000000000000,"duration_ms":250,"request_bytes":120,"response_bytes":4096,"status":"ok"}"#, "\n",
            r#"{"schema_version":1,"span_id":"a2","trace_id":"t1","service_name":"mcptrace","method":"tools/call","request_id":8,"tool_name":"fetch","start_unix_nanos":1796032001000000000,"duration_ms":30000,"request_bytes":90,"status":"timeout"}"#, "\n",
            r#"{"schema_version":1,"span_id":"a3","trace_id":"t1","method":"tools/call","request_id":"x","tool_name":"fetch","start_unix_nanos":1796032002000000000,"duration_ms":5,"request_bytes":80,"response_bytes":60,"error_code":-32602,"status":"error"}"#, "\n",
        );
        let sink = read(input);
        let got: Vec<_> = sink
            .frames
            .iter()
            .map(|f| {
                let r = f.recorded.as_deref().expect("recorded facts");
                (f.direction, f.wire_bytes, r.kind, r.rpc_id.as_deref(), r.tool.as_deref(), r.error_code, f.ts_us)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(Direction::ClientToServer), 120, RecordedKind::Request, Some("7"), Some("search"), None, Some(1_796_032_000_000_000)),
                (Some(Direction::ServerToClient), 4096, RecordedKind::Response, Some("7"), None, None, Some(1_796_032_000_250_000)),
                (Some(Direction::ClientToServer), 90, RecordedKind::Request, Some("8"), Some("fetch"), None, Some(1_796_032_001_000_000)),
                (Some(Direction::ClientToServer), 80, RecordedKind::Request, Some("\"x\""), Some("fetch"), None, Some(1_796_032_002_000_000)),
                (Some(Direction::ServerToClient), 60, RecordedKind::Error, Some("\"x\""), None, Some(-32602), Some(1_796_032_002_005_000)),
            ]
        );
        assert_eq!(sink.events.iter().map(|e| (e.kind.as_str(), e.facts.tool.as_deref(), e.facts.timeout_ms)).collect::<Vec<_>>(), vec![("request_timed_out", Some("fetch"), Some(30000))]);
        assert_eq!(sink.framing.get("recorded_sizes"), Some(&(120 + 4096 + 90 + 80 + 60)));
    }

    #[test]
    fn garbage_and_cut_lines_are_counted() {
        let sink = read("not json\n{\"seq\":1,\"direction\":\"c2s\",\"session_id\":\"s\",\"raw\":{\"jsonrpc\"");
        assert_eq!(sink.frames.len(), 0);
        assert_eq!(sink.skips.len(), 2);
    }
}
