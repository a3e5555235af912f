//! HTTP/1.x on the two reassembled byte streams of one TCP connection → [`Frame`]s (JSON bodies
//! and SSE `message` data), `http_status` / `tcp_gap` events, framing counts and skips. It knows
//! HTTP and SSE, not JSON-RPC: a body is "JSON" by its content type (or its first byte when
//! there is none), never by parsing it.
//!
//! Per direction: head (httparse) → body framing (none / Content-Length / chunked / until
//! close) → content decoding (gzip, deflate) → content sink (JSON assembly buffer, SSE parser,
//! or "other" counter). Requests and responses are paired FIFO per connection (pipelining);
//! a request frame is held until its response head is seen, because the session of an
//! initialize request is only known from the response's `Mcp-Session-Id`.
//!
//! After a TCP gap a Content-Length body (or chunk data) stays in sync and the message is
//! marked incomplete; when framing is lost the direction resynchronises at the next line that
//! starts with a request method (client side) or `HTTP/1.` (server side).

use std::collections::VecDeque;

use crate::ingest::connection::{ConnectionId, Side, StreamEnd};
use crate::ingest::frame::{Direction, Event, EventFacts, Frame, FramingCategory, HttpContext, RequestExtras, Sink, Skip, SkipReason, Transport};
use crate::ingest::http::body::{BodyContent, BodyOutput, ContentSink, content_kind};
use crate::ingest::http::chunked::ChunkedDecoder;
use crate::ingest::http::encoding::ContentDecoder;
use crate::ingest::http::framing::HttpFramingBytes;
use crate::ingest::http::head::{HeadParse, ParsedHead, Role, find_message_start, parse_head, query_session};

/// A head longer than this is not HTTP we want to parse (and bounds the head buffer).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Requests waiting for responses per connection before the oldest is given up.
const MAX_OPEN_EXCHANGES: usize = 256;
/// Bytes of request frames held for their response head, per connection.
const MAX_HELD_FRAME_BYTES: u64 = 64 << 20;

/// Counters of the HTTP layer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HttpStats {
    pub requests: u64,
    pub responses: u64,
    /// Responses that matched no request (request not captured).
    pub unmatched_responses: u64,
    pub frames: u64,
    pub incomplete_frames: u64,
    pub sse_events: u64,
    pub status_errors: u64,
    pub resyncs: u64,
    pub upgraded_connections: u64,
}

/// State shared by all connections of a run.
pub struct HttpEnv<'s> {
    pub sink: &'s mut dyn Sink,
    pub max_frame_bytes: u64,
    /// Next capture-wide exchange number.
    pub next_exchange: u64,
    pub framing: HttpFramingBytes,
    pub stats: HttpStats,
}

impl<'s> HttpEnv<'s> {
    pub fn new(sink: &'s mut dyn Sink, max_frame_bytes: u64) -> Self {
        HttpEnv {
            sink,
            max_frame_bytes,
            next_exchange: 0,
            framing: HttpFramingBytes::default(),
            stats: HttpStats::default(),
        }
    }

    /// Reports the accumulated framing counts to the sink (once, at the end).
    pub fn report_framing(&mut self) {
        let f = std::mem::take(&mut self.framing);
        for (category, bytes) in [
            (FramingCategory::HttpHeads, f.http_heads),
            (FramingCategory::HttpChunking, f.http_chunking),
            (FramingCategory::SseFraming, f.sse_framing),
            (FramingCategory::SseOtherEvents, f.sse_other_events),
            (FramingCategory::HttpBodyOther, f.http_body_other),
            (FramingCategory::HttpGzipEncodedBytes, f.http_gzip_encoded_bytes),
            (FramingCategory::HttpGzipDecodedBytes, f.http_gzip_decoded_bytes),
        ] {
            if bytes > 0 {
                self.sink.framing(category, bytes);
            }
        }
        if f.sse_resync > 0 {
            self.sink.skip(Skip {
                offset: 0,
                bytes: f.sse_resync,
                reason: SkipReason::SseResync,
                detail: "event-stream bytes skipped after TCP gaps, up to the next event boundary".to_string(),
            });
        }
    }

    fn frame(&mut self, frame: Frame) {
        self.stats.frames += 1;
        if frame.incomplete.is_some() {
            self.stats.incomplete_frames += 1;
        }
        self.sink.frame(frame);
    }
}

/// One request/response pair.
#[derive(Debug, Default)]
struct Exchange {
    number: u64,
    method: String,
    url: String,
    protocol_version: Option<String>,
    mcp_method: Option<String>,
    mcp_name: Option<String>,
    mcp_params: Vec<(String, String)>,
    user_agent: Option<String>,
    request_session: Option<String>,
    query_session: Option<String>,
    response_session: Option<String>,
    /// Legacy HTTP+SSE: the session announced by this stream's `endpoint` event.
    stream_session: Option<String>,
    status: Option<u16>,
    reason: String,
    response_head_offset: u64,
    response_seen: bool,
    request_done: bool,
    response_done: bool,
    /// Request frames waiting for the response head (their session may come from it).
    held: Vec<Frame>,
}

