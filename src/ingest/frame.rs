//! What ingest hands to model: one message's bytes plus where they came from, events, skips.
//!
//! Ingest knows bytes, files, packets, HTTP and SSE; it never interprets JSON-RPC. Every input
//! byte ends up in a [`Frame`], in framing overhead ([`Sink::framing`]), or in a [`Skip`] with a
//! reason, so a run can account for all of it.

use std::sync::Arc;

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
    /// A message found inside a log line (docker compose, tracing, Python logging, ...):
    /// how it travelled is not known.
    Log,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
            Transport::Hostlog => "hostlog",
            Transport::Jsonl => "jsonl",
            Transport::Log => "log",
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
    /// What else the request said (boxed: most frames need none of it, and frames stay small).
    pub extras: Option<Box<RequestExtras>>,
    /// SSE `id:` of the event that carried the frame.
    pub sse_event_id: Option<String>,
    /// Exchange number within the capture (pairs an `id: null` error with its request).
    pub exchange: u64,
}

/// Request facts beyond the routing basics of [`HttpContext`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestExtras {
    /// `Mcp-Param-{Name}` headers of the request (2026-07-28): (Name as sent, raw value).
    pub mcp_params: Vec<(String, String)>,
    /// IP address of the connection's client side, when known.
    pub client_ip: Option<String>,
    /// `User-Agent` header of the request (names the client's HTTP library).
    pub user_agent: Option<String>,
}

/// `--max-frame-bytes` unless given: frames longer than this are kept cut and marked incomplete.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 256 << 20;

/// One message's bytes as on the wire, without line terminator or transport framing.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Session key known to the transport (stdio pair name, `Mcp-Session-Id`, legacy
    /// `sessionId`, host-log server, transcript `session`). `None`: the capture is the session.
    /// Shared: a stdio file's frames all name its one session without a copy each.
    pub session: Option<Arc<str>>,
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
    /// A message a recorder described but did not keep (span files): its facts, with `payload`
    /// empty and `wire_bytes` the size the recorder reported.
    pub recorded: Option<Box<RecordedFacts>>,
}

/// What a recorder kept of a message whose bytes it did not keep: the model takes these as
/// the message instead of parsing a payload.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordedFacts {
    pub kind: RecordedKind,
    pub method: Option<String>,
    /// The id as JSON text (`1` and `"1"` stay different).
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub error_code: Option<i64>,
}

/// Which kind of message a recorder described.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecordedKind {
    #[default]
    Request,
    Response,
    Error,
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
            recorded: None,
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
    /// The numbers a client's log line names (Claude Code, Cursor, Gemini CLI, MCP Inspector);
    /// none for other sources.
    pub facts: EventFacts,
}

/// What a client log line names besides its text: the tool, token counts, a timeout, a
/// JSON-RPC error code, an HTTP status. Every field is `None` when the line does not say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventFacts {
    pub tool: Option<String>,
    /// Tokens of a result the client refused (`response (N tokens) exceeds ...`).
    pub tokens: Option<u64>,
    /// The client's token cap it was measured against (`maximum allowed tokens (25000)`).
    pub token_limit: Option<u64>,
    /// A timeout the line names (`timed out after 5000ms`).
    pub timeout_ms: Option<u64>,
    /// JSON-RPC error code (`MCP error -32001: ...`).
    pub error_code: Option<i64>,
    /// HTTP status (`(HTTP 404)`, or the `status` of an embedded error).
    pub http_status: Option<u32>,
    /// The recorder did not save the response to the request just before this event (a HAR
    /// entry without its response body): that request was answered, its outcome is
    /// `unknown_not_recorded`, not a lost call.
    pub response_not_recorded: bool,
}

/// Bytes that became neither a frame nor framing overhead, with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    pub offset: u64,
    pub bytes: u64,
    /// Why; a string only in output ([`SkipReason::as_str`]).
    pub reason: SkipReason,
    /// Human detail for the diagnostic line.
    pub detail: String,
}

