//! The tables (DESIGN.md "Tables"), each declared once: column, Rust type, one-line doc.
//! Struct, polars schema, builder, reader and docs/tables.md reference all come from these
//! declarations (`schema.rs`); to add a column, add a line here. Filling rows is elsewhere.

use std::sync::Arc;

use super::message::Kind;
use serde::Serialize;

use super::schema::{categorical, table};
use crate::ingest::frame::{Direction, Transport};

categorical! {
    /// How a call ended (the `outcome` column).
    pub enum Outcome {
        Ok = "ok",
        ToolError = "tool_error",
        RpcError = "rpc_error",
        #[default]
        NoResponse = "no_response",
        Cancelled = "cancelled",
        /// Unanswered where a log excerpt (host log, embedded log) ends, with no close or
        /// error event after the request: the log stopped, not necessarily the connection.
        UnknownLogEnded = "unknown_log_ended",
        /// Answered, but the recorder did not keep the answer (a HAR writer dropped the
        /// response body): not a lost call.
        UnknownNotRecorded = "unknown_not_recorded",
        /// Unanswered, and re-issued by a later request of the conversation (`retry_of`): the
        /// stream broke, the call was not lost.
        Retried = "retried",
    }
}

categorical! {
    /// Which output-schema check a call failed (the `validation` column).
    pub enum Validation {
        #[default]
        None = "none",
        /// An isError result that is really the server's own output-schema failure.
        ServerOutput = "server_output",
        /// The client rejected the structured content (`-32602`/`-32600`).
        ClientStructured = "client_structured",
        /// structuredContent does not validate against the listed outputSchema.
        PredictedReject = "predicted_reject",
    }
}

categorical! {
    /// How a session ended (the `ending` column).
    pub enum Ending {
        Clean = "clean",
        Abrupt = "abrupt",
        #[default]
        Unknown = "unknown",
    }
}

/// Placeholder for rows under construction; every frame sets its own transport.
impl Default for Transport {
    fn default() -> Self {
        Transport::Stdio
    }
}

/// Placeholder for rows under construction; every frame sets its own direction.
impl Default for Direction {
    fn default() -> Self {
        Direction::ClientToServer
    }
}

/// Placeholder for rows under construction; every frame sets its own kind.
impl Default for Kind {
    fn default() -> Self {
        Kind::NotJsonRpc
    }
}

table! {
    /// One row of `frames`: one JSON-RPC message, batch, or non-message line.
    #[derive(Default)]
    pub struct FrameRow: "frames" {
        /// Capture name (file or stdio pair).
        capture: Arc<str>,
        /// Session within the capture.
        session: Arc<str>,
        /// How the frame travelled.
        transport: Transport,
        /// Client to server or server to client.
        direction: Direction,
        /// Arrival order in the capture.
        seq: u64,
        /// Timestamp, microseconds since the Unix epoch.
        ts_us: Option<i64>,
        /// Byte offset in its file.
        offset: u64,
        /// Bytes of the message on the wire (without framing).
        wire_bytes: u64,
        /// Frame classification.
        kind: Kind,
        /// JSON-RPC method (a response takes its request's).
        method: Option<Arc<str>>,
        /// The id as JSON text (`1` and `"1"` differ).
        rpc_id: Option<Arc<str>>,
        /// Tool name of a `tools/call` (a response takes its request's).
        tool: Option<Arc<str>>,
        /// The result's `isError`.
        is_error: Option<bool>,
        /// JSON-RPC error code.
        error_code: Option<i64>,
        /// JSON-RPC error message.
        error_message: Option<String>,
        /// Content block types of the result (e.g. `text,image`).
        content_types: Option<Arc<str>>,
        /// UTF-8 bytes of text blocks.
        text_bytes: u64,
        /// Base64 bytes of blob and image blocks.
        blob_bytes_b64: u64,
        /// Those blobs' decoded bytes.
        blob_bytes_decoded: u64,
        /// The result carries structuredContent.
        has_structured: bool,
        /// Bytes of structuredContent.
        structured_bytes: u64,
        /// The truncation marker found in the result, if any.
        truncation_marker: Option<String>,
        /// What else was noticed (batch size, incomplete frame, HTTP status, ...).
        note: Option<String>,
        /// HTTP request frames: the `MCP-Protocol-Version` header.
        hdr_protocol_version: Option<String>,
        /// HTTP request frames: the `Mcp-Method` header (2026-07-28).
        hdr_method: Option<String>,
        /// HTTP request frames: the `Mcp-Name` header, `=?base64?...?=` decoded.
        hdr_name: Option<String>,
        /// HTTP request frames: the `Mcp-Param-{Name}` headers as `Name=value` joined by `; `, values `=?base64?...?=` decoded.
        hdr_params: Option<String>,
        /// The request's `_meta` protocolVersion (what `MCP-Protocol-Version` must equal).
        meta_protocol_version: Option<String>,
        /// HTTP request frames: the headers that disagree with the body, e.g. `Mcp-Name differs`, `Mcp-Param-Region missing` (Mcp-Param checks need the tool's inputSchema from an earlier tools/list).
        header_mismatch: Option<String>,
        /// HTTP frames (both directions): the `User-Agent` of the exchange's request, e.g. `python-httpx2/2.16.2` (the `mcp` 2.x Python client).
        http_user_agent: Option<String>,
        /// HTTP frames (both directions): the status of the exchange's response, when it was seen.
        http_status: Option<u32>,
    }
}