impl Exchange {
    fn session(&self) -> Option<String> {
        self.request_session
            .clone()
            .or_else(|| self.query_session.clone())
            .or_else(|| self.response_session.clone())
            .or_else(|| self.stream_session.clone())
    }

    fn context(&self, connection: ConnectionId, sse_event_id: Option<String>, client_ip: Option<String>) -> HttpContext {
        let extras = (!self.mcp_params.is_empty() || self.user_agent.is_some() || client_ip.is_some())
            .then(|| Box::new(RequestExtras { mcp_params: self.mcp_params.clone(), client_ip, user_agent: self.user_agent.clone() }));
        HttpContext {
            connection,
            method: self.method.clone(),
            url: self.url.clone(),
            status: self.status,
            protocol_version: self.protocol_version.clone(),
            mcp_method: self.mcp_method.clone(),
            mcp_name: self.mcp_name.clone(),
            extras,
            sse_event_id,
            exchange: self.number,
        }
    }

    fn held_bytes(&self) -> u64 {
        self.held.iter().map(|f| f.payload.len() as u64).sum()
    }

    /// Releases held request frames with what is known now.
    fn release_held(&mut self, env: &mut HttpEnv<'_>) {
        for mut frame in std::mem::take(&mut self.held) {
            frame.session = self.session();
            if let Some(http) = frame.http.as_mut() {
                http.status = self.status;
            }
            env.frame(frame);
        }
    }
}

#[derive(Debug)]
enum BodyFraming {
    Length { remaining: u64, declared: u64 },
    Chunked(ChunkedDecoder),
    UntilClose,
}

#[derive(Debug)]
struct Body {
    exchange: u64,
    direction: Direction,
    framing: BodyFraming,
    content: BodyContent,
}

#[derive(Debug)]
enum DirState {
    /// Expecting (or reading) a message head.
    Head,
    /// Looking for the next message start.
    Resync,
    Body(Box<Body>),
    /// Everything is skipped with this reason (`non_http_stream`, `http_upgraded`).
    Opaque(SkipReason),
}

/// Consecutive skipped bytes of one direction, reported as one [`Skip`].
#[derive(Debug, Default)]
struct SkipTally {
    reason: Option<SkipReason>,
    offset: u64,
    bytes: u64,
}

impl SkipTally {
    fn add(&mut self, reason: SkipReason, offset: u64, bytes: u64, env: &mut HttpEnv<'_>) {
        if bytes == 0 {
            return;
        }
        if self.reason != Some(reason) || self.offset + self.bytes != offset {
            self.flush(env, None);
            self.reason = Some(reason);
            self.offset = offset;
        }
        self.bytes += bytes;
    }

    /// Reports the tally; `relabel` replaces the provisional `http_resync` reason.
    fn flush(&mut self, env: &mut HttpEnv<'_>, relabel: Option<SkipReason>) {
        if let Some(reason) = self.reason.take()
            && self.bytes > 0
        {
            let reason = if reason == SkipReason::HttpResync {
                relabel.unwrap_or(reason)
            } else {
                reason
            };
            let detail = match reason {
                SkipReason::NonHttpStream => "TCP stream bytes that never parsed as HTTP/1.x".to_string(),
                SkipReason::TlsStream => "TLS-encrypted connection: its messages cannot be read from the capture".to_string(),
                SkipReason::Http2Stream => "HTTP/2 connection (prior knowledge): not supported, only HTTP/1.x is parsed".to_string(),
                SkipReason::HttpMidstream => {
                    "bytes before the first message boundary (capture started mid-connection)".to_string()
                }
                SkipReason::HttpResync => "bytes skipped to find the next HTTP message after lost framing".to_string(),
                SkipReason::HttpUpgraded => "bytes after 101 Switching Protocols / CONNECT".to_string(),
                SkipReason::HttpIncompleteHead => "message head cut by the end of the stream".to_string(),
                other => other.as_str().to_string(),
            };
            env.sink.skip(Skip {
                offset: self.offset,
                bytes: self.bytes,
                reason,
                detail,
            });
        }
        self.bytes = 0;
    }
}

/// The parser of one direction of a connection.
#[derive(Debug)]
struct DirParser {
    role: Option<Role>,
    state: DirState,
    head_buf: Vec<u8>,
    head_start: u64,
    /// For resync: the next byte starts a line.
    at_line_start: bool,
    /// A message head parsed at least once.
    synced_once: bool,
    /// The stream starts at a message boundary (the connection's SYN was seen).
    clean_start: bool,
    /// Exchange of the message in progress (for events).
    current_exchange: Option<u64>,
    skip: SkipTally,
    ended: bool,
}

impl DirParser {
    fn new(role: Option<Role>) -> Self {
        let clean_start = role.is_some();
        DirParser {
            role,
            state: if clean_start { DirState::Head } else { DirState::Resync },
            head_buf: Vec::new(),
            head_start: 0,
            at_line_start: true,
            synced_once: false,
            clean_start,
            current_exchange: None,
            skip: SkipTally::default(),
            ended: false,
        }
    }

    fn flush_resync_tally(&mut self, env: &mut HttpEnv<'_>) {
        let label = if self.synced_once {
            SkipReason::HttpResync
        } else {
            SkipReason::HttpMidstream
        };
        self.skip.flush(env, Some(label));
    }
}

