//! One HAR entry → the HTTP/1.1 request and response it records, read by the HTTP layer
//! ([`HttpConnection`]) as if captured: the same JSON bodies, SSE events, sessions
//! (`Mcp-Session-Id`, legacy `sessionId`), routing headers and `http_status` events as a pcap.
//! HAR bodies are already decoded (`content.text`, optionally base64), so the message heads are
//! rebuilt with `Content-Length` and without transfer or content codings; those heads are not
//! input bytes and are not counted. Everything of the entry that is not a frame's payload (or
//! SSE framing, or a non-message body) is `har_envelope`. A body the recorder did not save is
//! a `har_body_missing` event, never an invented frame.

use serde::Deserialize;

/// The event kind of a body the HAR writer did not save.
const BODY_MISSING_KIND: &str = "har_body_missing";

use crate::ingest::connection::{ConnectionId, Side, StreamEnd};
use crate::ingest::frame::{Event, EventFacts, Frame, FramingCategory, Sink, Skip, SkipReason, Transport};
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::stream::HttpConnection;
use crate::ingest::base64::decode_base64;
use crate::ingest::time::parse_rfc3339_us;

/// A rebuilt head longer than this would not parse as one (the HTTP layer's head limit is
/// 64 KiB): further headers are left out.
const MAX_REBUILT_HEAD_BYTES: usize = 48 * 1024;

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "startedDateTime")]
    started: Option<String>,
    time: Option<f64>,
    request: Request,
    response: Option<Response>,
    timings: Option<Timings>,
    /// Chrome: the id of the TCP connection (a socket number); absent in mitmproxy's files.
    connection: Option<String>,
}

#[derive(Deserialize)]
struct Request {
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(rename = "postData")]
    post_data: Option<Body>,
    #[serde(rename = "bodySize")]
    body_size: Option<f64>,
}

#[derive(Deserialize)]
struct Response {
    status: Option<f64>,
    #[serde(rename = "statusText")]
    status_text: Option<String>,
    #[serde(default)]
    headers: Vec<Header>,
    content: Option<Body>,
    #[serde(rename = "bodySize")]
    body_size: Option<f64>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

/// `request.postData` or `response.content`.
#[derive(Deserialize)]
struct Body {
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    text: Option<String>,
    /// `base64` when `text` is the body in base64.
    encoding: Option<String>,
    /// `content.size`: decoded length.
    size: Option<f64>,
}

#[derive(Deserialize)]
struct Timings {
    blocked: Option<f64>,
    dns: Option<f64>,
    connect: Option<f64>,
    send: Option<f64>,
    wait: Option<f64>,
}

impl Timings {
    /// Milliseconds from the entry's start to the response's first byte (`-1`: not applicable;
    /// `ssl` is inside `connect`).
    fn to_response_ms(&self) -> f64 {
        [self.blocked, self.dns, self.connect, self.send, self.wait]
            .into_iter()
            .flatten()
            .filter(|v| v.is_finite() && *v > 0.0)
            .sum()
    }
}

/// State across the entries of one file.
pub struct Exchanges {
    max_frame_bytes: u64,
    next_exchange: u64,
    /// `connection` values in order of first appearance (absent: one shared connection).
    connections: Vec<Option<String>>,
    /// Frames of GET event streams, held until an entry starts after the stream ended (at
    /// the end of the file when the entry has no `time`), with that end.
    held: Vec<(Option<i64>, Vec<Frame>)>,
}

/// A GET event stream is one entry for all the messages the server pushed while later
/// entries (the POSTs they answer) ran: in file order its events would come before the
/// requests. They come after the entries that started while the stream was open, and
/// without a time (a HAR has none per event).
const HELD_NOTE: &str = "HAR records no time per event of a GET event stream";

/// A body as the entry holds it.
enum BodyBytes {
    Present(Vec<u8>),
    /// The recorder says a body of `size` bytes existed but did not save it (or saved it
    /// undecodable).
    Missing {
        size: Option<u64>,
        why: &'static str,
    },
    None,
}

impl Exchanges {
    pub fn new(max_frame_bytes: u64) -> Self {
        Exchanges {
            max_frame_bytes,
            next_exchange: 0,
            connections: Vec::new(),
            held: Vec::new(),
        }
    }

    /// Hands on the held stream frames that ended by `ts` (all of them for `None`).
    pub fn release(&mut self, ts: Option<i64>, sink: &mut dyn Sink) {
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held).into_iter().partition(|(end, _)| match (ts, end) {
            (None, _) => true,
            (Some(t), Some(end)) => *end <= t,
            (Some(_), None) => false,
        });
        self.held = later;
        for frame in now.into_iter().flat_map(|(_, frames)| frames) {
            sink.frame(frame);
        }
    }

