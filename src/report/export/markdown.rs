//! Markdown (GitHub-flavoured): the report (the outline as headings, pipe tables and a text
//! histogram of frame sizes), `diff`'s groups and a session's timeline; no HTML, so each pastes
//! into issues and postmortem docs as is.

use std::fmt::Write as _;
use std::io::Write;

use super::{ExportError, Exporter};
use crate::report::diff::{Diff, HEADERS, cells, key_words, side_calls, side_line};
use crate::report::timeline::{Timeline, arrow, delta_text, header, time_text, words};
use crate::report::document::{FrameSizes, Report};
use crate::report::format::short_bytes;
use crate::report::outline::{Block, ChartKind, Span};
use crate::report::stats::thousands;

pub struct Markdown;

impl Exporter<Report> for Markdown {
    fn export(&self, report: &Report, out: &mut dyn std::io::Write) -> Result<(), ExportError> {
        out.write_all(render(report).as_bytes())?;
        Ok(())
    }
}

/// Escapes text for a Markdown table cell or paragraph.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '*' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// An inline code span; backticks inside choose a longer fence.
fn code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    if text.contains('`') { format!("`` {text} ``") } else { format!("`{text}`") }
}

/// A ten-cell bar and the percentage: `█████░░░░░ 50.0%`.
pub fn meter(share: f64) -> String {
    let share = share.clamp(0.0, 1.0);
    let full = (share * 10.0).round() as usize;
    format!("{}{} {:.1}%", "█".repeat(full), "░".repeat(10 - full), share * 100.0)
}

fn spans(out: &mut String, spans: &[Span]) {
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&escape(t)),
            Span::Code(t) => out.push_str(&code(t)),
            Span::Strong(t) => {
                let _ = write!(out, "**{}**", escape(t));
            }
            Span::Anchor { text, id } => {
                let _ = write!(out, "[{}](#{id})", escape(text));
            }
            Span::Meter(share) => out.push_str(&meter(*share)),
        }
    }
}