fn lossy_preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// The HTTP view of one TCP connection.
#[derive(Debug)]
pub struct HttpConnection {
    connection: ConnectionId,
    dirs: [DirParser; 2],
    exchanges: VecDeque<Exchange>,
    /// IP address of side A and side B, when the packet layer knows them.
    addrs: [Option<std::net::IpAddr>; 2],
}

impl HttpConnection {
    /// `client`: the side that sent the SYN, if seen.
    pub fn new(connection: ConnectionId, client: Option<Side>) -> Self {
        let role_of = |side: Side| client.map(|c| if c == side { Role::Client } else { Role::Server });
        HttpConnection {
            connection,
            dirs: [DirParser::new(role_of(Side::A)), DirParser::new(role_of(Side::B))],
            exchanges: VecDeque::new(),
            addrs: [None, None],
        }
    }

    /// The IP addresses of side A and B (frames name the client's).
    pub fn with_addresses(mut self, a: std::net::IpAddr, b: std::net::IpAddr) -> Self {
        self.addrs = [Some(a), Some(b)];
        self
    }

    /// The client side's IP address, once a side is known to be the client.
    fn client_ip(&self) -> Option<String> {
        [Side::A, Side::B].into_iter().find(|s| self.dirs[s.index()].role == Some(Role::Client)).and_then(|s| self.addrs[s.index()]).map(|ip| ip.to_string())
    }

    /// In-order bytes of `side`'s stream at `offset`.
    pub fn data(&mut self, side: Side, offset: u64, ts_us: Option<i64>, bytes: &[u8], env: &mut HttpEnv<'_>) {
        // Messages usually start at a segment boundary (one write, one segment): while
        // resynchronising, the first byte of each delivery is a candidate like a line start.
        let dir = &mut self.dirs[side.index()];
        if matches!(dir.state, DirState::Resync) {
            dir.at_line_start = true;
        }
        self.feed(side, offset, ts_us, bytes, env);
    }

    /// Runs the direction's state machine over `bytes` (at stream `offset`).
    fn feed(&mut self, side: Side, offset: u64, ts_us: Option<i64>, bytes: &[u8], env: &mut HttpEnv<'_>) {
        let mut pos = 0usize;
        while pos < bytes.len() {
            let at = offset + pos as u64;
            let rest = &bytes[pos..];
            let dir = &mut self.dirs[side.index()];
            match &dir.state {
                DirState::Opaque(reason) => {
                    let reason = *reason;
                    dir.skip.add(reason, at, rest.len() as u64, env);
                    pos = bytes.len();
                }
                DirState::Resync => match find_message_start(rest, dir.at_line_start, dir.role) {
                    Some(i) => {
                        dir.skip.add(SkipReason::HttpResync, at, i as u64, env);
                        dir.state = DirState::Head;
                        dir.head_buf.clear();
                        dir.head_start = at + i as u64;
                        pos += i;
                    }
                    None => {
                        dir.skip.add(SkipReason::HttpResync, at, rest.len() as u64, env);
                        dir.at_line_start = rest.last() == Some(&b'\n');
                        pos = bytes.len();
                    }
                },
                DirState::Head => pos += self.head(side, at, rest, ts_us, env),
                DirState::Body(_) => pos += self.body(side, at, rest, ts_us, env),
            }
        }
    }

    /// Reads head bytes; returns how many of `rest` were used.
    fn head(&mut self, side: Side, at: u64, rest: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        let dir = &mut self.dirs[side.index()];
        let (result, used_if_complete, appended) = if dir.head_buf.is_empty() {
            dir.head_start = at;
            let r = parse_head(rest, dir.role);
            (r, 0, 0)
        } else {
            let old = dir.head_buf.len();
            let take = rest.len().min(MAX_HEAD_BYTES.saturating_sub(old));
            dir.head_buf.extend_from_slice(&rest[..take]);
            // A head can only end at a line feed: skip re-parsing until one arrives (this keeps
            // a head delivered in tiny segments linear instead of quadratic).
            let result = if memchr::memchr(b'\n', &rest[..take]).is_some() {
                parse_head(&dir.head_buf, dir.role)
            } else {
                HeadParse::Partial
            };
            (result, old, take)
        };
        match result {
            HeadParse::Complete(head) => {
                let len = match head.as_ref() {
                    ParsedHead::Request { len, .. } | ParsedHead::Response { len, .. } => *len,
                };
                let used = len.saturating_sub(used_if_complete);
                let head_start = dir.head_start;
                dir.head_buf.clear();
                env.framing.http_heads += len as u64;
                self.start_message(side, *head, head_start, ts_us, env);
                used
            }
            HeadParse::Partial => {
                if dir.head_buf.is_empty() {
                    if rest.len() >= MAX_HEAD_BYTES {
                        return self.invalid_head(side, rest.len().min(1), rest, ts_us, env);
                    }
                    dir.head_buf.extend_from_slice(rest);
                    rest.len()
                } else if dir.head_buf.len() >= MAX_HEAD_BYTES {
                    self.invalid_head(side, appended, rest, ts_us, env)
                } else {
                    appended
                }
            }
            HeadParse::Invalid => {
                if dir.head_buf.is_empty() {
                    self.invalid_head(side, 1, rest, ts_us, env)
                } else {
                    self.invalid_head(side, appended, rest, ts_us, env)
                }
            }
        }
    }

