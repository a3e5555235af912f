//! Helpers shared by the integration tests: finding the corpus, loading, querying, running the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcpsift::ingest::run::IngestOptions;
use mcpsift::load::{Loaded, load};
use mcpsift::model::tables::default_limits;
use mcpsift::query::run_sql;
use mcpsift::report::table_out::{OutputFormat, write_table};
use serde_json::Value;

/// The shared corpus of SDK captures: `$MCPSIFT_CORPUS`, `../shared/corpus`, or `/work/shared/corpus`.
pub fn corpus() -> PathBuf {
    let candidates = [
        std::env::var_os("MCPSIFT_CORPUS").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")),
        Some(PathBuf::from("/work/shared/corpus")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("README.md").is_file())
        .expect("the shared corpus is required: set MCPSIFT_CORPUS to its folder")
}

pub fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

pub fn load_paths(paths: &[PathBuf]) -> Loaded {
    load(paths, &[], &IngestOptions::default(), &default_limits()).expect("load")
}

/// Runs SQL and returns the rows as JSON objects.
pub fn rows(loaded: &Loaded, sql: &str) -> Vec<Value> {
    let mut df = run_sql(&loaded.tables, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut buf = Vec::new();
    write_table(&mut df, OutputFormat::Jsonl, &mut buf).expect("jsonl");
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

pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcpsift-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
