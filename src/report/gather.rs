//! Gathering the report's read model from a run: the loaded captures, the tables (one
//! aggregate query from `queries/report/`) and the findings. Lays nothing out.

use std::collections::BTreeMap;
use std::sync::Mutex;

use polars::prelude::*;

use super::document::*;
use super::findings::Finding;
use super::redact::redact;
use super::stats::unaccounted;
use crate::model::rows::SessionRow;
use crate::model::schema::Table as _;
use crate::model::loaded::LoadedCapture;
use crate::query::header::ExcerptSource;
use crate::query::rules::{Rule, Severity};
use crate::query::plan::run_sql_each;
use crate::query::source::{collect, each_capture};
use crate::query::TableSource;

fn column_err(table: &'static str) -> impl Fn(PolarsError) -> DocumentError {
    move |source| DocumentError::Table { table, source }
}

fn strings(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<String>>, DocumentError> {
    crate::model::tables::string_values(df, name).map_err(column_err(table))
}

fn ints(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<Option<i64>>, DocumentError> {
    crate::model::tables::int_values(df, name).map_err(column_err(table))
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
/// Sessions with findings that get a timeline in the report (the rest are named).
pub const MAX_TIMELINES: usize = 8;

/// Frames each report timeline shows before its anchor.
const TIMELINE_WINDOW: u64 = 12;

/// The timelines of the sessions with warn or error findings, most severe first (findings
/// come sorted by severity), each around its most severe finding that names a request.
fn timelines(tables: &dyn TableSource, findings: &[Finding], redaction: Redaction) -> Result<(Vec<crate::report::timeline::Timeline>, Vec<String>), DocumentError> {
    use crate::report::timeline::{TimelineRequest, timeline};
    let mut sessions: Vec<(String, String)> = Vec::new();
    for f in findings.iter().filter(|f| f.severity != Severity::Info.as_str()) {
        if let Some(s) = &f.session
            && !sessions.iter().any(|(c, x)| c == &f.capture && x == s)
        {
            sessions.push((f.capture.clone(), s.clone()));
        }
    }
    let left_out = sessions.iter().skip(MAX_TIMELINES).map(|(c, s)| format!("{c}: {s}")).collect();
    let mut out = Vec::new();
    for (capture, session) in sessions.into_iter().take(MAX_TIMELINES) {
        let around = findings.iter().find(|f| f.capture == capture && f.session.as_deref() == Some(session.as_str()) && f.rpc_id.is_some()).and_then(|f| f.rpc_id.clone());
        let req = TimelineRequest { capture: Some(capture), session, around, window: TIMELINE_WINDOW, redact: redaction == Redaction::On };
        // A session the tables cannot tell (an id only in an excerpt) is told from its end.
        let told = timeline(tables, &req, findings).or_else(|_| timeline(tables, &TimelineRequest { around: None, ..req.clone() }, findings));
        if let Ok(t) = told {
            out.push(t);
        }
    }
    Ok((out, left_out))
}

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
    pub fn gather(inputs: &[String], loaded: &[LoadedCapture], tables: &dyn TableSource, rules: &[Rule], findings: &[Finding], redaction: Redaction) -> Result<Report, DocumentError> {
        let (captures, skipped_files) = captures(loaded);
        let sessions_df = table(tables, "sessions", |lf| lf)?;
        let sessions = sessions(&sessions_df, redaction)?;
        let frame_sizes = frame_sizes(tables)?;
        let calls = count(tables, |lf| lf)?;
        let truncation = truncation(tables, calls)?;
        let latency = latency(tables)?;
        let rules = rule_sections(tables, &sessions_df, rules, findings, redaction)?;
        let (timelines, timelines_left_out) = timelines(tables, findings, redaction)?;
        let tool_calls = count(tables, |lf| lf.filter(col("method").eq(lit("tools/call"))))?;
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
            latency,
            rules,
            timelines,
            timelines_left_out,
        })
    }

    pub fn rule(&self, name: &str) -> Option<&RuleSection> {
        self.rules.iter().find(|r| r.rule == name)
    }
}

/// The table `name`, narrowed by `shape`, collected.
fn table(tables: &dyn TableSource, name: &'static str, shape: impl FnOnce(LazyFrame) -> LazyFrame) -> Result<DataFrame, DocumentError> {
    let err = column_err(name);
    collect(shape(tables.table(name).map_err(&err)?)).map_err(err)
}