    /// The bytes at `head_start` are not a message head. Returns bytes of the current input
    /// consumed (`consumed_now`, which are already in the head buffer when it is non-empty).
    /// `first` holds the input at the head start when nothing is buffered yet.
    fn invalid_head(&mut self, side: Side, consumed_now: usize, first: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        // The peer's verdict (a TLS or HTTP/2 client hello) names the whole connection.
        let peer_reason = match self.dirs[1 - side.index()].state {
            DirState::Opaque(r @ (SkipReason::TlsStream | SkipReason::Http2Stream)) => Some(r),
            _ => None,
        };
        let dir = &mut self.dirs[side.index()];
        let buffered = std::mem::take(&mut dir.head_buf);
        let start = dir.head_start;
        if dir.clean_start && !dir.synced_once {
            let reason = peer_reason.unwrap_or_else(|| opaque_reason(if buffered.is_empty() { first } else { &buffered }));
            dir.state = DirState::Opaque(reason);
            let n = if buffered.is_empty() { 0 } else { buffered.len() as u64 };
            dir.skip.add(reason, start, n, env);
            return if buffered.is_empty() { 0 } else { consumed_now };
        }
        env.stats.resyncs += 1;
        dir.state = DirState::Resync;
        dir.at_line_start = false;
        dir.skip.add(SkipReason::HttpResync, start, 1, env);
        if buffered.is_empty() {
            return 1;
        }
        // Rescan what was buffered after the false start, then continue with the input.
        if buffered.len() > 1 {
            self.feed(side, start + 1, ts_us, &buffered[1..], env);
        }
        consumed_now
    }

    fn set_role(&mut self, side: Side, role: Role) {
        self.dirs[side.index()].role = Some(role);
        let other = &mut self.dirs[side.other().index()];
        if other.role.is_none() {
            other.role = Some(if role == Role::Client {
                Role::Server
            } else {
                Role::Client
            });
        }
    }

    fn start_message(
        &mut self,
        side: Side,
        head: ParsedHead,
        head_start: u64,
        ts_us: Option<i64>,
        env: &mut HttpEnv<'_>,
    ) {
        {
            let dir = &mut self.dirs[side.index()];
            dir.flush_resync_tally(env);
            dir.synced_once = true;
            dir.state = DirState::Head;
        }
        match head {
            ParsedHead::Request { method, url, facts, .. } => {
                self.set_role(side, Role::Client);
                env.stats.requests += 1;
                let number = env.next_exchange;
                env.next_exchange += 1;
                let exchange = Exchange {
                    number,
                    query_session: query_session(&url),
                    method,
                    url,
                    protocol_version: facts.protocol_version.clone(),
                    mcp_method: facts.mcp_method.clone(),
                    mcp_name: facts.mcp_name.clone(),
                    mcp_params: facts.mcp_params.clone(),
                    user_agent: facts.user_agent.clone(),
                    request_session: facts.session_id.clone(),
                    ..Default::default()
                };
                self.push_exchange(exchange, env);
                let framing = if facts.chunked {
                    Some(BodyFraming::Chunked(ChunkedDecoder::new()))
                } else if let Some(n) = facts.content_length.filter(|&n| n > 0) {
                    Some(BodyFraming::Length {
                        remaining: n,
                        declared: n,
                    })
                } else if facts.transfer_encoding {
                    Some(BodyFraming::UntilClose)
                } else {
                    None
                };
                let dir = &mut self.dirs[side.index()];
                dir.current_exchange = Some(number);
                match framing {
                    None => {
                        if let Some(x) = self.exchange_mut(number) {
                            x.request_done = true;
                        }
                        self.retire(number);
                    }
                    Some(framing) => {
                        let content = BodyContent::new(
                            content_kind(facts.content_type.as_deref(), true),
                            ContentDecoder::for_header(facts.content_encoding.as_deref()),
                            env.max_frame_bytes,
                            facts.content_length,
                            false,
                        );
                        dir.state = DirState::Body(Box::new(Body {
                            exchange: number,
                            direction: Direction::ClientToServer,
                            framing,
                            content,
                        }));
                    }
                }
            }
            ParsedHead::Response {
                status, reason, facts, ..
            } => {
                self.set_role(side, Role::Server);
                if (100..200).contains(&status) {
                    if status == 101 {
                        self.upgrade(env);
                    }
                    return;
                }
                env.stats.responses += 1;
                let number = match self.exchanges.iter().position(|x| !x.response_seen) {
                    Some(i) => self.exchanges[i].number,
                    None => {
                        env.stats.unmatched_responses += 1;
                        let number = env.next_exchange;
                        env.next_exchange += 1;
                        self.push_exchange(
                            Exchange {
                                number,
                                request_done: true,
                                ..Default::default()
                            },
                            env,
                        );
                        number
                    }
                };
                let Some(x) = self.exchange_mut(number) else { return };
                x.status = Some(status);
                x.reason = reason;
                x.response_session = facts.session_id.clone();
                x.response_seen = true;
                x.response_head_offset = head_start;
                x.release_held(env);
                let method = x.method.clone();
                if method.eq_ignore_ascii_case("CONNECT") && (200..300).contains(&status) {
                    self.upgrade(env);
                    return;
                }
                let no_body = method.eq_ignore_ascii_case("HEAD") || status == 204 || status == 304;
                let framing = if no_body {
                    None
                } else if facts.chunked {
                    Some(BodyFraming::Chunked(ChunkedDecoder::new()))
                } else if let Some(n) = facts.content_length {
                    (n > 0).then_some(BodyFraming::Length {
                        remaining: n,
                        declared: n,
                    })
                } else {
                    Some(BodyFraming::UntilClose)
                };
                let dir = &mut self.dirs[side.index()];
                dir.current_exchange = Some(number);
                match framing {
                    None => {
                        self.complete_response_without_body(number, ts_us, env);
                    }
                    Some(framing) => {
                        let content = BodyContent::new(
                            content_kind(facts.content_type.as_deref(), false),
                            ContentDecoder::for_header(facts.content_encoding.as_deref()),
                            env.max_frame_bytes,
                            facts.content_length,
                            status >= 400,
                        );
                        dir.state = DirState::Body(Box::new(Body {
                            exchange: number,
                            direction: Direction::ServerToClient,
                            framing,
                            content,
                        }));
                    }
                }
            }
        }
    }

