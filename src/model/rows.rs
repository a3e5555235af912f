//! Row types of the tables (DESIGN.md "Tables"); column names are the field names.
//! Capture and session names are shared (`Arc<str>`): millions of rows, a handful of names.

use std::sync::Arc;

/// One row of `frames`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameRow {
    pub capture: Arc<str>,
    pub session: Arc<str>,
    pub transport: &'static str,
    pub direction: &'static str,
    pub seq: u64,
    pub ts_us: Option<i64>,
    pub offset: u64,
    pub wire_bytes: u64,
    pub kind: &'static str,
    pub method: Option<String>,
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub is_error: Option<bool>,
    pub error_code: Option<i64>,
    pub error_message: Option<String>,
    pub content_types: Option<String>,
    pub text_bytes: u64,
    pub blob_bytes_b64: u64,
    pub blob_bytes_decoded: u64,
    pub has_structured: bool,
    pub structured_bytes: u64,
    pub truncation_marker: Option<String>,
    pub note: Option<String>,
}

/// One row of `calls`: a request and, when seen, its response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallRow {
    pub capture: Arc<str>,
    pub session: Arc<str>,
    pub rpc_id: String,
    pub method: String,
    /// Direction of the request (`c2s` for client requests; `s2c` for sampling etc.).
    pub direction: &'static str,
    pub tool: Option<String>,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub protocol_version: Option<String>,
    pub req_seq: u64,
    pub resp_seq: Option<u64>,
    pub req_ts_us: Option<i64>,
    pub resp_ts_us: Option<i64>,
    pub latency_ms: Option<f64>,
    pub req_bytes: u64,
    pub resp_bytes: Option<u64>,
    pub outcome: &'static str,
    pub is_error: Option<bool>,
    pub error_code: Option<i64>,
    pub error_message: Option<String>,
    pub validation: &'static str,
    pub validation_detail: Option<String>,
    pub truncated: bool,
    pub truncation_marker: Option<String>,
    pub cursor_in: Option<String>,
    pub cursor_out: Option<String>,
    pub items_returned: Option<u64>,
    pub page_size_arg: Option<i64>,
    pub has_structured: bool,
    pub text_bytes: Option<u64>,
    pub blob_bytes_b64: Option<u64>,
    /// Content blocks in the result.
    pub content_blocks: Option<u32>,
    /// The session listed an outputSchema for the tool before this result.
    pub schema_known: bool,
    /// structuredContent valid against that schema (null: not checked).
    pub schema_valid: Option<bool>,
    /// isError result that carries structuredContent (validating clients still check it).
    pub error_with_structured: bool,
    /// outputSchema declared, no structuredContent, not an error.
    pub missing_structured: bool,
    /// structuredContent beside an empty (or absent) content array.
    pub empty_content: bool,
    /// First text block and structuredContent disagree.
    pub text_disagrees: bool,
    pub first_item_key: Option<String>,
    pub last_item_key: Option<String>,
    pub cancelled: bool,
    pub cancel_reason: Option<String>,
    pub note: Option<String>,
}

/// One row of `sessions`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionRow {
    pub capture: String,
    pub session: String,
    pub transport: &'static str,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub protocol_version: Option<String>,
    pub first_ts_us: Option<i64>,
    pub last_ts_us: Option<i64>,
    pub frames: u64,
    pub bytes_c2s: u64,
    pub bytes_s2c: u64,
    pub max_frame_bytes: u64,
    pub ending: &'static str,
    pub last_error: Option<String>,
    /// Why an abrupt session most likely ended (null when clean).
    pub end_cause: Option<String>,
    /// Non-JSON lines the server wrote where the client reads messages.
    pub non_json_s2c: u64,
    pub non_json_s2c_bytes: u64,
}

/// One row of `tools` (every tool of every `tools/list` result).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolRow {
    pub capture: String,
    pub session: String,
    pub page: u64,
    pub tool: String,
    pub title: Option<String>,
    pub description_utf16: Option<u64>,
    pub input_root_type: String,
    pub input_dialect: Option<String>,
    pub output_dialect: Option<String>,
    pub has_output_schema: bool,
    pub schema_bytes: u64,
    pub list_payload_bytes: u64,
    /// `type: array` nodes without `items` in inputSchema, and the first one's JSON pointer.
    pub arrays_without_items: u64,
    pub first_array_without_items: Option<String>,
    pub tuple_items: bool,
    /// Tools in the whole list page.
    pub list_tools: u64,
}

/// One row of `events`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventRow {
    pub capture: String,
    pub session: Option<String>,
    pub ts_us: Option<i64>,
    pub offset: u64,
    pub level: String,
    pub server: Option<String>,
    pub kind: String,
    pub text: String,
}
