//! Helpers shared by the integration tests: finding the corpus, loading, querying, running the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcpsift::ingest::run::IngestOptions;
use mcpsift::pipeline::{Loaded, load};
use mcpsift::model::tables::default_limits;
use mcpsift::query::run_sql;
use mcpsift::report::export::QueryFormat;
use mcpsift::report::table_out::write_table;
use serde_json::Value;

/// The shared corpus of SDK captures (a folder with a README.md), searched as `.ci/test` does:
/// `$MCPSIFT_CORPUS`; else `shared/corpus` beside the repository or one of its ancestors; else
/// the same from the repository this one was cloned from, when its origin is a local path.
pub fn corpus() -> PathBuf {
    static CORPUS: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    CORPUS
        .get_or_init(|| {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
            std::env::var_os("MCPSIFT_CORPUS")
                .map(PathBuf::from)
                .filter(|p| p.join("README.md").is_file())
                .or_else(|| corpus_above(repo))
                .or_else(|| local_origin(repo).and_then(|origin| corpus_above(&origin)))
        })
        .clone()
        .expect("the shared corpus is required: set MCPSIFT_CORPUS to its folder")
}

/// `shared/corpus` in `dir` or the nearest of its ancestors that has one.
fn corpus_above(dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).ok()?;
    dir.ancestors().map(|d| d.join("shared/corpus")).find(|c| c.join("README.md").is_file())
}

/// The folder `repo` was cloned from, when `remote.origin.url` is a local path.
fn local_origin(repo: &Path) -> Option<PathBuf> {
    let out = Command::new("git").arg("-C").arg(repo).args(["config", "--get", "remote.origin.url"]).output().ok()?;
    let url = String::from_utf8(out.stdout).ok()?;
    let url = url.trim();
    let path = repo.join(url.strip_prefix("file://").unwrap_or(url));
    (!url.is_empty() && path.is_dir()).then_some(path)
}

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// The samples recorded from the SDKs with seeded problems in their `truth.json` (the other
/// sample folders re-shape these sessions into other log formats and have their own tests).
pub fn recorded_samples() -> Vec<String> {
    ["stdio_ts", "stdio_py", "stdio_py2", "stdio_py2_fallback", "hostlog", "transcript", "pcap", "http_py2"]
        .iter()
        .map(|f| samples().join(f).to_str().expect("utf-8 path").to_string())
        .collect()
}

pub fn load_paths(paths: &[PathBuf]) -> Loaded {
    load(paths, &[], &IngestOptions::default(), &Default::default(), &default_limits()).expect("load")
}

/// Runs SQL and returns the rows as JSON objects.
pub fn rows(loaded: &Loaded, sql: &str) -> Vec<Value> {
    let mut df = run_sql(&loaded.tables, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut buf = Vec::new();
    write_table(&mut df, QueryFormat::Jsonl, &mut buf).expect("jsonl");
    String::from_utf8(buf).expect("utf8").lines().map(|l| serde_json::from_str(l).expect("json row")).collect()
}

/// A single number from a one-row, one-column query.
pub fn scalar(loaded: &Loaded, sql: &str) -> i64 {
    let r = rows(loaded, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    let obj = r[0].as_object().expect("object");
    assert_eq!(obj.len(), 1, "{sql}");
    obj.values().next().and_then(Value::as_i64).unwrap_or(0)
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).expect("json")
}

/// Runs the built binary.
pub fn mcpsift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpsift")).args(args).output().expect("run mcpsift")
}

/// This run's scratch folder, `$TMPDIR/mcpsift-tests-PID`: every file a test writes goes under
/// it, and it is removed when the test binary exits (set `MCPSIFT_KEEP_TEST_FILES` to keep it).
/// Runs killed before they exit leave theirs; the next run removes those of dead processes.
fn scratch() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_dead_runs(&tmp);
        let root = tmp.join(format!("mcpsift-tests-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("scratch folder");
        unsafe extern "C" {
            fn atexit(callback: extern "C" fn()) -> i32;
        }
        extern "C" fn remove_scratch() {
            if std::env::var_os("MCPSIFT_KEEP_TEST_FILES").is_none() {
                let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("mcpsift-tests-{}", std::process::id())));
            }
        }
        // SAFETY: registers a plain function with the C runtime; it runs once, at exit.
        unsafe { atexit(remove_scratch) };
        root
    })
    .clone()
}

