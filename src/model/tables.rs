//! Turns rows into the polars tables of DESIGN.md; the only place model touches polars.

use polars::prelude::*;

use super::capture::CaptureRows;
use super::pages::PageRow;
use super::rows::{CallRow, EventRow, FrameRow, SessionRow, ToolRow};

/// A named reader budget (`limits` table).
#[derive(Debug, Clone, PartialEq)]
pub struct ReaderLimit {
    pub name: String,
    pub bytes: u64,
    pub warn_ratio: f64,
    /// What the budget applies to: `stdio` frames (also host logs and transcripts of stdio
    /// sessions), `http_request` bodies, `result` (any tool result), `tools_list` payloads.
    pub scope: String,
    /// Checked by `near_limit_frames` (others are thresholds other rules use). `--limit`
    /// enables the limit it names.
    pub enabled: bool,
}

/// Default budgets, from reference/field-notes.md.
pub fn default_limits() -> Vec<ReaderLimit> {
    [
        ("ts_sdk_stdio", 10_485_760, "stdio", true),
        ("codex_stdio", 8_388_608, "stdio", true),
        ("go_scanner", 65_536, "stdio", false),
        ("sdk_http_body", 4_194_304, "http_request", true),
        ("inline_result", 1_048_576, "result", false),
        ("truncation_cap_64k", 65_536, "result", false),
        ("tools_list_payload", 204_800, "tools_list", true),
    ]
    .into_iter()
    .map(|(name, bytes, scope, enabled)| ReaderLimit { name: name.to_string(), bytes, warn_ratio: 0.9, scope: scope.to_string(), enabled })
    .collect()
}

/// Applies `--limit NAME=BYTES[:RATIO]`: overrides a default (and enables it) or adds a new
/// `stdio` limit.
pub fn apply_limit_override(limits: &mut Vec<ReaderLimit>, spec: &str) -> Result<(), String> {
    let (name, rest) = spec.split_once('=').ok_or_else(|| format!("--limit {spec}: expected NAME=BYTES[:RATIO]"))?;
    let (bytes, ratio) = match rest.split_once(':') {
        Some((b, r)) => (b, Some(r)),
        None => (rest, None),
    };
    let bytes: u64 = bytes.replace('_', "").parse().map_err(|_| format!("--limit {spec}: BYTES must be a whole number"))?;
    let ratio: Option<f64> = match ratio {
        Some(r) => Some(r.parse().ok().filter(|r: &f64| *r > 0.0 && *r <= 1.0).ok_or_else(|| format!("--limit {spec}: RATIO must be in (0, 1]"))?),
        None => None,
    };
    match limits.iter_mut().find(|l| l.name == name) {
        Some(l) => {
            l.bytes = bytes;
            l.enabled = true;
            if let Some(r) = ratio {
                l.warn_ratio = r;
            }
        }
        None => limits.push(ReaderLimit { name: name.to_string(), bytes, warn_ratio: ratio.unwrap_or(0.9), scope: "stdio".into(), enabled: true }),
    }
    Ok(())
}

/// All tables of a run.
pub struct Tables {
    pub frames: DataFrame,
    pub calls: DataFrame,
    pub sessions: DataFrame,
    pub tools: DataFrame,
    pub events: DataFrame,
    pub pages: DataFrame,
    pub limits: DataFrame,
}

