//! Rendering findings: the terminal summary, JSON, and SARIF 2.1.0 for code-scanning tools.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use polars::prelude::*;
use serde_json::{Value, json};

use super::redact::redact;
use super::stats::thousands;
use crate::query::rules::advice;

/// One finding, read out of the findings table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    pub rule: String,
    pub severity: String,
    pub capture: String,
    pub session: Option<String>,
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub client: Option<String>,
    pub bytes: Option<i64>,
    pub detail: String,
}

/// Reads findings rows, redacting secrets in text fields when `redact_secrets`.
pub fn findings_from(df: &DataFrame, redact_secrets: bool) -> PolarsResult<Vec<Finding>> {
    let s = |name: &str| -> PolarsResult<Vec<Option<String>>> {
        Ok(df.column(name)?.str()?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let (rule, severity, capture, session, rpc_id, tool, client, detail) =
        (s("rule")?, s("severity")?, s("capture")?, s("session")?, s("rpc_id")?, s("tool")?, s("client")?, s("detail")?);
    let bytes: Vec<Option<i64>> = df.column("bytes")?.i64()?.iter().collect();
    let clean = |t: Option<String>| t.map(|t| if redact_secrets { redact(&t) } else { t });
    Ok((0..df.height())
        .map(|i| Finding {
            rule: rule[i].clone().unwrap_or_default(),
            severity: severity[i].clone().unwrap_or_default(),
            capture: capture[i].clone().unwrap_or_default(),
            session: clean(session[i].clone()),
            rpc_id: rpc_id[i].clone(),
            tool: tool[i].clone(),
            client: client[i].clone(),
            bytes: bytes[i],
            detail: clean(detail[i].clone()).unwrap_or_default(),
        })
        .collect())
}

/// Counts per rule and severity.
fn counts(findings: &[Finding]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry((f.rule.clone(), f.severity.clone())).or_default() += 1;
    }
    m
}

/// The terminal summary: totals, then per rule its counts, top offenders and one line of advice.
pub fn render_text(findings: &[Finding], rule_names: &[String], captures: usize) -> String {
    let mut s = String::new();
    let by_sev = |sev: &str| findings.iter().filter(|f| f.severity == sev).count();
    let _ = writeln!(
        s,
        "mcpsift check: {} finding(s) in {} capture(s): {} error, {} warn, {} info",
        findings.len(),
        captures,
        by_sev("error"),
        by_sev("warn"),
        by_sev("info")
    );
    let c = counts(findings);
    for rule in rule_names {
        let n = |sev: &str| c.get(&(rule.clone(), sev.to_string())).copied().unwrap_or(0);
        let total = n("error") + n("warn") + n("info");
        let _ = writeln!(s, "\n{rule}: {total} ({} error, {} warn, {} info)", n("error"), n("warn"), n("info"));
        if total == 0 {
            continue;
        }
        let mut top: Vec<&Finding> = findings.iter().filter(|f| &f.rule == rule).collect();
        top.sort_by_key(|f| (severity_rank(&f.severity), std::cmp::Reverse(f.bytes.unwrap_or(0))));
        for f in top.iter().take(5) {
            let bytes = f.bytes.map(|b| format!("{} B", thousands(b.max(0) as u64))).unwrap_or_default();
            let detail: String = f.detail.chars().take(160).collect();
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
        let _ = writeln!(s, "  advice: {}", advice(rule));
    }
    s
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "error" => 0,
        "warn" => 1,
        _ => 2,
    }
}

/// `{"summary": {...}, "findings": [...]}`.
pub fn render_json(findings: &[Finding], rule_names: &[String]) -> Value {
    let c = counts(findings);
    let per_rule: serde_json::Map<String, Value> = rule_names
        .iter()
        .map(|r| {
            let n = |sev: &str| c.get(&(r.clone(), sev.to_string())).copied().unwrap_or(0);
            (r.clone(), json!({"error": n("error"), "warn": n("warn"), "info": n("info"), "advice": advice(r)}))
        })
        .collect();
    json!({
        "summary": {
            "findings": findings.len(),
            "error": findings.iter().filter(|f| f.severity == "error").count(),
            "warn": findings.iter().filter(|f| f.severity == "warn").count(),
            "info": findings.iter().filter(|f| f.severity == "info").count(),
            "rules": per_rule,
        },
        "findings": findings,
    })
}

/// SARIF 2.1.0 with one result per finding; the capture is the artifact.
pub fn render_sarif(findings: &[Finding], rule_names: &[String]) -> Value {
    let rules: Vec<Value> = rule_names
        .iter()
        .map(|r| json!({"id": r, "name": r, "shortDescription": {"text": r}, "help": {"text": advice(r)}}))
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let level = match f.severity.as_str() {
                "error" => "error",
                "warn" => "warning",
                _ => "note",
            };
            json!({
                "ruleId": f.rule,
                "level": level,
                "message": {"text": format!("{}{}", f.tool.as_ref().map(|t| format!("{t}: ")).unwrap_or_default(), f.detail)},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.capture}}}],
                "properties": {"session": f.session, "rpc_id": f.rpc_id, "tool": f.tool, "client": f.client, "bytes": f.bytes},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcpsift", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://modelcontextprotocol.io", "rules": rules}},
            "results": results,
        }],
    })
}