table! {
    /// One row of `calls`: a request and, when seen, its response (joined by session,
    /// direction and id).
    #[derive(Default)]
    pub struct CallRow: "calls" {
        /// Capture name.
        capture: Arc<str>,
        /// Session within the capture.
        session: Arc<str>,
        /// The request id as JSON text.
        rpc_id: Arc<str>,
        /// The request's method.
        method: Arc<str>,
        /// Direction of the request (`c2s` for client requests; `s2c` for sampling etc.).
        direction: Direction,
        /// Tool name of a `tools/call`.
        tool: Option<Arc<str>>,
        /// Client name (initialize, `_meta` clientInfo, or the session's).
        client_name: Option<Arc<str>>,
        /// Client version.
        client_version: Option<Arc<str>>,
        /// Server name from the session's initialize result.
        server_name: Option<Arc<str>>,
        /// Server version.
        server_version: Option<Arc<str>>,
        /// Protocol version of the request or the session.
        protocol_version: Option<Arc<str>>,
        /// seq of the request frame.
        req_seq: u64,
        /// seq of the response frame.
        resp_seq: Option<u64>,
        /// Request timestamp (µs).
        req_ts_us: Option<i64>,
        /// Response timestamp (µs).
        resp_ts_us: Option<i64>,
        /// Response time minus request time, milliseconds.
        latency_ms: Option<f64>,
        /// Bytes of the request frame.
        req_bytes: u64,
        /// Bytes of the response frame.
        resp_bytes: Option<u64>,
        /// How the call ended (`cancelled` whenever the requester cancelled it).
        outcome: Outcome,
        /// The result's `isError`.
        is_error: Option<bool>,
        /// JSON-RPC error code.
        error_code: Option<i64>,
        /// Error message (or the first text of an isError result), at most 300 characters.
        error_message: Option<String>,
        /// Which output-schema check failed.
        validation: Validation,
        /// Why it failed.
        validation_detail: Option<String>,
        /// A truncation marker was found in the result.
        truncated: bool,
        /// The marker found.
        truncation_marker: Option<String>,
        /// Cursor sent with the request.
        cursor_in: Option<String>,
        /// Next cursor returned.
        cursor_out: Option<String>,
        /// Items in the page's main array.
        items_returned: Option<u64>,
        /// Page size argument of the request.
        page_size_arg: Option<i64>,
        /// The result carries structuredContent.
        has_structured: bool,
        /// UTF-8 bytes of the result's text blocks.
        text_bytes: Option<u64>,
        /// Base64 bytes of the result's blobs.
        blob_bytes_b64: Option<u64>,
        /// Content blocks in the result.
        content_blocks: Option<u32>,
        /// The session listed an outputSchema for the tool before this result.
        schema_known: bool,
        /// structuredContent valid against that schema (JSON Schema 2020-12 unless it says otherwise; null: not checked).
        schema_valid: Option<bool>,
        /// isError result that carries structuredContent (validating clients still check it).
        error_with_structured: bool,
        /// outputSchema declared, no structuredContent, not an error.
        missing_structured: bool,
        /// structuredContent beside an empty (or absent) content array.
        empty_content: bool,
        /// First text block and structuredContent disagree (JSON, or `key=N`).
        text_disagrees: bool,
        /// Key of the first item of the page's main array.
        first_item_key: Option<String>,
        /// Key of the last item of the page's main array.
        last_item_key: Option<String>,
        /// The requester sent `notifications/cancelled` for it.
        cancelled: bool,
        /// The cancellation's reason.
        cancel_reason: Option<String>,
        /// Timestamp of the cancellation (µs): minus `req_ts_us`, the timeout the requester hit.
        cancel_ts_us: Option<i64>,
        /// What else was noticed.
        note: Option<String>,
        /// The result's `resultType` (2026-07-28: `complete`, or `input_required` for a round that asks the client for input); null for errors and results without one.
        result_type: Option<String>,
        /// The logical call this row is a round of: `req_seq` of its first round. A retry carrying the `requestState` of an `input_required` result (same method and tool) joins that result's chain.
        chain_id: u64,
        /// Round within the chain, from 1; the chain's highest round is the logical call's outcome.
        round: u32,
        /// `req_seq` of the request this one re-issues (2026-07-28: same method and params, new id, after the first one's stream broke unanswered); it joins that request's chain (`chain_id`) as its next round.
        retry_of: Option<u64>,
        /// No later round joined this one's chain: the row a logical call is counted by (its outcome is the chain's). A call of one round is its own chain's last.
        chain_last: bool,
        /// On a chain's last round: the logical call's latency, from the chain's first request to this round's answer (`input_required` turns included; `latency_ms` for a call of one round). Null on earlier rounds.
        chain_latency_ms: Option<f64>,
        /// On a chain's last round: the largest response of its rounds, in bytes (0 when none was answered). Null on earlier rounds.
        chain_resp_bytes: Option<u64>,
        /// The requester gave up waiting: cancelled with a reason saying `timed out` or `-32001` (the SDKs' McpError "Request timed out"), or answered with error -32001.
        timed_out: bool,
        /// For a timed-out call: how long the requester waited, from the chain's first request to the cancellation (`chain_latency_ms` when there is no cancellation).
        waited_ms: Option<f64>,
        /// A list result's `ttlMs` (2026-07-28 `CacheableResult`).
        ttl_ms: Option<i64>,
        /// A list result's `cacheScope` (`public`, `private`).
        cache_scope: Option<String>,
        /// The call's conversation, the same as `session` (kept for readers of earlier datasets): for a 2026-07-28 request (its `_meta` carries a protocolVersion) `client_name client_version @ place`, place being `ip:ADDR` of the HTTP client, else the pipe; for handshake-era calls the session.
        conversation: Arc<str>,
        /// The request's `params._meta.traceparent` (W3C Trace Context), when it carries one.
        traceparent: Option<String>,
    }
}

