//! The `check` terminal summary: totals, then per rule its counts and title, the top
//! offenders, the meaning of each cause seen and one line of advice.

use std::fmt::Write as _;
use std::io::Write;

use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::findings::{Finding, counts};
use crate::report::stats::thousands;

pub struct CheckText;

impl Exporter<CheckRun<'_>> for CheckText {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        out.write_all(render_text(run.findings, run.rules, run.captures).as_bytes())?;
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
                "  {:<5}  {}  {}  {}  {}  {}",
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
