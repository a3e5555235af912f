//! `mcpsift report`: every rule, gathered into one document, written as Markdown, HTML or JSON.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

use crate::cli::ReportArgs;
use mcpsift::query::rules::{load_rules, run_rules};
use mcpsift::report::document::{Redaction, Report};
use mcpsift::report::findings::findings_from;
use mcpsift::report::export::ReportFormat;
use mcpsift::report::stats::thousands;

/// The format asked for, else the one the output's extension names, else Markdown.
fn format_of(args: &ReportArgs) -> anyhow::Result<ReportFormat> {
    if let Some(f) = args.format {
        return Ok(f);
    }
    let Some(path) = args.output.as_deref().filter(|p| *p != Path::new("-")) else { return Ok(ReportFormat::Md) };
    let ext = path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
    ReportFormat::of_extension(&ext).with_context(|| format!("{}: cannot tell the report format from the extension; use .md, .html, .json or --format", path.display()))
}

pub fn run(args: &ReportArgs) -> anyhow::Result<u8> {
    let format = format_of(args)?;
    let rules = load_rules(args.queries.as_deref())?;
    let audit = super::inputs::open_inputs(&args.input)?;
    let df = run_rules(&audit.source, &rules)?;
    let redaction = if args.no_redact { Redaction::Off } else { Redaction::On };
    let findings = findings_from(&df, redaction == Redaction::On)?;
    let inputs: Vec<String> = args.input.paths.iter().map(|p| p.display().to_string()).chain(args.input.pair.iter().map(|p| format!("{}:{}", p.c2s.display(), p.s2c.display()))).collect();
    let report = Report::gather(&inputs, &audit.captures, &audit.source, &rules, &findings, redaction)?;
    let exporter = format.exporter();
    let mut text = Vec::new();
    exporter.export(&report, &mut text)?;
    match args.output.as_deref().filter(|p| *p != Path::new("-")) {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            if !args.input.quiet {
                eprintln!(
                    "mcpsift: wrote {} ({} bytes): {} finding(s), {} error, {} warn, {} info",
                    path.display(),
                    thousands(text.len() as u64),
                    report.totals.findings,
                    report.totals.error,
                    report.totals.warn,
                    report.totals.info
                );
            }
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            out.write_all(&text)?;
            out.flush()?;
        }
    }
    Ok(0)
}