table! {
    /// One row of `sessions` (also the report's session line).
    #[derive(Default, Serialize)]
    pub struct SessionRow: "sessions" {
        /// Capture name.
        capture: String,
        /// Session name.
        session: String,
        /// Transport of its first frame.
        transport: Transport,
        /// Client name.
        client_name: Option<String>,
        /// Client version.
        client_version: Option<String>,
        /// Server name.
        server_name: Option<String>,
        /// Server version.
        server_version: Option<String>,
        /// Negotiated protocol version.
        protocol_version: Option<String>,
        /// First frame timestamp (µs).
        first_ts_us: Option<i64>,
        /// Last frame timestamp (µs).
        last_ts_us: Option<i64>,
        /// Frames in the session.
        frames: u64,
        /// Wire bytes client to server.
        bytes_c2s: u64,
        /// Wire bytes server to client.
        bytes_s2c: u64,
        /// Largest frame.
        max_frame_bytes: u64,
        /// `seq` of the session's last frame client to server (null when it has none).
        last_seq_c2s: Option<u64>,
        /// `seq` of the session's last frame server to client (null when it has none).
        last_seq_s2c: Option<u64>,
        /// `abrupt`: a request never answered, a last frame cut, or the host logged an unexpected transport close.
        ending: Ending,
        /// Last error seen (or the end cause).
        last_error: Option<String>,
        /// Why an abrupt session most likely ended, with stdout pollution and client timeouts seen (null when clean).
        end_cause: Option<String>,
        /// `end_cause` as tokens, primary first, joined by `,`: `last_frame_incomplete`, `transport_closed` (host-logged), `requests_unanswered`, then `stdout_pollution`, `client_timeout`; `log_ended` for an excerpt that ends with requests unanswered.
        end_causes: Option<String>,
        /// Non-JSON lines the server wrote where the client reads messages.
        non_json_s2c: u64,
        /// Bytes of those lines.
        non_json_s2c_bytes: u64,
        /// `handshake` (an `initialize` answered), `stateless` (2026-07-28 requests answered with a `resultType`, no `initialize`), `mixed` (both), null (neither).
        protocol_era: Option<String>,
        /// TCP connections the session used (capture-wide numbers, comma-separated; null off HTTP): a 2026-07-28 conversation spans several, and clients share them.
        connections: Option<String>,
        /// The client's reader family (`limits.reader`), from its clientInfo name or its requests' User-Agent; null when not recognised.
        client_family: Option<String>,
        /// The server's reader family, from its serverInfo name; null when not recognised.
        server_family: Option<String>,
        /// `discover` (`server/discover` answered), `fallback_initialize` (`server/discover` failed or unanswered, then `initialize`), `initialize` (no probe), null (neither seen).
        negotiation: Option<String>,
    }
}

