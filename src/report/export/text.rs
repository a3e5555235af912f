//! Terminal text: `check`'s summary (totals, then per rule its counts and title, the top
//! offenders, the meaning of each cause seen and one line of advice, then tools/call latency
//! per tool × client); `diff`'s two sides, one aligned line per group with each measure as
//! `A -> B` and the counts behind every rate, then the regressions; a session's timeline,
//! coloured on a terminal.

use std::fmt::Write as _;
use std::io::Write;

use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::diff::{Diff, HEADERS, cells, key_words, side_calls, side_line};
use crate::report::document::LatencyGroup;
use crate::report::findings::{Finding, counts};
use crate::report::format::ms_label;
use crate::report::stats::thousands;
use crate::report::timeline::{Timeline, arrow, delta_text, header, time_text, words};

/// Plain text; `color`: ANSI colours (the timeline's, on a terminal).
pub struct Text {
    pub color: bool,
}

/// Latency groups shown in the terminal summary (`--format json` lists all).
const LATENCY_LINES: usize = 10;

impl Exporter<CheckRun<'_>> for Text {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        let mut text = check_summary(run.findings, run.rules, run.captures);
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
fn check_summary(findings: &[Finding], rules: &[Rule], captures: usize) -> String {
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
fn render_latency(groups: &[LatencyGroup]) -> String {
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

impl Exporter<Diff> for Text {
    fn export(&self, diff: &Diff, out: &mut dyn Write) -> Result<(), ExportError> {
        let regressions: usize = diff.rows.iter().map(|r| r.regressions.len()).sum();
        writeln!(out, "mcpsift diff: {} group(s) by {}, {} regression(s)", diff.rows.len(), key_words(diff.by), regressions)?;
        writeln!(out, "  {} ({} tools/call)", side_line("A", &diff.a), side_calls(diff, true))?;
        writeln!(out, "  {} ({} tools/call)", side_line("B", &diff.b), side_calls(diff, false))?;
        writeln!(out)?;
        let mut table: Vec<Vec<String>> = vec![HEADERS.iter().map(|h| h.to_string()).collect()];
        table.extend(diff.rows.iter().map(cells));
        let widths: Vec<usize> = (0..HEADERS.len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
        for row in &table {
            let line: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            writeln!(out, "{}", line.join("  ").trim_end())?;
        }
        for row in diff.rows.iter().filter(|r| !r.regressions.is_empty()) {
            for r in &row.regressions {
                writeln!(out, "\nregression {} {}: {}: {}", row.tool, cells(row)[1], r.measure, r.detail)?;
            }
        }
        let t = &diff.thresholds;
        writeln!(
            out,
            "\nCalls are logical tools/call calls; rates are n/N with N the group's calls. A regression: a rate at least {}x A's with at least {} more calls than A's rate predicts and binomial p < {}, or a p95 latency at least {}x and {} ms slower with {} timed calls a side.",
            t.rate_ratio, t.min_more, t.alpha, t.latency_ratio, t.latency_min_ms, t.min_timed
        )?;
        Ok(())
    }
}

/// A session's timeline, coloured when `color`.
fn timeline_text(t: &Timeline, color: bool) -> String {
    let paint = |code: &str, s: &str| if color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() };
    let mut s = String::new();
    for h in header(t) {
        let _ = writeln!(s, "{}", paint("1", &h));
    }
    for l in &t.lines {
        let pos = l.seq.map_or_else(|| "     ".to_string(), |q| format!("#{q:<4}"));
        let mark = if l.anchor { "▶" } else if l.clock_backwards { "⟲" } else { " " };
        let body = format!("{mark} {pos} {} {:>9} {} {}", time_text(l), delta_text(l), arrow(l), words(l));
        let body = if l.what == "event" { paint("2", &body) } else if l.outcome.as_deref().is_some_and(|o| o.starts_with("error") || o.starts_with("HTTP") || o == "isError") { paint("33", &body) } else { body };
        let _ = writeln!(s, "{body}");
        for f in &l.findings {
            let _ = writeln!(s, "{}", paint("31", &format!("        ^ {f}")));
        }
    }
    if t.left_out_after > 0 {
        let _ = writeln!(s, "… {} later frame(s) left out (--window)", t.left_out_after);
    }
    for f in &t.session_findings {
        let _ = writeln!(s, "{}", paint("31", &format!("  session: {f}")));
    }
    s
}

impl Exporter<Timeline> for Text {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        out.write_all(timeline_text(t, self.color).as_bytes())?;
        Ok(())
    }
}