    /// The connection leaves HTTP: what either direction holds (a body in progress, a head
    /// not yet complete) is finished or counted before the rest becomes opaque.
    fn upgrade(&mut self, env: &mut HttpEnv<'_>) {
        env.stats.upgraded_connections += 1;
        for side in [Side::A, Side::B] {
            if matches!(self.dirs[side.index()].state, DirState::Body(_)) {
                self.finish_body(side, Some("connection upgraded (101 / CONNECT)".to_string()), None, env);
            }
            let dir = &mut self.dirs[side.index()];
            if !dir.head_buf.is_empty() {
                let n = dir.head_buf.len() as u64;
                dir.skip.add(SkipReason::HttpUpgraded, dir.head_start, n, env);
                dir.head_buf.clear();
            }
            dir.state = DirState::Opaque(SkipReason::HttpUpgraded);
        }
    }

    fn push_exchange(&mut self, exchange: Exchange, env: &mut HttpEnv<'_>) {
        self.exchanges.push_back(exchange);
        while self.exchanges.len() > MAX_OPEN_EXCHANGES {
            if let Some(mut old) = self.exchanges.pop_front() {
                old.release_held(env);
            }
        }
        self.bound_held_frames(env);
    }

    /// Releases the oldest held request frames while more than the bound is held.
    fn bound_held_frames(&mut self, env: &mut HttpEnv<'_>) {
        let mut held: u64 = self.exchanges.iter().map(Exchange::held_bytes).sum();
        for x in self.exchanges.iter_mut() {
            if held <= MAX_HELD_FRAME_BYTES {
                break;
            }
            held -= x.held_bytes();
            x.release_held(env);
        }
    }

    fn exchange_mut(&mut self, number: u64) -> Option<&mut Exchange> {
        self.exchanges.iter_mut().find(|x| x.number == number)
    }

    /// Drops an exchange once both of its messages are done.
    fn retire(&mut self, number: u64) {
        if let Some(i) = self.exchanges.iter().position(|x| x.number == number)
            && self.exchanges[i].request_done
            && self.exchanges[i].response_done
            && self.exchanges[i].held.is_empty()
        {
            self.exchanges.remove(i);
        }
    }

    fn complete_response_without_body(&mut self, number: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let connection = self.connection;
        if let Some(x) = self.exchange_mut(number) {
            x.response_done = true;
            status_event(x, connection, ts_us, None, env);
        }
        self.retire(number);
    }

    /// Body bytes; returns how many of `rest` belong to the body.
    fn body(&mut self, side: Side, at: u64, rest: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        let dir = &mut self.dirs[side.index()];
        let DirState::Body(body) = &mut dir.state else { return 0 };
        let mut framing_broken = None;
        let (consumed, done) = match &mut body.framing {
            BodyFraming::Length { remaining, .. } => {
                let take = (*remaining).min(rest.len() as u64) as usize;
                body.content.piece(&rest[..take], at, ts_us, &mut env.framing);
                *remaining -= take as u64;
                (take, *remaining == 0)
            }
            BodyFraming::UntilClose => {
                body.content.piece(rest, at, ts_us, &mut env.framing);
                (rest.len(), false)
            }
            BodyFraming::Chunked(decoder) => {
                let content = &mut body.content;
                let framing_bytes = &mut env.framing;
                let mut pieces_framing = HttpFramingBytes::default();
                let progress = decoder.feed(rest, &mut |i, piece| {
                    content.piece(piece, at + i as u64, ts_us, &mut pieces_framing)
                });
                merge_framing(framing_bytes, &pieces_framing);
                framing_bytes.http_chunking += progress.framing_bytes;
                if let Some(e) = progress.error {
                    framing_broken = Some(format!(
                        "chunked framing broken at stream offset {}: {e}",
                        at + progress.consumed as u64
                    ));
                }
                (progress.consumed, progress.done)
            }
        };
        self.emit_outputs(side, env);
        if let Some(why) = framing_broken {
            self.finish_body(side, Some(why), ts_us, env);
            let dir = &mut self.dirs[side.index()];
            dir.state = DirState::Resync;
            dir.at_line_start = false;
            env.stats.resyncs += 1;
        } else if done {
            self.finish_body(side, None, ts_us, env);
        }
        consumed
    }

