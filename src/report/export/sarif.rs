//! SARIF 2.1.0 for code-scanning dashboards: one result per finding, the capture as the
//! artifact; each rule descriptor carries the rule file's title, advice and cause sentences.
//! A run stays within GitHub code scanning's limits: at most [`MAX_RESULTS`] results and
//! [`MAX_BYTES`] bytes; the findings past that (the least severe: findings come sorted by
//! severity) are summarised in one last result, and [`Overflow`] says so for stderr.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use super::json::rule_words;
use super::{CheckRun, ExportError, Exporter};
use crate::query::rules::{Rule, Severity};
use crate::report::findings::Finding;

/// Results per run GitHub code scanning keeps (it drops the rest and rejects runs over 25,000).
pub const MAX_RESULTS: usize = 5_000;
/// Bytes of the whole file: GitHub takes SARIF uploads up to 10 MB gzip-compressed; staying under
/// 10 MB uncompressed keeps any upload (gzipped or not) under the cap.
pub const MAX_BYTES: usize = 10_000_000;
/// Room kept for the summary result and its rule descriptor.
const SUMMARY_RESERVE: usize = 8_192;
/// The rule id of the summary result.
pub const OVERFLOW_RULE: &str = "sarif_overflow";

pub struct Sarif;

impl Exporter<CheckRun<'_>> for Sarif {
    fn export(&self, run: &CheckRun<'_>, out: &mut dyn Write) -> Result<(), ExportError> {
        let (sarif, _) = render_sarif_capped(run.findings, run.rules, MAX_RESULTS, MAX_BYTES);
        writeln!(out, "{}", serde_json::to_string_pretty(&sarif)?)?;
        Ok(())
    }
}

/// Findings a capped run leaves out, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Overflow {
    pub listed: usize,
    pub omitted: usize,
    /// Omitted findings per severity (error, warn, info).
    pub by_severity: [usize; 3],
    /// Omitted findings per rule, in rule name order.
    pub by_rule: BTreeMap<String, usize>,
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SARIF run capped for GitHub code scanning ({MAX_RESULTS} results, {MAX_BYTES} bytes): {} of {} finding(s) listed, the other {} ({} error, {} warn, {} info) summarised in one `{OVERFLOW_RULE}` result; `--format json` lists all",
            self.listed,
            self.listed + self.omitted,
            self.omitted,
            self.by_severity[0],
            self.by_severity[1],
            self.by_severity[2]
        )
    }
}

/// The overflow a SARIF run of these findings would have (what `check` says on stderr).
pub fn overflow(findings: &[Finding], rules: &[Rule]) -> Option<Overflow> {
    render_sarif_capped(findings, rules, MAX_RESULTS, MAX_BYTES).1
}

/// SARIF 2.1.0 with one result per finding; the capture is the artifact. Each rule carries its
/// title, advice and cause sentences; each result its cause tokens. Uncapped.
pub fn render_sarif(findings: &[Finding], rules: &[Rule]) -> Value {
    render_sarif_capped(findings, rules, usize::MAX, usize::MAX).0
}

fn level(severity: &str) -> &'static str {
    match Severity::parse(severity) {
        Some(Severity::Error) => "error",
        Some(Severity::Warn) => "warning",
        _ => "note",
    }
}

fn result(f: &Finding) -> Value {
    json!({
        "ruleId": f.rule,
        "level": level(&f.severity),
        "message": {"text": format!("{}{}", f.tool.as_ref().map(|t| format!("{t}: ")).unwrap_or_default(), f.line())},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.capture}}}],
        "partialFingerprints": {"mcpsiftFindingId/v1": f.id},
        "properties": {"id": f.id, "session": f.session, "rpc_id": f.rpc_id, "tool": f.tool, "client": f.client, "bytes": f.bytes, "cause": f.cause},
    })
}

/// Bytes `v` takes in the pretty-printed file as an element of `runs[0].results` (four levels
/// deep: two spaces of indent per level on every line) with its `,\n`.
fn pretty_len(v: &Value) -> usize {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    text.len() + 8 * text.lines().count() + 2
}

fn document(descriptors: Vec<Value>, results: Vec<Value>) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "mcpsift", "version": env!("CARGO_PKG_VERSION"), "informationUri": "https://modelcontextprotocol.io", "rules": descriptors}},
            "results": results,
        }],
    })
}