/// Why bytes became neither a frame nor framing (the `reason` of a [`Skip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// `read_error`: The input ended early on a read error (e.g. a truncated gzip member).
    ReadError,
    /// `unreadable_file`: The file could not be opened.
    UnreadableFile,
    /// `unrecognized_format`: Not a format mcpsift reads.
    UnrecognizedFormat,
    /// `source_file`: Program source (by its extension or a `#!` line), not traffic; read when
    /// `--input-format` names a format.
    SourceFile,
    /// `unreadable_capture`: A packet capture whose file header cannot be read.
    UnreadableCapture,
    /// `line_over_cap`: The part of a host log line (or multi-line message) beyond `--max-frame-bytes`.
    LineOverCap,
    /// `transcript_line_over_cap`: A transcript line beyond `--max-frame-bytes` (it cannot be parsed).
    TranscriptLineOverCap,
    /// `invalid_transcript_line`: A transcript line that is not a record.
    InvalidTranscriptLine,
    /// `incomplete_transcript_line`: A last transcript line cut before its newline that is not a record.
    IncompleteTranscriptLine,
    /// `transcript_line_without_message`: A record with no `message`, `raw`, `line` or `raw_b64`.
    TranscriptLineWithoutMessage,
    /// `truncated_capture`: The cut last record of a packet capture, or its first unparsable
    /// record and the rest of the file.
    TruncatedCapture,
    /// `non_tcp_packet`: A captured packet that is not TCP.
    NonTcpPacket,
    /// `ip_fragment`: An IP fragment (not reassembled).
    IpFragment,
    /// `undecodable_packet`: A packet whose headers do not decode.
    UndecodablePacket,
    /// `unsupported_linktype`: A packet of a link type ingest does not decode.
    UnsupportedLinktype,
    /// `unknown_interface`: A pcapng packet naming an interface never described.
    UnknownInterface,
    /// `port_filtered`: A packet outside the `--port` filter.
    PortFiltered,
    /// `tcp_after_close`: TCP payload after RST or beyond FIN.
    TcpAfterClose,
    /// `tcp_out_of_window`: TCP payload far outside the stream's window.
    TcpOutOfWindow,
    /// `non_http_stream`: A TCP stream that never parsed as HTTP/1.x.
    NonHttpStream,
    /// `tls_stream`: A TLS-encrypted connection.
    TlsStream,
    /// `http2_stream`: An HTTP/2 connection (prior knowledge).
    Http2Stream,
    /// `http_midstream`: Bytes before the first message boundary of a capture started mid-connection.
    HttpMidstream,
    /// `http_resync`: Bytes skipped to find the next HTTP message after lost framing.
    HttpResync,
    /// `http_upgraded`: Bytes after `101 Switching Protocols` / `CONNECT`.
    HttpUpgraded,
    /// `http_incomplete_head`: A message head cut by the end of the stream.
    HttpIncompleteHead,
    /// `sse_resync`: Event-stream bytes skipped after a TCP gap up to the next event boundary.
    SseResync,
    /// `http_body_over_cap`: Compressed body bytes not decoded: what they held is past `--max-frame-bytes` (a decompression bomb stops here).
    HttpBodyOverCap,
    /// `har_truncated`: HAR bytes after the last complete entry that do not continue the file (cut or malformed), or a JSON file without `log.entries`.
    HarTruncated,
    /// `invalid_har_entry`: A `log.entries` element that is not a readable HAR entry.
    InvalidHarEntry,
    /// `cut_log_entry`: The last entry of a Claude Code MCP log, cut mid-object (the process died while writing it).
    CutLogEntry,
    /// `invalid_log_entry`: Bytes of a Claude Code MCP log that are not an entry object.
    InvalidLogEntry,
}