    /// Turns body outputs into frames/events with the exchange's context.
    fn emit_outputs(&mut self, side: Side, env: &mut HttpEnv<'_>) {
        let connection = self.connection;
        let dir = &mut self.dirs[side.index()];
        let DirState::Body(body) = &mut dir.state else { return };
        if body.content.outputs.is_empty() {
            return;
        }
        let outputs = std::mem::take(&mut body.content.outputs);
        let mut held_any = false;
        let (number, direction) = (body.exchange, body.direction);
        let client_ip = self.client_ip();
        // The exchange may have been given up (too many open); its frames still count.
        let mut orphan = Exchange {
            number,
            ..Default::default()
        };
        let x = match self.exchanges.iter_mut().find(|x| x.number == number) {
            Some(x) => x,
            None => &mut orphan,
        };
        for output in outputs {
            match output {
                BodyOutput::Json {
                    payload,
                    wire_bytes,
                    offset,
                    ts_us,
                    incomplete,
                    note,
                } => {
                    let frame = Frame {
                        session: x.session(),
                        transport: Transport::Http,
                        direction: Some(direction),
                        ts_us,
                        offset,
                        wire_bytes,
                        payload,
                        incomplete,
                        note,
                        http: Some(x.context(connection, None, client_ip.clone())),
                        recorded: None,
                    };
                    if direction == Direction::ClientToServer && !x.response_seen && !x.method.is_empty() {
                        held_any = true;
                        x.held.push(frame);
                    } else {
                        env.frame(frame);
                    }
                }
                BodyOutput::Skip(skip) => env.sink.skip(skip),
                BodyOutput::Sse(event) => {
                    env.stats.sse_events += 1;
                    if event.event_type == "endpoint" {
                        if let Some(s) = query_session(&String::from_utf8_lossy(&event.data)) {
                            x.stream_session = Some(s);
                        }
                        env.framing.sse_other_events += event.data_bytes;
                        continue;
                    }
                    if event.event_type != "message" || event.data_bytes == 0 {
                        env.framing.sse_other_events += event.data_bytes;
                        continue;
                    }
                    let frame = Frame {
                        session: x.session(),
                        transport: Transport::Sse,
                        direction: Some(direction),
                        ts_us: event.ts_us,
                        offset: event.data_offset,
                        wire_bytes: event.data_bytes,
                        payload: event.data,
                        incomplete: event.incomplete,
                        note: None,
                        http: Some(x.context(connection, event.id, client_ip.clone())),
                        recorded: None,
                    };
                    env.frame(frame);
                }
            }
        }
        if held_any {
            self.bound_held_frames(env);
        }
    }

    /// Ends the body in progress (`cut`: why it is incomplete) and the message.
    fn finish_body(&mut self, side: Side, cut: Option<String>, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let dir = &mut self.dirs[side.index()];
        let DirState::Body(body) = &mut dir.state else { return };
        body.content.finish(cut, ts_us, &mut env.framing);
        self.emit_outputs(side, env);
        let dir = &mut self.dirs[side.index()];
        let DirState::Body(body) = std::mem::replace(&mut dir.state, DirState::Head) else {
            return;
        };
        let connection = self.connection;
        let number = body.exchange;
        if let Some(x) = self.exchange_mut(number) {
            if body.direction == Direction::ClientToServer {
                x.request_done = true;
            } else {
                x.response_done = true;
                status_event(x, connection, ts_us, body.content.preview.as_deref(), env);
            }
        }
        self.retire(number);
    }

