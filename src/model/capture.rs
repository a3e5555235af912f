//! Builds one capture's rows from its frames: the [`Sink`] a source writes into. It parses
//! frames, classifies them, and routes each message to session tracking
//! (`sessions.rs`), pairing (`pairing.rs`) and fact extraction (`facts.rs`); rows become
//! columns in `chunks.rs`, and the byte accounting is ingest's (`ingest::accounting`).
//!
//! Frames are absorbed in arrival order, so `seq` is arrival order, and payloads are dropped
//! as soon as they are measured: memory is bounded by the rows. Parsing needs nothing of the
//! model ([`CaptureModel::parse_frame`]), so the pipeline parses each batch on all cores ahead
//! of absorbing it ([`CaptureModel::frame_parsed`], `pipeline/channel.rs`).

use std::sync::Arc;

use super::chunks::{Columns, chunk_calls, chunk_frames, take_frames};
use super::chains::{Chains, next_round};
use super::routing::fill_routing;
use super::facts::{custom_marker, fill_frame_row, fill_response, input_required, request_call, tool_rows};
use super::conversations::Conversations;
use super::message::{Kind, Message, Parsed, parse_payload_for, recorded_message};
use super::pages::PageItems;
use super::pairing::Calls;
use super::rows::{CallRow, EventRow, FrameRow, Outcome, SessionRow, ToolRow};
use super::schema::Target;
use super::sessions::{Sessions, fill_session_facts};
use super::validate::OutputSchemas;
use crate::ingest::accounting::Accounting;
use crate::ingest::frame::{Direction, Event, Frame, Sink, Skip, Transport};

pub use super::chunks::{Chunk, ChunkSink};
pub use super::facts::is_server_output_validation;
pub use crate::ingest::accounting::Diagnostic;

/// Everything one capture yields.
#[derive(Debug, Default)]
pub struct CaptureRows {
    /// The `frames` table in columnar chunks (all of it: frames are never held as rows).
    pub frame_chunks: Vec<polars::prelude::DataFrame>,
    /// Answered calls already converted to columnar chunks (the `calls` table is these, then `calls`).
    pub call_chunks: Vec<polars::prelude::DataFrame>,
    pub calls: Vec<CallRow>,
    pub sessions: Vec<SessionRow>,
    pub tools: Vec<ToolRow>,
    pub events: Vec<EventRow>,
    pub pages: Vec<super::rows::PageRow>,
    /// Where the capture's bytes went (`--stats`).
    pub accounting: Accounting,
    /// Responses whose id matched no request.
    pub unmatched_responses: u64,
}

/// Options of the model stage.
#[derive(Clone, Default)]
pub struct ModelOptions {
    /// Extra truncation markers (`--truncation-marker REGEX`), looked for in the last 1 KiB
    /// of each response.
    pub truncation_markers: Vec<regex::Regex>,
    /// Where finished chunks go; `None` keeps them for the tables.
    pub chunk_sink: Option<Arc<dyn ChunkSink>>,
}

impl std::fmt::Debug for ModelOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelOptions")
            .field("truncation_markers", &self.truncation_markers)
            .field("chunk_sink", &self.chunk_sink.as_ref().map(|_| "streaming"))
            .finish()
    }
}