impl SkipReason {
    /// The stable name used in diagnostics, tables and output (a public API).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::ReadError => "read_error",
            SkipReason::UnreadableFile => "unreadable_file",
            SkipReason::UnrecognizedFormat => "unrecognized_format",
            SkipReason::SourceFile => "source_file",
            SkipReason::UnreadableCapture => "unreadable_capture",
            SkipReason::LineOverCap => "line_over_cap",
            SkipReason::TranscriptLineOverCap => "transcript_line_over_cap",
            SkipReason::InvalidTranscriptLine => "invalid_transcript_line",
            SkipReason::IncompleteTranscriptLine => "incomplete_transcript_line",
            SkipReason::TranscriptLineWithoutMessage => "transcript_line_without_message",
            SkipReason::TruncatedCapture => "truncated_capture",
            SkipReason::NonTcpPacket => "non_tcp_packet",
            SkipReason::IpFragment => "ip_fragment",
            SkipReason::UndecodablePacket => "undecodable_packet",
            SkipReason::UnsupportedLinktype => "unsupported_linktype",
            SkipReason::UnknownInterface => "unknown_interface",
            SkipReason::PortFiltered => "port_filtered",
            SkipReason::TcpAfterClose => "tcp_after_close",
            SkipReason::TcpOutOfWindow => "tcp_out_of_window",
            SkipReason::NonHttpStream => "non_http_stream",
            SkipReason::TlsStream => "tls_stream",
            SkipReason::Http2Stream => "http2_stream",
            SkipReason::HttpMidstream => "http_midstream",
            SkipReason::HttpResync => "http_resync",
            SkipReason::HttpUpgraded => "http_upgraded",
            SkipReason::HttpIncompleteHead => "http_incomplete_head",
            SkipReason::SseResync => "sse_resync",
            SkipReason::HttpBodyOverCap => "http_body_over_cap",
            SkipReason::HarTruncated => "har_truncated",
            SkipReason::InvalidHarEntry => "invalid_har_entry",
            SkipReason::CutLogEntry => "cut_log_entry",
            SkipReason::InvalidLogEntry => "invalid_log_entry",
        }
    }
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for SkipReason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SkipReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// What kind of transport framing bytes are (the category of [`Sink::framing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FramingCategory {
    /// `line_terminators`: `\n`, and the `\r` of a host log's CRLF.
    LineTerminators,
    /// `blank_lines`: Lines with nothing but an optional `\r`.
    BlankLines,
    /// `hostlog_line_prefix`: Timestamp, `[server] [level]` and `Message from ...:` before a host log message.
    HostlogLinePrefix,
    /// `hostlog_metadata`: What follows a host log message's JSON (` { metadata: ... }`).
    HostlogMetadata,
    /// `hostlog_event_lines`: Host log lines that are events, not messages.
    HostlogEventLines,
    /// `transcript_envelope`: A transcript record around its message.
    TranscriptEnvelope,
    /// `pcap_headers`: pcap file and record headers, pcapng blocks except packet data.
    PcapHeaders,
    /// `link_ip_tcp_headers`: Captured packet bytes before the TCP payload (and link trailers).
    LinkIpTcpHeaders,
    /// `tcp_retransmitted`: TCP payload already delivered (first copy wins).
    TcpRetransmitted,
    /// `http_heads`: Request and response heads, interim (1xx) heads included.
    HttpHeads,
    /// `http_chunking`: Chunk-size lines, chunk CRLFs, trailers.
    HttpChunking,
    /// `sse_framing`: SSE field names, colons, line breaks, comments, `event:`/`id:`/`retry:` values, BOM.
    SseFraming,
    /// `sse_other_events`: Data of SSE events that are not frames.
    SseOtherEvents,
    /// `http_body_other`: Bodies that are not JSON or SSE; decoded bytes.
    HttpBodyOther,
    /// `http_gzip_encoded_bytes`: Compressed body bytes as on the wire.
    HttpGzipEncodedBytes,
    /// `http_gzip_decoded_bytes`: What compressed bodies decoded to.
    HttpGzipDecodedBytes,
    /// `recorder_envelope`: A proxy recorder's record around its message (mcpsnoop, MCPSpy), and whole records that hold none (stderr lines, session metadata, spans).
    RecorderEnvelope,
    /// `recorded_sizes`: Sizes a recorder reported for messages it did not keep (span files): counted in frames, not bytes read.
    RecordedSizes,
    /// `har_envelope`: HAR JSON around the bodies (entries' fields, escapes, base64 beyond the decoded bytes, the `log` object).
    HarEnvelope,
    /// `log_array_punctuation`: A Claude Code MCP log's array brackets, commas and whitespace between entries.
    LogArrayPunctuation,
    /// `client_log_text`: The text of a client log line around the JSON-RPC body it embeds.
    ClientLogText,
    /// `log_line_prefix`: What surrounds a message inside a log line: prefix, suffix, the quoting of a message held as an escaped string or bytes repr.
    LogLinePrefix,
    /// `log_event_lines`: Log lines that are events, not messages.
    LogEventLines,
    /// `paste_markup`: Markdown fences, headings, `tail -f` headers and labels (`Request:`) around pasted messages; Claude Code's welcome box and tip line in a pasted terminal.
    PasteMarkup,
}