/// SARIF with at most `max_results` results in at most about `max_bytes` bytes: findings in
/// their order (most severe first) while both fit, then one result summarising the rest.
pub fn render_sarif_capped(findings: &[Finding], rules: &[Rule], max_results: usize, max_bytes: usize) -> (Value, Option<Overflow>) {
    let mut descriptors: Vec<Value> = rules
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
    let frame = serde_json::to_string_pretty(&document(descriptors.clone(), Vec::new())).map_or(0, |s| s.len());
    let mut results: Vec<Value> = Vec::new();
    let mut used = frame;
    let everything_fits = findings.len() <= max_results;
    for (k, f) in findings.iter().enumerate() {
        let r = result(f);
        let size = pretty_len(&r);
        // With an overflow, one slot and some bytes go to the summary.
        let last_slot = !everything_fits && results.len() + 1 >= max_results;
        if last_slot || used.saturating_add(size).saturating_add(SUMMARY_RESERVE) > max_bytes {
            let rest = &findings[k..];
            let overflow = summarise(results.len(), rest);
            descriptors.push(json!({
                "id": OVERFLOW_RULE,
                "name": OVERFLOW_RULE,
                "shortDescription": {"text": "Findings not listed in this run"},
                "help": {"text": "GitHub code scanning keeps 5,000 results per run and takes uploads under 10 MB: run `mcpsift check --format json` for every finding."},
            }));
            results.push(summary_result(&overflow, rest));
            return (document(descriptors, results), Some(overflow));
        }
        used += size;
        results.push(r);
    }
    (document(descriptors, results), None)
}

fn summarise(listed: usize, rest: &[Finding]) -> Overflow {
    let mut by_severity = [0usize; 3];
    let mut by_rule = BTreeMap::new();
    for f in rest {
        let k = match Severity::parse(&f.severity) {
            Some(Severity::Error) => 0,
            Some(Severity::Warn) => 1,
            _ => 2,
        };
        by_severity[k] += 1;
        *by_rule.entry(f.rule.clone()).or_insert(0) += 1;
    }
    Overflow { listed, omitted: rest.len(), by_severity, by_rule }
}

/// The one result that stands for the findings left out: at their highest severity, located at
/// the first one's capture.
fn summary_result(o: &Overflow, rest: &[Finding]) -> Value {
    let worst = rest.iter().min_by_key(|f| Severity::rank_of(&f.severity)).map_or("info", |f| f.severity.as_str());
    let per_rule: Vec<String> = o.by_rule.iter().map(|(r, n)| format!("{r} {n}")).collect();
    json!({
        "ruleId": OVERFLOW_RULE,
        "level": level(worst),
        "message": {"text": format!(
            "{} more finding(s) not listed: this run lists the first {} by severity (GitHub code scanning keeps 5,000 results per run and takes uploads under 10 MB). Not listed: {} error, {} warn, {} info; by rule: {}. `mcpsift check --format json` lists every finding.",
            o.omitted, o.listed, o.by_severity[0], o.by_severity[1], o.by_severity[2], per_rule.join(", ")
        )},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": rest.first().map_or("", |f| f.capture.as_str())}}}],
        "properties": {
            "omitted": o.omitted,
            "by_severity": {"error": o.by_severity[0], "warn": o.by_severity[1], "info": o.by_severity[2]},
            "by_rule": o.by_rule,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(k: usize, severity: &str, detail_len: usize) -> Finding {
        Finding {
            id: format!("F{k:08x}"),
            rule: if k.is_multiple_of(2) { "a".into() } else { "b".into() },
            severity: severity.into(),
            capture: format!("cap{k}"),
            session: None,
            rpc_id: Some(k.to_string()),
            tool: Some("t".into()),
            client: None,
            bytes: Some(k as i64),
            cause: None,
            detail: "x".repeat(detail_len),
        }
    }

    #[test]
    fn a_run_under_both_limits_lists_every_finding() {
        let f: Vec<Finding> = (0..10).map(|k| finding(k, "warn", 10)).collect();
        let (v, o) = render_sarif_capped(&f, &[], 10, MAX_BYTES);
        assert!(o.is_none());
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 10);
    }

    #[test]
    fn the_result_cap_keeps_the_first_and_summarises_the_rest() {
        let f: Vec<Finding> = (0..12).map(|k| finding(k, if k < 3 { "error" } else { "info" }, 10)).collect();
        let (v, o) = render_sarif_capped(&f, &[], 10, MAX_BYTES);
        let o = o.expect("capped");
        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 10);
        assert_eq!((o.listed, o.omitted), (9, 3));
        assert_eq!(o.by_severity, [0, 0, 3]);
        assert_eq!(results[8]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "cap8");
        assert_eq!(results[9]["ruleId"], OVERFLOW_RULE);
        assert_eq!(results[9]["properties"]["omitted"], 3);
        assert_eq!(results[9]["level"], "note");
        assert_eq!(results[9]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "cap9");
    }

    #[test]
    fn the_byte_cap_holds_for_the_pretty_printed_file() {
        let f: Vec<Finding> = (0..200).map(|k| finding(k, "warn", 1_000)).collect();
        let max = 60_000;
        let (v, o) = render_sarif_capped(&f, &[], MAX_RESULTS, max);
        let o = o.expect("capped by bytes");
        let text = serde_json::to_string_pretty(&v).unwrap();
        assert!(text.len() < max, "{} bytes", text.len());
        assert!(o.listed > 10 && o.listed < 200, "{o:?}");
        assert_eq!(o.listed + o.omitted, 200);
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), o.listed + 1);
    }
}