/// The sink that turns one capture's frames into rows.
pub struct CaptureModel {
    options: Arc<ModelOptions>,
    capture: Arc<str>,
    /// File currently being read (diagnostics name it).
    current_file: String,
    seq: u64,
    out: CaptureRows,
    /// Frames not yet handed on as a chunk, as columns.
    frames: Columns<FrameRow>,
    sessions: Sessions,
    /// Calls held as rows (pending ones, and answered ones not yet chunked).
    calls: Calls,
    /// Paginated calls that went into chunks, kept as rows for the `pages` table.
    paged_calls: Vec<CallRow>,
    /// The item keys of paginated calls' responses, by request seq.
    page_items: std::collections::HashMap<u64, PageItems>,
    /// Which conversation each frame of a channel belongs to.
    conversations: Conversations,
    /// 2026-07-28 HTTP requests still unanswered, by (session, fingerprint): a request that
    /// repeats one re-issues it after its stream broke.
    reissuable: std::collections::HashMap<(Arc<str>, u64), usize>,
    /// outputSchemas listed so far, per session and tool.
    schemas: OutputSchemas,
    /// Multi-round-trip chains waiting for a retry.
    chains: Chains,
    /// Each listed tool's `x-mcp-header` arguments (tools/list does not vary per connection).
    header_params: std::collections::HashMap<String, Vec<(String, String)>>,
    /// Close and error events: their session (`None`: the whole capture) and the frames
    /// seen before them. A request before one of them was lost, not cut off by the log's end.
    closes: Vec<(Option<String>, u64)>,
    /// Requests (their seq) whose response a HAR writer did not save: the frame just before a
    /// `har_body_missing` event for a response body.
    unrecorded_answers: Vec<u64>,
}

impl CaptureModel {
    pub fn new(capture: &str, default_session: &str, options: Arc<ModelOptions>) -> Self {
        // Frames streamed to a file are built as its row groups (texts as dictionaries).
        let frames_target = if options.chunk_sink.is_some() { Target::File } else { Target::Memory };
        CaptureModel {
            options,
            capture: capture.into(),
            current_file: capture.to_string(),
            seq: 0,
            out: CaptureRows::default(),
            frames: Columns::new(frames_target),
            sessions: Sessions::new(capture, default_session),
            calls: Calls::default(),
            paged_calls: Vec::new(),
            page_items: Default::default(),
            conversations: Conversations::default(),
            reissuable: Default::default(),
            schemas: OutputSchemas::default(),
            chains: Chains::default(),
            header_params: Default::default(),
            closes: Vec::new(),
            unrecorded_answers: Vec::new(),
        }
    }

    /// Names the file that subsequent diagnostics refer to.
    pub fn set_file(&mut self, file: &str) {
        self.current_file = file.to_string();
    }

    /// Records a problem found outside any source (open errors, unrecognised files).
    pub fn diagnostic(&mut self, d: Diagnostic) {
        self.out.accounting.diagnostic(d);
    }

    /// Parses one frame's message (what the model does to each frame before absorbing it).
    /// Needs nothing of the model, so a caller may parse ahead on other threads and hand the
    /// result to [`CaptureModel::frame_parsed`].
    pub fn parse_frame(f: &Frame) -> Parsed {
        match &f.recorded {
            Some(r) => recorded_message(r),
            // Only HTTP requests are routed by their scalar arguments.
            None => parse_payload_for(&f.payload, f.http.is_some()),
        }
    }

    /// Takes a frame already parsed with [`CaptureModel::parse_frame`]: the same as
    /// [`Sink::frame`], without parsing it again. The frame stays the caller's (to be freed
    /// by the thread that allocated it, `pipeline/channel.rs`).
    pub fn frame_parsed(&mut self, frame: &Frame, parsed: Parsed) {
        self.absorb(frame, parsed);
    }

    /// Direction of a message from a source that does not say (a lone stdio file).
    fn infer_direction(&self, session: &Arc<str>, parsed: &Parsed) -> Direction {
        let m = match parsed {
            Parsed::One(m) => m,
            Parsed::Batch(v) => match v.first() {
                Some(m) => m,
                None => return Direction::ClientToServer,
            },
            Parsed::Other(..) => return Direction::ServerToClient, // stray text goes to stdout
        };
        let method = m.method.as_deref().unwrap_or("");
        match m.kind {
            Some(Kind::Request) => match method {
                "sampling/createMessage" | "elicitation/create" | "roots/list" => Direction::ServerToClient,
                _ => Direction::ClientToServer,
            },
            Some(Kind::Notification) => match method {
                "notifications/initialized" | "notifications/roots/list_changed" => Direction::ClientToServer,
                "notifications/cancelled" => Direction::ClientToServer,
                _ => Direction::ServerToClient,
            },
            Some(Kind::Response) | Some(Kind::Error) => {
                let id = m.rpc_id.as_deref().unwrap_or_default();
                match self.calls.latest(session, Direction::ServerToClient, id) {
                    Some(c) if c.resp_seq.is_none() => Direction::ClientToServer,
                    _ => Direction::ServerToClient,
                }
            }
            _ => Direction::ServerToClient,
        }
    }

