//! Fact extraction: fills frame, call and tool rows from one parsed message. Holds no state:
//! which call a response answers (`pairing.rs`) and the session (`sessions.rs`) are given.

use std::sync::Arc;

use super::message::{Kind, Message};
use super::rows::{CallRow, FrameRow, Outcome, ToolRow, Validation};
use super::validate::{OutputSchemas, SchemaCheck, text_disagreement_parsed, text_may_disagree};
use crate::ingest::frame::{Direction, Frame};

/// The call row of a request.
pub(crate) fn request_call(capture: &Arc<str>, session: &Arc<str>, direction: Direction, seq: u64, frame: &Frame, m: &Message) -> CallRow {
    CallRow {
        capture: Arc::clone(capture),
        session: Arc::clone(session),
        rpc_id: m.rpc_id.clone().unwrap_or_default(),
        method: m.method.clone().unwrap_or_default(),
        direction,
        tool: m.tool.clone(),
        client_name: m.client_info.as_ref().and_then(|c| c.name.as_deref()).map(Arc::from),
        client_version: m.client_info.as_ref().and_then(|c| c.version.as_deref()).map(Arc::from),
        protocol_version: m.protocol_version.as_deref().map(Arc::from),
        req_seq: seq,
        req_ts_us: frame.ts_us,
        req_bytes: frame.wire_bytes,
        outcome: Outcome::NoResponse,
        validation: Validation::None,
        cursor_in: m.cursor_in.clone(),
        page_size_arg: m.page_size_arg,
        chain_id: seq,
        round: 1,
        chain_last: true,
        conversation: Arc::clone(session),
        traceparent: m.traceparent.clone(),
        ..CallRow::default()
    }
}

/// Fills a call with its response (frame `seq`): timing, outcome, error, pagination and the
/// predictions of what a validating client does with the result.
pub(crate) fn fill_response(call: &mut CallRow, seq: u64, frame: &Frame, m: &Message, session: &str, schemas: &mut OutputSchemas) {
    call.resp_seq = Some(seq);
    call.resp_ts_us = frame.ts_us;
    call.resp_bytes = Some(frame.wire_bytes);
    if let (Some(a), Some(b)) = (call.req_ts_us, frame.ts_us) {
        // Timestamps come from the input (any i64): widen so the difference cannot overflow.
        call.latency_ms = Some((i128::from(b) - i128::from(a)) as f64 / 1000.0);
    }
    call.is_error = m.is_error;
    call.result_type = m.result_type.clone();
    call.error_code = m.error_code;
    call.error_message = m.error_message.clone();
    call.truncation_marker = m.truncation_marker.clone();
    call.truncated = m.truncation_marker.is_some();
    call.cursor_out = m.cursor_out.clone();
    call.items_returned = m.items_returned;
    call.ttl_ms = m.ttl_ms;
    call.cache_scope = m.cache_scope.clone();
    call.has_structured = m.has_structured;
    call.text_bytes = Some(m.text_bytes);
    call.blob_bytes_b64 = Some(m.blob_bytes_b64);
    if frame.incomplete.is_some() {
        call.note = Some("response frame incomplete".into());
    }
    call.outcome = if m.kind == Some(Kind::Error) {
        Outcome::RpcError
    } else if m.is_error == Some(true) {
        Outcome::ToolError
    } else {
        Outcome::Ok
    };
    if m.is_error == Some(true)
        && let Some(text) = &m.first_text
        && is_server_output_validation(text)
    {
        call.validation = Validation::ServerOutput;
        call.validation_detail = Some(text.chars().take(300).collect());
        call.error_message = Some(text.chars().take(300).collect());
    } else if m.is_error == Some(true) {
        call.error_message = m.first_text.as_ref().map(|t| t.chars().take(300).collect());
    }
    if m.kind == Some(Kind::Error)
        && matches!(m.error_code, Some(-32602) | Some(-32600))
        && m.error_message.as_deref().is_some_and(|e| e.contains("tructured content") || e.contains("output schema"))
    {
        call.validation = Validation::ClientStructured;
        call.validation_detail = m.error_message.clone();
    }
    call.first_item_key = m.first_item_key.clone();
    call.last_item_key = m.last_item_key.clone();
    if m.kind == Some(Kind::Response) && &*call.method == "tools/call" {
        call.content_blocks = Some(m.content_blocks);
        call.error_with_structured = m.is_error == Some(true) && m.has_structured;
        call.empty_content = m.has_structured && m.content_blocks == 0;
        if let (Some(text), Some(sc)) = (&m.first_text, &m.structured)
            && text_may_disagree(text)
            && let Some(why) = text_disagreement_parsed(text, sc.value())
        {
            call.text_disagrees = true;
            call.note = Some(why);
        }
        if let Some(tool) = call.tool.clone() {
            call.schema_known = schemas.knows(session, &tool);
            // An input_required round is not the tool's output: it carries no structuredContent by design.
            call.missing_structured = call.schema_known && !m.has_structured && m.is_error != Some(true) && !input_required(call);
            // An unknown tool's check is NoSchema: its structuredContent need not be read.
            if call.schema_known
                && let Some(sc) = &m.structured
            {
                match schemas.check_parsed(session, &tool, sc.value()) {
                    SchemaCheck::Valid => call.schema_valid = Some(true),
                    SchemaCheck::Invalid(errors) => {
                        call.schema_valid = Some(false);
                        if call.validation == Validation::None {
                            call.validation = Validation::PredictedReject;
                            call.validation_detail = Some(errors.join("; "));
                        }
                    }
                    SchemaCheck::SchemaError(e) | SchemaCheck::Unchecked(e) => call.validation_detail = Some(e),
                    SchemaCheck::NoSchema => {}
                }
            }
        }
    }
    if input_required(call) {
        // It asks for input; it is no result, so nothing in it is cut.
        call.truncated = false;
        call.truncation_marker = None;
    }
    if call.cancelled {
        call.outcome = Outcome::Cancelled;
    }
}

