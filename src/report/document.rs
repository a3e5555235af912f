//! The report's read model: what `mcpsift report` shows, as plain structs. Gathering them is
//! in gather.rs, laying them out as blocks in outline.rs; renderers (Markdown, HTML, JSON)
//! only format. Facts come from model columns and rule findings; nothing here re-derives them.

use std::collections::BTreeMap;

use polars::prelude::PolarsError;
use serde::Serialize;

use crate::query::QueryError;
use crate::query::header::ExcerptSource;

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("reading the {table} table: {source}")]
    Table { table: &'static str, source: PolarsError },
    #[error("aggregating for the report: {0}")]
    Query(#[from] QueryError),
    #[error(transparent)]
    Schema(#[from] crate::model::schema::SchemaError),
}

/// Whether secrets in free text (error messages, details, log lines) are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Redaction {
    /// Authorization/Cookie headers, bearer tokens and key-like values replaced (the default).
    On,
    /// `--no-redact`: text as captured.
    Off,
}

/// Everything one report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `mcpsift 0.1.0`.
    pub generator: String,
    /// The paths as given on the command line.
    pub inputs: Vec<String>,
    pub redaction: Redaction,
    pub totals: Totals,
    pub captures: Vec<CaptureAccount>,
    pub skipped_files: SkippedFiles,
    pub sessions: Vec<crate::model::rows::SessionRow>,
    pub frame_sizes: FrameSizes,
    pub truncation: Vec<TruncationGroup>,
    /// tools/call latency per tool × client name × client version.
    pub latency: Vec<LatencyGroup>,
    /// One section per rule, in rule order.
    pub rules: Vec<RuleSection>,
    /// The story of each session with findings (the most severe first, at most
    /// [`crate::report::gather::MAX_TIMELINES`]), around its most severe finding.
    pub timelines: Vec<crate::report::timeline::Timeline>,
    /// Sessions with findings left without a timeline by that cap (`capture: session`).
    pub timelines_left_out: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub captures: usize,
    pub sessions: usize,
    pub frames: u64,
    pub calls: u64,
    pub tool_calls: u64,
    pub bytes_read: u64,
    pub findings: usize,
    pub error: usize,
    pub warn: usize,
    pub info: usize,
    /// Earliest and latest timestamp of any session (microseconds since the Unix epoch).
    pub first_ts_us: Option<i64>,
    pub last_ts_us: Option<i64>,
}

/// One input file of a capture.
#[derive(Debug, Clone, Serialize)]
pub struct FileLine {
    pub path: String,
    pub format: &'static str,
    /// Bytes read after decompression.
    pub bytes_read: u64,
    pub file_bytes: u64,
    pub gzip: bool,
    pub error: Option<String>,
}

/// Where the bytes of one capture went (the `--stats` accounting).
#[derive(Debug, Clone, Serialize)]
pub struct CaptureAccount {
    pub name: String,
    pub files: Vec<FileLine>,
    pub bytes_read: u64,
    pub frame_bytes: u64,
    pub frames: u64,
    pub frames_by_kind: BTreeMap<&'static str, u64>,
    pub framing_bytes: u64,
    pub skipped_bytes: BTreeMap<&'static str, u64>,
    /// Bytes read minus frames, framing and skips (0 when the accounting closes).
    pub unaccounted_bytes: i64,
    pub events: usize,
    /// Diagnostics by reason (bad lines, cut streams, unreadable regions).
    pub diagnostics: BTreeMap<&'static str, usize>,
}

/// Files that were neither captures nor logs (a README, a JSON report).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SkippedFiles {
    pub count: usize,
    pub bytes: u64,
    pub names: Vec<String>,
}


/// One bin of the frame-size histogram: frames with `lo_bytes <= wire_bytes < hi_bytes`.
#[derive(Debug, Clone, Serialize)]
pub struct SizeBin {
    pub lo_bytes: u64,
    pub hi_bytes: u64,
    pub c2s: u64,
    pub s2c: u64,
}

/// A row of the `limits` table.
#[derive(Debug, Clone, Serialize)]
pub struct LimitLine {
    pub name: String,
    pub bytes: u64,
    pub warn_ratio: f64,
    pub scope: String,
    pub enabled: bool,
}

/// Frame sizes (power-of-two bins) against the reader limits.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FrameSizes {
    pub frames: u64,
    pub largest_c2s: u64,
    pub largest_s2c: u64,
    /// Consecutive bins from the smallest frame to the largest frame or enabled limit.
    pub bins: Vec<SizeBin>,
    pub limits: Vec<LimitLine>,
}

/// Tool results per tool × client name × client version.
#[derive(Debug, Clone, Serialize)]
pub struct TruncationGroup {
    pub tool: String,
    pub client_name: String,
    pub client_version: String,
    pub calls: u64,
    pub truncated: u64,
    /// No response before the connection ended.
    pub lost: u64,
    pub cancelled: u64,
    pub max_resp_bytes: u64,
}

