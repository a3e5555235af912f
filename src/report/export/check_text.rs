//! The `check` terminal summary: totals, then per rule its counts and title, the top
//! offenders, the meaning of each cause seen and one line of advice; then tools/call latency
//! per tool × client (p50/p95/p99/max, timeouts).

use std::fmt::Write as _;
use std::io::Write;

use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::findings::{Finding, counts};
use crate::report::document::LatencyGroup;
use crate::report::format::ms_label;
use crate::report::stats::thousands;

/// Latency groups shown in the terminal summary (`--format json` lists all).
const LATENCY_LINES: usize = 10;

pub struct CheckText;

impl Exporter<CheckRun<'_>> for CheckText {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        let mut text = render_text(run.findings, run.rules, run.captures);
        text.push_str(&render_latency(run.latency));
        out.write_all(text.as_bytes())?;
        Ok(())
    }
}

/// Cause tokens of `rule` that occur in its findings, in the header's order, with their sentences.
fn causes_seen<'a>(rule: &'a Rule, findings: &[&Finding]) -> Vec<(&'a str, &'a str)> {
    rule.header.causes.iter().filter(|(t, _)| findings.iter().any(|f| f.causes().contains(&t.as_str()))).map(|(t, m)| (t.as_str(), m.as_str())).collect()
}

/// The terminal summary: totals, then per rule its counts and title, top offenders, the
/// meaning of each cause seen and one line of advice.
pub fn render_text(findings: &[Finding], rules: &[Rule], captures: usize) -> String {
    let mut s = String::new();
    let by_sev = |sev: Severity| findings.iter().filter(|f| f.severity == sev.as_str()).count();
    let _ = writeln!(
        s,
        "mcpsift check: {} finding(s) in {} capture(s): {} error, {} warn, {} info",
        findings.len(),
        captures,
        by_sev(Severity::Error),
        by_sev(Severity::Warn),
        by_sev(Severity::Info)
    );
    let c = counts(findings);
    for rule in rules {
        let n = |sev: Severity| c.get(&(rule.name.clone(), sev.as_str().to_string())).copied().unwrap_or(0);
        let total = n(Severity::Error) + n(Severity::Warn) + n(Severity::Info);
        let title = rule.header.title.as_deref().map(|t| format!(": {t}")).unwrap_or_default();
        let _ = writeln!(s, "\n{}: {total} ({} error, {} warn, {} info){title}", rule.name, n(Severity::Error), n(Severity::Warn), n(Severity::Info));
        if total == 0 {
            continue;
        }
        let mut top: Vec<&Finding> = findings.iter().filter(|f| f.rule == rule.name).collect();
        top.sort_by_key(|f| (Severity::rank_of(&f.severity), std::cmp::Reverse(f.bytes.unwrap_or(0))));
        for f in top.iter().take(5) {
            let bytes = f.bytes.map(|b| format!("{} B", thousands(b.max(0) as u64))).unwrap_or_default();
            let detail: String = f.line().chars().take(160).collect();
            let _ = writeln!(
                s,
                "  {}  {:<5}  {}  {}  {}  {}  {}",
                f.id,
                f.severity,
                f.capture,
                f.tool.as_deref().unwrap_or("-"),
                f.client.as_deref().unwrap_or("-"),
                bytes,
                detail
            );
        }
        if top.len() > 5 {
            let _ = writeln!(s, "  ... and {} more (--format json lists all)", top.len() - 5);
        }
        for (token, sentence) in causes_seen(rule, &top) {
            let _ = writeln!(s, "  cause {token}: {sentence}");
        }
        if let Some(advice) = rule.advice() {
            let _ = writeln!(s, "  advice: {advice}");
        }
    }
    s
}

/// The latency block: per tool × client name × client version, timeouts first, then the
/// slowest p95; groups with neither timings nor timeouts are only counted.
pub fn render_latency(groups: &[LatencyGroup]) -> String {
    let mut s = String::new();
    if groups.is_empty() {
        return s;
    }
    let calls: u64 = groups.iter().map(|g| g.calls).sum();
    let timed: u64 = groups.iter().map(|g| g.timed).sum();
    let _ = writeln!(
        s,
        "\ntools/call latency: {} tool x client group(s), {} of {} tools/call timed (answered, not cancelled, timestamps on both frames); timeouts first, then slowest p95",
        groups.len(),
        thousands(timed),
        thousands(calls)
    );
    let (shown, untimed): (Vec<&LatencyGroup>, Vec<&LatencyGroup>) = LatencyGroup::slowest_first(groups).into_iter().partition(|g| g.timed > 0 || g.timeouts > 0);
    let header = ["tool", "client", "calls", "timed", "p50", "p95", "p99", "max", "timeouts"];
    let rows: Vec<[String; 9]> = shown
        .iter()
        .take(LATENCY_LINES)
        .map(|g| {
            [
                g.tool.clone(),
                format!("{} {}", g.client_name, g.client_version),
                thousands(g.calls),
                thousands(g.timed),
                ms_label(g.p50_ms),
                ms_label(g.p95_ms),
                ms_label(g.p99_ms),
                ms_label(g.max_ms),
                if g.timeouts == 0 { "0".to_string() } else { g.timeouts_label() },
            ]
        })
        .collect();
    let width = |k: usize| rows.iter().map(|r| r[k].chars().count()).chain([header[k].len()]).max().unwrap_or(0);
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: [&str; 9]| {
        let mut l = String::from(" ");
        for (k, c) in cells.iter().enumerate() {
            // Names left-aligned, numbers right-aligned; the last column unpadded.
            if k == cells.len() - 1 {
                l.push_str(&format!(" {c}"));
            } else if k < 2 {
                l.push_str(&format!(" {c:<w$}", w = widths[k]));
            } else {
                l.push_str(&format!(" {c:>w$}", w = widths[k]));
            }
        }
        l.trim_end().to_string()
    };
    if !rows.is_empty() {
        let _ = writeln!(s, "{}", line(header));
    }
    for r in &rows {
        let cells: [&str; 9] = std::array::from_fn(|k| r[k].as_str());
        let _ = writeln!(s, "{}", line(cells));
    }
    if shown.len() > LATENCY_LINES {
        let _ = writeln!(s, "  ... and {} more (--format json lists all)", shown.len() - LATENCY_LINES);
    }
    if !untimed.is_empty() {
        let _ = writeln!(s, "  {} group(s) without timestamps (stdio tee logs carry none): not timed", untimed.len());
    }
    s
}
