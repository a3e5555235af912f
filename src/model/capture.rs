//! Builds one capture's rows from its frames: classification, direction, sessions, pairing.
//!
//! `CaptureModel` is the [`Sink`] a source writes into. Frames are parsed in batches on all
//! cores (rayon) and then absorbed in order, so `seq` is arrival order and payloads are
//! dropped as soon as they are measured: memory is bounded by the batch and the rows.

use std::collections::{BTreeMap, HashMap};

use std::sync::Arc;

use rayon::prelude::*;

use super::message::{Kind, Message, Parsed, parse_payload};
use super::rows::{CallRow, EventRow, FrameRow, SessionRow, ToolRow};
use super::validate::{OutputSchemas, SchemaCheck, text_disagreement};
use crate::ingest::frame::{Direction, Event, Frame, Sink, Skip};

/// Parse this many payload bytes (or frames) together on all cores.
const BATCH_BYTES: usize = 4 << 20;
const BATCH_FRAMES: usize = 4096;
/// Frame rows are turned into a compact columnar chunk this often, so a capture of millions
/// of messages holds its frames as Arrow columns, not as row structs.
const FRAME_CHUNK_ROWS: usize = 1 << 14;
/// Answered calls are turned into columnar chunks once this many calls are held as rows.
const CALL_CHUNK_ROWS: usize = 1 << 14;

/// One problem with the input, for `--stats` and stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub file: String,
    pub offset: u64,
    pub bytes: u64,
    pub reason: &'static str,
    pub detail: String,
}

/// Per-session accumulator.
#[derive(Debug, Default)]
struct SessionState {
    row: SessionRow,
    tools_list_pages: u64,
    abrupt_reason: Option<String>,
    last_frame_incomplete: Option<String>,
    unanswered: Vec<String>,
    timeout_cancels: u64,
}

/// Everything one capture yields.
#[derive(Debug, Default)]
pub struct CaptureRows {
    /// Frames already converted to columnar chunks (the `frames` table is these, then `frames`).
    pub frame_chunks: Vec<polars::prelude::DataFrame>,
    /// Frame rows not yet chunked.
    pub frames: Vec<FrameRow>,
    /// Answered calls already converted to columnar chunks (the `calls` table is these, then `calls`).
    pub call_chunks: Vec<polars::prelude::DataFrame>,
    pub calls: Vec<CallRow>,
    pub sessions: Vec<SessionRow>,
    pub tools: Vec<ToolRow>,
    pub events: Vec<EventRow>,
    pub pages: Vec<super::pages::PageRow>,
    pub framing: BTreeMap<&'static str, u64>,
    pub diagnostics: Vec<Diagnostic>,
    pub frames_by_kind: BTreeMap<&'static str, u64>,
    pub frame_bytes: u64,
    pub skipped_bytes: BTreeMap<&'static str, u64>,
    /// Responses whose id matched no request.
    pub unmatched_responses: u64,
}