impl Tables {
    /// (name, table) pairs in a stable order.
    pub fn named(&self) -> [(&'static str, &DataFrame); 7] {
        [
            ("frames", &self.frames),
            ("calls", &self.calls),
            ("sessions", &self.sessions),
            ("tools", &self.tools),
            ("events", &self.events),
            ("pages", &self.pages),
            ("limits", &self.limits),
        ]
    }
}

/// A row field as a column value, borrowing strings instead of cloning them.
trait ColumnValue<'a> {
    type Out;
    fn value(&'a self) -> Self::Out;
}

macro_rules! copy_value {
    ($($t:ty),+) => {$(
        impl<'a> ColumnValue<'a> for $t {
            type Out = $t;
            fn value(&'a self) -> $t {
                *self
            }
        }
    )+};
}
copy_value!(u64, i64, u32, f64, bool, Option<u64>, Option<i64>, Option<u32>, Option<f64>, Option<bool>);

impl<'a> ColumnValue<'a> for String {
    type Out = &'a str;
    fn value(&'a self) -> &'a str {
        self
    }
}

impl<'a> ColumnValue<'a> for &'static str {
    type Out = &'a str;
    fn value(&'a self) -> &'a str {
        self
    }
}

impl<'a> ColumnValue<'a> for Option<String> {
    type Out = Option<&'a str>;
    fn value(&'a self) -> Option<&'a str> {
        self.as_deref()
    }
}

impl<'a> ColumnValue<'a> for std::sync::Arc<str> {
    type Out = &'a str;
    fn value(&'a self) -> &'a str {
        self
    }
}

macro_rules! columns {
    ($rows:expr; $($field:ident),+ $(,)?) => {
        vec![$(Column::new(stringify!($field).into(), $rows.iter().map(|r| r.$field.value()).collect::<Vec<_>>())),+]
    };
}

/// The `frames` table of some rows (also used to chunk frames while a capture is read).
pub(crate) fn frames_df(rows: &[&FrameRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, transport, direction, seq, ts_us, offset, wire_bytes, kind,
        method, rpc_id, tool, is_error, error_code, error_message, content_types, text_bytes, blob_bytes_b64,
        blob_bytes_decoded, has_structured, structured_bytes, truncation_marker, note))
}

/// The `calls` table of some rows (also used to chunk calls while a capture is read).
pub(crate) fn calls_df(rows: &[&CallRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, rpc_id, method, direction, tool, client_name, client_version,
        server_name, server_version, protocol_version, req_seq, resp_seq, req_ts_us, resp_ts_us, latency_ms, req_bytes,
        resp_bytes, outcome, is_error, error_code, error_message, validation, validation_detail, truncated,
        truncation_marker, cursor_in, cursor_out, items_returned, page_size_arg, has_structured, text_bytes,
        blob_bytes_b64, content_blocks, schema_known, schema_valid, error_with_structured, missing_structured,
        empty_content, text_disagrees, first_item_key, last_item_key, cancelled, cancel_reason, note))
}

fn sessions_df(rows: &[&SessionRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, transport, client_name, client_version, server_name,
        server_version, protocol_version, first_ts_us, last_ts_us, frames, bytes_c2s, bytes_s2c, max_frame_bytes, ending,
        last_error, end_cause, non_json_s2c, non_json_s2c_bytes))
}

fn tools_df(rows: &[&ToolRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, page, tool, title, description_utf16, input_root_type,
        input_dialect, output_dialect, has_output_schema, schema_bytes, list_payload_bytes, arrays_without_items,
        first_array_without_items, tuple_items, list_tools))
}

fn events_df(rows: &[&EventRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, ts_us, offset, level, server, kind, text))
}

fn pages_df(rows: &[&PageRow]) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(columns!(rows; capture, session, chain, chain_id, page_no, rpc_id, req_seq, cursor_in,
        cursor_out, items_returned, page_size_arg, first_item_key, last_item_key, cursor_decoded, offset_in, offset_out,
        cursor_seen_before, cursor_issued_before, cursor_issued_in, followed, advance, repeated_items, skipped_items,
        page_size_changed, cursor_matches_last_item, answered, resp_bytes))
}

fn limits_df(limits: &[ReaderLimit]) -> PolarsResult<DataFrame> {
    let rows: Vec<&ReaderLimit> = limits.iter().collect();
    DataFrame::new_infer_height(columns!(rows; name, bytes, warn_ratio, scope, enabled))
}

/// Builds every table from the captures' rows, moving the bulky row data (frames, calls,
/// tools, pages) out of `captures` capture by capture so rows and columns of a run never
/// coexist in full; the small accounting (sessions, events, counts, diagnostics) stays.
pub fn build_tables(captures: &mut [CaptureRows], limits: &[ReaderLimit]) -> PolarsResult<Tables> {
    let mut frames = frames_df(&[])?;
    let mut calls = calls_df(&[])?;
    let mut tools = tools_df(&[])?;
    let mut pages = pages_df(&[])?;
    for c in captures.iter_mut() {
        for chunk in std::mem::take(&mut c.frame_chunks) {
            frames.vstack_mut_owned(chunk)?;
        }
        let tail = std::mem::take(&mut c.frames);
        frames.vstack_mut_owned(frames_df(&tail.iter().collect::<Vec<_>>())?)?;
        drop(tail);
        for chunk in std::mem::take(&mut c.call_chunks) {
            calls.vstack_mut_owned(chunk)?;
        }
        let rows = std::mem::take(&mut c.calls);
        calls.vstack_mut_owned(calls_df(&rows.iter().collect::<Vec<_>>())?)?;
        drop(rows);
        let rows = std::mem::take(&mut c.tools);
        tools.vstack_mut_owned(tools_df(&rows.iter().collect::<Vec<_>>())?)?;
        let rows = std::mem::take(&mut c.pages);
        pages.vstack_mut_owned(pages_df(&rows.iter().collect::<Vec<_>>())?)?;
    }
    let sessions: Vec<&SessionRow> = captures.iter().flat_map(|c| &c.sessions).collect();
    let events: Vec<&EventRow> = captures.iter().flat_map(|c| &c.events).collect();
    Ok(Tables {
        frames,
        calls,
        sessions: sessions_df(&sessions)?,
        tools,
        events: events_df(&events)?,
        pages,
        limits: limits_df(limits)?,
    })
}