    fn absorb(&mut self, frame: &Frame, parsed: Parsed) {
        let channel = self.sessions.key(frame);
        let session = self.conversations.route(&channel, frame, &parsed);
        let direction = frame.direction.unwrap_or_else(|| self.infer_direction(&session, &parsed));
        let seq = self.seq;
        self.seq += 1;
        let mut row = FrameRow {
            capture: self.capture.clone(),
            session: session.clone(),
            transport: frame.transport,
            direction,
            seq,
            ts_us: frame.ts_us,
            offset: frame.offset,
            wire_bytes: frame.wire_bytes,
            ..FrameRow::default()
        };
        let mut notes: Vec<String> = Vec::new();
        if let Some(n) = &frame.note {
            notes.push(n.clone());
        }
        // One message stays in its box (a message is large: moving it costs a copy).
        let mut one: Option<Box<Message>> = None;
        let mut batch: Vec<Message> = match parsed {
            Parsed::One(mut m) => {
                if m.truncation_marker.is_none() && m.kind == Some(Kind::Response) && !self.options.truncation_markers.is_empty() {
                    m.truncation_marker = custom_marker(&self.options.truncation_markers, &frame.payload);
                }
                row.kind = m.kind.unwrap_or(Kind::NotJsonRpc);
                if let Some(n) = &m.note {
                    notes.push(n.clone());
                }
                one = Some(m);
                Vec::new()
            }
            Parsed::Batch(v) => {
                row.kind = Kind::Batch;
                notes.push(format!("batch of {} messages", v.len()));
                v
            }
            Parsed::Other(kind, note) => {
                row.kind = kind;
                if let Some(n) = note {
                    notes.push(n);
                }
                Vec::new()
            }
        };
        if let Some(reason) = &frame.incomplete {
            row.kind = Kind::Incomplete;
            notes.push(format!("incomplete: {reason}"));
        }
        if let Some(h) = &frame.http
            && let Some(status) = h.status
        {
            notes.push(format!("{} {} -> {}", h.method, h.url, status));
        }
        self.sessions.frame(&session, direction, seq, frame, row.kind);
        let messages: &[Message] = match &one {
            Some(m) => std::slice::from_ref(&**m),
            None => &batch,
        };
        for m in messages {
            // A response takes the method and tool of the request it answers.
            if let Some((method, tool)) = self.absorb_message(&session, direction, seq, frame, m, &mut notes)
                && messages.len() == 1
            {
                row.method = row.method.take().or(Some(method));
                row.tool = row.tool.take().or(tool);
            }
        }
        row.http_user_agent = frame.http.as_ref().and_then(|h| h.extras.as_ref()).and_then(|e| e.user_agent.clone());
        row.http_status = frame.http.as_ref().and_then(|h| h.status).map(u32::from);
        if direction == Direction::ClientToServer
            && let Some(h) = &frame.http
            && let [m] = messages
            && matches!(m.kind, Some(Kind::Request) | Some(Kind::Notification))
        {
            let params = m.tool.as_deref().and_then(|t| self.header_params.get(t)).map(Vec::as_slice);
            fill_routing(&mut row, h, m, params);
        }
        let single = match (one.as_deref_mut(), batch.as_mut_slice()) {
            (Some(m), _) | (None, [m]) => Some(m),
            _ => None,
        };
        if let Some(m) = single {
            fill_frame_row(&mut row, m);
        }
        if row.truncation_marker.is_none()
            && let Some(n) = &frame.note
            && n.starts_with("host cut the body")
        {
            row.truncation_marker = n.strip_prefix("host cut the body: ").map(str::to_string);
        }
        if !notes.is_empty() {
            row.note = Some(notes.join("; "));
        }
        self.out.accounting.frame(row.kind.as_str(), frame.wire_bytes);
        self.frames.push(&row);
        drop(row);
        if let Err(e) = chunk_frames(&mut self.frames, self.options.chunk_sink.as_ref(), &mut self.out.frame_chunks) {
            self.chunk_failed(e);
        }
    }