table! {
    /// One row of `tools`: every tool of every `tools/list` result.
    #[derive(Default)]
    pub struct ToolRow: "tools" {
        /// Capture name.
        capture: String,
        /// Session name.
        session: String,
        /// Which `tools/list` page of the session (1-based).
        page: u64,
        /// Tool name.
        tool: String,
        /// Tool title.
        title: Option<String>,
        /// Description length in UTF-16 units.
        description_utf16: Option<u64>,
        /// `type` of inputSchema's root.
        input_root_type: String,
        /// `$schema` of inputSchema.
        input_dialect: Option<String>,
        /// `$schema` of outputSchema.
        output_dialect: Option<String>,
        /// The tool declares an outputSchema.
        has_output_schema: bool,
        /// Bytes of its schemas.
        schema_bytes: u64,
        /// Bytes of the whole `tools/list` response frame.
        list_payload_bytes: u64,
        /// `type: array` nodes without `items` in inputSchema.
        arrays_without_items: u64,
        /// JSON pointer of the first one.
        first_array_without_items: Option<String>,
        /// inputSchema uses tuple `items` (an array of schemas).
        tuple_items: bool,
        /// Tools in the whole list page.
        list_tools: u64,
        /// The definition as JSON: title, description, inputSchema, outputSchema, annotations as the server sent them (what `tool_definition_changed` compares, as maps).
        definition: String,
    }
}

table! {
    /// One row of `events`: what a host log says besides messages.
    #[derive(Default)]
    pub struct EventRow: "events" {
        /// Capture name.
        capture: String,
        /// Session the event belongs to.
        session: Option<String>,
        /// Timestamp (µs).
        ts_us: Option<i64>,
        /// Byte offset in its file.
        offset: u64,
        /// Log level.
        level: String,
        /// Server the host named.
        server: Option<String>,
        /// Event kind (e.g. `transport_closed_unexpectedly`).
        kind: String,
        /// The log text.
        text: String,
        /// Tool the client log names (e.g. the tool whose result exceeded the token cap).
        tool: Option<String>,
        /// Tokens of a result the client refused (`response (N tokens) exceeds ...`).
        tokens: Option<u64>,
        /// The client's token cap the result was measured against (Claude Code: 25000).
        token_limit: Option<u64>,
        /// Timeout the client log names, milliseconds.
        timeout_ms: Option<u64>,
        /// JSON-RPC error code the client log names (`MCP error -32001`).
        error_code: Option<i64>,
        /// HTTP status the client log names, or of an HTTP error response (`http_status` events).
        http_status: Option<u32>,
    }
}

