//! The per-connection driver: runs each direction of one TCP connection's two reassembled
//! byte streams through HTTP/1.x (head, body, resync, opaque) and hands over [`Frame`]s (JSON
//! bodies and SSE `message` data), `http_status` / `tcp_gap` events, framing counts and skips.
//! It knows HTTP and SSE, not JSON-RPC: a body is "JSON" by its content type (or its first
//! byte when there is none), never by parsing it. The steps are the sibling modules': message
//! boundaries (`resync`), pairing (`exchange`), body framing (`message_body`), where outputs go
//! (`route`), events (`events`), skips (`skips`), what a run shares (`env`).
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

use crate::ingest::connection::{ConnectionId, Side, StreamEnd};
use crate::ingest::frame::{Direction, SkipReason};
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::events::{gap_event, status_event};
use crate::ingest::http::exchange::{Exchange, OpenExchanges};
use crate::ingest::http::head::{HeadFacts, ParsedHead, Role};
use crate::ingest::http::message_body::{Body, BodyFraming};
use crate::ingest::http::resync::{DirParser, DirState, GiveUp, HeadStep};
use crate::ingest::http::route::route_outputs;

/// The HTTP view of one TCP connection.
#[derive(Debug)]
pub struct HttpConnection {
    connection: ConnectionId,
    dirs: [DirParser; 2],
    exchanges: OpenExchanges,
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
            exchanges: OpenExchanges::default(),
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
                DirState::Resync => pos += dir.seek_message_start(at, rest, env),
                DirState::Head => pos += self.head(side, at, rest, ts_us, env),
                DirState::Body(_) => pos += self.body(side, at, rest, ts_us, env),
            }
        }
    }

    /// Reads head bytes; returns how many of `rest` were used.
    fn head(&mut self, side: Side, at: u64, rest: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        match self.dirs[side.index()].read_head(at, rest) {
            HeadStep::Complete { head, start, len, used } => {
                env.framing.http_heads += len as u64;
                self.start_message(side, *head, start, ts_us, env);
                used
            }
            HeadStep::Buffered(n) => n,
            HeadStep::Invalid { consumed_now } => self.invalid_head(side, consumed_now, rest, ts_us, env),
        }
    }

    /// The bytes at the head start are not a message head. Returns bytes of the current input
    /// consumed (`consumed_now`, which are already in the head buffer when it is non-empty).
    /// `first` holds the input at the head start when nothing is buffered yet.
    fn invalid_head(&mut self, side: Side, consumed_now: usize, first: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        // The peer's verdict (a TLS or HTTP/2 client hello) names the whole connection.
        let peer_reason = self.dirs[side.other().index()].connection_verdict();
        match self.dirs[side.index()].give_up_head(consumed_now, first, peer_reason, env) {
            GiveUp::Consumed(n) => n,
            GiveUp::Rescan { at, buffered, consumed } => {
                // Rescan what was buffered after the false start, then continue with the input.
                self.feed(side, at, ts_us, &buffered[1..], env);
                consumed
            }
        }
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

    /// A message head at stream offset `head_start` of `side`: the direction is in sync and
    /// the request or response starts.
    fn start_message(&mut self, side: Side, head: ParsedHead, head_start: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        self.dirs[side.index()].head_found(env);
        match head {
            ParsedHead::Request { method, url, facts, .. } => self.start_request(side, method, url, &facts, env),
            ParsedHead::Response {
                status, reason, facts, ..
            } => self.start_response(side, status, reason, &facts, head_start, ts_us, env),
        }
    }

    /// A request opens an exchange, then its body (if any).
    fn start_request(&mut self, side: Side, method: String, url: String, facts: &HeadFacts, env: &mut HttpEnv<'_>) {
        self.set_role(side, Role::Client);
        env.stats.requests += 1;
        let number = env.take_exchange_number();
        self.exchanges.push(Exchange::for_request(number, method, url, facts), env);
        let framing = BodyFraming::of_request(facts);
        let dir = &mut self.dirs[side.index()];
        dir.current_exchange = Some(number);
        match framing {
            None => {
                if let Some(x) = self.exchanges.get_mut(number) {
                    x.request_done = true;
                }
                self.exchanges.retire(number);
            }
            Some(framing) => {
                let body = Body::new(number, Direction::ClientToServer, framing, facts, false, env.max_frame_bytes);
                dir.state = DirState::Body(Box::new(body));
            }
        }
    }

    /// A response: an interim one (1xx) only may upgrade; a final one answers the oldest open
    /// exchange (releasing its held request frames), then its body (if any) starts.
    #[allow(clippy::too_many_arguments)]
    fn start_response(&mut self, side: Side, status: u16, reason: String, facts: &HeadFacts, head_start: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        self.set_role(side, Role::Server);
        if (100..200).contains(&status) {
            if status == 101 {
                self.upgrade(env);
            }
            return;
        }
        env.stats.responses += 1;
        let number = self.exchanges.pair_response(env);
        let Some(x) = self.exchanges.get_mut(number) else { return };
        x.answer(status, reason, facts.session_id.clone(), head_start, env);
        let method = x.method.clone();
        if method.eq_ignore_ascii_case("CONNECT") && (200..300).contains(&status) {
            self.upgrade(env);
            return;
        }
        let framing = BodyFraming::of_response(&method, status, facts);
        let dir = &mut self.dirs[side.index()];
        dir.current_exchange = Some(number);
        match framing {
            None => self.complete_response_without_body(number, ts_us, env),
            Some(framing) => {
                let body = Body::new(number, Direction::ServerToClient, framing, facts, status >= 400, env.max_frame_bytes);
                dir.state = DirState::Body(Box::new(body));
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
            dir.drop_head(SkipReason::HttpUpgraded, env);
            dir.state = DirState::Opaque(SkipReason::HttpUpgraded);
        }
    }

    fn complete_response_without_body(&mut self, number: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let connection = self.connection;
        if let Some(x) = self.exchanges.get_mut(number) {
            x.response_done = true;
            status_event(x, connection, ts_us, None, env);
        }
        self.exchanges.retire(number);
    }

    /// Body bytes; returns how many of `rest` belong to the body.
    fn body(&mut self, side: Side, at: u64, rest: &[u8], ts_us: Option<i64>, env: &mut HttpEnv<'_>) -> usize {
        let DirState::Body(body) = &mut self.dirs[side.index()].state else { return 0 };
        if let Some(len) = body.content.room_wanted(rest.len())
            && let Some(room) = env.sink.payload_for(len)
        {
            body.content.give_room(room);
        }
        let read = body.read(at, rest, ts_us, &mut env.framing);
        self.emit_outputs(side, env);
        if let Some(why) = read.broken {
            self.finish_body(side, Some(why), ts_us, env);
            let dir = &mut self.dirs[side.index()];
            dir.state = DirState::Resync;
            dir.at_line_start = false;
            env.stats.resyncs += 1;
        } else if read.done {
            self.finish_body(side, None, ts_us, env);
        }
        read.consumed
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
        let (number, direction) = (body.exchange, body.direction);
        let client_ip = self.client_ip();
        // The exchange may have been given up (too many open); its frames still count.
        let mut orphan = Exchange::orphan(number);
        let x = match self.exchanges.get_mut(number) {
            Some(x) => x,
            None => &mut orphan,
        };
        if route_outputs(outputs, x, direction, connection, client_ip, env) {
            self.exchanges.bound_held_frames(env);
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
        if let Some(x) = self.exchanges.get_mut(number) {
            if body.direction == Direction::ClientToServer {
                x.request_done = true;
            } else {
                x.response_done = true;
                status_event(x, connection, ts_us, body.content.preview.as_deref(), env);
            }
        }
        self.exchanges.retire(number);
    }

    /// `len` bytes at `offset` of `side`'s stream are missing from the capture.
    pub fn gap(&mut self, side: Side, offset: u64, len: u64, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        let dir = &self.dirs[side.index()];
        if matches!(dir.state, DirState::Opaque(_)) {
            return; // not HTTP (or no longer): the gap is counted, not an MCP event
        }
        let session = dir.current_exchange.and_then(|n| self.exchanges.get(n)).and_then(Exchange::session);
        env.sink.event(gap_event(session, ts_us, offset, len, self.connection, dir.role));
        let dir = &mut self.dirs[side.index()];
        match &mut dir.state {
            DirState::Opaque(_) => {}
            DirState::Resync => dir.at_line_start = true,
            DirState::Head => {
                dir.drop_head(SkipReason::HttpResync, env);
                dir.state = DirState::Resync;
                dir.at_line_start = true;
            }
            DirState::Body(body) => {
                let in_sync = body.lose(offset, len, ts_us);
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
        if let DirState::Body(body) = &dir.state {
            let cut = body.cut_by_end(how, why);
            self.finish_body(side, cut, ts_us, env);
        }
        self.dirs[side.index()].close_stream(env);
    }

    /// The connection is gone: held frames are released, state dropped.
    pub fn close(&mut self, ts_us: Option<i64>, env: &mut HttpEnv<'_>) {
        for side in [Side::A, Side::B] {
            self.end(side, StreamEnd::CaptureEnd, ts_us, env);
        }
        self.exchanges.release_all(env);
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
