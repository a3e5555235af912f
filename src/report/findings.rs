//! Rendering findings: the terminal summary, JSON, and SARIF 2.1.0 for code-scanning tools.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use polars::prelude::*;
use serde_json::{Value, json};

use super::redact::redact;
use super::stats::thousands;
use crate::query::rules::{CAUSE_SEPARATOR, Rule, Severity};

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
    /// Cause tokens, primary first, joined by [`CAUSE_SEPARATOR`] (as in the `cause` column).
    pub cause: Option<String>,
    pub detail: String,
}

impl Finding {
    /// The cause tokens, primary first.
    pub fn causes(&self) -> Vec<&str> {
        self.cause.as_deref().map(|c| c.split(CAUSE_SEPARATOR).map(str::trim).filter(|t| !t.is_empty()).collect()).unwrap_or_default()
    }

    /// One line for people: the cause tokens, then the detail (`predicted_reject; ...`).
    pub fn line(&self) -> String {
        let mut s: String = self.causes().iter().map(|c| format!("{c}; ")).collect();
        s.push_str(&self.detail);
        s
    }
}

/// Reads findings rows, redacting secrets in text fields when `redact_secrets`.
pub fn findings_from(df: &DataFrame, redact_secrets: bool) -> PolarsResult<Vec<Finding>> {
    let s = |name: &str| -> PolarsResult<Vec<Option<String>>> {
        Ok(df.column(name)?.str()?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let (rule, severity, capture, session, rpc_id, tool, client, cause, detail) =
        (s("rule")?, s("severity")?, s("capture")?, s("session")?, s("rpc_id")?, s("tool")?, s("client")?, s("cause")?, s("detail")?);
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
            cause: cause[i].clone().filter(|c| !c.is_empty()),
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

/// The header's words of a rule as JSON: title, advice, severity meanings, cause sentences.
fn rule_words(rule: &Rule) -> serde_json::Map<String, Value> {
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

/// `{"summary": {...}, "findings": [...]}`.
pub fn render_json(findings: &[Finding], rules: &[Rule]) -> Value {
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
    })
}

/// SARIF 2.1.0 with one result per finding; the capture is the artifact. Each rule carries its
/// title, advice and cause sentences; each result its cause tokens.
pub fn render_sarif(findings: &[Finding], rules: &[Rule]) -> Value {
    let descriptors: Vec<Value> = rules
        .iter()
        .map(|r| {
            let mut d = json!({"id": r.name, "name": r.name, "shortDescription": {"text": r.title()}});
            if let Some(advice) = r.advice() {
                d["help"] = json!({"text": advice});
            }
            d["properties"] = Value::Object(rule_words(r));
            d
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let level = match Severity::parse(&f.severity) {
                Some(Severity::Error) => "error",
                Some(Severity::Warn) => "warning",
                _ => "note",
            };
            json!({
                "ruleId": f.rule,
                "level": level,
                "message": {"text": format!("{}{}", f.tool.as_ref().map(|t| format!("{t}: ")).unwrap_or_default(), f.line())},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.capture}}}],
                "properties": {"session": f.session, "rpc_id": f.rpc_id, "tool": f.tool, "client": f.client, "bytes": f.bytes, "cause": f.cause},
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcpsift", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://modelcontextprotocol.io", "rules": descriptors}},
            "results": results,
        }],
    })
}