    /// `len` bytes at `offset` of `side`'s stream are missing from the capture.
    pub fn gap(&mut self, side: Side, offset: u64, len: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let connection = self.connection;
        let dir = &self.dirs[side.index()];
        if matches!(dir.state, DirState::Opaque(_)) {
            return; // not HTTP (or no longer): the gap is counted, not an MCP event
        }
        let session = dir
            .current_exchange
            .and_then(|n| self.exchanges.iter().find(|x| x.number == n))
            .and_then(Exchange::session);
        let way = match dir.role {
            Some(Role::Client) => "client to server",
            Some(Role::Server) => "server to client",
            None => "unknown direction",
        };
        env.sink.event(Event {
            session,
            ts_us,
            offset,
            level: "warn".to_string(),
            server: None,
            kind: "tcp_gap".to_string(),
            text: format!("tcp gap of {len} bytes at stream offset {offset} (connection {connection}, {way})"),
            ..Event::default()
        });
        let dir = &mut self.dirs[side.index()];
        match &mut dir.state {
            DirState::Opaque(_) => {}
            DirState::Resync => dir.at_line_start = true,
            DirState::Head => {
                if !dir.head_buf.is_empty() {
                    let n = dir.head_buf.len() as u64;
                    dir.skip.add(SkipReason::HttpResync, dir.head_start, n, env);
                    dir.head_buf.clear();
                }
                dir.state = DirState::Resync;
                dir.at_line_start = true;
            }
            DirState::Body(body) => {
                let in_sync = match &mut body.framing {
                    BodyFraming::Length { remaining, .. } => {
                        let lost = len.min(*remaining);
                        body.content.gap(offset, lost, ts_us);
                        *remaining -= lost;
                        if *remaining == 0 { Some(len == lost) } else { None }
                    }
                    BodyFraming::UntilClose => {
                        body.content.gap(offset, len, ts_us);
                        None
                    }
                    BodyFraming::Chunked(decoder) => {
                        let kept = decoder.skip_lost_data(len);
                        body.content.gap(offset, len, ts_us);
                        if kept { None } else { Some(false) }
                    }
                };
                self.emit_outputs(side, env);
                // `Some(sync)`: the message ended inside or right at the end of the gap.
                if let Some(sync) = in_sync {
                    let why = format!("tcp gap of {len} bytes at stream offset {offset}");
                    self.finish_body(side, Some(why), ts_us, env);
                    let dir = &mut self.dirs[side.index()];
                    if !sync {
                        env.stats.resyncs += 1;
                        dir.state = DirState::Resync;
                        dir.at_line_start = true;
                    }
                }
            }
        }
    }

    /// `side`'s stream ended.
    pub fn end(&mut self, side: Side, how: StreamEnd, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let why = match how {
            StreamEnd::Fin => "connection closed (FIN)",
            StreamEnd::Rst => "connection reset (RST)",
            StreamEnd::CaptureEnd => "capture ended",
        };
        let dir = &mut self.dirs[side.index()];
        if dir.ended {
            return;
        }
        dir.ended = true;
        let cut = match &dir.state {
            DirState::Body(body) => Some(match &body.framing {
                BodyFraming::UntilClose if how == StreamEnd::Fin => None,
                BodyFraming::UntilClose => Some(format!("body until close cut: {why}")),
                BodyFraming::Length { remaining, declared } => {
                    Some(format!("{why} after {} of {declared} body bytes", declared - remaining))
                }
                BodyFraming::Chunked(_) => Some(format!("chunked body not terminated: {why}")),
            }),
            _ => None,
        };
        if let Some(cut) = cut {
            // SSE streams keep their own wording: the parser only flags an unterminated event.
            let is_sse = matches!(&dir.state, DirState::Body(b) if matches!(b.content.sink, ContentSink::Sse(_)));
            let cut = if is_sse { Some(why.to_string()) } else { cut };
            self.finish_body(side, cut, ts_us, env);
        }
        let dir = &mut self.dirs[side.index()];
        if !dir.head_buf.is_empty() {
            let n = dir.head_buf.len() as u64;
            dir.skip.flush(env, None);
            // Bytes on a stream that never carried HTTP (a port probe's lone newline) are not
            // a cut head.
            let reason = if dir.synced_once { SkipReason::HttpIncompleteHead } else { opaque_reason(&dir.head_buf) };
            dir.skip.add(reason, dir.head_start, n, env);
            dir.head_buf.clear();
        }
        let label = if dir.synced_once {
            SkipReason::HttpResync
        } else {
            SkipReason::NonHttpStream
        };
        dir.skip.flush(env, Some(label));
        dir.state = DirState::Opaque(SkipReason::TcpAfterClose);
    }

    /// The connection is gone: held frames are released, state dropped.
    pub fn close(&mut self, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        for side in [Side::A, Side::B] {
            self.end(side, StreamEnd::CaptureEnd, ts_us, env);
        }
        for mut x in std::mem::take(&mut self.exchanges) {
            x.release_held(env);
        }
    }
}

fn merge_framing(into: &mut HttpFramingBytes, from: &HttpFramingBytes) {
    into.http_heads += from.http_heads;
    into.http_chunking += from.http_chunking;
    into.sse_framing += from.sse_framing;
    into.sse_other_events += from.sse_other_events;
    into.http_body_other += from.http_body_other;
    into.http_gzip_encoded_bytes += from.http_gzip_encoded_bytes;
    into.http_gzip_decoded_bytes += from.http_gzip_decoded_bytes;
    into.sse_resync += from.sse_resync;
}

/// Emits the `http_status` event of a failed response.
fn status_event(
    x: &Exchange,
    connection: ConnectionId,
    ts_us: Option<i64>,
    preview: Option<&[u8]>,
    env: &mut HttpEnv<'_>,
) {
    let Some(status) = x.status.filter(|s| *s >= 400) else {
        return;
    };
    env.stats.status_errors += 1;
    let method = if x.method.is_empty() {
        "(request not captured)"
    } else {
        x.method.as_str()
    };
    let mut text = format!("{method} {} -> {status} {}", x.url, x.reason)
        .trim_end()
        .to_string();
    if let Some(p) = preview.filter(|p| !p.is_empty()) {
        text.push_str(": ");
        text.push_str(&lossy_preview(p));
    }
    text.push_str(&format!(" (connection {connection}, exchange {})", x.number));
    env.sink.event(Event {
        session: x.session(),
        ts_us,
        offset: x.response_head_offset,
        level: "error".to_string(),
        server: None,
        kind: "http_status".to_string(),
        text,
        facts: EventFacts { http_status: Some(u32::from(status)), ..EventFacts::default() },
    });
}

