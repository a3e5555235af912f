//! `mcpsift diff`'s read model: two sides (captures, datasets or cohorts of calls), each
//! aggregated by `queries/report/diff_groups.sql`, matched by key, and the regression verdict
//! under documented thresholds. Formats nothing (the exporters in export/ do).

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

use super::document::DocumentError;
use super::format::ms_label;
use super::stats::thousands;
use crate::query::{QueryError, TableSource, context, run_in};

/// One side's aggregate per group (see the SQL file's header).
const DIFF_SQL: &str = include_str!("../../queries/report/diff_groups.sql");

/// What a row of the diff is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKey {
    /// tool × client name × client version (the default: the same clients before and after).
    Version,
    /// tool × client name (cohorts split by client version).
    Client,
    /// tool alone (cohorts split by client).
    Tool,
}

/// One group of one side.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SideGroup {
    pub calls: u64,
    pub truncated: u64,
    pub errors: u64,
    pub validation_errors: u64,
    /// Calls with a response (the sizes are over these).
    pub answered: u64,
    pub resp_p50_bytes: Option<f64>,
    pub resp_p95_bytes: Option<f64>,
    pub resp_max_bytes: Option<f64>,
    /// Calls with a latency (answered, timestamps, not cancelled nor timed out).
    pub timed: u64,
    pub latency_p50_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
}

impl SideGroup {
    pub fn rate(n: u64, of: u64) -> Option<f64> {
        (of > 0).then(|| n as f64 / of as f64)
    }
}

/// The thresholds of `--fail-on-regression` (defaults documented in docs/commands.md "diff").
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Thresholds {
    /// B's rate at least this many times A's rate (truncation, error, validation-error).
    pub rate_ratio: f64,
    /// And at least this many more such calls in B than A's rate predicts for B's calls.
    pub min_more: u64,
    /// And B's count unlikely under A's rate: the one-sided binomial tail
    /// P(X ≥ n_B | N_B, p_A) below this (p_A at least 0.5 / (N_A + 1), so a clean A is not
    /// taken as a certainty).
    pub alpha: f64,
    /// Latency: B's p95 at least this many times A's p95 ...
    pub latency_ratio: f64,
    /// ... and at least this many milliseconds slower ...
    pub latency_min_ms: f64,
    /// ... with at least this many timed calls on each side.
    pub min_timed: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds { rate_ratio: 2.0, min_more: 3, alpha: 0.05, latency_ratio: 2.0, latency_min_ms: 100.0, min_timed: 5 }
    }
}

