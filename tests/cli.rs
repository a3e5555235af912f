//! The command line: output formats, tables export, exit codes.

use crate::util::{corpus, mcpsift, temp_dir};

#[test]
fn query_jsonl_prints_one_object_per_row() {
    let dir = corpus().join("stdio_ts_timeout");
    let out = mcpsift(&[
        "query",
        dir.to_str().unwrap(),
        "--quiet",
        "--sql",
        "SELECT capture, direction, kind, COUNT(*) AS n FROM frames WHERE capture LIKE '%s2c.log' GROUP BY capture, direction, kind ORDER BY direction, kind",
        "--format",
        "jsonl",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<(String, String, i64)> =
        rows.iter().map(|r| (r["direction"].as_str().unwrap().into(), r["kind"].as_str().unwrap().into(), r["n"].as_i64().unwrap())).collect();
    assert_eq!(got, vec![("c2s".into(), "notification".into(), 2), ("c2s".into(), "request".into(), 8), ("s2c".into(), "response".into(), 6)]);
}

#[test]
fn query_csv_and_multi_statement_sql() {
    let dir = corpus().join("stdio_ts_timeout");
    let out = mcpsift(&[
        "query",
        dir.to_str().unwrap(),
        "-q",
        "--sql",
        "CREATE TABLE lost AS SELECT * FROM calls WHERE outcome IN ('no_response', 'cancelled'); SELECT rpc_id, tool, outcome FROM lost WHERE capture LIKE '%s2c.log' ORDER BY rpc_id",
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "rpc_id,tool,outcome\n4,export_archive,cancelled\n7,watch_changes,no_response\n");
}

#[test]
fn tables_writes_every_table() {
    let out_dir = temp_dir("tables");
    let dir = corpus().join("stdio_py_truncation");
    for format in ["parquet", "csv"] {
        let out = mcpsift(&["tables", dir.to_str().unwrap(), "-q", "--out", out_dir.to_str().unwrap(), "--format", format]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for t in ["frames", "calls", "sessions", "tools", "events", "pages", "limits"] {
            // The dataset: a folder per table holding at least its zero-row schema file.
            let p = if format == "parquet" { out_dir.join(t).join("schema.parquet") } else { out_dir.join(format!("{t}.csv")) };
            assert!(std::fs::metadata(&p).map(|m| m.len() > 0).unwrap_or(false), "{}", p.display());
        }
    }
    assert_eq!(crate::util::parquet_rows(&out_dir.join("frames")), 27 + 27);
    let frames_csv = std::fs::read_to_string(out_dir.join("frames.csv")).unwrap();
    // 27 messages in the stdio pair and 27 in the transcript, plus the header.
    assert_eq!(frames_csv.lines().count(), 1 + 27 + 27);
}

#[test]
fn stats_accounts_for_every_byte() {
    let dir = corpus().join("stdio_ts_pollution");
    let out = mcpsift(&["query", dir.to_str().unwrap(), "--stats", "-q", "--sql", "SELECT 1 AS one"]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bytes read    4,439"), "{err}");
    assert!(err.contains("in frames     4,420 (19 frames: non_json 3, not_jsonrpc 1, notification 2, request 7, response 6)"), "{err}");
    assert!(err.contains("framing       19 (line_terminators 19)"), "{err}");
    assert!(!err.contains("unaccounted"), "{err}");
}

#[test]
fn usage_and_io_errors_exit_2_with_one_line() {
    let out = mcpsift(&["query", "/nonexistent/capture.log", "--sql", "SELECT 1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/capture.log"), "{err}");
    let out = mcpsift(&["query", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let dir = corpus().join("stdio_ts_timeout");
    let out = mcpsift(&["query", dir.to_str().unwrap(), "-q", "--sql", "SELEC nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}

#[test]
fn one_job_or_many_give_the_same_tables_and_findings() {
    let dir = corpus();
    let dir = dir.to_str().unwrap();
    let sql = "SELECT capture, session, seq, kind, wire_bytes, rpc_id FROM frames ORDER BY capture, seq";
    let one = mcpsift(&["query", dir, "-q", "--jobs", "1", "--format", "csv", "--sql", sql]);
    let two = mcpsift(&["query", dir, "-q", "--jobs", "2", "--format", "csv", "--sql", sql]);
    assert!(one.status.success() && two.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    assert!(one.stdout.len() > 10_000, "the corpus has frames");
    assert_eq!(one.stdout, two.stdout);
    let one = mcpsift(&["check", dir, "-q", "--jobs", "1", "--format", "json"]);
    let two = mcpsift(&["check", dir, "-q", "-j", "2", "--format", "json"]);
    assert_eq!(one.stdout, two.stdout);
    let zero = mcpsift(&["check", dir, "-q", "--jobs", "0"]);
    assert_eq!(zero.status.code(), Some(2), "--jobs 0 is a usage error");
}

#[test]
fn error_lines_say_each_cause_once() {
    let out = mcpsift(&["query", "/nonexistent/capture.log", "--sql", "SELECT 1"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    let dir = corpus().join("stdio_ts_timeout");
    let out = mcpsift(&["query", dir.to_str().unwrap(), "-q", "--sql", "SELECT nosuch FROM frames"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("valid columns").count(), 1, "{err}");
}

#[test]
fn a_reader_that_stops_early_ends_the_run_quietly() {
    // `mcpsift query ... | head`: the pipe's reading end is closed before anything is written.
    let dir = corpus().join("stdio_ts_timeout");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcpsift"))
        .args(["query", dir.to_str().unwrap(), "--sql", "SELECT * FROM frames"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start mcpsift");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("mcpsift ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status.code());
}

/// An audit that finds no capture is an error naming every file and why it was skipped, not a
/// clean `0 finding(s)`; `--allow-empty` carries on; program source is skipped whole (its
/// bytes counted) unless `--input-format` names a format, which reads the messages it quotes.
#[test]
fn no_capture_recognised_is_an_error_unless_allowed() {
    let empty = temp_dir("no-capture-empty");
    for args in [vec!["check"], vec!["check", "--fail-on", "warn"], vec!["query", "--sql", "SELECT 1 AS x"], vec!["report"]] {
        let mut a = args.clone();
        a.insert(1, empty.to_str().unwrap());
        let out = mcpsift(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("no capture or log recognised in {}: no files there", empty.display())), "{err}");
    }

    let dir = temp_dir("no-capture-scripts");
    let message = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let script = format!("import sys\nsys.stdout.write('{message}' + '\\n')\n# {message}\n");
    let shell = format!("#!/bin/sh\necho '{message}'\n");
    let notes = "just some notes\nnothing here\n";
    std::fs::write(dir.join("make.py"), &script).unwrap();
    std::fs::write(dir.join("record"), &shell).unwrap();
    std::fs::write(dir.join("NOTES.txt"), notes).unwrap();
    let d = dir.to_str().unwrap();
    let out = mcpsift(&["check", d, "--stats"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for (file, reason) in [("make.py", "source_file"), ("record", "source_file"), ("NOTES.txt", "unrecognized_format")] {
        assert!(err.contains(&format!("  {}: {reason}: ", dir.join(file).display())), "{file}: {err}");
    }
    // Every byte of each file is one counted skip.
    for (file, len) in [("make.py", script.len()), ("record", shell.len())] {
        let path = dir.join(file);
        let out = mcpsift(&["query", path.to_str().unwrap(), "--allow-empty", "--stats", "--sql", "SELECT COUNT(*) AS n FROM frames", "--format", "csv"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n0\n");
        let stats = String::from_utf8_lossy(&out.stderr);
        assert!(stats.contains(&format!("{}: skipped (source, {len} bytes)", path.display())), "{file} {len}: {stats}");
        assert!(!stats.contains("unaccounted"), "{stats}");
    }
    let out = mcpsift(&["check", d, "--allow-empty", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0));
    // Named as a format, the script is read: the message it quotes on its own line is a frame.
    let py = dir.join("make.py");
    let out = mcpsift(&["query", py.to_str().unwrap(), "--input-format", "embedded_log", "--sql", "SELECT method FROM frames WHERE kind = 'request'", "--format", "csv"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).lines().any(|l| l == "tools/list"), "{}", String::from_utf8_lossy(&out.stdout));
}
