//! Session tracking: which session a frame belongs to, each session's running totals and
//! client/server facts, and how it ended. Pairing calls and reading messages are elsewhere.

use std::sync::Arc;

use polars::prelude::PlHashMap;

use super::limits::family_of;
use super::message::{Kind, Message};
use super::rows::{CallRow, Ending, EventRow, SessionRow};
use crate::ingest::frame::{Direction, Frame, Transport};

/// Per-session accumulator.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    pub row: SessionRow,
    pub tools_list_pages: u64,
    pub abrupt_reason: Option<String>,
    pub last_frame_incomplete: Option<String>,
    pub unanswered: Vec<String>,
    /// Requests still unanswered where a log excerpt ends (`unknown_log_ended` calls).
    pub log_ended: Vec<String>,
    pub timeout_cancels: u64,
    /// Negotiation facts: server/discover sent, answered with a result, answered with an error;
    /// initialize answered; a 2026-07-28 result (with `resultType`) seen.
    pub discover_sent: bool,
    pub discover_ok: bool,
    pub initialize_ok: bool,
    pub initialize_sent: bool,
    pub modern_results: bool,
    /// The row's client, server and protocol facts, shared with its calls.
    pub facts: SharedFacts,
    /// seq of the session's latest request.
    pub last_request_seq: Option<u64>,
    /// HTTP connections the session used, in order of first use.
    pub connections: Vec<u64>,
    /// The User-Agent of the session's first HTTP request that has one.
    pub user_agent: Option<String>,
}

/// A session's client and server names and versions and its protocol version, as its calls
/// take them ([`fill_session_facts`]): shared, not copied per call.
#[derive(Debug, Default, Clone)]
pub(crate) struct SharedFacts {
    client_name: Option<Arc<str>>,
    client_version: Option<Arc<str>>,
    server_name: Option<Arc<str>>,
    server_version: Option<Arc<str>>,
    protocol_version: Option<Arc<str>>,
}

impl SharedFacts {
    fn of(row: &SessionRow) -> Self {
        let shared = |t: &Option<String>| t.as_deref().map(Arc::from);
        SharedFacts {
            client_name: shared(&row.client_name),
            client_version: shared(&row.client_version),
            server_name: shared(&row.server_name),
            server_version: shared(&row.server_version),
            protocol_version: shared(&row.protocol_version),
        }
    }
}

/// The sessions of one capture, in order of first frame.
pub(crate) struct Sessions {
    capture: String,
    default_session: String,
    /// Interned session names (rows share them).
    names: PlHashMap<String, Arc<str>>,
    /// The last frame's session as the frame named it, and its interned name: a stdio file's
    /// frames all share one, found again without hashing it.
    last: Option<(Arc<str>, Arc<str>)>,
    /// The states in order of first frame.
    states: Vec<SessionState>,
    /// Session name -> its place in `states`.
    index: PlHashMap<String, usize>,
    /// The place of the state looked up last: a frame's session is asked for several times
    /// per frame (frame, message, answer), and a stdio capture has one; its name is compared
    /// instead of hashed twice a time.
    recent: usize,
}

impl Sessions {
    pub fn new(capture: &str, default_session: &str) -> Self {
        Sessions { capture: capture.to_string(), default_session: default_session.to_string(), names: PlHashMap::default(), last: None, states: Vec::new(), index: PlHashMap::default(), recent: 0 }
    }

    /// The session a frame belongs to: the transport's key, else its HTTP connection, else
    /// the capture's default session.
    pub fn key(&mut self, f: &Frame) -> Arc<str> {
        if let (Some(s), Some((named, name))) = (&f.session, &self.last)
            && Arc::ptr_eq(s, named)
        {
            return Arc::clone(name);
        }
        let name = self.intern_key(f);
        if let Some(s) = &f.session {
            self.last = Some((Arc::clone(s), Arc::clone(&name)));
        }
        name
    }

    fn intern_key(&mut self, f: &Frame) -> Arc<str> {
        let conn;
        let key: &str = match (&f.session, &f.http) {
            (Some(s), _) => s,
            (None, Some(h)) if matches!(f.transport, Transport::Http | Transport::Sse) => {
                conn = format!("conn:{}", h.connection);
                &conn
            }
            (None, _) => &self.default_session,
        };
        if let Some(name) = self.names.get(key) {
            return Arc::clone(name);
        }
        let name: Arc<str> = key.into();
        self.names.insert(key.to_string(), Arc::clone(&name));
        name
    }