/// The frame-size histogram as a fixed-width block, limits marked on the bin they fall in.
fn histogram(fs: &FrameSizes) -> String {
    let mut s = String::from("```text\n");
    let max = fs.bins.iter().map(|b| b.c2s + b.s2c).max().unwrap_or(0).max(1);
    let _ = writeln!(s, "{:<21} {:>6} {:>6}  frames", "size on the wire", "c2s", "s2c");
    for b in &fs.bins {
        let range = format!("{} – {}", short_bytes(b.lo_bytes), short_bytes(b.hi_bytes));
        let n = b.c2s + b.s2c;
        let bar_len = if n == 0 { 0 } else { ((n as f64 / max as f64) * 30.0).ceil() as usize };
        let mut line = format!("{range:<21} {:>6} {:>6}  {}", thousands(b.c2s), thousands(b.s2c), "█".repeat(bar_len));
        let limits: Vec<String> = fs
            .limits
            .iter()
            .filter(|l| l.enabled && l.bytes >= b.lo_bytes.max(1) && l.bytes < b.hi_bytes)
            .map(|l| format!("{} {}", l.name, short_bytes(l.bytes)))
            .collect();
        if !limits.is_empty() {
            let _ = write!(line, "{}◀ limit: {}", if bar_len > 0 { " " } else { "" }, limits.join(", "));
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s.push_str("```\n");
    s
}

/// Renders the whole report.
pub fn render(report: &Report) -> String {
    let mut out = String::from("# MCP traffic report\n\n");
    for block in report.outline() {
        match block {
            Block::Heading { level, text, .. } => {
                let _ = writeln!(out, "{} {}\n", "#".repeat(usize::from(level)), escape(&text));
            }
            Block::Para(p) => {
                spans(&mut out, &p);
                out.push_str("\n\n");
            }
            Block::Table { header, numeric, rows, more } => {
                out.push('|');
                for h in &header {
                    let _ = write!(out, " {} |", escape(h));
                }
                out.push_str("\n|");
                for n in &numeric {
                    out.push_str(if *n { "--:|" } else { "---|" });
                }
                out.push('\n');
                for row in rows {
                    out.push('|');
                    for cell in row {
                        out.push(' ');
                        spans(&mut out, &cell);
                        out.push_str(" |");
                    }
                    out.push('\n');
                }
                if more > 0 {
                    let _ = writeln!(out, "\n… and {more} more (the JSON report lists all).");
                }
                out.push('\n');
            }
            Block::Advice(a) => {
                let _ = writeln!(out, "> **What to change:** {}\n", escape(&a));
            }
            Block::Chart(ChartKind::FrameSizes) => {
                if !report.frame_sizes.bins.is_empty() {
                    out.push_str(&histogram(&report.frame_sizes));
                    out.push('\n');
                }
            }
            // The rates table carries a bar per row.
            Block::Chart(ChartKind::Truncation | ChartKind::Swimlane(_)) => {}
        }
    }
    out
}


// `mcpsift diff`: the two sides, one table row per group, then the regressions as a list.

/// A diff cell in a table row.
fn escape_cell(cell: &str) -> String {
    cell.replace('|', "\\|")
}

impl Exporter<Diff> for Markdown {
    fn export(&self, diff: &Diff, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "## mcpsift diff\n")?;
        writeln!(out, "- {} ({} tools/call)", escape_cell(&side_line("**A**", &diff.a)), side_calls(diff, true))?;
        writeln!(out, "- {} ({} tools/call)", escape_cell(&side_line("**B**", &diff.b)), side_calls(diff, false))?;
        writeln!(out, "\nBy {}; each cell is A -> B, rates as n/N of the group's logical calls.\n", key_words(diff.by))?;
        writeln!(out, "| {} |", HEADERS.join(" | "))?;
        writeln!(out, "|{}", "---|".repeat(HEADERS.len()))?;
        for row in &diff.rows {
            let c: Vec<String> = cells(row).iter().map(|c| escape_cell(c)).collect();
            writeln!(out, "| `{}` | {} |", c[0], c[1..].join(" | "))?;
        }
        let mut any = false;
        for row in diff.rows.iter().filter(|r| !r.regressions.is_empty()) {
            if !any {
                writeln!(out, "\n### Regressions\n")?;
                any = true;
            }
            for r in &row.regressions {
                writeln!(out, "- `{}` {}: **{}**: {}", row.tool, escape_cell(&cells(row)[1]), r.measure, escape_cell(&r.detail))?;
            }
        }
        if !any {
            writeln!(out, "\nNo regression under the thresholds.")?;
        }
        Ok(())
    }
}

// A session's timeline: the header, then one table row per frame or event.

fn timeline_markdown(t: &Timeline) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Timeline of `{}`\n", t.session);
    for h in header(t) {
        let _ = writeln!(s, "{h}  ");
    }
    let _ = writeln!(s, "\n| | seq | time | Δ | dir | what | findings |\n|---|--:|---|--:|---|---|---|");
    for l in &t.lines {
        let cell = |x: &str| x.replace('|', "\\|");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            if l.anchor { "▶" } else { "" },
            l.seq.map(|q| q.to_string()).unwrap_or_default(),
            time_text(l),
            delta_text(l),
            arrow(l),
            cell(&words(l)),
            cell(&l.findings.join("<br>"))
        );
    }
    if t.left_out_after > 0 {
        let _ = writeln!(s, "\n… {} later frame(s) left out (--window)", t.left_out_after);
    }
    for f in &t.session_findings {
        let _ = writeln!(s, "\n- session: {f}");
    }
    s
}

impl Exporter<Timeline> for Markdown {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        out.write_all(timeline_markdown(t).as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        assert_eq!(escape("a|b\nc <x> *y*"), "a\\|b c &lt;x&gt; \\*y\\*");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(meter(0.5), "█████░░░░░ 50.0%");
    }
}