/// Receives finished columnar chunks of `frames` and `calls` instead of the capture keeping
/// them: `tables` streams them to Parquet, so its memory does not grow with the row count.
pub trait ChunkSink: Send + Sync {
    fn frames(&self, chunk: polars::prelude::DataFrame);
    fn calls(&self, chunk: polars::prelude::DataFrame);
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
    options: std::sync::Arc<ModelOptions>,
    capture: Arc<str>,
    /// Interned session names (rows share them).
    session_names: polars::prelude::PlHashMap<String, Arc<str>>,
    /// File currently being read (diagnostics name it).
    current_file: String,
    default_session: String,
    batch: Vec<Frame>,
    batch_bytes: usize,
    seq: u64,
    out: CaptureRows,
    sessions: polars::prelude::PlHashMap<String, SessionState>,
    session_order: Vec<String>,
    /// Calls held as rows (pending ones, and answered ones not yet chunked), by call number.
    calls: polars::prelude::PlHashMap<usize, CallRow>,
    next_call: usize,
    call_chunk_at: usize,
    /// Paginated calls that went into chunks, kept as rows for the `pages` table.
    paged_calls: Vec<CallRow>,
    /// (session, request direction, id) → call number of the latest such request.
    calls_by_key: polars::prelude::PlHashMap<(Arc<str>, &'static str, String), usize>,
    /// (connection, exchange) → call index, to pair `id: null` HTTP errors.
    calls_by_exchange: HashMap<(u64, u64), usize>,
    /// outputSchemas listed so far, per session and tool.
    schemas: OutputSchemas,
}

impl CaptureModel {
    pub fn new(capture: &str, default_session: &str, options: std::sync::Arc<ModelOptions>) -> Self {
        CaptureModel {
            options,
            capture: capture.into(),
            session_names: polars::prelude::PlHashMap::default(),
            current_file: capture.to_string(),
            default_session: default_session.to_string(),
            batch: Vec::new(),
            batch_bytes: 0,
            seq: 0,
            out: CaptureRows::default(),
            sessions: polars::prelude::PlHashMap::default(),
            session_order: Vec::new(),
            calls: polars::prelude::PlHashMap::default(),
            next_call: 0,
            call_chunk_at: CALL_CHUNK_ROWS,
            paged_calls: Vec::new(),
            calls_by_key: polars::prelude::PlHashMap::default(),
            calls_by_exchange: HashMap::new(),
            schemas: OutputSchemas::default(),
        }
    }

    /// Names the file that subsequent diagnostics refer to.
    pub fn set_file(&mut self, file: &str) {
        self.flush();
        self.current_file = file.to_string();
    }

    /// Records a problem found outside any source (open errors, unrecognised files).
    pub fn diagnostic(&mut self, d: Diagnostic) {
        *self.out.skipped_bytes.entry(d.reason).or_default() += d.bytes;
        self.out.diagnostics.push(d);
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let parsed: Vec<Parsed> = if batch.len() > 1 {
            batch.par_iter().map(|f| parse_payload(&f.payload)).collect()
        } else {
            batch.iter().map(|f| parse_payload(&f.payload)).collect()
        };
        for (frame, parsed) in batch.into_iter().zip(parsed) {
            self.absorb(frame, parsed);
        }
    }

    fn session_key(&mut self, f: &Frame) -> Arc<str> {
        use crate::ingest::frame::Transport;
        let conn;
        let key: &str = match (&f.session, &f.http) {
            (Some(s), _) => s,
            (None, Some(h)) if matches!(f.transport, Transport::Http | Transport::Sse) => {
                conn = format!("conn:{}", h.connection);
                &conn
            }
            (None, _) => &self.default_session,
        };
        if let Some(name) = self.session_names.get(key) {
            return Arc::clone(name);
        }
        let name: Arc<str> = key.into();
        self.session_names.insert(key.to_string(), Arc::clone(&name));
        name
    }

    fn session_mut(&mut self, key: &str, transport: &'static str) -> &mut SessionState {
        if !self.sessions.contains_key(key) {
            self.session_order.push(key.to_string());
            let row = SessionRow { capture: self.capture.to_string(), session: key.to_string(), transport, ending: "unknown", ..SessionRow::default() };
            self.sessions.insert(key.to_string(), SessionState { row, ..SessionState::default() });
        }
        self.sessions.get_mut(key).expect("inserted above")
    }