/// Why a stream that never carried HTTP/1.x is skipped, from its first bytes: a TLS record
/// (handshake, version 3.x), the HTTP/2 connection preface, or anything else.
fn opaque_reason(first: &[u8]) -> SkipReason {
    if first.len() >= 2 && first[0] == 0x16 && first[1] == 0x03 {
        SkipReason::TlsStream
    } else if first.starts_with(b"PRI * HTTP/2.0") {
        SkipReason::Http2Stream
    } else {
        SkipReason::NonHttpStream
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    fn run(client_bytes: &[&[u8]], server_bytes: &[&[u8]]) -> CollectSink {
        let mut sink = CollectSink::default();
        {
            let mut env = HttpEnv::new(&mut sink, 1 << 30);
            let mut c = HttpConnection::new(0, Some(Side::A));
            let (mut co, mut so) = (0u64, 0u64);
            let n = client_bytes.len().max(server_bytes.len());
            for i in 0..n {
                if let Some(b) = client_bytes.get(i) {
                    c.data(Side::A, co, Some(i as i64), b, &mut env);
                    co += b.len() as u64;
                }
                if let Some(b) = server_bytes.get(i) {
                    c.data(Side::B, so, Some(i as i64), b, &mut env);
                    so += b.len() as u64;
                }
            }
            c.close(None, &mut env);
            env.report_framing();
        }
        sink
    }

    #[test]
    fn request_session_comes_from_the_response_when_absent() {
        let req =
            b"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"id\":1,\"a\":2}";
        let req = &req[..req.len() - 1];
        let resp = b"HTTP/1.1 200 OK\r\nMcp-Session-Id: S1\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"id\":1}";
        let sink = run(&[req], &[resp]);
        assert_eq!(sink.frames.len(), 2);
        assert_eq!(sink.frames[0].direction, Some(Direction::ClientToServer));
        assert_eq!(sink.frames[0].session.as_deref(), Some("S1"));
        assert_eq!(sink.frames[0].http.as_ref().and_then(|h| h.status), Some(200));
        assert_eq!(sink.frames[1].session.as_deref(), Some("S1"));
    }

    #[test]
    fn non_http_stream_is_skipped_whole() {
        for (client, server, reason) in [
            (&b"\x16\x03\x01\x02\x00binary tls hello"[..], &b"\x16\x03\x03 more"[..], "tls_stream"),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04", b"\x00\x00\x06\x04\x00", "http2_stream"),
            (b"SSH-2.0-OpenSSH_9.6\r\n", b"SSH-2.0-OpenSSH_9.2\r\n", "non_http_stream"),
        ] {
            let sink = run(&[client], &[server]);
            assert!(sink.frames.is_empty());
            let skipped: u64 = sink.skips.iter().filter(|s| s.reason == reason).map(|s| s.bytes).sum();
            let client_only: u64 = sink.skips.iter().filter(|s| s.reason == reason && s.offset == 0).map(|s| s.bytes).sum();
            assert!(client_only > 0, "{reason}");
            assert_eq!(skipped, (client.len() + server.len()) as u64, "{reason}: {:?}", sink.skips);
        }
    }

    #[test]
    fn an_upgrade_counts_what_the_peer_had_buffered() {
        // The client pipelines a second request whose head is cut when the server answers 101,
        // and a request body in progress: both are counted, then the rest is opaque.
        let client: &[&[u8]] = &[
            b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nPOST /mcp HTTP/1.1\r\nHost: x",
            b"\r\n",
            b"binary websocket frames",
        ];
        let server: &[&[u8]] = &[b"", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello", b"more"];
        let sink = run(client, server);
        let read: u64 = client.iter().chain(server).map(|b| b.len() as u64).sum();
        assert_eq!(sink.accounted_bytes(), read as i128, "{:?}", sink.skips);
        let upgraded: u64 = sink.skips.iter().filter(|s| s.reason == "http_upgraded").map(|s| s.bytes).sum();
        // After the 101 head: the cut POST head (29 bytes), the websocket bytes of both sides.
        let after_101 = 29 + b"binary websocket frames".len() + b"\x81\x05hello".len() + b"more".len();
        assert_eq!(upgraded, after_101 as u64, "{:?}", sink.skips);
    }

    #[test]
    fn head_response_and_204_have_no_body() {
        let reqs = b"HEAD /a HTTP/1.1\r\n\r\nDELETE /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}";
        let resps = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]";
        let sink = run(&[reqs], &[resps]);
        let payloads: Vec<&[u8]> = sink.frames.iter().map(|f| f.payload.as_slice()).collect();
        assert_eq!(payloads, vec![&b"{}"[..], &b"[]"[..]]);
        assert_eq!(sink.frames[1].http.as_ref().map(|h| h.method.as_str()), Some("POST"));
    }
}
