//! SARIF 2.1.0 for code-scanning dashboards: one result per finding, the capture as the
//! artifact; each rule descriptor carries the rule file's title, advice and cause sentences.

use std::io::Write;

use serde_json::{Value, json};

use super::json::rule_words;
use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::findings::Finding;

pub struct Sarif;

impl Exporter<CheckRun<'_>> for Sarif {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "{}", serde_json::to_string_pretty(&render_sarif(run.findings, run.rules))?)?;
        Ok(())
    }
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