    /// Reads the entry `text` (at file offset `offset`) into `sink`; returns the input bytes its
    /// frames, framing and skips account for (at most `text.len()`).
    pub fn entry(&mut self, text: &str, offset: u64, sink: &mut dyn Sink) -> u64 {
        let len = text.len() as u64;
        let entry = match serde_json::from_str::<Entry>(text) {
            Ok(e) => e,
            Err(e) => return invalid(sink, offset, len, format!("not a HAR entry: {e}")),
        };
        if !is_token(&entry.request.method) {
            return invalid(sink, offset, len, format!("request method {:?} is not an HTTP token", entry.request.method));
        }
        let connection = self.connection(entry.connection.clone());
        let mut collected = EntrySink::default();
        let ts = entry.started.as_deref().and_then(parse_rfc3339_us);
        if ts.is_some() {
            self.release(ts, sink);
        }
        let response_ts = ts.map(|t| {
            let ms = entry
                .timings
                .as_ref()
                .map(Timings::to_response_ms)
                .or(entry.time)
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(0.0);
            t.saturating_add((ms * 1000.0).round() as i64)
        });
        let request_body = body_bytes(entry.request.post_data.as_ref(), entry.request.body_size);
        let response = entry.response.as_ref().filter(|r| r.status.is_some_and(|s| (200.0..1000.0).contains(&s)));
        let response_body = match response {
            Some(r) if !no_response_body(&entry.request.method, r) => body_bytes(r.content.as_ref(), r.body_size),
            _ => BodyBytes::None,
        };
        {
            let mut env = HttpEnv::new(&mut collected, self.max_frame_bytes);
            env.next_exchange = self.next_exchange;
            let mut http = HttpConnection::new(connection, Some(Side::A));
            let target = origin_form(&entry.request.url);
            let request = message(
                format!("{} {target} HTTP/1.1\r\n", entry.request.method),
                &entry.request.headers,
                None,
                &request_body,
            );
            http.data(Side::A, 0, ts, &request, &mut env);
            http.end(Side::A, StreamEnd::Fin, ts, &mut env);
            if let Some(r) = response {
                let reason = r.status_text.as_deref().map(header_value).unwrap_or_default();
                let start = format!("HTTP/1.1 {} {reason}\r\n", r.status.unwrap_or_default() as u16);
                let mime = r.content.as_ref().and_then(|c| c.mime_type.as_deref());
                let response = message(start, &r.headers, mime, &response_body);
                http.data(Side::B, 0, response_ts, &response, &mut env);
                http.end(Side::B, StreamEnd::Fin, response_ts, &mut env);
            }
            http.close(response_ts.or(ts), &mut env);
            self.next_exchange = env.next_exchange;
            env.report_framing();
        }
        let session = session_of(&entry);
        for (body, ts, what) in [(&request_body, ts, "request"), (&response_body, response_ts, "response")] {
            if let BodyBytes::Missing { size, why } = body {
                let size = size.map_or_else(String::new, |n| format!(" of {n} bytes"));
                collected.events.push(Event {
                    session: session.clone(),
                    ts_us: ts,
                    offset,
                    level: "warn".into(),
                    server: None,
                    kind: BODY_MISSING_KIND.into(),
                    text: format!("{} {}: {what} body{size} {why}", entry.request.method, entry.request.url),
                    facts: EventFacts { response_not_recorded: what == "response", ..EventFacts::default() },
                });
            }
        }
        let end_ts = ts
            .zip(entry.time.filter(|v| v.is_finite() && *v >= 0.0))
            .map(|(t, ms)| t.saturating_add((ms * 1000.0).round() as i64));
        let hold = entry.request.method.eq_ignore_ascii_case("GET").then_some(end_ts);
        self.forward(collected, offset, len, hold, sink)
    }

    fn connection(&mut self, name: Option<String>) -> ConnectionId {
        let i = match self.connections.iter().position(|c| *c == name) {
            Some(i) => i,
            None => {
                self.connections.push(name);
                self.connections.len() - 1
            }
        };
        i as ConnectionId
    }
}

/// What one entry gave, held until it is known to fit in the entry's bytes.
#[derive(Default)]
struct EntrySink {
    frames: Vec<Frame>,
    events: Vec<Event>,
    skips: Vec<Skip>,
    framing: Vec<(FramingCategory, u64)>,
}

impl Sink for EntrySink {
    fn frame(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }
    fn skip(&mut self, skip: Skip) {
        self.skips.push(skip);
    }
    fn framing(&mut self, category: FramingCategory, bytes: u64) {
        // The rebuilt heads are not input bytes.
        if category != FramingCategory::HttpHeads {
            self.framing.push((category, bytes));
        }
    }
}