    /// Updates sessions and calls with one message; for a paired response returns the
    /// request's method and tool.
    fn absorb_message(
        &mut self,
        session_name: &Arc<str>,
        direction: Direction,
        seq: u64,
        frame: &Frame,
        m: &Message,
        notes: &mut Vec<String>,
    ) -> Option<(Arc<str>, Option<Arc<str>>)> {
        let session: &str = session_name;
        self.sessions.message(session, frame.transport, seq, m);
        match m.kind {
            Some(Kind::Request) => {
                let mut call = request_call(&self.capture, session_name, direction, seq, frame, m);
                if let Some(of) = self.chains.request(&mut call, m.request_state.as_deref(), self.calls.next_index())
                    && let Some(earlier_round) = self.calls.get_mut(of)
                {
                    earlier_round.chain_last = false;
                }
                if frame.http.is_some()
                    && let Some(fp) = m.fingerprint
                {
                    self.reissued(&mut call, fp);
                }
                let held = self.calls.request(call, frame.http.as_ref());
                if let Some(earlier) = held.earlier {
                    let first = self.calls.get(earlier).map_or_else(|| "an earlier seq".to_string(), |c| format!("seq {}", c.req_seq));
                    let id = self.calls.get(held.idx).map(|c| &*c.rpc_id).unwrap_or_default();
                    notes.push(format!("duplicate request id {id} (first at {first})"));
                }
                if held.chunk {
                    self.chunk_answered_calls();
                }
            }
            Some(Kind::Response) | Some(Kind::Error) => {
                let requester = if direction == Direction::ClientToServer { Direction::ServerToClient } else { Direction::ClientToServer };
                let id = m.rpc_id.as_deref().unwrap_or_default();
                let (idx, by_exchange) = self.calls.answered_by(session_name, requester, id, frame.http.as_ref());
                if by_exchange {
                    notes.push("id null: paired through its HTTP exchange".into());
                }
                let Some(idx) = idx.filter(|i| self.calls.contains(*i)) else {
                    self.out.unmatched_responses += 1;
                    notes.push(format!("response to unknown request id {id}"));
                    return None;
                };
                let call = self.calls.get_mut(idx).expect("checked above");
                let answered = Some((call.method.clone(), call.tool.clone()));
                if call.resp_seq.is_some() {
                    notes.push(format!("second response to request id {id}"));
                    return answered;
                }
                fill_response(call, seq, frame, m, session, &mut self.schemas);
                if super::pages::is_page(call) {
                    let (keys, field, without_key) = super::message::page_item_keys(m);
                    let items = PageItems { keys, field, without_key };
                    self.page_items.insert(call.req_seq, items);
                }
                self.sessions.answered(session, frame.transport, &call.method, m);
                let retry = m.request_state.as_deref().filter(|_| input_required(call)).and_then(|state| self.chains.issued(call, idx, state)).map(|i| (i, (call.chain_id, call.round)));
                if &*call.method == "tools/list" && (!m.tools.is_empty() || m.items_returned.is_some()) {
                    let st = self.sessions.get_mut(session).expect("session exists for every frame");
                    st.tools_list_pages += 1;
                    let page = st.tools_list_pages;
                    for t in &m.tools {
                        self.header_params.insert(t.name.clone(), t.header_params.clone());
                        if let Some(schema) = &t.output_schema {
                            self.schemas.insert(session, &t.name, schema.clone());
                        }
                    }
                    self.out.tools.extend(tool_rows(&self.capture, session, page, frame, m));
                }
                if let Some((i, of)) = retry
                    && let Some(retry) = self.calls.get_mut(i)
                {
                    next_round(&mut self.chains, retry, of);
                    self.calls.get_mut(idx).expect("answered above").chain_last = false;
                }
                return answered;
            }
            Some(Kind::Notification) if m.method.as_deref() == Some("notifications/cancelled") => {
                let target = m.cancels_id.clone()?;
                // The canceller is the requester: same direction as the request.
                if m.cancel_reason.as_deref().is_some_and(|r| r.to_ascii_lowercase().contains("timed out") || r.to_ascii_lowercase().contains("timeout")) {
                    self.sessions.state(session, frame.transport).timeout_cancels += 1;
                }
                if let Some(call) = self.calls.latest_mut(session_name, direction, target) {
                    call.cancelled = true;
                    call.cancel_reason = m.cancel_reason.clone();
                    call.cancel_ts_us = frame.ts_us;
                    call.outcome = Outcome::Cancelled;
                }
            }
            _ => {}
        }
        None
    }

