//! Log lines with JSON-RPC in them (`samples/embedded_log`): every file's frames, events and
//! unanswered calls against the truth its generator wrote, `--stats` closing, and an excerpt's
//! last request being `unknown_log_ended`, not a lost call.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{id_text, load_paths, mcpsift, read_json, rows, samples};

fn folder() -> PathBuf {
    samples().join("embedded_log")
}

fn truth_files() -> Vec<(String, Value)> {
    let truth = read_json(&folder().join("truth.json"));
    truth["files"].as_object().expect("files").iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// 1-based line of a byte offset, by counting newlines in the file.
fn line_of(bytes: &[u8], offset: u64) -> u64 {
    bytes[..offset as usize].iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

#[test]
fn every_logged_message_is_a_frame_with_its_line_direction_kind_and_bytes() {
    for (name, t) in truth_files() {
        let path = folder().join(&name);
        let bytes = std::fs::read(&path).expect("sample");
        let loaded = load_paths(std::slice::from_ref(&path));
        let frames = rows(&loaded, "SELECT \"offset\", direction, CAST(kind AS STRING) AS kind, method, rpc_id, wire_bytes, transport FROM frames ORDER BY seq");
        let got: Vec<Value> = frames
            .iter()
            .map(|f| {
                serde_json::json!({
                    "line": line_of(&bytes, f["offset"].as_u64().expect("offset")),
                    "direction": f["direction"], "kind": f["kind"], "id": f["rpc_id"],
                })
            })
            .collect();
        let want: Vec<Value> = t["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| serde_json::json!({"line": m["line"], "direction": m["direction"], "kind": m["kind"], "id": id_text(&m["id"])}))
            .collect();
        assert_eq!(got, want, "{name}: frames");
        for (f, m) in frames.iter().zip(t["messages"].as_array().expect("messages")) {
            if let Some(b) = m["bytes"].as_u64() {
                assert_eq!(f["wire_bytes"].as_u64(), Some(b), "{name} line {}: the message's bytes as recorded", m["line"]);
            }
            if let Some(method) = m["method"].as_str() {
                assert_eq!(f["method"].as_str(), Some(method), "{name} line {}", m["line"]);
            }
            assert_eq!(f["transport"], "log", "{name}");
        }
    }
}

#[test]
fn other_lines_are_events_with_the_level_they_show() {
    for (name, t) in truth_files() {
        let path = folder().join(&name);
        let bytes = std::fs::read(&path).expect("sample");
        let loaded = load_paths(std::slice::from_ref(&path));
        let got: Vec<(u64, String)> = rows(&loaded, "SELECT \"offset\", level FROM events ORDER BY \"offset\"")
            .iter()
            .map(|e| (line_of(&bytes, e["offset"].as_u64().expect("offset")), e["level"].as_str().unwrap_or("").to_string()))
            .collect();
        // A line that shows no level is `info`, as host-log lines are.
        let want: Vec<(u64, String)> = t["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| (e["line"].as_u64().expect("line"), e["level"].as_str().unwrap_or("info").to_string()))
            .collect();
        assert_eq!(got, want, "{name}: events");
    }
}

#[test]
fn unanswered_calls_end_with_the_log_unless_a_close_follows() {
    for (name, t) in truth_files() {
        let path = folder().join(&name);
        let loaded = load_paths(std::slice::from_ref(&path));
        let ids = |outcome: &str| -> Vec<Value> {
            rows(&loaded, &format!("SELECT rpc_id FROM calls WHERE outcome = '{outcome}' ORDER BY req_seq")).iter().map(|r| r["rpc_id"].clone()).collect()
        };
        let want = |key: &str| -> Vec<Value> { t[key].as_array().expect(key).iter().map(id_text).collect() };
        assert_eq!(ids("unknown_log_ended"), want("unanswered_at_end"), "{name}: unknown_log_ended");
        assert_eq!(ids("no_response"), want("lost"), "{name}: no_response");
    }
}

#[test]
fn stats_close_on_every_embedded_log() {
    for (name, _) in truth_files() {
        let path = folder().join(&name);
        let out = mcpsift(&["query", path.to_str().expect("utf8 path"), "--stats", "-q", "--sql", "SELECT 1 AS x"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(err.contains("(embedded_log, "), "{name} read as embedded_log: {err}");
        assert!(!err.contains("unaccounted"), "{name}: {err}");
        assert!(err.contains("skipped       0"), "{name}: nothing skipped: {err}");
    }
}

#[test]
fn an_excerpt_that_ends_inside_a_call_is_not_an_error() {
    let path = folder().join("excerpt_unanswered.log");
    let out = mcpsift(&["check", path.to_str().expect("utf8 path"), "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("check json");
    let findings = report["findings"].as_array().expect("findings");
    for f in findings {
        assert_ne!(f["rule"], "connection_deaths", "{f}");
        assert!(!(f["severity"] == "error" && f["tool"] == "get_invoice"), "the call cut by the excerpt's end is no error: {f}");
    }
    let loaded = load_paths(std::slice::from_ref(&path));
    let s = rows(&loaded, "SELECT ending, end_cause FROM sessions");
    assert_eq!(s[0]["ending"], "unknown");
    assert_eq!(s[0]["end_cause"], "log ended with 1 request(s) unanswered: id 6 (tools/call get_invoice)");
}

#[test]
fn pasted_labels_and_fences_are_framing_not_stdout_pollution() {
    let path = folder().join("pasted_excerpt.md");
    let loaded = load_paths(std::slice::from_ref(&path));
    let kinds = rows(&loaded, "SELECT CAST(kind AS STRING) AS kind FROM frames");
    assert!(kinds.iter().all(|k| k["kind"] != "non_json"), "{kinds:?}");
    let s = rows(&loaded, "SELECT non_json_s2c FROM sessions");
    assert_eq!(s[0]["non_json_s2c"], 0);
    let out = mcpsift(&["query", path.to_str().expect("utf8 path"), "--stats", "-q", "--sql", "SELECT 1 AS x"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let truth = read_json(&folder().join("truth.json"));
    let markup = truth["files"]["pasted_excerpt.md"]["markup_lines"].as_u64().expect("markup_lines");
    // In this paste every message line is indented and every markup line is not.
    let text = std::fs::read_to_string(&path).expect("sample");
    let markup_lines: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    let markup_bytes: usize = markup_lines.iter().map(|l| l.len()).sum();
    assert_eq!(markup_lines.len() as u64, markup);
    assert!(err.contains(&format!("paste_markup {markup_bytes}")), "{markup_bytes} bytes of markup: {err}");
}