impl Exchanges {
    /// Hands what one entry gave on, offsets set to the entry's; returns the bytes accounted.
    /// `hold`: the entry is a GET; its SSE frames wait for entries starting by this time.
    fn forward(&mut self, collected: EntrySink, offset: u64, len: u64, hold: Option<Option<i64>>, sink: &mut dyn Sink) -> u64 {
        let accounted = crate::ingest::accounting::accounted_bytes(
            collected.frames.iter().map(|f| f.wire_bytes).sum(),
            collected.framing.iter().map(|(c, n)| (c.as_str(), *n)),
            collected.skips.iter().map(|s| s.bytes).sum(),
        );
        // Decoded bodies are never longer than their JSON text: an entry whose messages would
        // count more bytes than it has did not read as the HTTP it records; its bytes are one
        // skip rather than counted twice.
        let accounted = match u64::try_from(accounted) {
            Ok(n) if n <= len => n,
            _ => return invalid(sink, offset, len, "entry does not read as HTTP".into()),
        };
        let mut held = Vec::new();
        for mut f in collected.frames {
            f.offset = offset;
            if hold.is_some() && f.transport == Transport::Sse {
                f.ts_us = None;
                f.note = Some(HELD_NOTE.into());
                held.push(f);
            } else {
                sink.frame(f);
            }
        }
        if let (Some(end), false) = (hold, held.is_empty()) {
            self.held.push((end, held));
        }
        for mut e in collected.events {
            e.offset = offset;
            sink.event(e);
        }
        for mut s in collected.skips {
            s.offset = offset;
            sink.skip(s);
        }
        for (category, bytes) in collected.framing {
            sink.framing(category, bytes);
        }
        accounted
    }
}

fn invalid(sink: &mut dyn Sink, offset: u64, len: u64, detail: String) -> u64 {
    sink.skip(Skip {
        offset,
        bytes: len,
        reason: SkipReason::InvalidHarEntry,
        detail,
    });
    len
}

fn body_bytes(body: Option<&Body>, body_size: Option<f64>) -> BodyBytes {
    let declared = body
        .and_then(|b| b.size)
        .into_iter()
        .chain(body_size)
        .find(|n| n.is_finite() && *n > 0.0)
        .map(|n| n as u64);
    match body.and_then(|b| b.text.as_deref().map(|t| (t, b.encoding.as_deref()))) {
        Some((text, Some(enc))) if enc.eq_ignore_ascii_case("base64") => match decode_base64(text) {
            Some(bytes) => BodyBytes::Present(bytes),
            None => BodyBytes::Missing {
                size: declared,
                why: "is not valid base64",
            },
        },
        Some((text, _)) => BodyBytes::Present(text.as_bytes().to_vec()),
        None if declared.is_some() => BodyBytes::Missing {
            size: declared,
            why: "not in the HAR (the recorder did not save it)",
        },
        None => BodyBytes::None,
    }
}

/// Responses that carry no body whatever their headers say.
fn no_response_body(method: &str, r: &Response) -> bool {
    method.eq_ignore_ascii_case("HEAD") || matches!(r.status.map(|s| s as u16), Some(204 | 304))
}

/// A message head rebuilt from the entry, then its body.
fn message(start: String, headers: &[Header], mime: Option<&str>, body: &BodyBytes) -> Vec<u8> {
    let mut out = start.into_bytes();
    let mut has_type = false;
    for h in headers {
        let name = h.name.trim();
        // Framing and codings of the wire are gone from a HAR body; HTTP/2 pseudo-headers
        // (`:path`) are not HTTP/1.1 headers.
        if !is_token(name)
            || ["content-length", "transfer-encoding", "content-encoding"]
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        let value = header_value(&h.value);
        if out.len() + name.len() + value.len() + 4 > MAX_REBUILT_HEAD_BYTES {
            continue;
        }
        has_type |= name.eq_ignore_ascii_case("content-type");
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if let Some(mime) = mime.map(header_value).filter(|m| !m.is_empty() && !has_type) {
        out.extend_from_slice(format!("Content-Type: {mime}\r\n").as_bytes());
    }
    let bytes: &[u8] = match body {
        BodyBytes::Present(b) => b,
        _ => &[],
    };
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out
}

/// A header value without the bytes a head cannot hold (line breaks, other controls).
fn header_value(v: &str) -> String {
    v.chars().filter(|&c| c == '\t' || !c.is_control()).collect::<String>().trim().to_string()
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `http://host:port/mcp?x=1#f` → `/mcp?x=1`, bytes a request line cannot hold percent-encoded.
fn origin_form(url: &str) -> String {
    let rest = match url.find("://") {
        Some(i) => {
            let after = &url[i + 3..];
            match after.find(['/', '?']) {
                Some(j) if after[j..].starts_with('?') => format!("/{}", &after[j..]),
                Some(j) => after[j..].to_string(),
                None => "/".to_string(),
            }
        }
        None if url.is_empty() => "/".to_string(),
        None => url.to_string(),
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let mut out = String::with_capacity(rest.len());
    for b in rest.bytes() {
        if (0x21..=0x7e).contains(&b) && !b"\"<>\\^`{|}".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The session an entry's events belong to: the request's `Mcp-Session-Id`, else the one the
/// response assigns.
fn session_of(entry: &Entry) -> Option<String> {
    let find = |headers: &[Header]| {
        headers
            .iter()
            .find(|h| h.name.trim().eq_ignore_ascii_case("mcp-session-id"))
            .map(|h| h.value.trim().to_string())
    };
    find(&entry.request.headers).or_else(|| entry.response.as_ref().and_then(|r| find(&r.headers)))
}