table! {
    /// One row of `pages`: a paginated call as a page of a cursor chain.
    #[derive(Default)]
    pub struct PageRow: "pages" {
        /// Capture name.
        capture: String,
        /// Session name.
        session: String,
        /// The list method or the tool name.
        chain: String,
        /// `chain#n`: the n-th walk of that list in the session (conversation). A walk starts at a request without a cursor and follows each `nextCursor` to the request that sends it, on any connection; a later walk sending the same cursor strings is a new walk, not a loop.
        walk: String,
        /// Page number in the walk (1-based).
        page_no: u64,
        /// The request id as JSON text.
        rpc_id: String,
        /// seq of the request frame.
        req_seq: u64,
        /// Cursor sent.
        cursor_in: Option<String>,
        /// Next cursor returned.
        cursor_out: Option<String>,
        /// Items in the page.
        items_returned: Option<u64>,
        /// Page size argument.
        page_size_arg: Option<i64>,
        /// Key of the page's first item.
        first_item_key: Option<String>,
        /// Key of the page's last item.
        last_item_key: Option<String>,
        /// Where item keys come from: `name` (tools, prompts), `uri` (resources), `uriTemplate` (templates); in a tool's structuredContent `id`, `name`, `uri`, else the first scalar field (`mixed` when items differ; null when no item has one).
        item_key_field: Option<String>,
        /// Items of the page without any key (never counted as repeats).
        items_without_key: u64,
        /// Items the next page of the walk returned again (any earlier page of the walk had them), by identity: this page's next cursor advanced too little (null when there is no next page or items have no keys).
        repeated_items: Option<i64>,
        /// Those items' keys (the first 10, then how many more).
        repeated_keys: Option<String>,
        /// Items another complete walk of the same list in the conversation returned and no page of this complete walk did, by identity (set on the walk's last page; null when not compared).
        skipped_items: Option<i64>,
        /// Those items' keys (the first 10, then how many more).
        skipped_keys: Option<String>,
        /// cursor_in decoded (base64 JSON), when it decodes.
        cursor_decoded: Option<String>,
        /// Offset the cursor_in names.
        offset_in: Option<i64>,
        /// Offset the cursor_out names.
        offset_out: Option<i64>,
        /// The same cursor was sent before within this walk (a loop).
        cursor_seen_before: bool,
        /// The cursor was issued (as a next cursor) earlier in this conversation.
        cursor_issued_before: bool,
        /// The session that issued it, when another one did (a foreign cursor).
        cursor_issued_in: Option<String>,
        /// An earlier walk of this conversation sent the same cursor (stable cursors re-walked: not a loop).
        cursor_of_earlier_walk: bool,
        /// cursor_out was sent by the next page of this walk.
        followed: bool,
        /// On a walk's last page: `complete` (no next cursor), `abandoned` (a next cursor the conversation never sent, though it went on), `unknown` (the capture ends before the conversation sent anything after it), `loop` (the last page sent a cursor the walk had sent before); null on other pages.
        walk_end: Option<String>,
        /// offset_out - offset_in (decoded cursors).
        advance: Option<i64>,
        /// Items returned beyond the cursor's advance, by decoded offsets (the next page repeats them): items - advance.
        offset_repeats: Option<i64>,
        /// Advance beyond the items returned, by decoded offsets (items no page returns): advance - items.
        offset_skips: Option<i64>,
        /// The page size argument differs from the previous page's.
        page_size_changed: bool,
        /// A keyset cursor (`after`, `last_id`) that names the previous page's last item.
        cursor_matches_last_item: Option<bool>,
        /// A response was seen.
        answered: bool,
        /// Bytes of the page's response frame.
        resp_bytes: Option<u64>,
    }
}

