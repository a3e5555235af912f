//! Turns rows into the polars tables of DESIGN.md; the only place model touches polars.

use polars::prelude::*;

use super::capture::CaptureRows;
use super::rows::{CallRow, EventRow, FrameRow, SessionRow, ToolRow};

/// A named reader budget (`limits` table).
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderLimit {
    pub name: String,
    pub bytes: u64,
    pub warn_ratio: f64,
}

/// Default budgets, from reference/field-notes.md.
pub fn default_limits() -> Vec<ReaderLimit> {
    [
        ("ts_sdk_stdio", 10_485_760),
        ("codex_stdio", 8_388_608),
        ("go_scanner", 65_536),
        ("sdk_http_body", 4_194_304),
        ("inline_result", 1_048_576),
        ("truncation_cap_64k", 65_536),
    ]
    .into_iter()
    .map(|(name, bytes)| ReaderLimit { name: name.to_string(), bytes, warn_ratio: 0.9 })
    .collect()
}

/// All tables of a run.
pub struct Tables {
    pub frames: DataFrame,
    pub calls: DataFrame,
    pub sessions: DataFrame,
    pub tools: DataFrame,
    pub events: DataFrame,
    pub limits: DataFrame,
}

impl Tables {
    /// (name, table) pairs in a stable order.
    pub fn named(&self) -> [(&'static str, &DataFrame); 6] {
        [
            ("frames", &self.frames),
            ("calls", &self.calls),
            ("sessions", &self.sessions),
            ("tools", &self.tools),
            ("events", &self.events),
            ("limits", &self.limits),
        ]
    }
}

macro_rules! columns {
    ($rows:expr; $($field:ident),+ $(,)?) => {
        vec![$(Column::new(stringify!($field).into(), $rows.iter().map(|r| r.$field.clone()).collect::<Vec<_>>())),+]
    };
}

fn frames_df(rows: &[&FrameRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, transport, direction, seq, ts_us, offset, wire_bytes, kind,
        method, rpc_id, tool, is_error, error_code, error_message, content_types, text_bytes, blob_bytes_b64,
        blob_bytes_decoded, has_structured, structured_bytes, truncation_marker, note))
}

fn calls_df(rows: &[&CallRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, rpc_id, method, direction, tool, client_name, client_version,
        server_name, server_version, protocol_version, req_seq, resp_seq, req_ts_us, resp_ts_us, latency_ms, req_bytes,
        resp_bytes, outcome, is_error, error_code, error_message, validation, validation_detail, truncated,
        truncation_marker, cursor_in, cursor_out, items_returned, page_size_arg, has_structured, text_bytes,
        blob_bytes_b64, cancelled, cancel_reason, note))
}

fn sessions_df(rows: &[&SessionRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, transport, client_name, client_version, server_name,
        server_version, protocol_version, first_ts_us, last_ts_us, frames, bytes_c2s, bytes_s2c, max_frame_bytes, ending,
        last_error))
}

fn tools_df(rows: &[&ToolRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, page, tool, title, description_utf16, input_root_type,
        input_dialect, output_dialect, has_output_schema, schema_bytes, list_payload_bytes))
}

fn events_df(rows: &[&EventRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, ts_us, offset, level, server, kind, text))
}

fn limits_df(limits: &[ReaderLimit]) -> PolarsResult<DataFrame> {
    let rows: Vec<&ReaderLimit> = limits.iter().collect();
    DataFrame::new_infer_height(columns!(rows; name, bytes, warn_ratio))
}

/// Builds every table from the captures' rows.
pub fn build_tables(captures: &[&CaptureRows], limits: &[ReaderLimit]) -> PolarsResult<Tables> {
    let frames: Vec<&FrameRow> = captures.iter().flat_map(|c| &c.frames).collect();
    let calls: Vec<&CallRow> = captures.iter().flat_map(|c| &c.calls).collect();
    let sessions: Vec<&SessionRow> = captures.iter().flat_map(|c| &c.sessions).collect();
    let tools: Vec<&ToolRow> = captures.iter().flat_map(|c| &c.tools).collect();
    let events: Vec<&EventRow> = captures.iter().flat_map(|c| &c.events).collect();
    Ok(Tables {
        frames: frames_df(&frames)?,
        calls: calls_df(&calls)?,
        sessions: sessions_df(&sessions)?,
        tools: tools_df(&tools)?,
        events: events_df(&events)?,
        limits: limits_df(limits)?,
    })
}
