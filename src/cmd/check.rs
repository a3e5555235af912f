//! `mcpsift check`: every rule, a compact summary, exit 1 at or above `--fail-on`.

use std::io::Write as _;

use crate::cli::{CheckArgs, FailOn};
use mcpsift::query::rules::{Severity, load_rules, run_rules, select};
use mcpsift::report::export::{CheckFormat, CheckRun, sarif};
use mcpsift::model::tool_changes::Baseline;
use mcpsift::query::source::WithBaseline;
use mcpsift::report::findings::findings_from;

pub fn run(args: &CheckArgs) -> anyhow::Result<u8> {
    let rules = select(load_rules(args.queries.as_deref())?, &args.rule)?;
    let audit = super::inputs::open_inputs(&args.input)?;
    let baseline = args.baseline.as_ref().map(|file| Baseline::read(file)).transpose()?;
    // The latency summary runs beside the rules, two queries at a time (`query::parallel`).
    let (df, latency) = std::thread::scope(|scope| {
        let latency = scope.spawn(|| mcpsift::report::gather::latency(&audit.source));
        let df = match baseline {
            Some(baseline) => run_rules(&WithBaseline { inner: &audit.source, baseline }, &rules),
            None => run_rules(&audit.source, &rules),
        };
        (df, latency.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    let (df, latency) = (df?, latency?);
    let findings = findings_from(&df, !args.no_redact)?;
    let capture_names: Vec<String> = audit.captures.iter().filter(|c| c.is_capture()).map(|c| c.name.clone()).collect();
    let captures = capture_names.len();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let exporter = args.format.exporter();
    exporter.export(&CheckRun { findings: &findings, rules: &rules, captures, capture_names: &capture_names, latency: &latency }, &mut out)?;
    out.flush()?;
    if matches!(args.format, CheckFormat::Sarif)
        && !args.input.quiet
        && let Some(overflow) = sarif::overflow(&findings, &rules)
    {
        eprintln!("mcpsift: {overflow}");
    }
    let failing = args.fail_on.is_some_and(|level| {
        let threshold = match level {
            FailOn::Warn => Severity::Warn,
            FailOn::Error => Severity::Error,
        };
        findings.iter().any(|f| Severity::parse(&f.severity).is_some_and(|s| s <= threshold))
    });
    Ok(u8::from(failing))
}