table! {
    /// A named reader budget (`limits` table).
    pub struct ReaderLimit: "limits" {
        /// Budget name (e.g. `ts_sdk_stdio`).
        name: String,
        /// The budget in bytes (for a token budget, its byte estimate: tokens × 4).
        bytes: u64,
        /// The budget in tokens, when the reader counts tokens (Claude Code's tool output cap); bytes are estimated at 4 bytes a token (`chars/4`, the estimate Anthropic documents for English text).
        tokens: Option<u64>,
        /// Frames at or above `bytes × warn_ratio` are near the limit.
        warn_ratio: f64,
        /// What it applies to: `stdio` frames (also host logs and transcripts of stdio sessions), `http_request` bodies, `result` (any tool result), `tools_list` payloads, `sse_event` (server-to-client frames carried in an SSE event).
        scope: String,
        /// Who reads the frames it limits: `client` (results and other server-to-client frames) or `server` (request bodies).
        side: String,
        /// The reader family the limit belongs to (`ts_sdk`, `python_sdk2`, `codex`, `claude_code`, ...; `any` for every reader): `sessions.client_family` / `server_family` name the reading side's family.
        reader: String,
        /// `sdk` (an SDK's limit: also applies to a reader whose family is unknown, since most clients are built on an SDK) or `product` (one product's limit: applies only when that product is the reader).
        reader_kind: String,
        /// Which readers: the clientInfo / serverInfo name patterns, User-Agent patterns and transport the family is recognised by.
        applies_to: String,
        /// Checked by `near_limit_frames` (others are thresholds other rules use); `--limit` enables the limit it names.
        enabled: bool,
        /// Where the number comes from: the SDK file (repository path at a tag) or the pull request / issue.
        source: String,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::model::schema::Table;

    fn frame(seq: u64, kind: Kind) -> FrameRow {
        FrameRow { capture: Arc::from("cap"), session: Arc::from("s1"), transport: Transport::Sse, direction: Direction::ServerToClient, seq, kind, method: Some("tools/call".into()), ts_us: Some(-5), ..FrameRow::default() }
    }

    #[test]
    fn frames_come_back_from_their_table() {
        let rows = vec![frame(0, Kind::Response), frame(1, Kind::InvalidJson)];
        let df = FrameRow::to_df(&rows.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(df.column("kind").unwrap().str().unwrap().get(1), Some("invalid_json"));
        assert_eq!(df.column("direction").unwrap().str().unwrap().get(0), Some("s2c"));
        assert_eq!(FrameRow::rows_from_df(&df).unwrap(), rows);
    }

    #[test]
    fn calls_sessions_and_limits_come_back_from_their_tables() {
        let calls = vec![CallRow { rpc_id: "1".into(), outcome: Outcome::Cancelled, validation: Validation::PredictedReject, latency_ms: Some(1.5), content_blocks: Some(2), ..CallRow::default() }];
        assert_eq!(CallRow::rows_from_df(&CallRow::to_df(&calls.iter().collect::<Vec<_>>()).unwrap()).unwrap(), calls);
        let sessions = vec![SessionRow { ending: Ending::Abrupt, transport: Transport::Jsonl, end_cause: Some("x".into()), ..SessionRow::default() }];
        assert_eq!(SessionRow::rows_from_df(&SessionRow::to_df(&sessions.iter().collect::<Vec<_>>()).unwrap()).unwrap(), sessions);
        let limits = crate::model::limits::default_limits();
        assert_eq!(ReaderLimit::rows_from_df(&ReaderLimit::to_df(&limits.iter().collect::<Vec<_>>()).unwrap()).unwrap(), limits);
    }

    #[test]
    fn an_unknown_category_is_an_error() {
        let df = polars::prelude::df!("v" => ["ok", "maybe"]).unwrap();
        let err = <Outcome as crate::model::schema::ColumnType>::from_column(df.column("v").unwrap()).unwrap_err();
        assert!(matches!(err, crate::model::schema::CellError::Unknown(v) if v == "maybe"));
    }

    #[test]
    fn schema_is_the_built_tables_schema() {
        fn check<T: Table>() {
            let built = T::to_df(&[]).unwrap();
            assert_eq!(**built.schema(), T::schema(), "{}", T::NAME);
            assert_eq!(T::columns().len(), built.width(), "{}", T::NAME);
        }
        check::<FrameRow>();
        check::<CallRow>();
        check::<SessionRow>();
        check::<ToolRow>();
        check::<EventRow>();
        check::<PageRow>();
        check::<ReaderLimit>();
    }
}