    /// The session's state, created (with `transport`) on its first frame.
    pub fn state(&mut self, key: &str, transport: Transport) -> &mut SessionState {
        let at = match self.place(key) {
            Some(at) => at,
            None => {
                let row = SessionRow { capture: self.capture.clone(), session: key.to_string(), transport, ending: Ending::Unknown, ..SessionRow::default() };
                self.states.push(SessionState { row, ..SessionState::default() });
                self.index.insert(key.to_string(), self.states.len() - 1);
                self.states.len() - 1
            }
        };
        self.recent = at;
        &mut self.states[at]
    }

    /// Where the session named `key` is in `states`.
    fn place(&self, key: &str) -> Option<usize> {
        match self.states.get(self.recent) {
            Some(st) if st.row.session == key => Some(self.recent),
            _ => self.index.get(key).copied(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&SessionState> {
        self.place(key).map(|at| &self.states[at])
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut SessionState> {
        let at = self.place(key)?;
        self.recent = at;
        Some(&mut self.states[at])
    }

    /// Counts frame `seq`, of kind `kind`, into its session.
    pub fn frame(&mut self, key: &str, direction: Direction, seq: u64, frame: &Frame, kind: Kind) {
        let st = self.state(key, frame.transport);
        let r = &mut st.row;
        r.frames += 1;
        if direction == Direction::ClientToServer {
            r.bytes_c2s += frame.wire_bytes;
            r.last_seq_c2s = Some(seq);
        } else {
            r.bytes_s2c += frame.wire_bytes;
            r.last_seq_s2c = Some(seq);
        }
        r.max_frame_bytes = r.max_frame_bytes.max(frame.wire_bytes);
        if let Some(h) = &frame.http {
            if st.connections.last() != Some(&h.connection) && !st.connections.contains(&h.connection) {
                st.connections.push(h.connection);
            }
            if st.user_agent.is_none() && direction == Direction::ClientToServer {
                st.user_agent = h.extras.as_ref().and_then(|e| e.user_agent.clone());
            }
        }
        if let Some(ts) = frame.ts_us {
            r.first_ts_us = Some(r.first_ts_us.map_or(ts, |f| f.min(ts)));
            r.last_ts_us = Some(r.last_ts_us.map_or(ts, |l| l.max(ts)));
        }
        st.last_frame_incomplete = frame.incomplete.clone();
        if direction == Direction::ServerToClient && matches!(kind, Kind::NonJson | Kind::InvalidJson | Kind::NotJsonRpc) {
            st.row.non_json_s2c += 1;
            st.row.non_json_s2c_bytes += frame.wire_bytes;
        }
    }

    /// Takes a message's client, server and protocol facts and its last error.
    /// `seq` is the message's frame: a request's becomes the session's latest request.
    pub fn message(&mut self, key: &str, transport: Transport, seq: u64, m: &Message) {
        let st = self.state(key, transport);
        if m.kind == Some(Kind::Request) {
            st.last_request_seq = Some(seq);
        }
        if let Some(ci) = &m.client_info
            && m.kind == Some(Kind::Request)
        {
            if st.row.client_name.is_none() || m.method.as_deref() == Some("initialize") {
                st.row.client_name = ci.name.clone();
                st.row.client_version = ci.version.clone();
            }
            // The first request's version, except that an initialize (a fallback after a
            // failed server/discover probe) names the version the session speaks.
            if let Some(pv) = &m.protocol_version
                && (st.row.protocol_version.is_none() || (m.method.as_deref() == Some("initialize") && !st.initialize_sent))
            {
                st.row.protocol_version = Some(pv.clone());
            }
        }
        if m.kind == Some(Kind::Request) {
            match m.method.as_deref() {
                Some("server/discover") => st.discover_sent = true,
                Some("initialize") => st.initialize_sent = true,
                _ => {}
            }
        }
        if let Some(si) = &m.server_info {
            st.row.server_name = si.name.clone();
            st.row.server_version = si.version.clone();
        }
        if m.client_info.is_some() || m.server_info.is_some() {
            st.facts = SharedFacts::of(&st.row);
        }
        if m.kind == Some(Kind::Error) {
            st.row.last_error = m.error_message.clone();
        }
    }

    /// A response to a request of `method`: what it says about the negotiation and the era.
    pub fn answered(&mut self, key: &str, transport: Transport, method: &str, m: &Message) {
        let st = self.state(key, transport);
        let ok = m.kind == Some(Kind::Response);
        match method {
            "server/discover" if ok => st.discover_ok = true,
            "initialize" if ok => st.initialize_ok = true,
            _ => {}
        }
        if ok && m.result_type.is_some() {
            st.modern_results = true;
        }
    }

    /// Takes what host-log events say about their sessions (unexpected closes, errors).
    pub fn events(&mut self, events: &[EventRow]) {
        for e in events {
            if let Some(s) = &e.session
                && let Some(st) = self.get_mut(s)
            {
                if e.kind == "transport_closed_unexpectedly" {
                    st.abrupt_reason = Some("host: transport closed unexpectedly".into());
                }
                if e.level == "error" {
                    st.row.last_error = Some(e.text.chars().take(300).collect());
                }
            }
        }
    }

    /// Each session's latest request seq, and whether its capture holds the whole pipe (a
    /// stdio tee log or a transcript records it to its end; packet captures and host logs may
    /// stop while the conversation goes on).
    pub fn last_requests(&self) -> std::collections::HashMap<String, (u64, bool)> {
        self.states
            .iter()
            .filter_map(|st| st.last_request_seq.map(|s| (st.row.session.clone(), (s, matches!(st.row.transport, Transport::Stdio | Transport::Jsonl)))))
            .collect()
    }

    /// The session rows, each with how it ended and why.
    pub fn finish(self) -> Vec<SessionRow> {
        let mut rows = Vec::with_capacity(self.states.len());
        for mut st in self.states {
            // Each cause as text and as its token (`end_cause`, `end_causes`).
            let mut causes: Vec<String> = Vec::new();
            let mut tokens: Vec<&str> = Vec::new();
            if let Some(why) = &st.last_frame_incomplete {
                causes.push(format!("last frame incomplete: {why}"));
                tokens.push("last_frame_incomplete");
            }
            if let Some(why) = &st.abrupt_reason {
                causes.push(why.clone());
                tokens.push("transport_closed");
            }
            if !st.unanswered.is_empty() {
                causes.push(format!("{} request(s) never answered: {}", st.unanswered.len(), st.unanswered.join(", ")));
                tokens.push("requests_unanswered");
            }
            let abrupt = !causes.is_empty();
            if abrupt && st.row.non_json_s2c > 0 {
                causes.push(format!("server wrote {} non-JSON line(s) where the client reads messages", st.row.non_json_s2c));
                tokens.push("stdout_pollution");
            }
            if abrupt && st.timeout_cancels > 0 {
                causes.push(format!("{} request(s) cancelled after a client timeout", st.timeout_cancels));
                tokens.push("client_timeout");
            }
            st.row.client_family = family_of(st.row.client_name.as_deref(), st.user_agent.as_deref()).map(str::to_string);
            st.row.server_family = family_of(st.row.server_name.as_deref(), None).map(str::to_string);
            if !st.connections.is_empty() {
                st.row.connections = Some(st.connections.iter().map(u64::to_string).collect::<Vec<_>>().join(","));
            }
            st.row.protocol_era = match (st.initialize_ok, st.modern_results) {
                (true, true) => Some("mixed".into()),
                (true, false) => Some("handshake".into()),
                (false, true) => Some("stateless".into()),
                (false, false) => None,
            };
            st.row.negotiation = if st.discover_ok {
                Some("discover".into())
            } else if st.discover_sent && st.initialize_sent {
                Some("fallback_initialize".into())
            } else if st.initialize_sent {
                Some("initialize".into())
            } else {
                None
            };
            st.row.ending = if abrupt {
                Ending::Abrupt
            } else if !st.log_ended.is_empty() {
                st.row.end_cause = Some(format!("log ended with {} request(s) unanswered: {}", st.log_ended.len(), st.log_ended.join(", ")));
                st.row.end_causes = Some("log_ended".into());
                Ending::Unknown
            } else if st.row.frames == 0 {
                Ending::Unknown
            } else {
                Ending::Clean
            };
            if abrupt {
                st.row.end_cause = Some(causes.join("; "));
                st.row.end_causes = Some(tokens.join(","));
                if st.row.last_error.is_none() {
                    st.row.last_error = st.row.end_cause.clone();
                }
            }
            rows.push(st.row);
        }
        rows
    }
}

/// Calls take the client/server facts of their session where the request had none.
pub(crate) fn fill_session_facts(call: &mut CallRow, s: &SharedFacts) {
    if call.client_name.is_none() {
        call.client_name = s.client_name.clone();
        call.client_version = s.client_version.clone();
    }
    call.server_name = s.server_name.clone();
    call.server_version = s.server_version.clone();
    if call.protocol_version.is_none() {
        call.protocol_version = s.protocol_version.clone();
    }
}