impl TruncationGroup {
    /// Results the model did not get whole, over calls.
    pub fn rate(&self) -> f64 {
        if self.calls == 0 { 0.0 } else { (self.truncated + self.lost + self.cancelled) as f64 / self.calls as f64 }
    }
    pub fn not_whole(&self) -> u64 {
        self.truncated + self.lost + self.cancelled
    }
}

/// tools/call latency of one tool × client name × client version, over every capture
/// (`queries/report/latency_groups.sql`): quantiles of the answered calls that were neither
/// cancelled nor timed out, and the timeouts with how long the requester waited.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyGroup {
    pub tool: String,
    pub client_name: String,
    pub client_version: String,
    pub calls: u64,
    /// Calls whose latency is known (answered, timestamps on both frames, not cancelled).
    pub timed: u64,
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Calls cancelled after a timeout ("Request timed out", -32001) or answered with -32001.
    pub timeouts: u64,
    /// Those of them with timestamps (the wait is known).
    pub timeouts_timed: u64,
    /// Shortest and longest wait before those timeouts (null without timestamps).
    pub timeout_min_ms: Option<f64>,
    pub timeout_max_ms: Option<f64>,
}

impl LatencyGroup {
    /// Groups with timeouts first, then by p95 (slowest first; unknown last), then by name.
    pub fn slowest_first(groups: &[LatencyGroup]) -> Vec<&LatencyGroup> {
        let mut v: Vec<&LatencyGroup> = groups.iter().collect();
        v.sort_by(|a, b| {
            b.timeouts
                .cmp(&a.timeouts)
                .then(b.p95_ms.unwrap_or(f64::NEG_INFINITY).total_cmp(&a.p95_ms.unwrap_or(f64::NEG_INFINITY)))
                .then_with(|| (&a.tool, &a.client_name, &a.client_version).cmp(&(&b.tool, &b.client_name, &b.client_version)))
        });
        v
    }

    /// `1 after 1,502.9 ms`, `2 after 1.2 s – 1.5 s`, `2 (1 after 1,502.0 ms)` when only some
    /// have timestamps, `1 (wait unknown)` without; empty without timeouts.
    pub fn timeouts_label(&self) -> String {
        use super::format::ms_label;
        let wait = match (self.timeout_min_ms, self.timeout_max_ms) {
            (Some(lo), Some(hi)) if ms_label(Some(lo)) == ms_label(Some(hi)) => format!("after {}", ms_label(Some(hi))),
            (Some(lo), Some(hi)) => format!("after {} – {}", ms_label(Some(lo)), ms_label(Some(hi))),
            _ => String::new(),
        };
        match (self.timeouts, self.timeouts_timed) {
            (0, _) => String::new(),
            (_, 0) => format!("{} (wait unknown)", self.timeouts),
            (n, t) if n == t => format!("{n} {wait}"),
            (n, t) => format!("{n} ({t} {wait})"),
        }
    }
}

/// A finding as the report shows it: its cause tokens and its detail.
#[derive(Debug, Clone, Serialize)]
pub struct FindingLine {
    /// The finding's stable id (as `check` prints it).
    pub id: String,
    pub severity: String,
    pub capture: String,
    pub session: Option<String>,
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub client: Option<String>,
    pub bytes: Option<i64>,
    /// The finding's cause tokens, primary first (e.g. `predicted_reject`, `not_followed`).
    pub causes: Vec<String>,
    pub detail: String,
    /// A short excerpt of what the peer said (error message, last error), redacted.
    pub excerpt: Option<String>,
}

/// Findings of one cause (the primary cause token; `""` for findings without one).
#[derive(Debug, Clone, Serialize)]
pub struct CauseGroup {
    pub cause: String,
    pub findings: Vec<FindingLine>,
}

/// One rule's findings and what to change.
#[derive(Debug, Clone, Serialize)]
pub struct RuleSection {
    pub rule: String,
    /// The rule file's title (its name when the header has none).
    pub title: String,
    pub advice: Option<String>,
    pub error: usize,
    pub warn: usize,
    pub info: usize,
    pub groups: Vec<CauseGroup>,
    /// How the report lays the rule out, from its header.
    #[serde(skip)]
    pub layout: RuleLayout,
}

/// The rule header's words and hints the outline needs.
#[derive(Debug, Clone, Default)]
pub struct RuleLayout {
    /// Cause token and sentence.
    pub causes: Vec<(String, String)>,
    /// The findings tables show the session.
    pub with_session: bool,
    pub excerpt: ExcerptSource,
    /// The built-in section the rule is shown in (`frame_sizes`, `truncation`), if not its own.
    pub section: Option<String>,
}

impl RuleSection {
    pub fn total(&self) -> usize {
        self.error + self.warn + self.info
    }

    /// The header's sentence for a cause token.
    pub fn cause_sentence(&self, cause: &str) -> Option<&str> {
        self.layout.causes.iter().find(|(t, _)| t == cause).map(|(_, s)| s.as_str())
    }
}

/// Longest excerpt shown, in characters.
pub const EXCERPT_CHARS: usize = 160;