    /// Links a 2026-07-28 HTTP request to the unanswered request of its conversation it
    /// repeats (same method and params, new id: re-issued after a broken stream): it joins
    /// that request's chain as its next round, and the first is `retried`, not lost.
    fn reissued(&mut self, call: &mut CallRow, fingerprint: u64) {
        let idx = self.calls.next_index();
        let earlier = self.reissuable.insert((Arc::clone(&call.session), fingerprint), idx);
        if let Some(e) = earlier
            && call.chain_id == call.req_seq
            && let Some(first) = self.calls.get_mut(e)
            && first.resp_seq.is_none()
            && !first.cancelled
            && first.method == call.method
        {
            first.outcome = Outcome::Retried;
            first.chain_last = false;
            call.retry_of = Some(first.req_seq);
            call.chain_id = first.chain_id;
            call.round = first.round.saturating_add(1);
            self.chains.joined(first.chain_id, first.req_ts_us);
            self.chains.joined(call.chain_id, call.req_ts_us);
        }
        // Answered calls leave the map now and then, so it holds about the calls in flight.
        if self.reissuable.len() > 1024 && self.reissuable.len() > 4 * self.calls.held() {
            let calls = &self.calls;
            self.reissuable.retain(|_, i| calls.get(*i).is_some_and(|c| c.resp_seq.is_none()));
        }
    }

    /// Moves answered calls out of the row map into a columnar chunk, with their session's
    /// client and server facts; pending calls (cancelled or not) stay rows.
    fn chunk_answered_calls(&mut self) {
        let mut rows = self.calls.take_finished();
        for call in &mut rows {
            self.chains.settle(call);
            if let Some(st) = self.sessions.get(&call.session) {
                fill_session_facts(call, &st.facts);
            }
            if super::pages::is_page(call) {
                self.paged_calls.push(CallRow::clone(call));
            }
        }
        if let Err(rows) = chunk_calls(rows, self.options.chunk_sink.as_ref(), &mut self.out.call_chunks, self.calls.spares()) {
            self.calls.restore(rows);
        }
        self.calls.chunked();
    }

    /// Building a chunk from its columns failed (never expected: every row fills every
    /// column): said, not silent.
    fn chunk_failed(&mut self, e: polars::prelude::PolarsError) {
        let d = Diagnostic { file: self.current_file.clone(), offset: 0, bytes: 0, reason: "internal_error", detail: format!("building a frames chunk: {e}") };
        self.out.accounting.diagnostic(d);
    }