/// The number of `calls` rows `filter` keeps, counted capture by capture.
fn count(tables: &dyn TableSource, filter: impl Fn(LazyFrame) -> LazyFrame + Sync) -> Result<u64, DocumentError> {
    let counts = each_capture(tables, |piece| -> Result<u64, DocumentError> {
        let df = table(piece, "calls", |lf| filter(lf).select([len().alias("n")]))?;
        Ok(ints(&df, "calls", "n")?.first().copied().flatten().map_or(0, |n| nonneg(Some(n))))
    })?;
    Ok(counts.iter().sum())
}

fn captures(loaded: &[LoadedCapture]) -> (Vec<CaptureAccount>, SkippedFiles) {
    let mut out = Vec::new();
    let mut skipped = SkippedFiles::default();
    for c in loaded {
        let rows = &c.rows;
        if !c.is_capture() {
            skipped.count += 1;
            skipped.bytes += c.files.iter().map(|f| f.bytes_read).sum::<u64>();
            skipped.names.push(c.name.clone());
            continue;
        }
        let mut diagnostics = BTreeMap::new();
        for d in &rows.accounting.diagnostics {
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
            frame_bytes: rows.accounting.frame_bytes,
            frames: rows.accounting.frames_by_kind.values().sum(),
            frames_by_kind: rows.accounting.frames_by_kind.clone(),
            framing_bytes: rows.accounting.framing.values().sum(),
            skipped_bytes: rows.accounting.skipped_bytes.clone(),
            unaccounted_bytes: i64::try_from(unaccounted(&c.files, rows)).unwrap_or(i64::MAX),
            events: c.events,
            diagnostics,
        });
    }
    (out, skipped)
}

/// The sessions table as rows, with `last_error` shortened and redacted for the page.
fn sessions(df: &DataFrame, redaction: Redaction) -> Result<Vec<SessionRow>, DocumentError> {
    let mut rows = SessionRow::rows_from_df(df)?;
    for r in &mut rows {
        r.last_error = r.last_error.as_deref().map(|e| excerpt(e, redaction));
    }
    Ok(rows)
}

/// Power-of-two bin of a size: 0 and 1 byte are bin 0, 2..4 bin 1, ...
fn bin_of(bytes: u64) -> u32 {
    63 - bytes.max(1).leading_zeros()
}