impl FramingCategory {
    /// The stable name used in diagnostics, tables and output (a public API).
    pub fn as_str(self) -> &'static str {
        match self {
            FramingCategory::LineTerminators => "line_terminators",
            FramingCategory::BlankLines => "blank_lines",
            FramingCategory::HostlogLinePrefix => "hostlog_line_prefix",
            FramingCategory::HostlogMetadata => "hostlog_metadata",
            FramingCategory::HostlogEventLines => "hostlog_event_lines",
            FramingCategory::TranscriptEnvelope => "transcript_envelope",
            FramingCategory::PcapHeaders => "pcap_headers",
            FramingCategory::LinkIpTcpHeaders => "link_ip_tcp_headers",
            FramingCategory::TcpRetransmitted => "tcp_retransmitted",
            FramingCategory::HttpHeads => "http_heads",
            FramingCategory::HttpChunking => "http_chunking",
            FramingCategory::SseFraming => "sse_framing",
            FramingCategory::SseOtherEvents => "sse_other_events",
            FramingCategory::HttpBodyOther => "http_body_other",
            FramingCategory::HttpGzipEncodedBytes => "http_gzip_encoded_bytes",
            FramingCategory::HttpGzipDecodedBytes => "http_gzip_decoded_bytes",
            FramingCategory::RecorderEnvelope => "recorder_envelope",
            FramingCategory::RecordedSizes => "recorded_sizes",
            FramingCategory::HarEnvelope => "har_envelope",
            FramingCategory::LogArrayPunctuation => "log_array_punctuation",
            FramingCategory::ClientLogText => "client_log_text",
            FramingCategory::LogLinePrefix => "log_line_prefix",
            FramingCategory::LogEventLines => "log_event_lines",
            FramingCategory::PasteMarkup => "paste_markup",
        }
    }

    /// Counts that are not input bytes (what compressed bodies decoded to, sizes a recorder
    /// reported): the accounting subtracts them, `--stats` prints each on its own line.
    pub fn is_not_read(self) -> bool {
        matches!(self, FramingCategory::HttpGzipDecodedBytes | FramingCategory::RecordedSizes)
    }

    /// [`Self::is_not_read`] for a category's name.
    pub fn name_is_not_read(name: &str) -> bool {
        name == FramingCategory::HttpGzipDecodedBytes.as_str() || name == FramingCategory::RecordedSizes.as_str()
    }
}

impl std::fmt::Display for FramingCategory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for FramingCategory {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for FramingCategory {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Receiver of everything a source yields. Implemented by model (and by tests).
pub trait Sink {
    fn frame(&mut self, frame: Frame);
    fn event(&mut self, event: Event);
    fn skip(&mut self, skip: Skip);
    /// Bytes of transport framing (line terminators, HTTP heads, chunk sizes, SSE field
    /// names, pcap/IP/TCP headers) under a category.
    fn framing(&mut self, category: FramingCategory, bytes: u64);
    /// The source starts reading another file of the same capture (diagnostics name it).
    fn begin_file(&mut self, _file: &str) {}
    /// `bytes` copied into a payload the source will send. A sink that gets its frames back
    /// (the pipeline's channel) copies into a payload it recycled: a fresh allocation for every
    /// large payload was fresh pages to fault in and zero, a third of the reading thread's time
    /// on a log of large messages.
    fn copy_payload(&mut self, bytes: &[u8]) -> Vec<u8> {
        bytes.to_vec()
    }
    /// A used payload to read into, its old contents still in it (they are overwritten, never
    /// read), when the sink has one to spare (the pipeline's channel recycles them); a source
    /// that reads a long line straight into it hands it over as the frame's payload without
    /// copying ([`crate::ingest::lines::split::LineSplitter::next_owned_line`]).
    fn spare_payload(&mut self) -> Option<Vec<u8>> {
        None
    }
    /// An emptied used payload of at least `len` bytes' capacity to fill, when the sink has
    /// one to spare (the pipeline's channel recycles them): what an HTTP body or an SSE event
    /// grows into instead of fresh pages.
    fn payload_for(&mut self, _len: usize) -> Option<Vec<u8>> {
        None
    }
}
