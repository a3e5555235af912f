//! `mcpsift diff` as terminal text: the two sides, one aligned line per group with each
//! measure as `A -> B` and the counts behind every rate, then the regressions. Also the cell
//! texts the Markdown exporter shares.

use std::io::Write;

use super::{ExportError, Exporter};
use crate::report::diff::{Diff, DiffKey, DiffRow, SideGroup, SideLabel};
use crate::report::format::ms_label;
use crate::report::stats::thousands;

pub struct DiffText;

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

impl Exporter<Diff> for DiffText {
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
