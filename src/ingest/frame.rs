//! What ingest hands to model: one message's bytes plus where they came from, events, skips.
//!
//! Ingest knows bytes, files, packets, HTTP and SSE; it never interprets JSON-RPC. Every input
//! byte ends up in a [`Frame`], in framing overhead ([`Sink::framing`]), or in a [`Skip`] with a
//! reason, so a run can account for all of it.

/// Which way a message travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Client to server (a stdio server's stdin; HTTP request bodies).
    ClientToServer,
    /// Server to client (a stdio server's stdout; HTTP response bodies and SSE events).
    ServerToClient,
}

impl Direction {
    /// The column value used in the tables (`c2s` / `s2c`).
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "c2s",
            Direction::ServerToClient => "s2c",
        }
    }
}

/// How the frame travelled (the `transport` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Stdio,
    /// An HTTP request or response body (`application/json`).
    Http,
    /// One `data:` payload of a `text/event-stream` body.
    Sse,
    Hostlog,
    Jsonl,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
            Transport::Hostlog => "hostlog",
            Transport::Jsonl => "jsonl",
        }
    }
}

/// HTTP context of a frame that came out of a packet capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpContext {
    /// Capture-wide TCP connection number (0-based, in order of first packet).
    pub connection: u64,
    /// Request method of the exchange (`POST`, `GET`, `DELETE`).
    pub method: String,
    /// Request target (path and query).
    pub url: String,
    /// Response status, when the frame is in a response (or the response was seen).
    pub status: Option<u16>,
    /// `MCP-Protocol-Version` header of the request.
    pub protocol_version: Option<String>,
    /// `Mcp-Method` header of the request (2026-07-28).
    pub mcp_method: Option<String>,
    /// `Mcp-Name` header of the request (2026-07-28).
    pub mcp_name: Option<String>,
    /// SSE `id:` of the event that carried the frame.
    pub sse_event_id: Option<String>,
    /// Exchange number within the capture (pairs an `id: null` error with its request).
    pub exchange: u64,
}

/// One message's bytes as on the wire, without line terminator or transport framing.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Session key known to the transport (stdio pair name, `Mcp-Session-Id`, legacy
    /// `sessionId`, host-log server, transcript `session`). `None`: the capture is the session.
    pub session: Option<String>,
    pub transport: Transport,
    /// `None` when the source does not say (a lone stdio file): model infers it.
    pub direction: Option<Direction>,
    /// Microseconds since the Unix epoch, when the source has a clock.
    pub ts_us: Option<i64>,
    /// Byte offset of the first payload byte in its source (file, or reassembled TCP stream).
    pub offset: u64,
    /// True length on the wire in bytes; larger than `payload.len()` when the payload was capped.
    pub wire_bytes: u64,
    /// The message bytes (possibly capped at `--max-frame-bytes`).
    pub payload: Vec<u8>,
    /// Why the frame is incomplete (stream ended without newline, TCP gap, cap), if it is.
    pub incomplete: Option<String>,
    /// Free-form source remark (e.g. `host cut the body: ...[12 chars truncated]...`).
    pub note: Option<String>,
    /// Set for frames out of packet captures.
    pub http: Option<HttpContext>,
}

impl Frame {
    /// A complete frame with only the fields every source has.
    pub fn new(transport: Transport, direction: Option<Direction>, offset: u64, payload: Vec<u8>) -> Self {
        Frame {
            session: None,
            transport,
            direction,
            ts_us: None,
            offset,
            wire_bytes: payload.len() as u64,
            payload,
            incomplete: None,
            note: None,
            http: None,
        }
    }
}

/// A non-message line or transport happening worth a row (host log lines, HTTP failures).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    pub session: Option<String>,
    pub ts_us: Option<i64>,
    pub offset: u64,
    /// `info`, `warn`, `error`, ... as the source says, or as ingest classifies it.
    pub level: String,
    /// The server name a host log attributes the line to, if any.
    pub server: Option<String>,
    /// What happened (`http_status`, `transport_closed`, `log`, `tcp_gap`, ...).
    pub kind: String,
    pub text: String,
}

/// Bytes that became neither a frame nor framing overhead, with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    pub offset: u64,
    pub bytes: u64,
    /// Stable short reason, e.g. `blank_line`, `unrecognized_format`, `truncated_gzip`.
    pub reason: &'static str,
    /// Human detail for the diagnostic line.
    pub detail: String,
}

/// Receiver of everything a source yields. Implemented by model (and by tests).
pub trait Sink {
    fn frame(&mut self, frame: Frame);
    fn event(&mut self, event: Event);
    fn skip(&mut self, skip: Skip);
    /// Bytes of transport framing (line terminators, HTTP heads, chunk sizes, SSE field
    /// names, pcap/IP/TCP headers) under a stable category name.
    fn framing(&mut self, category: &'static str, bytes: u64);
    /// The source starts reading another file of the same capture (diagnostics name it).
    fn begin_file(&mut self, _file: &str) {}
}

/// A sink that keeps everything in memory; for tests and small tools.
#[derive(Debug, Default)]
pub struct CollectSink {
    pub frames: Vec<Frame>,
    pub events: Vec<Event>,
    pub skips: Vec<Skip>,
    pub framing: std::collections::BTreeMap<&'static str, u64>,
}

impl Sink for CollectSink {
    fn frame(&mut self, frame: Frame) {
        self.frames.push(frame);
    }
    fn event(&mut self, event: Event) {
        self.events.push(event);
    }
    fn skip(&mut self, skip: Skip) {
        self.skips.push(skip);
    }
    fn framing(&mut self, category: &'static str, bytes: u64) {
        *self.framing.entry(category).or_default() += bytes;
    }
}
