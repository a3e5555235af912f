//! `mcpsift check`: every rule, a compact summary, exit 1 at or above `--fail-on`.

use std::io::Write;

use crate::cli::{CheckArgs, CheckFormat, FailOn};
use mcpsift::query::rules::{Severity, load_rules, run_rules, select};
use mcpsift::report::findings::{findings_from, render_json, render_sarif, render_text};

pub fn run(args: &CheckArgs) -> anyhow::Result<u8> {
    let rules = select(load_rules(args.queries.as_deref())?, &args.rule)?;
    let loaded = super::load_inputs(&args.input)?;
    let df = run_rules(&loaded.tables, &rules)?;
    let findings = findings_from(&df, !args.no_redact)?;
    let captures = loaded.captures.iter().filter(|c| !c.rows.frames_by_kind.is_empty() || !c.rows.events.is_empty()).count();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        CheckFormat::Text => write!(out, "{}", render_text(&findings, &rules, captures))?,
        CheckFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&render_json(&findings, &rules))?)?,
        CheckFormat::Sarif => writeln!(out, "{}", serde_json::to_string_pretty(&render_sarif(&findings, &rules))?)?,
    }
    out.flush()?;
    let failing = args.fail_on.is_some_and(|level| {
        let threshold = match level {
            FailOn::Warn => Severity::Warn,
            FailOn::Error => Severity::Error,
        };
        findings.iter().any(|f| Severity::parse(&f.severity).is_some_and(|s| s <= threshold))
    });
    Ok(u8::from(failing))
}