/// One row: a key and both sides (absent on a side: no such calls there).
#[derive(Debug, Clone, Serialize)]
pub struct DiffRow {
    pub tool: String,
    pub client_name: String,
    pub client_version: String,
    pub a: Option<SideGroup>,
    pub b: Option<SideGroup>,
    /// The measures that regressed from A to B (`truncation`, `errors`, `validation_errors`,
    /// `latency_p95`), each with why.
    pub regressions: Vec<Regression>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Regression {
    pub measure: &'static str,
    pub detail: String,
}

/// A side as the user named it.
#[derive(Debug, Clone, Serialize)]
pub struct SideLabel {
    pub inputs: Vec<String>,
    /// The cohort filter on calls, if any.
    #[serde(rename = "where")]
    pub filter: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub a: SideLabel,
    pub b: SideLabel,
    pub by: DiffKey,
    pub thresholds: Thresholds,
    pub rows: Vec<DiffRow>,
}

impl Diff {
    pub fn regressed(&self) -> bool {
        self.rows.iter().any(|r| !r.regressions.is_empty())
    }
}

type Key = (String, String, String);

fn col_err(source: PolarsError) -> DocumentError {
    DocumentError::Table { table: "calls", source }
}

/// One side's groups: `filter` (SQL over `calls`) narrows the calls, `by` merges keys.
pub fn side(tables: &dyn TableSource, filter: Option<&str>, by: DiffKey) -> Result<BTreeMap<Key, SideGroup>, DocumentError> {
    let mut ctx = context(tables)?;
    let mut calls = match filter {
        Some(w) => ctx.execute(&format!("SELECT * FROM calls WHERE {w}")).map_err(QueryError::from)?,
        None => tables.table("calls").map_err(col_err)?,
    };
    if by != DiffKey::Version {
        calls = calls.with_column(lit("*").alias("client_version"));
    }
    if by == DiffKey::Tool {
        calls = calls.with_column(lit("*").alias("client_name"));
    }
    ctx.register("calls", calls);
    let df = run_in(&mut ctx, DIFF_SQL)?;
    let s = |name: &str| -> Result<Vec<Option<String>>, DocumentError> {
        let c = df.column(name).map_err(col_err)?.cast(&DataType::String).map_err(col_err)?;
        Ok(c.str().map_err(col_err)?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let i = |name: &str| -> Result<Vec<u64>, DocumentError> {
        let c = df.column(name).map_err(col_err)?.cast(&DataType::Int64).map_err(col_err)?;
        Ok(c.i64().map_err(col_err)?.iter().map(|v| v.unwrap_or(0).max(0) as u64).collect())
    };
    let f = |name: &str| -> Result<Vec<Option<f64>>, DocumentError> {
        let c = df.column(name).map_err(col_err)?.cast(&DataType::Float64).map_err(col_err)?;
        Ok(c.f64().map_err(col_err)?.iter().collect())
    };
    let (tool, client, version) = (s("tool")?, s("client_name")?, s("client_version")?);
    let (calls, truncated, errors, invalid, answered, timed) = (i("calls")?, i("truncated")?, i("errors")?, i("validation_errors")?, i("answered")?, i("timed")?);
    let (p50b, p95b, maxb, p50l, p95l) = (f("resp_p50_bytes")?, f("resp_p95_bytes")?, f("resp_max_bytes")?, f("latency_p50_ms")?, f("latency_p95_ms")?);
    let mut out = BTreeMap::new();
    for k in 0..df.height() {
        let key = (tool[k].clone().unwrap_or_default(), client[k].clone().unwrap_or_default(), version[k].clone().unwrap_or_default());
        out.insert(
            key,
            SideGroup {
                calls: calls[k],
                truncated: truncated[k],
                errors: errors[k],
                validation_errors: invalid[k],
                answered: answered[k],
                resp_p50_bytes: p50b[k],
                resp_p95_bytes: p95b[k],
                resp_max_bytes: maxb[k],
                timed: timed[k],
                latency_p50_ms: p50l[k],
                latency_p95_ms: p95l[k],
            },
        );
    }
    Ok(out)
}

/// P(X ≥ k) for X ~ Binomial(n, p), summed in log space (n is a group's call count).
pub fn binomial_tail(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let ln_choose = |n: u64, i: u64| -> f64 { (1..=i).map(|j| ((n - i + j) as f64).ln() - (j as f64).ln()).sum() };
    (k..=n).map(|i| (ln_choose(n, i) + i as f64 * p.ln() + (n - i) as f64 * (1.0 - p).ln()).exp()).sum::<f64>().min(1.0)
}

/// Whether a count rate regressed from `a` (n_a of N_a) to `b` (n_b of N_b), and why.
fn rate_regression(measure: &'static str, (na, ca): (u64, u64), (nb, cb): (u64, u64), t: &Thresholds) -> Option<Regression> {
    let rate_a = SideGroup::rate(na, ca)?;
    let rate_b = SideGroup::rate(nb, cb)?;
    let more = nb as f64 - rate_a * cb as f64;
    let p_null = rate_a.max(0.5 / (ca as f64 + 1.0));
    let p_value = binomial_tail(nb, cb, p_null);
    (rate_b > rate_a && rate_b >= t.rate_ratio * rate_a && more >= t.min_more as f64 && p_value < t.alpha).then(|| Regression {
        measure,
        detail: format!(
            "{na}/{ca} ({:.1}%) -> {nb}/{cb} ({:.1}%): {:.1} more than A's rate predicts, p = {p_value:.3}",
            100.0 * rate_a,
            100.0 * rate_b,
            more
        ),
    })
}

fn regressions(a: &SideGroup, b: &SideGroup, t: &Thresholds) -> Vec<Regression> {
    let mut out = Vec::new();
    out.extend(rate_regression("truncation", (a.truncated, a.calls), (b.truncated, b.calls), t));
    out.extend(rate_regression("errors", (a.errors, a.calls), (b.errors, b.calls), t));
    out.extend(rate_regression("validation_errors", (a.validation_errors, a.calls), (b.validation_errors, b.calls), t));
    if let (Some(pa), Some(pb)) = (a.latency_p95_ms, b.latency_p95_ms)
        && a.timed >= t.min_timed
        && b.timed >= t.min_timed
        && pb >= t.latency_ratio * pa
        && pb - pa >= t.latency_min_ms
    {
        out.push(Regression { measure: "latency_p95", detail: format!("p95 {pa:.1} ms -> {pb:.1} ms over {} and {} timed calls", a.timed, b.timed) });
    }
    out
}

/// Matches both sides' groups by key and judges each pair.
pub fn compare(a: SideLabel, b: SideLabel, by: DiffKey, thresholds: Thresholds, ga: BTreeMap<Key, SideGroup>, mut gb: BTreeMap<Key, SideGroup>) -> Diff {
    let mut rows = Vec::new();
    for (key, side_a) in ga {
        let side_b = gb.remove(&key);
        rows.push((key, Some(side_a), side_b));
    }
    rows.extend(gb.into_iter().map(|(k, g)| (k, None, Some(g))));
    let mut rows: Vec<DiffRow> = rows
        .into_iter()
        .map(|((tool, client_name, client_version), a, b)| {
            let regressions = match (&a, &b) {
                (Some(a), Some(b)) => regressions(a, b, &thresholds),
                _ => Vec::new(),
            };
            DiffRow { tool, client_name, client_version, a, b, regressions }
        })
        .collect();
    rows.sort_by(|x, y| (&x.tool, &x.client_name, &x.client_version).cmp(&(&y.tool, &y.client_name, &y.client_version)));
    Diff { a, b, by, thresholds, rows }
}

// The cell texts every rendering of a diff shares.

/// `n/N`, `-` when the side has no such group.
fn count(side: Option<&SideGroup>, n: impl Fn(&SideGroup) -> u64) -> String {
    side.map_or("-".to_string(), |g| format!("{}/{}", n(g), g.calls))
}

fn bytes(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |b| thousands(b.round().max(0.0) as u64))
}

/// The cells of one row: tool, client, then each measure as `A -> B`.
pub fn cells(row: &DiffRow) -> Vec<String> {
    let (a, b) = (row.a.as_ref(), row.b.as_ref());
    let pair = |f: &dyn Fn(Option<&SideGroup>) -> String| format!("{} -> {}", f(a), f(b));
    let client = match (row.client_name.as_str(), row.client_version.as_str()) {
        ("*", _) => "*".to_string(),
        (name, "*") => name.to_string(),
        (name, version) => format!("{name} {version}"),
    };
    let rate = |n: u64, of: u64| SideGroup::rate(n, of).map_or(String::new(), |r| format!(" {:.0}%", 100.0 * r));
    let counted = |get: fn(&SideGroup) -> u64| {
        pair(&|s: Option<&SideGroup>| match s {
            Some(g) => format!("{}{}", count(Some(g), get), rate(get(g), g.calls)),
            None => "-".to_string(),
        })
    };
    vec![
        row.tool.clone(),
        client,
        pair(&|s: Option<&SideGroup>| s.map_or("-".to_string(), |g| g.calls.to_string())),
        counted(|g| g.truncated),
        counted(|g| g.errors),
        counted(|g| g.validation_errors),
        pair(&|s: Option<&SideGroup>| s.map_or("-".to_string(), |g| format!("{}/{}/{} B", bytes(g.resp_p50_bytes), bytes(g.resp_p95_bytes), bytes(g.resp_max_bytes)))),
        pair(&|s: Option<&SideGroup>| match s {
            Some(g) if g.timed > 0 => format!("{}/{} ({})", ms_label(g.latency_p50_ms).trim_end_matches(" ms"), ms_label(g.latency_p95_ms), g.timed),
            Some(_) => "untimed".to_string(),
            None => "-".to_string(),
        }),
        if row.regressions.is_empty() { String::new() } else { format!("REGRESSION: {}", row.regressions.iter().map(|r| r.measure).collect::<Vec<_>>().join(", ")) },
    ]
}

pub const HEADERS: [&str; 9] = ["tool", "client", "calls", "truncated", "errors", "validation errors", "result bytes p50/p95/max", "latency p50/p95 (timed)", "verdict"];

/// `A: samples/x (where client_version = '1')`.
pub fn side_line(name: &str, s: &SideLabel) -> String {
    let filter = s.filter.as_ref().map(|w| format!(" where {w}")).unwrap_or_default();
    format!("{name}: {}{filter}", s.inputs.join(" "))
}

pub fn key_words(by: DiffKey) -> &'static str {
    match by {
        DiffKey::Version => "tool x client name x client version",
        DiffKey::Client => "tool x client name",
        DiffKey::Tool => "tool",
    }
}

/// Logical calls of a side.
pub fn side_calls(diff: &Diff, a: bool) -> u64 {
    diff.rows.iter().filter_map(|r| if a { r.a.as_ref() } else { r.b.as_ref() }).map(|g| g.calls).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_tail_matches_hand_values() {
        // P(X >= 1 | 3, 0.5) = 1 - 0.125; P(X >= 3 | 3, 0.5) = 0.125.
        assert!((binomial_tail(1, 3, 0.5) - 0.875).abs() < 1e-12);
        assert!((binomial_tail(3, 3, 0.5) - 0.125).abs() < 1e-12);
        assert_eq!(binomial_tail(0, 3, 0.2), 1.0);
    }

    #[test]
    fn a_doubled_rate_needs_enough_more_calls_and_significance() {
        let t = Thresholds::default();
        assert!(rate_regression("truncation", (1, 100), (20, 100), &t).is_some(), "1% -> 20% over 100 calls");
        assert!(rate_regression("truncation", (0, 2), (1, 3), &t).is_none(), "one more truncated call is noise");
        assert!(rate_regression("truncation", (10, 100), (15, 100), &t).is_none(), "not doubled");
        let loose = Thresholds { min_more: 1, alpha: 1.0, ..t };
        assert!(rate_regression("truncation", (0, 2), (1, 3), &loose).is_some());
    }
}
