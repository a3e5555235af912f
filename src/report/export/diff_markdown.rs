//! `mcpsift diff` as GitHub-flavoured Markdown: the two sides, one table row per group (the
//! text exporter's cells), then the regressions as a list.

use std::io::Write;

use super::diff_text::{HEADERS, cells, key_words, side_calls, side_line};
use super::{ExportError, Exporter};
use crate::report::diff::Diff;

pub struct DiffMarkdown;

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

impl Exporter<Diff> for DiffMarkdown {
    fn export(&self, diff: &Diff, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "## mcpsift diff\n")?;
        writeln!(out, "- {} ({} tools/call)", escape(&side_line("**A**", &diff.a)), side_calls(diff, true))?;
        writeln!(out, "- {} ({} tools/call)", escape(&side_line("**B**", &diff.b)), side_calls(diff, false))?;
        writeln!(out, "\nBy {}; each cell is A -> B, rates as n/N of the group's logical calls.\n", key_words(diff.by))?;
        writeln!(out, "| {} |", HEADERS.join(" | "))?;
        writeln!(out, "|{}", "---|".repeat(HEADERS.len()))?;
        for row in &diff.rows {
            let c: Vec<String> = cells(row).iter().map(|c| escape(c)).collect();
            writeln!(out, "| `{}` | {} |", c[0], c[1..].join(" | "))?;
        }
        let mut any = false;
        for row in diff.rows.iter().filter(|r| !r.regressions.is_empty()) {
            if !any {
                writeln!(out, "\n### Regressions\n")?;
                any = true;
            }
            for r in &row.regressions {
                writeln!(out, "- `{}` {}: **{}**: {}", row.tool, escape(&cells(row)[1]), r.measure, escape(&r.detail))?;
            }
        }
        if !any {
            writeln!(out, "\nNo regression under the thresholds.")?;
        }
        Ok(())
    }
}
