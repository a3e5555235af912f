//! The shipped rule files run unchanged in DuckDB over the Parquet tables `mcpsift tables`
//! writes, and find what `mcpsift check` finds (as multisets of rule, severity, capture,
//! session, rpc_id, tool). DuckDB comes from the venv `.ci/test` creates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{corpus, mcpsift, samples};

/// `$MCPSIFT_PYTHON`, else the venv `.ci/test` makes.
fn python() -> PathBuf {
    let venv = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mcpsift-venv/bin/python"));
    let py = std::env::var_os("MCPSIFT_PYTHON").map(PathBuf::from).or(venv).filter(|p| p.is_file());
    py.expect("a Python with duckdb is required: run `bash .ci/test` (it creates ~/.cache/mcpsift-venv), or set MCPSIFT_PYTHON")
}

type Key = (String, String, String, Option<String>, Option<String>, Option<String>);

fn key(f: &Value) -> Key {
    let s = |k: &str| f[k].as_str().map(str::to_string);
    (s("rule").unwrap_or_default(), s("severity").unwrap_or_default(), s("capture").unwrap_or_default(), s("session"), s("rpc_id"), s("tool"))
}

fn multiset(findings: impl Iterator<Item = Key>) -> BTreeMap<Key, usize> {
    let mut m = BTreeMap::new();
    for k in findings {
        *m.entry(k).or_default() += 1;
    }
    m
}

fn compare(input: &Path, name: &str) {
    let dir = crate::util::temp_dir(&format!("duckdb-{name}")).join("dataset");
    let input = input.to_str().expect("utf-8 path");
    let out = mcpsift(&["tables", input, "--out", dir.to_str().expect("utf-8 path"), "-q"]);
    assert!(out.status.success(), "tables: {}", String::from_utf8_lossy(&out.stderr));
    let queries = Path::new(env!("CARGO_MANIFEST_DIR")).join("queries");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/duckdb/run_rules.py");
    let duck = Command::new(python()).arg(&script).arg(&dir).arg(&queries).output().expect("run python");
    assert!(duck.status.success(), "DuckDB: {}", String::from_utf8_lossy(&duck.stderr));
    let duck: Vec<Value> = String::from_utf8(duck.stdout).expect("utf-8").lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let check = mcpsift(&["check", input, "-q", "--format", "json"]);
    assert!(check.status.success(), "check: {}", String::from_utf8_lossy(&check.stderr));
    let check: Value = serde_json::from_slice(&check.stdout).expect("check json");
    let check = check["findings"].as_array().expect("findings").clone();
    assert!(!check.is_empty(), "{name}: the inputs have seeded problems, so check finds some");
    assert_eq!(multiset(duck.iter().map(key)), multiset(check.iter().map(key)), "{name}: DuckDB and mcpsift check disagree");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn duckdb_runs_the_rule_files_and_finds_what_check_finds() {
    compare(&samples(), "samples");
    compare(&corpus(), "corpus");
}