/// The requester gave up waiting: a cancellation whose reason says it timed out (the SDKs'
/// McpError -32001 "Request timed out"), or an answer with error -32001. Case-sensitive, as
/// the rules have always matched it.
pub(crate) fn timed_out(call: &CallRow) -> bool {
    let reason = call.cancel_reason.as_deref().is_some_and(|r| r.contains("timed out") || r.contains("-32001"));
    (call.cancelled && reason) || call.error_code == Some(-32001)
}

/// The round's result asks the client for input (`resultType: "input_required"`).
pub(crate) fn input_required(call: &CallRow) -> bool {
    call.result_type.as_deref() == Some("input_required")
}

/// The `tools` rows of one `tools/list` page.
pub(crate) fn tool_rows(capture: &str, session: &str, page: u64, frame: &Frame, m: &Message) -> impl Iterator<Item = ToolRow> {
    m.tools.iter().map(move |t| ToolRow {
        capture: capture.to_string(),
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
        definition: t.definition.clone(),
    })
}

/// The first user pattern found in the last 1 KiB of a payload.
pub(crate) fn custom_marker(patterns: &[regex::Regex], payload: &[u8]) -> Option<String> {
    let tail = String::from_utf8_lossy(&payload[payload.len().saturating_sub(1024)..]);
    patterns.iter().find_map(|re| re.find(&tail).map(|m| m.as_str().to_string()))
}

/// Server-side output-schema failures as the SDKs word them (mcp-wire-facts.md §6).
pub fn is_server_output_validation(text: &str) -> bool {
    text.contains("Output validation error") || (text.starts_with("Error executing tool ") && text.contains(" validation error for "))
}

/// Moves a message's facts into its frame's row (the call row took its own copies first).
pub(crate) fn fill_frame_row(row: &mut FrameRow, m: &mut Message) {
    row.method = m.method.take().or(row.method.take());
    row.rpc_id = m.rpc_id.take();
    row.tool = m.tool.take().or(row.tool.take());
    row.is_error = m.is_error;
    row.error_code = m.error_code;
    row.error_message = m.error_message.take();
    row.content_types = m.content_types.take();
    row.text_bytes = m.text_bytes;
    row.blob_bytes_b64 = m.blob_bytes_b64;
    row.blob_bytes_decoded = m.blob_bytes_decoded;
    row.has_structured = m.has_structured;
    row.structured_bytes = m.structured_bytes;
    row.truncation_marker = m.truncation_marker.take();
}
