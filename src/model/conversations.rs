//! Conversations: the session a frame belongs to. A transport's own key (stdio pair, host-log
//! server, transcript session, `Mcp-Session-Id`) or the HTTP connection is the *channel*; in
//! 2026-07-28 traffic a channel carries conversations, one per client identity (`_meta`
//! clientInfo) at its pipe or client address. Clients share TCP connections (Node's fetch
//! pool) and pipes, so a connection is not an identity: a request names its conversation, and
//! what answers it (the response in its HTTP exchange, or the response with its id on a pipe)
//! joins that conversation. Frames that name nobody (notifications, non-JSON lines) go to the
//! channel's latest conversation. Handshake-era traffic is untouched: its session is the channel,
//! and so is the conversation of a pipe's first client (a pipe with one client keeps its name).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::message::{Kind, Message, Parsed};
use crate::ingest::frame::{Direction, Frame, Transport};

/// A channel and a request id on it, both shared with the frames that name them.
type ChannelId = (Arc<str>, Arc<str>);

/// Routes frames of one capture from their channel to their conversation.
#[derive(Default)]
pub(crate) struct Conversations {
    /// Interned conversation names.
    names: HashMap<String, Arc<str>>,
    /// HTTP connection → (exchange, conversation) of its latest 2026-07-28 request: the
    /// exchange's response frames (JSON body or SSE events) join it. HTTP/1.1 exchanges on one
    /// connection follow each other, so one entry per connection is enough.
    by_connection: HashMap<u64, (u64, Arc<str>)>,
    /// (channel, request id) → the conversations of requests with that id on a pipe that
    /// carries conversations, oldest first: two clients on one pipe may both send id 1, and
    /// the answers are taken in request order. Removed when answered.
    by_id: HashMap<ChannelId, VecDeque<Arc<str>>>,
    /// Channel → its latest conversation.
    latest: HashMap<Arc<str>, Arc<str>>,
    /// Pipe → the first client identity it carried, whose conversation keeps the pipe's name.
    first_identity: HashMap<Arc<str>, String>,
}

impl Conversations {
    /// The conversation of a frame on `channel`.
    pub fn route(&mut self, channel: &Arc<str>, frame: &Frame, parsed: &Parsed) -> Arc<str> {
        // An explicit HTTP session (`Mcp-Session-Id`, legacy `sessionId`) is the session.
        if matches!(frame.transport, Transport::Http | Transport::Sse) && frame.session.is_some() {
            return Arc::clone(channel);
        }
        let first = match parsed {
            Parsed::One(m) => Some(&**m),
            Parsed::Batch(v) => v.first(),
            Parsed::Other(..) => None,
        };
        if let Some(m) = first
            && m.kind == Some(Kind::Request)
            && let Some(name) = self.conversation_name(channel, frame, m)
        {
            let conv = self.intern(name);
            match &frame.http {
                Some(h) => {
                    self.by_connection.insert(h.connection, (h.exchange, Arc::clone(&conv)));
                }
                None => {
                    if let Some(id) = &m.rpc_id {
                        self.by_id.entry((Arc::clone(channel), Arc::clone(id))).or_default().push_back(Arc::clone(&conv));
                    }
                }
            }
            self.latest.insert(Arc::clone(channel), Arc::clone(&conv));
            return conv;
        }
        if self.latest.is_empty() {
            return Arc::clone(channel); // no 2026-07-28 request yet: handshake-era traffic
        }
        if let Some(h) = &frame.http {
            return match self.by_connection.get(&h.connection) {
                Some((exchange, conv)) if *exchange == h.exchange => Arc::clone(conv),
                _ => Arc::clone(channel),
            };
        }
        let Some(m) = first else {
            return self.latest_of(channel);
        };
        match (m.kind, &m.rpc_id) {
            // A request without an identity from the client side is the channel's own (and
            // so is its answer); one from the server asks the latest conversation.
            (Some(Kind::Request), Some(id)) if frame.direction != Some(Direction::ServerToClient) => {
                self.by_id.entry((Arc::clone(channel), Arc::clone(id))).or_default().push_back(Arc::clone(channel));
                Arc::clone(channel)
            }
            (Some(Kind::Response) | Some(Kind::Error), Some(id)) => {
                let key = (Arc::clone(channel), Arc::clone(id));
                let conv = self.by_id.get_mut(&key).and_then(VecDeque::pop_front);
                if self.by_id.get(&key).is_some_and(VecDeque::is_empty) {
                    self.by_id.remove(&key);
                }
                conv.unwrap_or_else(|| self.latest_of(channel))
            }
            _ => self.latest_of(channel),
        }
    }