    /// Completes sessions and calls.
    pub fn finish(mut self) -> CaptureRows {
        if self.frames.len() > 0
            && let Err(e) = take_frames(&mut self.frames, self.options.chunk_sink.as_ref(), &mut self.out.frame_chunks)
        {
            self.chunk_failed(e);
        }
        let mut out = self.out;
        out.calls = self.calls.into_rows();
        // Calls take the client/server facts of their session where the request had none.
        for call in &mut out.calls {
            self.chains.settle(call);
            if let Some(st) = self.sessions.get(&call.session) {
                fill_session_facts(call, &st.facts);
            }
            if call.resp_seq.is_none() && !call.cancelled && call.outcome != Outcome::Retried
                && let Some(st) = self.sessions.get_mut(&call.session)
            {
                let what = match &call.tool {
                    Some(t) => format!("{} {t}", call.method),
                    None => call.method.to_string(),
                };
                let closed_after = self.closes.iter().any(|(s, seen)| *seen > call.req_seq && s.as_deref().is_none_or(|s| s == &*call.session));
                if self.unrecorded_answers.contains(&call.req_seq) {
                    call.outcome = Outcome::UnknownNotRecorded;
                } else if is_excerpt(st.row.transport) && !closed_after {
                    call.outcome = Outcome::UnknownLogEnded;
                    st.log_ended.push(format!("id {} ({what})", call.rpc_id));
                } else {
                    st.unanswered.push(format!("id {} ({what})", call.rpc_id));
                }
            }
        }
        self.sessions.events(&out.events);
        let last_requests = self.sessions.last_requests();
        out.sessions = self.sessions.finish();
        let mut paged = std::mem::take(&mut self.paged_calls);
        paged.extend(out.calls.iter().filter(|c| super::pages::is_page(c)).cloned());
        out.pages = super::pages::build_pages(&paged, &self.page_items, &last_requests);
        out
    }
}

/// Logs that can be excerpts (pasted or cut anywhere): a request unanswered where they end
/// may still have been in flight. Stdio tee logs and packet captures record the whole pipe.
fn is_excerpt(transport: Transport) -> bool {
    matches!(transport, Transport::Hostlog | Transport::Log)
}

/// An event that says the connection ended or failed after what came before it.
fn is_close_or_error(e: &Event) -> bool {
    matches!(e.kind.as_str(), "transport_closed" | "transport_closed_unexpectedly" | "server_disconnected" | "error")
        || matches!(e.level.as_str(), "error" | "err" | "fatal" | "critical" | "crit")
}

impl Sink for CaptureModel {
    fn frame(&mut self, frame: Frame) {
        let parsed = Self::parse_frame(&frame);
        self.absorb(&frame, parsed);
    }

    fn event(&mut self, e: Event) {
        if is_close_or_error(&e) {
            self.closes.push((e.session.clone(), self.seq));
        }
        if e.facts.response_not_recorded && self.seq > 0 {
            self.unrecorded_answers.push(self.seq - 1);
        }
        self.out.events.push(EventRow {
            capture: self.capture.to_string(),
            session: e.session,
            ts_us: e.ts_us,
            offset: e.offset,
            level: e.level,
            server: e.server,
            kind: e.kind,
            text: e.text,
            tool: e.facts.tool,
            tokens: e.facts.tokens,
            token_limit: e.facts.token_limit,
            timeout_ms: e.facts.timeout_ms,
            error_code: e.facts.error_code,
            http_status: e.facts.http_status,
        });
    }

    fn skip(&mut self, s: Skip) {
        self.out.accounting.skip(&self.current_file, s);
    }

    fn framing(&mut self, category: crate::ingest::frame::FramingCategory, bytes: u64) {
        self.out.accounting.framing(category, bytes);
    }

    fn begin_file(&mut self, file: &str) {
        self.set_file(file);
    }
}
