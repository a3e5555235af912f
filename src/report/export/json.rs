//! JSON: a result table as one array of row objects, the report's read model, a check run as
//! `{"summary": {...}, "findings": [...], "latency": [...]}` with each rule's words, `diff`'s
//! sides and groups, and a session's timeline.

use std::io::Write;

use polars::prelude::*;
use serde_json::{Value, json};

use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::document::{LatencyGroup, Report};
use crate::report::diff::Diff;
use crate::report::findings::{Finding, counts};
use crate::report::timeline::Timeline;

pub struct Json;

impl Exporter<DataFrame> for Json {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        JsonWriter::new(&mut *out).with_json_format(JsonFormat::Json).finish(&mut df.clone())?;
        writeln!(out)?;
        Ok(())
    }
}

impl Exporter<Report> for Json {
    fn export(&self, report: &Report, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
        Ok(())
    }
}

impl Exporter<CheckRun<'_>> for Json {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "{}", serde_json::to_string_pretty(&check_json(run.findings, run.rules, run.latency))?)?;
        Ok(())
    }
}

/// The header's words of a rule as JSON: title, advice, severity meanings, cause sentences.
pub fn rule_words(rule: &Rule) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("title".into(), json!(rule.title()));
    m.insert("advice".into(), json!(rule.advice()));
    let severities: serde_json::Map<String, Value> = rule.header.severities.iter().map(|(s, m)| (s.as_str().to_string(), json!(m))).collect();
    m.insert("severities".into(), Value::Object(severities));
    let causes: serde_json::Map<String, Value> = rule.header.causes.iter().map(|(t, m)| (t.clone(), json!(m))).collect();
    m.insert("causes".into(), Value::Object(causes));
    m
}

/// A finding in check JSON: its columns, with `detail` as [`Finding::line`] (cause tokens
/// first, as consumers of this JSON read it before the `cause` column existed).
fn json_finding(f: &Finding) -> Value {
    let mut v = json!(f);
    v["detail"] = json!(f.line());
    v
}

/// `{"summary": {...}, "findings": [...], "latency": [...]}`.
pub fn check_json(findings: &[Finding], rules: &[Rule], latency: &[LatencyGroup]) -> Value {
    let c = counts(findings);
    let per_rule: serde_json::Map<String, Value> = rules
        .iter()
        .map(|r| {
            let mut entry = serde_json::Map::new();
            for sev in Severity::ALL {
                entry.insert(sev.as_str().into(), json!(c.get(&(r.name.clone(), sev.as_str().to_string())).copied().unwrap_or(0)));
            }
            entry.extend(rule_words(r));
            (r.name.clone(), Value::Object(entry))
        })
        .collect();
    let by_sev = |sev: Severity| findings.iter().filter(|f| f.severity == sev.as_str()).count();
    json!({
        "summary": {
            "findings": findings.len(),
            "error": by_sev(Severity::Error),
            "warn": by_sev(Severity::Warn),
            "info": by_sev(Severity::Info),
            "rules": per_rule,
        },
        "findings": findings.iter().map(json_finding).collect::<Vec<_>>(),
        "latency": latency,
    })
}

/// `mcpsift diff`: both sides, the thresholds, and per group each side's counts, sizes and
/// latencies (`null` where a side has no such calls) with the regressions.
impl Exporter<Diff> for Json {
    fn export(&self, diff: &Diff, out: &mut dyn Write) -> Result<(), ExportError> {
        let mut v = serde_json::to_value(diff)?;
        v["regressed"] = serde_json::json!(diff.regressed());
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        Ok(())
    }
}

impl Exporter<Timeline> for Json {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        serde_json::to_writer_pretty(&mut *out, t).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}
