//! The report's data model: what `mcpsift report` shows, gathered once from the loaded
//! captures, the tables and the findings; renderers (Markdown, HTML, JSON) only format it.
//! Facts come from model columns and rule findings; nothing here re-derives them.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

use super::findings::Finding;
use super::redact::redact;
use super::stats::unaccounted;
use crate::ingest::detect::Format;
use crate::load::Loaded;
use crate::query::header::ExcerptSource;
use crate::query::rules::{Rule, Severity};
use crate::query::{QueryError, run_sql};

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("reading the {table} table: {source}")]
    Table { table: &'static str, source: PolarsError },
    #[error("aggregating for the report: {0}")]
    Query(#[from] QueryError),
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
    pub sessions: Vec<SessionLine>,
    pub frame_sizes: FrameSizes,
    pub truncation: Vec<TruncationGroup>,
    /// One section per rule, in rule order.
    pub rules: Vec<RuleSection>,
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

/// One row of `sessions`.
#[derive(Debug, Clone, Serialize)]
pub struct SessionLine {
    pub capture: String,
    pub session: String,
    pub transport: String,
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
    pub ending: String,
    pub end_cause: Option<String>,
    /// Redacted unless `--no-redact`.
    pub last_error: Option<String>,
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

/// A finding as the report shows it: the cause tokens split off the detail.
#[derive(Debug, Clone, Serialize)]
pub struct FindingLine {
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

fn column_err(table: &'static str) -> impl Fn(PolarsError) -> DocumentError {
    move |source| DocumentError::Table { table, source }
}

fn strings(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<String>>, DocumentError> {
    let err = column_err(table);
    let c = df.column(name).map_err(&err)?.cast(&DataType::String).map_err(&err)?;
    Ok(c.str().map_err(&err)?.iter().map(|v| v.map(str::to_string)).collect())
}

fn ints(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<i64>>, DocumentError> {
    let err = column_err(table);
    let c = df.column(name).map_err(&err)?.cast(&DataType::Int64).map_err(&err)?;
    Ok(c.i64().map_err(&err)?.iter().collect())
}

fn floats(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<f64>>, DocumentError> {
    let err = column_err(table);
    let c = df.column(name).map_err(&err)?.cast(&DataType::Float64).map_err(&err)?;
    Ok(c.f64().map_err(&err)?.iter().collect())
}

fn bools(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<bool>>, DocumentError> {
    let err = column_err(table);
    let c = df.column(name).map_err(&err)?.cast(&DataType::Boolean).map_err(&err)?;
    Ok(c.bool().map_err(&err)?.iter().collect())
}

fn nonneg(v: Option<i64>) -> u64 {
    v.unwrap_or(0).max(0) as u64
}

/// Shortens `text` to [`EXCERPT_CHARS`] on one line, redacting first when asked.
pub fn excerpt(text: &str, redaction: Redaction) -> String {
    let text = if redaction == Redaction::On { redact(text) } else { text.to_string() };
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= EXCERPT_CHARS {
        one_line
    } else {
        let cut: String = one_line.chars().take(EXCERPT_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

impl Report {
    /// Gathers the report from a run: `rules` in reporting order, `findings` as read by
    /// [`super::findings::findings_from`] (already redacted when `redaction` is on).
    pub fn gather(inputs: &[String], loaded: &Loaded, rules: &[Rule], findings: &[Finding], redaction: Redaction) -> Result<Report, DocumentError> {
        let (captures, skipped_files) = captures(loaded);
        let sessions = sessions(&loaded.tables.sessions, redaction)?;
        let frame_sizes = frame_sizes(&loaded.tables.frames, &loaded.tables.limits)?;
        let truncation = truncation(loaded)?;
        let rules = rule_sections(loaded, rules, findings, redaction)?;
        let calls = loaded.tables.calls.height() as u64;
        let tool_calls = strings(&loaded.tables.calls, "calls", "method")?.iter().filter(|m| m.as_deref() == Some("tools/call")).count() as u64;
        let sev = |s: Severity| findings.iter().filter(|f| f.severity == s.as_str()).count();
        let totals = Totals {
            captures: captures.len(),
            sessions: sessions.len(),
            frames: captures.iter().map(|c| c.frames).sum(),
            calls,
            tool_calls,
            bytes_read: captures.iter().map(|c| c.bytes_read).sum(),
            findings: findings.len(),
            error: sev(Severity::Error),
            warn: sev(Severity::Warn),
            info: sev(Severity::Info),
            first_ts_us: sessions.iter().filter_map(|s| s.first_ts_us).min(),
            last_ts_us: sessions.iter().filter_map(|s| s.last_ts_us).max(),
        };
        Ok(Report {
            generator: format!("mcpsift {}", env!("CARGO_PKG_VERSION")),
            inputs: inputs.to_vec(),
            redaction,
            totals,
            captures,
            skipped_files,
            sessions,
            frame_sizes,
            truncation,
            rules,
        })
    }

    pub fn rule(&self, name: &str) -> Option<&RuleSection> {
        self.rules.iter().find(|r| r.rule == name)
    }
}

fn captures(loaded: &Loaded) -> (Vec<CaptureAccount>, SkippedFiles) {
    let mut out = Vec::new();
    let mut skipped = SkippedFiles::default();
    for c in &loaded.captures {
        let rows = &c.rows;
        let not_a_capture = rows.frames_by_kind.is_empty()
            && rows.events.is_empty()
            && c.files.iter().all(|f| matches!(f.format, Format::Unrecognized | Format::Empty));
        if not_a_capture {
            skipped.count += 1;
            skipped.bytes += c.files.iter().map(|f| f.bytes_read).sum::<u64>();
            skipped.names.push(c.name.clone());
            continue;
        }
        let mut diagnostics = BTreeMap::new();
        for d in &rows.diagnostics {
            *diagnostics.entry(d.reason).or_insert(0usize) += 1;
        }
        out.push(CaptureAccount {
            name: c.name.clone(),
            files: c
                .files
                .iter()
                .map(|f| FileLine {
                    path: f.path.clone(),
                    format: f.format.as_str(),
                    bytes_read: f.bytes_read,
                    file_bytes: f.file_bytes,
                    gzip: f.gzip,
                    error: f.error.clone(),
                })
                .collect(),
            bytes_read: c.files.iter().map(|f| f.bytes_read).sum(),
            frame_bytes: rows.frame_bytes,
            frames: rows.frames_by_kind.values().sum(),
            frames_by_kind: rows.frames_by_kind.clone(),
            framing_bytes: rows.framing.values().sum(),
            skipped_bytes: rows.skipped_bytes.clone(),
            unaccounted_bytes: i64::try_from(unaccounted(&c.files, rows)).unwrap_or(i64::MAX),
            events: rows.events.len(),
            diagnostics,
        });
    }
    (out, skipped)
}

fn sessions(df: &DataFrame, redaction: Redaction) -> Result<Vec<SessionLine>, DocumentError> {
    const T: &str = "sessions";
    let s = |n| strings(df, T, n);
    let i = |n| ints(df, T, n);
    let (capture, session, transport, client_name, client_version) = (s("capture")?, s("session")?, s("transport")?, s("client_name")?, s("client_version")?);
    let (server_name, server_version, protocol_version, ending, end_cause, last_error) =
        (s("server_name")?, s("server_version")?, s("protocol_version")?, s("ending")?, s("end_cause")?, s("last_error")?);
    let (first, last, frames, c2s, s2c, max) = (i("first_ts_us")?, i("last_ts_us")?, i("frames")?, i("bytes_c2s")?, i("bytes_s2c")?, i("max_frame_bytes")?);
    Ok((0..df.height())
        .map(|k| SessionLine {
            capture: capture[k].clone().unwrap_or_default(),
            session: session[k].clone().unwrap_or_default(),
            transport: transport[k].clone().unwrap_or_default(),
            client_name: client_name[k].clone(),
            client_version: client_version[k].clone(),
            server_name: server_name[k].clone(),
            server_version: server_version[k].clone(),
            protocol_version: protocol_version[k].clone(),
            first_ts_us: first[k],
            last_ts_us: last[k],
            frames: nonneg(frames[k]),
            bytes_c2s: nonneg(c2s[k]),
            bytes_s2c: nonneg(s2c[k]),
            max_frame_bytes: nonneg(max[k]),
            ending: ending[k].clone().unwrap_or_default(),
            end_cause: end_cause[k].clone(),
            last_error: last_error[k].as_deref().map(|e| excerpt(e, redaction)),
        })
        .collect())
}

/// Power-of-two bin of a size: 0 and 1 byte are bin 0, 2..4 bin 1, ...
fn bin_of(bytes: u64) -> u32 {
    63 - bytes.max(1).leading_zeros()
}

fn frame_sizes(frames: &DataFrame, limits: &DataFrame) -> Result<FrameSizes, DocumentError> {
    let wire = ints(frames, "frames", "wire_bytes")?;
    let dir = strings(frames, "frames", "direction")?;
    let (name, bytes, ratio, scope, enabled) = (
        strings(limits, "limits", "name")?,
        ints(limits, "limits", "bytes")?,
        floats(limits, "limits", "warn_ratio")?,
        strings(limits, "limits", "scope")?,
        bools(limits, "limits", "enabled")?,
    );
    let limits: Vec<LimitLine> = (0..limits.height())
        .map(|k| LimitLine {
            name: name[k].clone().unwrap_or_default(),
            bytes: nonneg(bytes[k]),
            warn_ratio: ratio[k].unwrap_or(0.9),
            scope: scope[k].clone().unwrap_or_default(),
            enabled: enabled[k].unwrap_or(false),
        })
        .collect();
    let mut out = FrameSizes { limits, ..FrameSizes::default() };
    let mut counts: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for (w, d) in wire.iter().zip(&dir) {
        let w = nonneg(*w);
        let entry = counts.entry(bin_of(w)).or_default();
        if d.as_deref() == Some("c2s") {
            entry.0 += 1;
            out.largest_c2s = out.largest_c2s.max(w);
        } else {
            entry.1 += 1;
            out.largest_s2c = out.largest_s2c.max(w);
        }
        out.frames += 1;
    }
    let limit_bins = out.limits.iter().filter(|l| l.enabled && l.bytes > 0).map(|l| bin_of(l.bytes));
    let all: Vec<u32> = counts.keys().copied().chain(limit_bins).collect();
    if let (Some(lo), Some(hi)) = (all.iter().min(), all.iter().max()) {
        out.bins = (*lo..=*hi)
            .map(|k| {
                let (c2s, s2c) = counts.get(&k).copied().unwrap_or_default();
                SizeBin { lo_bytes: if k == 0 { 0 } else { 1u64 << k }, hi_bytes: 1u64 << (k + 1), c2s, s2c }
            })
            .collect();
    }
    Ok(out)
}

/// Tool results per tool × client: an aggregate over `calls` (the rule lists only groups
/// with something lost; the report shows every group for scale).
const TRUNCATION_SQL: &str = "SELECT COALESCE(tool, '?') AS tool, COALESCE(client_name, '?') AS client_name, \
    COALESCE(client_version, '?') AS client_version, COUNT(*) AS calls, \
    SUM(CASE WHEN truncated THEN 1 ELSE 0 END) AS truncated, \
    SUM(CASE WHEN outcome = 'no_response' THEN 1 ELSE 0 END) AS lost, \
    SUM(CASE WHEN outcome = 'cancelled' THEN 1 ELSE 0 END) AS cancelled, \
    MAX(COALESCE(resp_bytes, 0)) AS max_resp_bytes \
    FROM calls WHERE method = 'tools/call' GROUP BY COALESCE(tool, '?'), COALESCE(client_name, '?'), COALESCE(client_version, '?')";

fn truncation(loaded: &Loaded) -> Result<Vec<TruncationGroup>, DocumentError> {
    if loaded.tables.calls.height() == 0 {
        return Ok(Vec::new());
    }
    let df = run_sql(&loaded.tables, TRUNCATION_SQL)?;
    const T: &str = "calls";
    let (tool, client, version) = (strings(&df, T, "tool")?, strings(&df, T, "client_name")?, strings(&df, T, "client_version")?);
    let (calls, truncated, lost, cancelled, max) =
        (ints(&df, T, "calls")?, ints(&df, T, "truncated")?, ints(&df, T, "lost")?, ints(&df, T, "cancelled")?, ints(&df, T, "max_resp_bytes")?);
    let mut groups: Vec<TruncationGroup> = (0..df.height())
        .map(|k| TruncationGroup {
            tool: tool[k].clone().unwrap_or_default(),
            client_name: client[k].clone().unwrap_or_default(),
            client_version: version[k].clone().unwrap_or_default(),
            calls: nonneg(calls[k]),
            truncated: nonneg(truncated[k]),
            lost: nonneg(lost[k]),
            cancelled: nonneg(cancelled[k]),
            max_resp_bytes: nonneg(max[k]),
        })
        .collect();
    groups.sort_by(|a, b| {
        b.rate()
            .total_cmp(&a.rate())
            .then(b.not_whole().cmp(&a.not_whole()))
            .then_with(|| (&a.tool, &a.client_name, &a.client_version).cmp(&(&b.tool, &b.client_name, &b.client_version)))
    });
    Ok(groups)
}

type CallKey = (String, String, String);

/// Error messages of calls, by (capture, session, rpc_id), for excerpts.
fn call_messages(loaded: &Loaded) -> Result<BTreeMap<CallKey, String>, DocumentError> {
    let df = &loaded.tables.calls;
    let (capture, session, rpc_id, message) = (strings(df, "calls", "capture")?, strings(df, "calls", "session")?, strings(df, "calls", "rpc_id")?, strings(df, "calls", "error_message")?);
    let mut out = BTreeMap::new();
    for k in 0..df.height() {
        if let (Some(c), Some(s), Some(r), Some(m)) = (&capture[k], &session[k], &rpc_id[k], &message[k]) {
            out.insert((c.clone(), s.clone(), r.clone()), m.clone());
        }
    }
    Ok(out)
}

fn rule_sections(loaded: &Loaded, rules: &[Rule], findings: &[Finding], redaction: Redaction) -> Result<Vec<RuleSection>, DocumentError> {
    let messages = call_messages(loaded)?;
    let sessions = &loaded.tables.sessions;
    let (s_capture, s_session, s_error) = (strings(sessions, "sessions", "capture")?, strings(sessions, "sessions", "session")?, strings(sessions, "sessions", "last_error")?);
    let last_error = |capture: &str, session: &str| -> Option<String> {
        (0..sessions.height())
            .find(|&k| s_capture[k].as_deref() == Some(capture) && s_session[k].as_deref() == Some(session))
            .and_then(|k| s_error[k].clone())
    };
    let mut out = Vec::new();
    for rule in rules {
        let mine: Vec<&Finding> = findings.iter().filter(|f| f.rule == rule.name).collect();
        let mut groups: Vec<CauseGroup> = Vec::new();
        for f in &mine {
            let causes: Vec<String> = f.causes().into_iter().map(str::to_string).collect();
            // Details built from `part; ` pieces end in a separator.
            let detail = f.detail.trim_end().trim_end_matches(';').to_string();
            let raw_excerpt = match (rule.header.excerpt, &f.session, &f.rpc_id) {
                (ExcerptSource::SessionLastError, Some(s), _) => last_error(&f.capture, s),
                (ExcerptSource::CallError, Some(s), Some(r)) => messages.get(&(f.capture.clone(), s.clone(), r.clone())).cloned(),
                _ => None,
            };
            // The excerpt is kept only when it adds something the detail does not say.
            let excerpt = raw_excerpt.map(|e| excerpt(&e, redaction)).filter(|e| !e.is_empty() && !detail.contains(e.trim_end_matches('…')));
            let line = FindingLine {
                severity: f.severity.clone(),
                capture: f.capture.clone(),
                session: f.session.clone(),
                rpc_id: f.rpc_id.clone(),
                tool: f.tool.clone(),
                client: f.client.clone(),
                bytes: f.bytes,
                causes: causes.clone(),
                detail,
                excerpt,
            };
            let cause = causes.first().cloned().unwrap_or_default();
            match groups.iter_mut().find(|g| g.cause == cause) {
                Some(g) => g.findings.push(line),
                None => groups.push(CauseGroup { cause, findings: vec![line] }),
            }
        }
        let sev = |s: Severity| mine.iter().filter(|f| f.severity == s.as_str()).count();
        let layout = RuleLayout {
            causes: rule.header.causes.clone(),
            with_session: rule.header.columns.iter().any(|c| c == "session"),
            excerpt: rule.header.excerpt,
            section: rule.header.section.clone(),
        };
        out.push(RuleSection {
            rule: rule.name.clone(),
            title: rule.title().to_string(),
            advice: rule.advice().map(str::to_string),
            error: sev(Severity::Error),
            warn: sev(Severity::Warn),
            info: sev(Severity::Info),
            groups,
            layout,
        });
    }
    Ok(out)
}

/// `10,485,760 bytes (10.0 MiB)`; below 1 KiB only the bytes.
pub fn bytes_label(n: u64) -> String {
    let exact = super::stats::thousands(n);
    if n < 1024 { format!("{exact} B") } else { format!("{exact} B ({})", short_bytes(n)) }
}

/// `64 KiB`, `9.5 MiB`, `512 B`: binary units, at most one decimal.
pub fn short_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || (v - v.round()).abs() < 0.05 { format!("{} {}", v.round() as u64, UNITS[u]) } else { format!("{v:.1} {}", UNITS[u]) }
}

/// Microseconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc(ts_us: i64) -> String {
    let secs = ts_us.div_euclid(1_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A duration in microseconds as `1.234 s`, `12 min 3 s`.
pub fn duration(us: i64) -> String {
    let us = us.max(0);
    if us < 60_000_000 { format!("{:.3} s", us as f64 / 1e6) } else { format!("{} min {} s", us / 60_000_000, us % 60_000_000 / 1_000_000) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_read_well() {
        assert_eq!(short_bytes(10_485_760), "10 MiB");
        assert_eq!(short_bytes(9_961_474), "9.5 MiB");
        assert_eq!(short_bytes(512), "512 B");
        assert_eq!(bytes_label(65_536), "65,536 B (64 KiB)");
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_209_929_864_000), "2026-12-02 11:12:09 UTC");
        assert_eq!(bin_of(0), 0);
        assert_eq!(bin_of(1024), 10);
        assert_eq!(bin_of(1023), 9);
    }

    #[test]
    fn excerpts_are_short_and_redacted() {
        let e = excerpt("Authorization: Bearer abc\nnext line", Redaction::On);
        assert!(!e.contains("abc"), "{e}");
        assert_eq!(excerpt(&"x".repeat(500), Redaction::Off).chars().count(), EXCERPT_CHARS);
    }
}

/// A piece of inline text in the outline.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    Text(String),
    /// An identifier: tool, capture, cause token.
    Code(String),
    Strong(String),
    /// A link to a section of the report.
    Anchor { text: String, id: String },
    /// A share in [0, 1], drawn as a small bar in Markdown.
    Meter(f64),
}

/// A table cell: spans, right-aligned when its column is numeric.
pub type Cell = Vec<Span>;

/// One block of the report outline; the Markdown and HTML renderers walk the same outline.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading { level: u8, id: String, text: String },
    Para(Vec<Span>),
    Table { header: Vec<&'static str>, numeric: Vec<bool>, rows: Vec<Vec<Cell>>, more: usize },
    /// The "what to change" line of a finding type.
    Advice(String),
    Chart(ChartKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    FrameSizes,
    Truncation,
}

/// Rows shown per findings table (the JSON report lists all).
pub const MAX_ROWS: usize = 50;

fn t(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}
fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}
fn num(n: u64) -> Cell {
    vec![t(super::stats::thousands(n))]
}
fn opt_code(s: &Option<String>) -> Cell {
    s.as_ref().map_or_else(|| vec![t("-")], |s| vec![code(s.clone())])
}
fn name_version(name: &Option<String>, version: &Option<String>) -> String {
    format!("{} {}", name.as_deref().unwrap_or("?"), version.as_deref().unwrap_or("?"))
}

/// Section ids from a title (HTML ids and GitHub's heading anchors agree on these).
pub fn section_id(title: &str) -> String {
    title.to_lowercase().replace(['`', ','], "").split_whitespace().collect::<Vec<_>>().join("-")
}

impl Report {
    /// The report as a sequence of blocks.
    pub fn outline(&self) -> Vec<Block> {
        let mut b = Vec::new();
        self.summary(&mut b);
        self.inputs_section(&mut b);
        self.sessions_section(&mut b);
        self.frame_sizes_section(&mut b);
        self.truncation_section(&mut b);
        for r in self.rules.iter().filter(|r| r.layout.section.is_none()) {
            self.rule_section(&mut b, r);
        }
        b
    }

    fn summary(&self, b: &mut Vec<Block>) {
        let tt = &self.totals;
        let inputs = self.inputs.iter().map(|p| code(p.clone())).fold(Vec::new(), |mut v, s| {
            if !v.is_empty() {
                v.push(t(", "));
            }
            v.push(s);
            v
        });
        let mut p = vec![t(format!("Generated by {} from ", self.generator))];
        p.extend(inputs);
        p.push(t(". "));
        match self.redaction {
            Redaction::On => p.extend([
                t("Secrets are redacted (Authorization and Cookie headers, bearer tokens, api_key, token, password and secret values); "),
                code("--no-redact"),
                t(" shows them."),
            ]),
            Redaction::Off => p.extend([t("Redaction is off ("), code("--no-redact"), t("): excerpts are shown as captured.")]),
        }
        b.push(Block::Para(p));
        if let (Some(first), Some(last)) = (tt.first_ts_us, tt.last_ts_us) {
            b.push(Block::Para(vec![t(format!("Traffic from {} to {} ({}).", utc(first), utc(last), duration(last - first)))]));
        }
        b.push(Block::Heading { level: 2, id: "summary".into(), text: "Summary".into() });
        let mut findings = vec![t(format!("{}: ", tt.findings))];
        findings.push(Span::Strong(format!("{} error", tt.error)));
        findings.push(t(format!(", {} warn, {} info", tt.warn, tt.info)));
        b.push(Block::Table {
            header: vec!["", "value"],
            numeric: vec![false, true],
            rows: vec![
                vec![vec![t("captures")], num(tt.captures as u64)],
                vec![vec![t("sessions")], num(tt.sessions as u64)],
                vec![vec![t("frames")], num(tt.frames)],
                vec![vec![t("requests (tools/call)")], vec![t(format!("{} ({})", super::stats::thousands(tt.calls), super::stats::thousands(tt.tool_calls)))]],
                vec![vec![t("bytes read")], vec![t(bytes_label(tt.bytes_read))]],
                vec![vec![t("findings")], findings],
            ],
            more: 0,
        });
        let rows = self
            .rules
            .iter()
            .map(|r| {
                let id = match r.layout.section.as_deref() {
                    Some(FRAME_SIZES) => FRAME_SIZES_ID.to_string(),
                    Some(TRUNCATION) => TRUNCATION_ID.to_string(),
                    _ => section_id(&r.title),
                };
                vec![
                    vec![Span::Anchor { text: r.title.clone(), id }],
                    num(r.error as u64),
                    num(r.warn as u64),
                    num(r.info as u64),
                    vec![t(r.advice.clone().unwrap_or_default())],
                ]
            })
            .collect();
        b.push(Block::Table { header: vec!["finding type", "error", "warn", "info", "what to change"], numeric: vec![false, true, true, true, false], rows, more: 0 });
    }

    fn inputs_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: "inputs-and-byte-accounting".into(), text: "Inputs and byte accounting".into() });
        b.push(Block::Para(vec![t(
            "Every byte read is in a frame, in framing (line terminators, envelopes, log prefixes, HTTP heads), or skipped with a reason. Sizes are bytes as on the wire, after decompression.",
        )]));
        let rows = self
            .captures
            .iter()
            .map(|c| {
                let formats: Vec<&str> = c.files.iter().map(|f| f.format).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
                let skipped: u64 = c.skipped_bytes.values().sum();
                let mut skip_cell = num(skipped);
                if skipped > 0 {
                    let reasons: Vec<String> = c.skipped_bytes.iter().map(|(k, v)| format!("{k} {}", super::stats::thousands(*v))).collect();
                    skip_cell.push(t(format!(" ({})", reasons.join(", "))));
                }
                let diags: Vec<String> = c.diagnostics.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
                vec![
                    vec![code(c.name.clone())],
                    vec![t(formats.join(", "))],
                    num(c.bytes_read),
                    num(c.frame_bytes),
                    num(c.frames),
                    num(c.framing_bytes),
                    skip_cell,
                    vec![t(c.unaccounted_bytes.to_string())],
                    vec![t(if diags.is_empty() { "-".to_string() } else { diags.join(", ") })],
                ]
            })
            .collect();
        b.push(Block::Table {
            header: vec!["capture", "format", "bytes read", "in frames", "frames", "framing", "skipped", "unaccounted", "diagnostics"],
            numeric: vec![false, false, true, true, true, true, true, true, false],
            rows,
            more: 0,
        });
        if self.skipped_files.count > 0 {
            b.push(Block::Para(vec![t(format!(
                "Skipped {} file(s) that are not captures or logs: {}.",
                self.skipped_files.count,
                bytes_label(self.skipped_files.bytes)
            ))]));
        }
    }

    fn sessions_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: "sessions".into(), text: "Sessions".into() });
        if self.sessions.is_empty() {
            b.push(Block::Para(vec![t("No MCP sessions in the inputs.")]));
            return;
        }
        let rows = self
            .sessions
            .iter()
            .map(|s| {
                let mut ending = vec![if s.ending == "abrupt" { Span::Strong(s.ending.clone()) } else { t(s.ending.clone()) }];
                if let Some(cause) = &s.end_cause {
                    ending.push(t(format!(": {cause}")));
                }
                let span = match (s.first_ts_us, s.last_ts_us) {
                    (Some(a), Some(z)) => format!("{} ({})", utc(a), duration(z - a)),
                    _ => "-".into(),
                };
                vec![
                    vec![code(s.capture.clone())],
                    vec![code(s.session.clone())],
                    vec![t(s.transport.clone())],
                    vec![t(name_version(&s.client_name, &s.client_version))],
                    vec![t(name_version(&s.server_name, &s.server_version))],
                    vec![t(s.protocol_version.clone().unwrap_or_else(|| "?".into()))],
                    vec![t(span)],
                    num(s.frames),
                    num(s.bytes_c2s),
                    num(s.bytes_s2c),
                    num(s.max_frame_bytes),
                    ending,
                ]
            })
            .collect();
        b.push(Block::Table {
            header: vec!["capture", "session", "transport", "client", "server", "protocol", "started (duration)", "frames", "bytes c2s", "bytes s2c", "largest frame", "ending"],
            numeric: vec![false, false, false, false, false, false, false, true, true, true, true, false],
            rows,
            more: 0,
        });
    }

    fn frame_sizes_section(&self, b: &mut Vec<Block>) {
        let fs = &self.frame_sizes;
        b.push(Block::Heading { level: 2, id: FRAME_SIZES_ID.into(), text: "Frame sizes against reader limits".into() });
        b.push(Block::Para(vec![t(format!(
            "{} frames; largest client→server {}, largest server→client {}. Bins are powers of two; each enabled reader limit is a line.",
            super::stats::thousands(fs.frames),
            bytes_label(fs.largest_c2s),
            bytes_label(fs.largest_s2c)
        ))]));
        b.push(Block::Chart(ChartKind::FrameSizes));
        let rows = fs
            .limits
            .iter()
            .map(|l| {
                vec![
                    vec![code(l.name.clone())],
                    vec![t(bytes_label(l.bytes))],
                    vec![t(format!("{:.0}%", l.warn_ratio * 100.0))],
                    vec![t(l.scope.clone())],
                    vec![t(if l.enabled { "yes" } else { "no" })],
                ]
            })
            .collect();
        b.push(Block::Table { header: vec!["limit", "bytes", "warn at", "applies to", "checked"], numeric: vec![false, true, true, false, false], rows, more: 0 });
        for r in self.in_section(FRAME_SIZES) {
            self.findings_blocks(b, r, 3);
        }
    }

    fn truncation_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: TRUNCATION_ID.into(), text: "Truncation rates by tool and client version".into() });
        if self.truncation.is_empty() {
            b.push(Block::Para(vec![t("No tool calls in the inputs.")]));
            return;
        }
        let (bad, good): (Vec<&TruncationGroup>, Vec<&TruncationGroup>) = self.truncation.iter().partition(|g| g.not_whole() > 0);
        if bad.is_empty() {
            b.push(Block::Para(vec![t(format!("Every one of {} tool result(s) arrived whole.", good.iter().map(|g| g.calls).sum::<u64>()))]));
        } else {
            b.push(Block::Para(vec![t("Results the model did not get whole: truncated by a marker, lost (no response before the connection ended) or cancelled by the client.")]));
            b.push(Block::Chart(ChartKind::Truncation));
            let rows = bad
                .iter()
                .map(|g| {
                    vec![
                        vec![code(g.tool.clone())],
                        vec![t(g.client_name.clone())],
                        vec![t(g.client_version.clone())],
                        num(g.calls),
                        num(g.truncated),
                        num(g.lost),
                        num(g.cancelled),
                        vec![Span::Meter(g.rate())],
                        vec![t(bytes_label(g.max_resp_bytes))],
                    ]
                })
                .collect();
            b.push(Block::Table {
                header: vec!["tool", "client", "version", "calls", "truncated", "lost", "cancelled", "not whole", "largest result"],
                numeric: vec![false, false, false, true, true, true, true, false, true],
                rows,
                more: 0,
            });
            if !good.is_empty() {
                b.push(Block::Para(vec![t(format!(
                    "{} other tool × client group(s): all {} result(s) arrived whole.",
                    good.len(),
                    good.iter().map(|g| g.calls).sum::<u64>()
                ))]));
            }
        }
        for advice in self.in_section(TRUNCATION).filter_map(|r| r.advice.clone()) {
            b.push(Block::Advice(advice));
        }
    }

    fn rule_section(&self, b: &mut Vec<Block>, r: &RuleSection) {
        b.push(Block::Heading { level: 2, id: section_id(&r.title), text: r.title.clone() });
        self.findings_blocks(b, r, 3);
    }

    /// Findings of one rule: counts, then per cause a table (or one table without causes), then advice.
    fn findings_blocks(&self, b: &mut Vec<Block>, r: &RuleSection, level: u8) {
        if r.total() == 0 {
            b.push(Block::Para(vec![t("No findings from "), code(r.rule.clone()), t(".")]));
            return;
        }
        b.push(Block::Para(vec![
            t(format!("{} finding(s) from ", r.total())),
            code(r.rule.clone()),
            t(": "),
            Span::Strong(format!("{} error", r.error)),
            t(format!(", {} warn, {} info.", r.warn, r.info)),
        ]));
        let by_cause = r.groups.iter().any(|g| !g.cause.is_empty());
        for g in &r.groups {
            if by_cause {
                let cause = if g.cause.is_empty() { "other".to_string() } else { g.cause.clone() };
                b.push(Block::Heading { level, id: format!("{}-{}", section_id(&r.title), cause.replace('_', "-")), text: format!("{cause} ({})", g.findings.len()) });
                if let Some(meaning) = r.cause_sentence(&cause) {
                    let mut chars = meaning.chars();
                    let sentence = chars.next().map(|c| c.to_uppercase().chain(chars).collect::<String>()).unwrap_or_default();
                    b.push(Block::Para(vec![t(sentence)]));
                }
            }
            let with_session = r.layout.with_session;
            let has_excerpt = g.findings.iter().any(|f| f.excerpt.is_some());
            let mut header = vec!["severity", "capture"];
            if with_session {
                header.push("session");
            }
            header.extend(["tool", "client", "bytes", "detail"]);
            if has_excerpt {
                header.push(if r.layout.excerpt == ExcerptSource::SessionLastError { "last error" } else { "excerpt" });
            }
            let numeric: Vec<bool> = header.iter().map(|h| *h == "bytes").collect();
            let rows = g
                .findings
                .iter()
                .take(MAX_ROWS)
                .map(|f| {
                    let sev = if f.severity == Severity::Error.as_str() { Span::Strong(f.severity.clone()) } else { t(f.severity.clone()) };
                    let mut row = vec![vec![sev], vec![code(f.capture.clone())]];
                    if with_session {
                        row.push(opt_code(&f.session));
                    }
                    row.push(opt_code(&f.tool));
                    row.push(vec![t(f.client.clone().unwrap_or_else(|| "-".into()))]);
                    row.push(f.bytes.map_or_else(|| vec![t("-")], |n| num(n.max(0) as u64)));
                    let mut detail: Vec<Span> = Vec::new();
                    for c in f.causes.iter().skip(usize::from(by_cause)) {
                        detail.push(code(c.clone()));
                        detail.push(t(" "));
                    }
                    detail.push(t(f.detail.clone()));
                    row.push(detail);
                    if has_excerpt {
                        row.push(f.excerpt.as_ref().map_or_else(|| vec![t("-")], |e| vec![code(e.clone())]));
                    }
                    row
                })
                .collect();
            b.push(Block::Table { header, numeric, rows, more: g.findings.len().saturating_sub(MAX_ROWS) });
        }
        if let Some(advice) = &r.advice {
            b.push(Block::Advice(advice.clone()));
        }
    }

    /// Rules whose header places them in a built-in section.
    fn in_section<'a>(&'a self, section: &'a str) -> impl Iterator<Item = &'a RuleSection> + 'a {
        self.rules.iter().filter(move |r| r.layout.section.as_deref() == Some(section))
    }
}

/// `section:` values of rule headers: the built-in sections a rule can be shown in.
const FRAME_SIZES: &str = "frame_sizes";
const TRUNCATION: &str = "truncation";
const FRAME_SIZES_ID: &str = "frame-sizes-against-reader-limits";
const TRUNCATION_ID: &str = "truncation-rates";
