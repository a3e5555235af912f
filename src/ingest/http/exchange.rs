//! Pairing requests and responses of one connection: the open exchanges, oldest first (FIFO
//! for pipelining), with the request frames each holds until its response head names the
//! session. Bounded in exchanges and held bytes. No parsing.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::ingest::connection::ConnectionId;
use crate::ingest::frame::{Frame, HttpContext, RequestExtras};
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::head::{HeadFacts, query_session};

/// Requests waiting for responses per connection before the oldest is given up.
const MAX_OPEN_EXCHANGES: usize = 256;
/// Bytes of request frames held for their response head, per connection.
const MAX_HELD_FRAME_BYTES: u64 = 64 << 20;

/// One request/response pair.
#[derive(Debug, Default)]
pub(super) struct Exchange {
    pub(super) number: u64,
    pub(super) method: String,
    pub(super) url: String,
    protocol_version: Option<String>,
    mcp_method: Option<String>,
    mcp_name: Option<String>,
    mcp_params: Vec<(String, String)>,
    user_agent: Option<String>,
    request_session: Option<String>,
    query_session: Option<String>,
    response_session: Option<String>,
    /// Legacy HTTP+SSE: the session announced by this stream's `endpoint` event.
    pub(super) stream_session: Option<String>,
    pub(super) status: Option<u16>,
    pub(super) reason: String,
    pub(super) response_head_offset: u64,
    pub(super) response_seen: bool,
    pub(super) request_done: bool,
    pub(super) response_done: bool,
    /// Request frames waiting for the response head (their session may come from it).
    pub(super) held: Vec<Frame>,
}

impl Exchange {
    /// The exchange a request head opens.
    pub(super) fn for_request(number: u64, method: String, url: String, facts: &HeadFacts) -> Exchange {
        Exchange {
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
        }
    }

    /// An exchange known by its number only: one given up (too many were open) whose
    /// message is still being read.
    pub(super) fn orphan(number: u64) -> Exchange {
        Exchange {
            number,
            ..Default::default()
        }
    }

    /// Records the response head (at stream offset `head_offset`) and releases the held
    /// request frames with the session and status it brings.
    pub(super) fn answer(&mut self, status: u16, reason: String, session: Option<String>, head_offset: u64, env: &mut HttpEnv<'_>) {
        self.status = Some(status);
        self.reason = reason;
        self.response_session = session;
        self.response_seen = true;
        self.response_head_offset = head_offset;
        self.release_held(env);
    }

    pub(super) fn session(&self) -> Option<String> {
        self.request_session
            .clone()
            .or_else(|| self.query_session.clone())
            .or_else(|| self.response_session.clone())
            .or_else(|| self.stream_session.clone())
    }

    pub(super) fn context(&self, connection: ConnectionId, sse_event_id: Option<String>, client_ip: Option<String>) -> HttpContext {
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
            frame.session = self.session().map(Arc::from);
            if let Some(http) = frame.http.as_mut() {
                http.status = self.status;
            }
            env.frame(frame);
        }
    }
}

/// The open exchanges of one connection, oldest first.
#[derive(Debug, Default)]
pub(super) struct OpenExchanges {
    queue: VecDeque<Exchange>,
}

impl OpenExchanges {
    pub(super) fn push(&mut self, exchange: Exchange, env: &mut HttpEnv<'_>) {
        self.queue.push_back(exchange);
        while self.queue.len() > MAX_OPEN_EXCHANGES {
            if let Some(mut old) = self.queue.pop_front() {
                old.release_held(env);
            }
        }
        self.bound_held_frames(env);
    }

    /// The exchange a response head answers: the oldest without one, else a new exchange
    /// whose request was not captured.
    pub(super) fn pair_response(&mut self, env: &mut HttpEnv<'_>) -> u64 {
        match self.queue.iter().position(|x| !x.response_seen) {
            Some(i) => self.queue[i].number,
            None => {
                env.stats.unmatched_responses += 1;
                let number = env.take_exchange_number();
                self.push(
                    Exchange {
                        number,
                        request_done: true,
                        ..Default::default()
                    },
                    env,
                );
                number
            }
        }
    }

    /// Releases the oldest held request frames while more than the bound is held.
    pub(super) fn bound_held_frames(&mut self, env: &mut HttpEnv<'_>) {
        let mut held: u64 = self.queue.iter().map(Exchange::held_bytes).sum();
        for x in self.queue.iter_mut() {
            if held <= MAX_HELD_FRAME_BYTES {
                break;
            }
            held -= x.held_bytes();
            x.release_held(env);
        }
    }

    pub(super) fn get(&self, number: u64) -> Option<&Exchange> {
        self.queue.iter().find(|x| x.number == number)
    }

    pub(super) fn get_mut(&mut self, number: u64) -> Option<&mut Exchange> {
        self.queue.iter_mut().find(|x| x.number == number)
    }

    /// Drops an exchange once both of its messages are done.
    pub(super) fn retire(&mut self, number: u64) {
        if let Some(i) = self.queue.iter().position(|x| x.number == number)
            && self.queue[i].request_done
            && self.queue[i].response_done
            && self.queue[i].held.is_empty()
        {
            self.queue.remove(i);
        }
    }

    /// The connection is gone: every held frame is released, the exchanges dropped.
    pub(super) fn release_all(&mut self, env: &mut HttpEnv<'_>) {
        for mut x in std::mem::take(&mut self.queue) {
            x.release_held(env);
        }
    }
}