    /// Direction of a message from a source that does not say (a lone stdio file).
    fn infer_direction(&self, session: &str, parsed: &Parsed) -> Direction {
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
                let id = m.rpc_id.clone().unwrap_or_default();
                let key = (Arc::from(session), "s2c", id);
                match self.calls_by_key.get(&key) {
                    Some(i) if self.calls.get(i).is_some_and(|c| c.resp_seq.is_none()) => Direction::ClientToServer,
                    _ => Direction::ServerToClient,
                }
            }
            _ => Direction::ServerToClient,
        }
    }

    fn absorb(&mut self, frame: Frame, parsed: Parsed) {
        let session = self.session_key(&frame);
        let direction = frame.direction.unwrap_or_else(|| self.infer_direction(&session, &parsed));
        let dir = direction.as_str();
        let seq = self.seq;
        self.seq += 1;
        let mut row = FrameRow {
            capture: self.capture.clone(),
            session: session.clone(),
            transport: frame.transport.as_str(),
            direction: dir,
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
        let messages: Vec<Message> = match parsed {
            Parsed::One(mut m) => {
                if m.truncation_marker.is_none() && m.kind == Some(Kind::Response) && !self.options.truncation_markers.is_empty() {
                    m.truncation_marker = custom_marker(&self.options.truncation_markers, &frame.payload);
                }
                row.kind = m.kind.map_or(Kind::NotJsonRpc.as_str(), Kind::as_str);
                if let Some(n) = &m.note {
                    notes.push(n.clone());
                }
                vec![*m]
            }
            Parsed::Batch(v) => {
                row.kind = Kind::Batch.as_str();
                notes.push(format!("batch of {} messages", v.len()));
                v
            }
            Parsed::Other(kind, note) => {
                row.kind = kind.as_str();
                if let Some(n) = note {
                    notes.push(n);
                }
                Vec::new()
            }
        };
        if let Some(reason) = &frame.incomplete {
            row.kind = Kind::Incomplete.as_str();
            notes.push(format!("incomplete: {reason}"));
        }
        if let Some(h) = &frame.http
            && let Some(status) = h.status
        {
            notes.push(format!("{} {} -> {}", h.method, h.url, status));
        }
        let transport = frame.transport.as_str();
        {
            let st = self.session_mut(&session, transport);
            let r = &mut st.row;
            r.frames += 1;
            if direction == Direction::ClientToServer {
                r.bytes_c2s += frame.wire_bytes;
            } else {
                r.bytes_s2c += frame.wire_bytes;
            }
            r.max_frame_bytes = r.max_frame_bytes.max(frame.wire_bytes);
            if let Some(ts) = frame.ts_us {
                r.first_ts_us = Some(r.first_ts_us.map_or(ts, |f| f.min(ts)));
                r.last_ts_us = Some(r.last_ts_us.map_or(ts, |l| l.max(ts)));
            }
            st.last_frame_incomplete = frame.incomplete.clone();
            if direction == Direction::ServerToClient && matches!(row.kind, "non_json" | "invalid_json" | "not_jsonrpc") {
                st.row.non_json_s2c += 1;
                st.row.non_json_s2c_bytes += frame.wire_bytes;
            }
        }
        for m in &messages {
            // A response takes the method and tool of the request it answers.
            if let Some((method, tool)) = self.absorb_message(&session, direction, seq, &frame, m, &mut notes)
                && messages.len() == 1
            {
                row.method = row.method.take().or(Some(method));
                row.tool = row.tool.take().or(tool);
            }
        }
        if messages.len() == 1
            && let Some(m) = messages.into_iter().next()
        {
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
        *self.out.frames_by_kind.entry(row.kind).or_default() += 1;
        self.out.frame_bytes += frame.wire_bytes;
        self.out.frames.push(row);
        if self.out.frames.len() >= FRAME_CHUNK_ROWS {
            let refs: Vec<&FrameRow> = self.out.frames.iter().collect();
            // On a (never expected) conversion error the rows simply stay rows.
            if let Ok(chunk) = super::tables::frames_df(&refs) {
                match &self.options.chunk_sink {
                    Some(sink) => sink.frames(chunk),
                    None => self.out.frame_chunks.push(chunk),
                }
                self.out.frames.clear();
            }
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
    ) -> Option<(String, Option<String>)> {
        let session: &str = session_name;
        let dir = direction.as_str();
        let transport = frame.transport.as_str();
        {
            let st = self.session_mut(session, transport);
            if let Some(ci) = &m.client_info
                && m.kind == Some(Kind::Request)
            {
                if st.row.client_name.is_none() || m.method.as_deref() == Some("initialize") {
                    st.row.client_name = ci.name.clone();
                    st.row.client_version = ci.version.clone();
                }
                if let Some(pv) = &m.protocol_version
                    && st.row.protocol_version.is_none()
                {
                    st.row.protocol_version = Some(pv.clone());
                }
            }
            if let Some(si) = &m.server_info {
                st.row.server_name = si.name.clone();
                st.row.server_version = si.version.clone();
            }
            if m.kind == Some(Kind::Error) {
                st.row.last_error = m.error_message.clone();
            }
        }
        match m.kind {
            Some(Kind::Request) => {
                let id = m.rpc_id.clone().unwrap_or_default();
                let key = (Arc::clone(session_name), dir, id.clone());
                if let Some(prev) = self.calls_by_key.get(&key) {
                    let first = self.calls.get(prev).map_or_else(|| "an earlier seq".to_string(), |c| format!("seq {}", c.req_seq));
                    notes.push(format!("duplicate request id {id} (first at {first})"));
                }
                let call = CallRow {
                    capture: Arc::clone(&self.capture),
                    session: Arc::clone(session_name),
                    rpc_id: id,
                    method: m.method.clone().unwrap_or_default(),
                    direction: dir,
                    tool: m.tool.clone(),
                    client_name: m.client_info.as_ref().and_then(|c| c.name.clone()),
                    client_version: m.client_info.as_ref().and_then(|c| c.version.clone()),
                    protocol_version: m.protocol_version.clone(),
                    req_seq: seq,
                    req_ts_us: frame.ts_us,
                    req_bytes: frame.wire_bytes,
                    outcome: "no_response",
                    validation: "none",
                    cursor_in: m.cursor_in.clone(),
                    page_size_arg: m.page_size_arg,
                    ..CallRow::default()
                };
                let idx = self.next_call;
                self.next_call += 1;
                self.calls.insert(idx, call);
                self.calls_by_key.insert(key, idx);
                if let Some(h) = &frame.http {
                    self.calls_by_exchange.insert((h.connection, h.exchange), idx);
                }
                if self.calls.len() >= self.call_chunk_at {
                    self.chunk_answered_calls();
                }
            }
            Some(Kind::Response) | Some(Kind::Error) => {
                let req_dir = if direction == Direction::ClientToServer { "s2c" } else { "c2s" };
                let id = m.rpc_id.clone().unwrap_or_default();
                let mut idx = self.calls_by_key.get(&(Arc::clone(session_name), req_dir, id.clone())).copied();
                if idx.is_none()
                    && id == "null"
                    && let Some(h) = &frame.http
                {
                    idx = self.calls_by_exchange.get(&(h.connection, h.exchange)).copied();
                    if idx.is_some() {
                        notes.push("id null: paired through its HTTP exchange".into());
                    }
                }
                let Some(idx) = idx.filter(|i| self.calls.contains_key(i)) else {
                    self.out.unmatched_responses += 1;
                    notes.push(format!("response to unknown request id {id}"));
                    return None;
                };
                let call = self.calls.get_mut(&idx).expect("checked above");
                let answered = Some((call.method.clone(), call.tool.clone()));
                if call.resp_seq.is_some() {
                    notes.push(format!("second response to request id {id}"));
                    return answered;
                }
                call.resp_seq = Some(seq);
                call.resp_ts_us = frame.ts_us;
                call.resp_bytes = Some(frame.wire_bytes);
                if let (Some(a), Some(b)) = (call.req_ts_us, frame.ts_us) {
                    call.latency_ms = Some((b - a) as f64 / 1000.0);
                }
                call.is_error = m.is_error;
                call.error_code = m.error_code;
                call.error_message = m.error_message.clone();
                call.truncation_marker = m.truncation_marker.clone();
                call.truncated = m.truncation_marker.is_some();
                call.cursor_out = m.cursor_out.clone();
                call.items_returned = m.items_returned;
                call.has_structured = m.has_structured;
                call.text_bytes = Some(m.text_bytes);
                call.blob_bytes_b64 = Some(m.blob_bytes_b64);
                if frame.incomplete.is_some() {
                    call.note = Some("response frame incomplete".into());
                }
                call.outcome = if m.kind == Some(Kind::Error) {
                    "rpc_error"
                } else if m.is_error == Some(true) {
                    "tool_error"
                } else {
                    "ok"
                };
                if m.is_error == Some(true)
                    && let Some(text) = &m.first_text
                    && is_server_output_validation(text)
                {
                    call.validation = "server_output";
                    call.validation_detail = Some(text.chars().take(300).collect());
                    call.error_message = Some(text.chars().take(300).collect());
                } else if m.is_error == Some(true) {
                    call.error_message = m.first_text.as_ref().map(|t| t.chars().take(300).collect());
                }
                if m.kind == Some(Kind::Error)
                    && matches!(m.error_code, Some(-32602) | Some(-32600))
                    && m.error_message.as_deref().is_some_and(|e| e.contains("tructured content") || e.contains("output schema"))
                {
                    call.validation = "client_structured";
                    call.validation_detail = m.error_message.clone();
                }
                call.first_item_key = m.first_item_key.clone();
                call.last_item_key = m.last_item_key.clone();
                if m.kind == Some(Kind::Response) && call.method == "tools/call" {
                    call.content_blocks = Some(m.content_blocks);
                    call.error_with_structured = m.is_error == Some(true) && m.has_structured;
                    call.empty_content = m.has_structured && m.content_blocks == 0;
                    if let (Some(text), Some(sc)) = (&m.first_text, &m.structured)
                        && let Some(why) = text_disagreement(text, sc)
                    {
                        call.text_disagrees = true;
                        call.note = Some(why);
                    }
                    if let Some(tool) = call.tool.clone() {
                        call.schema_known = self.schemas.knows(session, &tool);
                        call.missing_structured = call.schema_known && !m.has_structured && m.is_error != Some(true);
                        if let Some(sc) = &m.structured {
                            match self.schemas.check(session, &tool, sc) {
                                SchemaCheck::Valid => call.schema_valid = Some(true),
                                SchemaCheck::Invalid(errors) => {
                                    call.schema_valid = Some(false);
                                    if call.validation == "none" {
                                        call.validation = "predicted_reject";
                                        call.validation_detail = Some(errors.join("; "));
                                    }
                                }
                                SchemaCheck::SchemaError(e) => call.validation_detail = Some(e),
                                SchemaCheck::NoSchema => {}
                            }
                        }
                    }
                }
                let call = self.calls.get_mut(&idx).expect("checked above");
                if call.cancelled {
                    call.outcome = "cancelled";
                }
                if call.method == "tools/list" && (!m.tools.is_empty() || m.items_returned.is_some()) {
                    let st = self.sessions.get_mut(session).expect("session exists for every frame");
                    st.tools_list_pages += 1;
                    let page = st.tools_list_pages;
                    for t in &m.tools {
                        if let Some(schema) = &t.output_schema {
                            self.schemas.insert(session, &t.name, schema.clone());
                        }
                        self.out.tools.push(ToolRow {
                            capture: self.capture.to_string(),
                            session: session.to_string(),
                            page,
                            tool: t.name.clone(),
                            title: t.title.clone(),
                            description_utf16: t.description_utf16,
                            input_root_type: t.input_root_type.clone(),
                            input_dialect: t.input_dialect.clone(),
                            output_dialect: t.output_dialect.clone(),
                            has_output_schema: t.has_output_schema,
                            schema_bytes: t.schema_bytes,
                            list_payload_bytes: frame.wire_bytes,
                            arrays_without_items: t.arrays_without_items,
                            first_array_without_items: t.first_array_without_items.clone(),
                            tuple_items: t.tuple_items,
                            list_tools: m.tools.len() as u64,
                        });
                    }
                }
                return answered;
            }
            Some(Kind::Notification) if m.method.as_deref() == Some("notifications/cancelled") => {
                let target = m.cancels_id.clone()?;
                // The canceller is the requester: same direction as the request.
                if m.cancel_reason.as_deref().is_some_and(|r| r.to_ascii_lowercase().contains("timed out") || r.to_ascii_lowercase().contains("timeout")) {
                    self.session_mut(session, transport).timeout_cancels += 1;
                }
                if let Some(idx) = self.calls_by_key.get(&(Arc::clone(session_name), dir, target))
                    && let Some(call) = self.calls.get_mut(idx)
                {
                    call.cancelled = true;
                    call.cancel_reason = m.cancel_reason.clone();
                    call.outcome = "cancelled";
                }
            }
            _ => {}
        }
        None
    }

    /// Moves answered (or cancelled) calls out of the row map into a columnar chunk, with their
    /// session's client and server facts; pending calls stay rows.
    fn chunk_answered_calls(&mut self) {
        let mut done: Vec<usize> = self.calls.iter().filter(|(_, c)| c.resp_seq.is_some() || c.cancelled).map(|(i, _)| *i).collect();
        done.sort_unstable();
        let mut rows: Vec<CallRow> = Vec::with_capacity(done.len());
        for i in done {
            let Some(mut call) = self.calls.remove(&i) else { continue };
            let key = (Arc::clone(&call.session), call.direction, call.rpc_id.clone());
            if self.calls_by_key.get(&key) == Some(&i) {
                self.calls_by_key.remove(&key);
            }
            if let Some(st) = self.sessions.get(&*call.session) {
                fill_session_facts(&mut call, &st.row);
            }
            if super::pages::is_page(&call) {
                self.paged_calls.push(call.clone());
            }
            rows.push(call);
        }
        if let Ok(chunk) = super::tables::calls_df(&rows.iter().collect::<Vec<_>>()) {
            match &self.options.chunk_sink {
                Some(sink) => sink.calls(chunk),
                None => self.out.call_chunks.push(chunk),
            }
        } else {
            // Never expected; the rows go back so nothing is lost.
            for call in rows {
                self.calls.insert(self.next_call, call);
                self.next_call += 1;
            }
        }
        self.call_chunk_at = (self.calls.len() * 2).max(CALL_CHUNK_ROWS);
    }

    /// Flushes pending frames and completes sessions and calls.
    pub fn finish(mut self) -> CaptureRows {
        self.flush();
        let mut remaining: Vec<(usize, CallRow)> = self.calls.drain().collect();
        remaining.sort_unstable_by_key(|(i, _)| *i);
        self.out.calls = remaining.into_iter().map(|(_, c)| c).collect();
        let mut out = self.out;
        // Calls take the client/server facts of their session where the request had none.
        for call in &mut out.calls {
            if let Some(st) = self.sessions.get(&*call.session) {
                fill_session_facts(call, &st.row);
            }
            if call.resp_seq.is_none() && !call.cancelled
                && let Some(st) = self.sessions.get_mut(&*call.session)
            {
                let what = match &call.tool {
                    Some(t) => format!("{} {t}", call.method),
                    None => call.method.clone(),
                };
                st.unanswered.push(format!("id {} ({what})", call.rpc_id));
            }
        }
        for e in &out.events {
            if let Some(s) = &e.session
                && let Some(st) = self.sessions.get_mut(s)
            {
                if e.kind == "transport_closed_unexpectedly" {
                    st.abrupt_reason = Some("host: transport closed unexpectedly".into());
                }
                if e.level == "error" {
                    st.row.last_error = Some(e.text.chars().take(300).collect());
                }
            }
        }
        for key in &self.session_order {
            let Some(mut st) = self.sessions.remove(key) else { continue };
            let mut causes: Vec<String> = Vec::new();
            if let Some(why) = &st.last_frame_incomplete {
                causes.push(format!("last frame incomplete: {why}"));
            }
            if let Some(why) = &st.abrupt_reason {
                causes.push(why.clone());
            }
            if !st.unanswered.is_empty() {
                causes.push(format!("{} request(s) never answered: {}", st.unanswered.len(), st.unanswered.join(", ")));
            }
            let abrupt = !causes.is_empty();
            if abrupt && st.row.non_json_s2c > 0 {
                causes.push(format!("server wrote {} non-JSON line(s) where the client reads messages", st.row.non_json_s2c));
            }
            if abrupt && st.timeout_cancels > 0 {
                causes.push(format!("{} request(s) cancelled after a client timeout", st.timeout_cancels));
            }
            st.row.ending = if abrupt {
                "abrupt"
            } else if st.row.frames == 0 {
                "unknown"
            } else {
                "clean"
            };
            if abrupt {
                st.row.end_cause = Some(causes.join("; "));
                if st.row.last_error.is_none() {
                    st.row.last_error = st.row.end_cause.clone();
                }
            }
            out.sessions.push(st.row);
        }
        let mut paged = std::mem::take(&mut self.paged_calls);
        paged.extend(out.calls.iter().filter(|c| super::pages::is_page(c)).cloned());
        out.pages = super::pages::build_pages(&paged);
        out
    }
}

/// Calls take the client/server facts of their session where the request had none.
fn fill_session_facts(call: &mut CallRow, s: &SessionRow) {
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

/// The first user pattern found in the last 1 KiB of a payload.
fn custom_marker(patterns: &[regex::Regex], payload: &[u8]) -> Option<String> {
    let tail = String::from_utf8_lossy(&payload[payload.len().saturating_sub(1024)..]);
    patterns.iter().find_map(|re| re.find(&tail).map(|m| m.as_str().to_string()))
}

/// Server-side output-schema failures as the SDKs word them (mcp-wire-facts.md §6).
pub fn is_server_output_validation(text: &str) -> bool {
    text.contains("Output validation error") || (text.starts_with("Error executing tool ") && text.contains(" validation error for "))
}

/// Moves a message's facts into its frame's row (the call row took its own copies first).
fn fill_frame_row(row: &mut FrameRow, m: Message) {
    row.method = m.method.or(row.method.take());
    row.rpc_id = m.rpc_id;
    row.tool = m.tool.or(row.tool.take());
    row.is_error = m.is_error;
    row.error_code = m.error_code;
    row.error_message = m.error_message;
    row.content_types = m.content_types;
    row.text_bytes = m.text_bytes;
    row.blob_bytes_b64 = m.blob_bytes_b64;
    row.blob_bytes_decoded = m.blob_bytes_decoded;
    row.has_structured = m.has_structured;
    row.structured_bytes = m.structured_bytes;
    row.truncation_marker = m.truncation_marker;
}

impl Sink for CaptureModel {
    fn frame(&mut self, frame: Frame) {
        self.batch_bytes += frame.payload.len();
        self.batch.push(frame);
        if self.batch_bytes >= BATCH_BYTES || self.batch.len() >= BATCH_FRAMES {
            self.flush();
        }
    }

    fn event(&mut self, e: Event) {
        self.flush();
        self.out.events.push(EventRow {
            capture: self.capture.to_string(),
            session: e.session,
            ts_us: e.ts_us,
            offset: e.offset,
            level: e.level,
            server: e.server,
            kind: e.kind,
            text: e.text,
        });
    }

    fn skip(&mut self, s: Skip) {
        let d = Diagnostic { file: self.current_file.clone(), offset: s.offset, bytes: s.bytes, reason: s.reason.as_str(), detail: s.detail };
        self.diagnostic(d);
    }

    fn framing(&mut self, category: crate::ingest::frame::FramingCategory, bytes: u64) {
        *self.out.framing.entry(category.as_str()).or_default() += bytes;
    }

    fn begin_file(&mut self, file: &str) {
        self.set_file(file);
    }
}