    fn latest_of(&self, channel: &Arc<str>) -> Arc<str> {
        self.latest.get(channel).map_or_else(|| Arc::clone(channel), Arc::clone)
    }

    fn intern(&mut self, name: String) -> Arc<str> {
        if let Some(n) = self.names.get(&name) {
            return Arc::clone(n);
        }
        let n: Arc<str> = Arc::from(name.as_str());
        self.names.insert(name, Arc::clone(&n));
        n
    }
}

impl Conversations {
    /// A 2026-07-28 request's conversation (`_meta` carries the protocol version; not an
    /// `initialize` fallback): `CLIENT VERSION @ ip:ADDR` over HTTP (`@ http` when the capture
    /// does not say the client's address); on a pipe, the pipe's own name for the first
    /// identity it carries (a pipe with one client keeps its name, and a client that falls
    /// back to `initialize` stays one session) and `CLIENT VERSION @ PIPE` for others. `None`
    /// for handshake-era requests, whose conversation is their channel.
    fn conversation_name(&mut self, channel: &Arc<str>, frame: &Frame, m: &Message) -> Option<String> {
        if m.meta_protocol_version.is_none() || m.method.as_deref() == Some("initialize") {
            return None;
        }
        let who = m.client_info.as_ref().map_or_else(|| "? ?".to_string(), |c| format!("{} {}", c.name.as_deref().unwrap_or("?"), c.version.as_deref().unwrap_or("?")));
        if let Some(h) = &frame.http {
            return Some(match h.extras.as_ref().and_then(|e| e.client_ip.as_deref()) {
                Some(ip) => format!("{who} @ ip:{ip}"),
                None => format!("{who} @ http"),
            });
        }
        let first = self.first_identity.entry(Arc::clone(channel)).or_insert_with(|| who.clone());
        Some(if *first == who { channel.to_string() } else { format!("{who} @ {channel}") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::frame::Direction;
    use crate::model::message::parse_payload;

    fn frame(direction: Direction, json: &str) -> (Frame, Parsed) {
        let f = Frame { session: Some("pipe".into()), ..Frame::new(Transport::Stdio, Some(direction), 0, json.as_bytes().to_vec()) };
        let parsed = parse_payload(&f.payload);
        (f, parsed)
    }

    fn request(id: u32, client: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"{client}","version":"1"}}}}}}}}"#
        )
    }

    #[test]
    fn two_identities_on_one_pipe_are_two_conversations_even_when_they_reuse_an_id() {
        let channel: Arc<str> = Arc::from("pipe");
        let mut c = Conversations::default();
        let mut route = |d, json: &str| {
            let (f, p) = frame(d, json);
            c.route(&channel, &f, &p).to_string()
        };
        // Both clients send id 1 before either is answered: answers go in request order.
        // The pipe's first client keeps the pipe's name.
        assert_eq!(route(Direction::ClientToServer, &request(1, "a")), "pipe");
        assert_eq!(route(Direction::ClientToServer, &request(1, "b")), "b 1 @ pipe");
        assert_eq!(route(Direction::ServerToClient, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#), "pipe");
        assert_eq!(route(Direction::ServerToClient, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#), "b 1 @ pipe");
        // A line that names nobody joins the pipe's latest conversation.
        assert_eq!(route(Direction::ServerToClient, "Starting server..."), "b 1 @ pipe");
        // An answer to an id nobody asked for, too; it is never lost.
        assert_eq!(route(Direction::ServerToClient, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#), "b 1 @ pipe");
    }

    #[test]
    fn handshake_era_traffic_stays_on_its_channel() {
        let channel: Arc<str> = Arc::from("pipe");
        let mut c = Conversations::default();
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"x","version":"1"}}}"#;
        for (d, json) in [(Direction::ClientToServer, init), (Direction::ServerToClient, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#)] {
            let (f, p) = frame(d, json);
            assert_eq!(&*c.route(&channel, &f, &p), "pipe");
        }
    }
}