/// Removes the scratch folders of earlier runs whose process is gone.
fn remove_dead_runs(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("mcpsift-tests-")).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A fresh, empty folder for one test (never shared: each call gets its own).
pub fn temp_dir(name: &str) -> PathBuf {
    // Unique per call: tests run in parallel, and several call this with the same name.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = scratch().join(format!("{n}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Our kind names for the ground truth's.
fn kind_name(truth: &str) -> &str {
    match truth {
        "error_response" => "error",
        "non_jsonrpc_json" => "not_jsonrpc",
        other => other,
    }
}

/// Checks the capture whose name ends in `capture_suffix` against a ground-truth document
/// (the corpus' expected.json or a sample's truth.json: same keys). `largest` is the
/// largest frame in wire bytes; `None` where frames are not wire bytes (host logs).
pub fn check_against_truth(loaded: &Loaded, capture_suffix: &str, exp: &Value, largest: Option<i64>) {
    let folder = capture_suffix;
    let capture = loaded
        .captures
        .iter()
        .map(|c| c.name.clone())
        .find(|n| n.ends_with(capture_suffix))
        .unwrap_or_else(|| panic!("{folder}: no capture ending in {capture_suffix}"));
    let w = format!("capture = '{capture}'");
    for dir in ["c2s", "s2c"] {
        let n = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND direction = '{dir}'"));
        assert_eq!(n, exp["messages"][dir].as_i64().unwrap(), "{capture}: {dir} frames");
        let truth = exp["kinds_by_direction"][dir].as_object().unwrap();
        for (kind, count) in truth {
            let n = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND direction = '{dir}' AND kind = '{}'", kind_name(kind)));
            assert_eq!(n, count.as_i64().unwrap(), "{capture}: {dir} {kind}");
        }
    }
    let unparsable = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND kind IN ('non_json', 'invalid_json')"));
    let truth_unparsable = exp["messages"].get("unparsable").or(exp["messages"]["by_kind"].get("non_json")).and_then(Value::as_i64).unwrap_or(0);
    assert_eq!(unparsable, truth_unparsable, "{capture}: unparsable");
    if let Some(largest) = largest {
        let got = scalar(loaded, &format!("SELECT MAX(wire_bytes) AS m FROM frames WHERE {w}"));
        assert_eq!(got, largest, "{capture}: largest frame");
    }
    for (tool, t) in exp["tools"].as_object().unwrap() {
        let calls = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}'"));
        assert_eq!(calls, t["calls"].as_i64().unwrap(), "{capture}: calls of {tool}");
        let is_error = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND is_error"));
        assert_eq!(is_error, t["isError"].as_i64().unwrap(), "{capture}: isError of {tool}");
        let server_validation = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND validation = 'server_output'"));
        assert_eq!(server_validation, t["server_output_validation_errors"].as_i64().unwrap(), "{capture}: server validation errors of {tool}");
        // Sizes are compared only where frames are wire bytes (not host-log text).
        if largest.is_some() && t["responses"].as_i64().unwrap() > 0 {
            let max = scalar(loaded, &format!("SELECT MAX(resp_bytes) AS m FROM calls WHERE {w} AND tool = '{tool}'"));
            assert_eq!(max, t["max_response_frame_bytes"].as_i64().unwrap(), "{capture}: largest response of {tool}");
        }
        let marked = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND truncated"));
        let truth_marked = ["text_truncation_marker", "structured_truncated_true", "meta_truncated_true"].iter().map(|k| t.get(*k).and_then(Value::as_i64).unwrap_or(0)).max().unwrap_or(0);
        assert_eq!(marked, truth_marked, "{capture}: truncated results of {tool}");
    }
    let outcomes = rows(loaded, &format!("SELECT outcome, COUNT(*) AS n FROM calls WHERE {w} GROUP BY outcome"));
    for (outcome, n) in exp["call_outcomes"].as_object().unwrap() {
        let got = outcomes.iter().find(|r| r["outcome"] == outcome.as_str()).map(|r| r["n"].as_i64().unwrap()).unwrap_or(0);
        assert_eq!(got, n.as_i64().unwrap(), "{capture}: outcome {outcome}");
    }
    let total_calls = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w}"));
    assert_eq!(total_calls, exp["calls"].as_array().unwrap().len() as i64, "{capture}: calls");
}


/// Per session of the truth (`sessions[]` with `session`, `clientInfo`, `serverInfo` and
/// `messages.{c2s,s2c}`): frames per direction, client and server of the capture ending in
/// `capture_suffix` equal the truth's.
pub fn check_sessions_against_truth(loaded: &Loaded, capture_suffix: &str, sessions: &Value) {
    let capture = loaded.captures.iter().map(|c| c.name.clone()).find(|n| n.ends_with(capture_suffix)).expect("capture");
    for s in sessions.as_array().expect("sessions") {
        let Some(id) = s["session"].as_str() else { continue };
        for dir in ["c2s", "s2c"] {
            let n = scalar(loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE capture = '{capture}' AND session = '{id}' AND direction = '{dir}'"));
            assert_eq!(n, s["messages"][dir].as_i64().unwrap(), "{capture} session {id} {dir}");
        }
        let r = rows(loaded, &format!("SELECT client_name, client_version, server_name, server_version FROM sessions WHERE capture = '{capture}' AND session = '{id}'"));
        assert_eq!(r.len(), 1, "{capture} session {id}");
        assert_eq!(r[0]["client_name"], s["clientInfo"]["name"], "{capture} session {id}");
        assert_eq!(r[0]["client_version"], s["clientInfo"]["version"], "{capture} session {id}");
        assert_eq!(r[0]["server_name"], s["serverInfo"]["name"], "{capture} session {id}");
        assert_eq!(r[0]["server_version"], s["serverInfo"]["version"], "{capture} session {id}");
    }
}

/// Rows of every Parquet file in a dataset's table folder (read with polars, not mcpsift).
pub fn parquet_rows(folder: &Path) -> usize {
    use polars::prelude::SerReader as _;
    let mut rows = 0;
    for entry in std::fs::read_dir(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display())) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "parquet") {
            let file = std::fs::File::open(&path).unwrap();
            rows += polars::prelude::ParquetReader::new(file).finish().unwrap().height();
        }
    }
    rows
}

/// A JSON-RPC id as the `rpc_id` column writes it (`null` when absent).
pub fn id_text(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::String(s) => Value::String(s.clone()),
        other => Value::String(other.to_string()),
    }
}

/// `n` with a comma every three digits, as `--stats` and the reports print byte counts.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
