//! JUnit XML for CI dashboards (the Apache Ant schema most dashboards read): one testsuite per
//! capture, one testcase per rule in it; a rule with warn or error findings in the capture
//! fails, its failure carrying every finding; info-only findings go to the suite's system-out.

use std::fmt::Write as _;
use std::io::Write;

use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::Severity;
use crate::report::findings::Finding;
use crate::report::format::utc;

pub struct Junit;

impl Exporter<CheckRun<'_>> for Junit {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        let now_us = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        out.write_all(render_junit(run, now_us).as_bytes())?;
        Ok(())
    }
}

/// Text for XML: markup escaped, characters XML 1.0 cannot carry (most C0 controls) dropped.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => o.push(c),
        }
    }
    o
}

/// One finding as a line of a failure's text.
fn finding_line(f: &Finding) -> String {
    let bytes = f.bytes.map(|b| format!("  {b} B")).unwrap_or_default();
    format!("{}  {}  {}  {}{bytes}  {}", f.id, f.severity, f.tool.as_deref().unwrap_or("-"), f.client.as_deref().unwrap_or("-"), f.line())
}

/// The document, stamped `now_us` (microseconds since the epoch, UTC, as the schema's
/// timezone-less timestamp).
pub fn render_junit(run: &CheckRun<'_>, now_us: i64) -> String {
    let stamp = utc(now_us).trim_end_matches(" UTC").replacen(' ', "T", 1);
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (id, capture) in run.capture_names.iter().enumerate() {
        let mine: Vec<&Finding> = run.findings.iter().filter(|f| &f.capture == capture).collect();
        let failing = |rule: &str| mine.iter().any(|f| f.rule == rule && Severity::parse(&f.severity).is_some_and(|s| s <= Severity::Warn));
        let failures = run.rules.iter().filter(|r| failing(&r.name)).count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" package=\"mcpsift\" id=\"{id}\" timestamp=\"{stamp}\" hostname=\"localhost\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"0\">",
            esc(capture),
            run.rules.len()
        );
        s.push_str("    <properties/>\n");
        for rule in run.rules {
            let _ = write!(s, "    <testcase name=\"{}\" classname=\"{}\" time=\"0\"", esc(&rule.name), esc(capture));
            if !failing(&rule.name) {
                s.push_str("/>\n");
                continue;
            }
            let of_rule: Vec<&&Finding> = mine.iter().filter(|f| f.rule == rule.name).collect();
            let n = |sev: Severity| of_rule.iter().filter(|f| f.severity == sev.as_str()).count();
            let worst = if n(Severity::Error) > 0 { Severity::Error } else { Severity::Warn };
            let _ = writeln!(
                s,
                ">\n      <failure message=\"{}: {} finding(s): {} error, {} warn, {} info\" type=\"{}\">",
                esc(rule.title()),
                of_rule.len(),
                n(Severity::Error),
                n(Severity::Warn),
                n(Severity::Info),
                worst.as_str()
            );
            for f in &of_rule {
                let _ = writeln!(s, "{}", esc(&finding_line(f)));
            }
            if let Some(advice) = rule.advice() {
                let _ = writeln!(s, "advice: {}", esc(advice));
            }
            s.push_str("      </failure>\n    </testcase>\n");
        }
        let info: Vec<String> = mine.iter().filter(|f| !failing(&f.rule)).map(|f| format!("{}: {}", f.rule, finding_line(f))).collect();
        if info.is_empty() {
            s.push_str("    <system-out/>\n");
        } else {
            let _ = writeln!(s, "    <system-out>{}</system-out>", esc(&info.join("\n")));
        }
        s.push_str("    <system-err/>\n  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_controls_dropped() {
        assert_eq!(esc("a<b>&\"'\u{1}\tz"), "a&lt;b&gt;&amp;&quot;&apos;\tz");
    }
}