fn frame_sizes(tables: &dyn TableSource) -> Result<FrameSizes, DocumentError> {
    // Frames are counted per distinct (size, direction), capture by capture: far fewer than
    // frames, and memory bounded by a capture.
    let sizes: Mutex<BTreeMap<(u64, bool), u64>> = Mutex::new(BTreeMap::new());
    each_capture(tables, |piece| -> Result<(), DocumentError> {
        let frames = table(piece, "frames", |lf| lf.group_by([col("wire_bytes"), col("direction")]).agg([len().alias("n")]))?;
        let (wire, dir, n) = (ints(&frames, "frames", "wire_bytes")?, strings(&frames, "frames", "direction")?, ints(&frames, "frames", "n")?);
        let mut sizes = sizes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for ((w, d), n) in wire.iter().zip(&dir).zip(&n) {
            *sizes.entry((nonneg(*w), d.as_deref() == Some("c2s"))).or_default() += nonneg(*n);
        }
        Ok(())
    })?;
    let sizes = sizes.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    let limits = &table(tables, "limits", |lf| lf)?;
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
    for (&(w, c2s), &n) in &sizes {
        let entry = counts.entry(bin_of(w)).or_default();
        if c2s {
            entry.0 += n;
            out.largest_c2s = out.largest_c2s.max(w);
        } else {
            entry.1 += n;
            out.largest_s2c = out.largest_s2c.max(w);
        }
        out.frames += n;
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
const TRUNCATION_SQL: &str = include_str!("../../queries/report/truncation_groups.sql");

fn truncation(tables: &dyn TableSource, calls: u64) -> Result<Vec<TruncationGroup>, DocumentError> {
    if calls == 0 {
        return Ok(Vec::new());
    }
    // Summed over captures: each capture's groups, merged by tool x client x version.
    let mut merged: BTreeMap<(String, String, String), TruncationGroup> = BTreeMap::new();
    run_sql_each(tables, TRUNCATION_SQL, DocumentError::from, |df| -> Result<(), DocumentError> {
        const T: &str = "calls";
        let (tool, client, version) = (strings(&df, T, "tool")?, strings(&df, T, "client_name")?, strings(&df, T, "client_version")?);
        let (calls, truncated, lost, cancelled, max) =
            (ints(&df, T, "calls")?, ints(&df, T, "truncated")?, ints(&df, T, "lost")?, ints(&df, T, "cancelled")?, ints(&df, T, "max_resp_bytes")?);
        for k in 0..df.height() {
            let key = (tool[k].clone().unwrap_or_default(), client[k].clone().unwrap_or_default(), version[k].clone().unwrap_or_default());
            let g = merged.entry(key.clone()).or_insert_with(|| TruncationGroup {
                tool: key.0,
                client_name: key.1,
                client_version: key.2,
                calls: 0,
                truncated: 0,
                lost: 0,
                cancelled: 0,
                max_resp_bytes: 0,
            });
            g.calls += nonneg(calls[k]);
            g.truncated += nonneg(truncated[k]);
            g.lost += nonneg(lost[k]);
            g.cancelled += nonneg(cancelled[k]);
            g.max_resp_bytes = g.max_resp_bytes.max(nonneg(max[k]));
        }
        Ok(())
    })?;
    let mut groups: Vec<TruncationGroup> = merged.into_values().collect();
    groups.sort_by(|a, b| {
        b.rate()
            .total_cmp(&a.rate())
            .then(b.not_whole().cmp(&a.not_whole()))
            .then_with(|| (&a.tool, &a.client_name, &a.client_version).cmp(&(&b.tool, &b.client_name, &b.client_version)))
    });
    Ok(groups)
}

/// tools/call latency per tool × client name × client version (see the file's header).
const LATENCY_SQL: &str = include_str!("../../queries/report/latency_groups.sql");

/// Latency groups over every capture. The query runs on each piece of whole captures (a
/// dataset is scanned for the few columns it names) and yields that piece's logical tool calls;
/// they are grouped here as each piece is read, by their keys as stored (a NULL named '?'), and
/// the known latencies of a group gathered over the pieces into one vector, sorted once, and its
/// quantiles read off it: memory holds one number per timed call (none for an untimed one),
/// whatever the input size. Grouping here, not in the query, spares polars row-encoding three
/// string keys of every call (a fifth of `check` over a dataset). Also what `check` prints.
pub fn latency(tables: &dyn TableSource) -> Result<Vec<LatencyGroup>, DocumentError> {
    let pieces = run_sql_each(tables, LATENCY_SQL, DocumentError::from, |df| latency_piece(&df))?;
    Ok(merge_latency(pieces)
        .into_iter()
        .map(|((tool, client_name, client_version), mut g)| {
            g.latencies.sort_unstable_by(f64::total_cmp);
            let untimed = usize::try_from(g.calls).unwrap_or(usize::MAX).saturating_sub(g.latencies.len());
            let q = |p: f64| quantile_linear(&g.latencies, p, untimed);
            LatencyGroup {
                tool,
                client_name,
                client_version,
                calls: g.calls,
                timed: g.latencies.len() as u64,
                p50_ms: q(0.5),
                p95_ms: q(0.95),
                p99_ms: q(0.99),
                max_ms: g.latencies.last().copied(),
                timeouts: g.timeouts,
                timeouts_timed: g.timeouts_timed,
                timeout_min_ms: g.timeout_min_ms,
                timeout_max_ms: g.timeout_max_ms,
            }
        })
        .collect())
}

/// The pieces' latency groups merged by key (a piece may name one twice: its NULL and its '?').
fn merge_latency(pieces: impl IntoIterator<Item = Vec<(LatencyKey, LatencyMerge)>>) -> BTreeMap<LatencyKey, LatencyMerge> {
    let mut groups: BTreeMap<LatencyKey, LatencyMerge> = BTreeMap::new();
    for (key, g) in pieces.into_iter().flatten() {
        let into = groups.entry(key).or_default();
        into.calls += g.calls;
        into.timeouts += g.timeouts;
        into.timeouts_timed += g.timeouts_timed;
        into.timeout_min_ms = [into.timeout_min_ms, g.timeout_min_ms].into_iter().flatten().reduce(f64::min);
        into.timeout_max_ms = [into.timeout_max_ms, g.timeout_max_ms].into_iter().flatten().reduce(f64::max);
        into.latencies.extend(g.latencies);
    }
    groups
}

/// A latency group's tool, client name and client version ('?' for none).
type LatencyKey = (String, String, String);

/// One latency group gathered over the pieces.
#[derive(Default)]
struct LatencyMerge {
    calls: u64,
    latencies: Vec<f64>,
    timeouts: u64,
    timeouts_timed: u64,
    timeout_min_ms: Option<f64>,
    timeout_max_ms: Option<f64>,
}

/// One piece's logical tool calls (`latency_groups.sql`) grouped by tool, client name and
/// client version, a NULL key named '?'. A row's group is looked up by the three columns' views
/// (a short name is its view; a long one, a place in its chunk's buffers): among the few groups
/// last found by hashing ([`Recent`]), then hashed, and by the names only for a view not seen in the chunk.
/// Hashing the three names of every call was a third of this summary; hashing their views, on
/// the 10 GB fleet dataset (585 K tool calls a capture, 5 tools), 40 ns a call.
fn latency_piece(df: &DataFrame) -> Result<Vec<(LatencyKey, LatencyMerge)>, DocumentError> {
    const T: &str = "calls";
    let err = column_err(T);
    let column = |name: &str, dtype: &DataType| -> Result<Column, DocumentError> { df.column(name).map_err(&err)?.cast(dtype).map_err(&err) };
    let text = |name: &str| -> Result<StringChunked, DocumentError> { Ok(column(name, &DataType::String)?.str().map_err(&err)?.clone()) };
    let (mut tool, mut client, mut version) = (text("tool")?, text("client_name")?, text("client_version")?);
    let mut timeout = column("timeout", &DataType::Boolean)?.bool().map_err(&err)?.clone();
    let mut latency = column("latency_ms", &DataType::Float64)?.f64().map_err(&err)?.clone();
    let mut waited = column("waited_ms", &DataType::Float64)?.f64().map_err(&err)?.clone();
    // The six columns are read chunk by chunk, side by side: one chunking for all.
    let lengths: Vec<usize> = tool.chunk_lengths().collect();
    let same = |c: &mut dyn Iterator<Item = usize>| c.eq(lengths.iter().copied());
    if !(same(&mut client.chunk_lengths()) && same(&mut version.chunk_lengths()) && same(&mut timeout.chunk_lengths()) && same(&mut latency.chunk_lengths()) && same(&mut waited.chunk_lengths())) {
        (tool, client, version) = (tool.rechunk().into_owned(), client.rechunk().into_owned(), version.rechunk().into_owned());
        (timeout, latency, waited) = (timeout.rechunk().into_owned(), latency.rechunk().into_owned(), waited.rechunk().into_owned());
    }
    let mut groups: Vec<LatencyMerge> = Vec::new();
    let mut by_name: PlHashMap<[Option<&str>; 3], usize> = PlHashMap::new();
    let facts = timeout.downcast_iter().zip(latency.downcast_iter()).zip(waited.downcast_iter());
    for (((t, c), v), ((timeout, latency), waited)) in tool.downcast_iter().zip(client.downcast_iter()).zip(version.downcast_iter()).zip(facts) {
        let mut by_view: PlHashMap<[u128; 3], usize> = PlHashMap::new();
        let mut recent = Recent::default();
        for i in 0..t.len() {
            let key = [view_key(t, i), view_key(c, i), view_key(v, i)];
            let k = match recent.get(&key) {
                Some(k) => k,
                None => {
                    let k = match by_view.get(&key) {
                        Some(&k) => k,
                        None => {
                            let next = groups.len();
                            let k = *by_name.entry([t.get(i), c.get(i), v.get(i)]).or_insert(next);
                            if k == next {
                                groups.push(LatencyMerge::default());
                            }
                            by_view.insert(key, k);
                            k
                        }
                    };
                    recent.put(key, k);
                    k
                }
            };
            let g = &mut groups[k];
            g.calls += 1;
            g.timeouts += u64::from(timeout.get(i) == Some(true));
            if let Some(ms) = latency.get(i) {
                g.latencies.push(ms);
            }
            if let Some(ms) = waited.get(i) {
                g.timeouts_timed += 1;
                g.timeout_min_ms = Some(g.timeout_min_ms.map_or(ms, |m| m.min(ms)));
                g.timeout_max_ms = Some(g.timeout_max_ms.map_or(ms, |m| m.max(ms)));
            }
        }
    }
    let mut keys: Vec<([Option<&str>; 3], usize)> = by_name.into_iter().collect();
    keys.sort_unstable_by_key(|(_, k)| *k);
    let name = |v: Option<&str>| v.unwrap_or("?").to_string();
    Ok(keys.into_iter().zip(groups).map(|(([tool, client, version], _), g)| ((name(tool), name(client), name(version)), g)).collect())
}

/// A row's name in a string column as the grouping compares it: its view, or for NULL a value
/// no view has (a view's low 32 bits are its length, and no name is 4 GiB long).
fn view_key(a: &<StringType as PolarsDataType>::Array, i: usize) -> u128 {
    if a.get(i).is_some() { a.views()[i].as_u128() } else { u128::MAX }
}

/// The groups last found by hashing, by their keys' views, newest first: a piece's tool calls
/// fall in few groups (a capture's client, a handful of tools), and comparing a key with a few
/// others costs less than hashing it.
#[derive(Default)]
struct Recent {
    keys: [[u128; 3]; RECENT],
    groups: [usize; RECENT],
    len: usize,
}

/// How many groups [`Recent`] holds.
const RECENT: usize = 8;

impl Recent {
    fn get(&self, key: &[u128; 3]) -> Option<usize> {
        // Field by field: comparing the arrays whole called memcmp.
        (0..self.len).find(|&j| self.keys[j][0] == key[0] && self.keys[j][1] == key[1] && self.keys[j][2] == key[2]).map(|j| self.groups[j])
    }
    /// Keeps `key`'s group, dropping the oldest kept when full.
    fn put(&mut self, key: [u128; 3], group: usize) {
        let last = self.len.min(RECENT - 1);
        self.keys.copy_within(0..last, 1);
        self.groups.copy_within(0..last, 1);
        (self.keys[0], self.groups[0]) = (key, group);
        self.len = (self.len + 1).min(RECENT);
    }
}

/// The linear-interpolated quantile of sorted values (`QUANTILE_CONT`, DuckDB's
/// `quantile_cont`): position q·(n−1), the value below it plus the fraction of the step to the
/// next. `nulls` is how many calls of the group have no latency: polars counts the position
/// from the start of the column with its nulls sorted first, q·(n−1) + nulls, which changes the
/// last bits of the fraction; it is computed so here too, and the figures are polars' to the bit.
fn quantile_linear(sorted: &[f64], q: f64, nulls: usize) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = last as f64 * q + nulls as f64;
    let below = (position as usize).clamp(nulls, nulls + last);
    let lower = sorted[below - nulls];
    if position.ceil() as usize == below {
        return Some(lower);
    }
    let upper = sorted[(below + 1 - nulls).min(last)];
    if lower == upper {
        return Some(lower);
    }
    Some((position - below as f64) * (upper - lower) + lower)
}

type CallKey = (String, String, String);

/// Error messages of calls, by (capture, session, rpc_id), for excerpts.
fn call_messages(tables: &dyn TableSource) -> Result<BTreeMap<CallKey, String>, DocumentError> {
    let out = Mutex::new(BTreeMap::new());
    each_capture(tables, |piece| call_messages_into(piece, &out))?;
    Ok(out.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

fn call_messages_into(tables: &dyn TableSource, out: &Mutex<BTreeMap<CallKey, String>>) -> Result<(), DocumentError> {
    let df = &table(tables, "calls", |lf| {
        lf.filter(col("error_message").is_not_null()).select([col("capture"), col("session"), col("rpc_id"), col("error_message")])
    })?;
    let (capture, session, rpc_id, message) = (strings(df, "calls", "capture")?, strings(df, "calls", "session")?, strings(df, "calls", "rpc_id")?, strings(df, "calls", "error_message")?);
    // A piece's rows go in together, in their order (a reused id's last message wins, as
    // before); pieces hold whole captures, so theirs never meet.
    let mut out = out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for k in 0..df.height() {
        if let (Some(c), Some(s), Some(r), Some(m)) = (&capture[k], &session[k], &rpc_id[k], &message[k]) {
            out.insert((c.clone(), s.clone(), r.clone()), m.clone());
        }
    }
    Ok(())
}

fn rule_sections(tables: &dyn TableSource, sessions: &DataFrame, rules: &[Rule], findings: &[Finding], redaction: Redaction) -> Result<Vec<RuleSection>, DocumentError> {
    let messages = call_messages(tables)?;
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
                id: f.id.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pieces_calls_are_grouped_by_their_names_across_chunks_views_and_nulls() {
        // Names longer than a view holds (12 bytes) live in a chunk's buffers, so the same name
        // has another view in another chunk, and a NULL key is the group '?' with a real '?'.
        // `other` has the length, prefix and place in the second chunk's buffer that `long` has
        // in the first's: the same view, another name.
        let (long, other) = ("a-tool-with-a-long-name", "a-tool-with-a-long-nam2");
        // tool, client version, timed out, latency, waited
        type Call<'a> = (Option<&'a str>, Option<&'a str>, bool, Option<f64>, Option<f64>);
        let rows: [Call; 8] = [
            (Some(long), Some("1.0"), false, Some(5.0), None),
            (Some("short"), Some("1.0"), false, Some(1.0), None),
            (Some(long), Some("1.0"), true, None, Some(30.0)),
            (Some(other), Some("1.0"), false, Some(4.0), None),
            (None, Some("1.0"), false, Some(2.0), None),
            (Some("?"), Some("1.0"), false, Some(3.0), None),
            (Some(long), Some("1.0"), true, None, Some(10.0)),
            (Some(long), None, false, Some(7.0), None),
        ];
        let chunk = |rows: &[Call]| {
            df!(
                "tool" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
                "client_name" => rows.iter().map(|_| Some("client")).collect::<Vec<_>>(),
                "client_version" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
                "timeout" => rows.iter().map(|r| r.2).collect::<Vec<_>>(),
                "latency_ms" => rows.iter().map(|r| r.3).collect::<Vec<_>>(),
                "waited_ms" => rows.iter().map(|r| r.4).collect::<Vec<_>>(),
            )
            .expect("frame")
        };
        let mut df = chunk(&rows[..3]);
        df.vstack_mut(&chunk(&rows[3..])).expect("second chunk");
        assert_eq!(df.column("tool").expect("tool").as_materialized_series().n_chunks(), 2);
        let groups = merge_latency([latency_piece(&df).expect("grouped")]);
        let key = |t: &str, v: &str| (t.to_string(), "client".to_string(), v.to_string());
        type Merged = (LatencyKey, u64, Vec<f64>, u64, u64, Option<f64>, Option<f64>);
        let got: Vec<Merged> = groups.into_iter().map(|(k, mut g)| (k, g.calls, std::mem::take(&mut g.latencies), g.timeouts, g.timeouts_timed, g.timeout_min_ms, g.timeout_max_ms)).collect();
        assert_eq!(
            got,
            vec![
                (key("?", "1.0"), 2, vec![2.0, 3.0], 0, 0, None, None),
                (key(other, "1.0"), 1, vec![4.0], 0, 0, None, None),
                (key(long, "1.0"), 3, vec![5.0], 2, 2, Some(10.0), Some(30.0)),
                (key(long, "?"), 1, vec![7.0], 0, 0, None, None),
                (key("short", "1.0"), 1, vec![1.0], 0, 0, None, None),
            ]
        );
    }

    #[test]
    fn frame_sizes_bin_by_powers_of_two() {
        assert_eq!(bin_of(0), 0);
        assert_eq!(bin_of(1024), 10);
        assert_eq!(bin_of(1023), 9);
    }

    #[test]
    fn quantiles_interpolate_between_closest_ranks() {
        // position q·(n−1): 0.5 of [10, 20, 30, 40] is 1.5, halfway from 20 to 30.
        let v = [10.0, 20.0, 30.0, 40.0];
        for nulls in [0, 3] {
            assert_eq!(quantile_linear(&v, 0.5, nulls), Some(25.0));
            assert_eq!(quantile_linear(&v, 0.0, nulls), Some(10.0));
            assert_eq!(quantile_linear(&v, 1.0, nulls), Some(40.0));
            let p95 = quantile_linear(&v, 0.95, nulls).unwrap();
            assert!((p95 - 38.5).abs() < 1e-9, "{p95}");
            assert_eq!(quantile_linear(&[7.0], 0.99, nulls), Some(7.0));
            assert_eq!(quantile_linear(&[], 0.5, nulls), None);
        }
    }

    #[test]
    fn excerpts_are_short_and_redacted() {
        let e = excerpt("Authorization: Bearer abc\nnext line", Redaction::On);
        assert!(!e.contains("abc"), "{e}");
        assert_eq!(excerpt(&"x".repeat(500), Redaction::Off).chars().count(), EXCERPT_CHARS);
    }
}
