//! `check --format junit` is valid against mcpsift's own schema of the Ant JUnit format (tests/junit/junit.xsd,
//! validated by Python `xmlschema` from the venv `.ci/test` makes), has one testcase per rule
//! × capture, and fails exactly where the samples' truth seeded problems.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::check::rule_for;
use crate::util::{mcpsift, read_json, recorded_samples, samples};

fn python() -> PathBuf {
    let venv = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mcpsift-venv/bin/python"));
    let py = std::env::var_os("MCPSIFT_PYTHON").map(PathBuf::from).or(venv).filter(|p| p.is_file());
    py.expect("a Python with xmlschema is required: run `bash .ci/test` (it creates ~/.cache/mcpsift-venv), or set MCPSIFT_PYTHON")
}

/// Validates `xml` against the XSD; on success prints the suites as JSON: per suite its name,
/// counts and testcases (name, classname, failure type and text).
const VALIDATE: &str = r#"
import json, sys, xmlschema
import xml.etree.ElementTree as ET
schema = xmlschema.XMLSchema(sys.argv[1])
errors = [str(e.reason) for e in schema.iter_errors(sys.argv[2])]
if errors:
    print("INVALID: " + "; ".join(errors[:3]), file=sys.stderr)
    sys.exit(3)
suites = []
for s in ET.parse(sys.argv[2]).getroot().findall("testsuite"):
    cases = []
    for c in s.findall("testcase"):
        f = c.find("failure")
        cases.append({"name": c.get("name"), "classname": c.get("classname"),
                      "failure": None if f is None else {"type": f.get("type"), "message": f.get("message"), "text": f.text or ""}})
    suites.append({"name": s.get("name"), "tests": int(s.get("tests")), "failures": int(s.get("failures")), "cases": cases})
print(json.dumps(suites))
"#;

fn validate(xml: &Path) -> Result<Value, String> {
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/junit/junit.xsd");
    let out = Command::new(python()).arg("-c").arg(VALIDATE).arg(&xsd).arg(xml).output().expect("run python");
    if out.status.success() { Ok(serde_json::from_slice(&out.stdout).expect("suites json")) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

#[test]
fn junit_is_valid_has_a_testcase_per_rule_and_capture_and_fails_where_problems_were_seeded() {
    let dir = crate::util::temp_dir("junit");
    let folders = recorded_samples();
    let run = |format: &str| {
        let args: Vec<&str> = ["check", "-q", "--format", format].into_iter().chain(folders.iter().map(String::as_str)).collect();
        mcpsift(&args)
    };
    let out = run("junit");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let xml = dir.join("check.xml");
    std::fs::write(&xml, &out.stdout).unwrap();
    let suites = validate(&xml).unwrap_or_else(|e| panic!("not valid against junit.xsd: {e}"));

    // The validator is live: the same document without a required attribute is rejected.
    let broken = dir.join("broken.xml");
    std::fs::write(&broken, String::from_utf8_lossy(&out.stdout).replacen(" hostname=\"localhost\"", "", 1)).unwrap();
    assert!(validate(&broken).is_err(), "a testsuite without hostname must fail validation");

    // 13 captures in the recorded samples: four stdio pairs, three host logs, five packet captures, one transcript.
    let suites = suites.as_array().expect("suites");
    assert_eq!(suites.len(), 13, "one suite per capture of samples/ (13 captures)");
    let check: Value = serde_json::from_slice(&run("json").stdout).unwrap();
    let rules: Vec<&String> = check["summary"]["rules"].as_object().unwrap().keys().collect();
    let mut failing: BTreeSet<(String, String)> = BTreeSet::new();
    for s in suites {
        let cases = s["cases"].as_array().unwrap();
        assert_eq!(cases.len(), rules.len(), "one testcase per rule in {}", s["name"]);
        assert_eq!(s["tests"].as_u64(), Some(rules.len() as u64));
        let failed: Vec<&Value> = cases.iter().filter(|c| !c["failure"].is_null()).collect();
        assert_eq!(s["failures"].as_u64(), Some(failed.len() as u64));
        for c in failed {
            assert_eq!(c["classname"], s["name"]);
            failing.insert((s["name"].as_str().unwrap().to_string(), c["name"].as_str().unwrap().to_string()));
            // The failure carries every warn/error finding of that rule in that capture.
            let text = c["failure"]["text"].as_str().unwrap();
            for f in check["findings"].as_array().unwrap().iter().filter(|f| f["capture"] == s["name"] && f["rule"] == c["name"] && f["severity"] != "info") {
                let detail = f["detail"].as_str().unwrap();
                let detail: String = detail.chars().take(60).collect();
                assert!(text.contains(&detail), "{}/{}: failure lacks {detail:?}", s["name"], c["name"]);
            }
        }
    }
    // Every seeded problem fails its rule's testcase in its capture.
    let capture = |rel: &str| samples().join(rel).to_str().unwrap().to_string();
    for (rel, truth) in [("stdio_ts/c2s.log+s2c.log.gz", "stdio_ts/truth.json"), ("stdio_py/c2s.log+s2c.log", "stdio_py/truth.json"), ("transcript/session.jsonl", "transcript/truth.json")] {
        for p in read_json(&samples().join(truth))["problems"].as_array().unwrap() {
            let rule = rule_for(p["rule"].as_str().unwrap());
            assert!(failing.contains(&(capture(rel), rule.to_string())), "{rel}: seeded {} should fail {rule}", p["rule"]);
        }
    }
    // Captures the truth says are clean pass every testcase but schema_compat: their TS docs
    // tools declare draft-07 outputSchemas, a warning the recorders' truth predates (tests/check.rs
    // checks those warnings against the bytes).
    for clean in ["hostlog/mcp.log", "hostlog/vscode-mcp.log", "pcap/py_streamable.pcap"] {
        assert!(!failing.iter().any(|(c, r)| *c == capture(clean) && r != "schema_compat"), "{clean} is clean: {failing:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
