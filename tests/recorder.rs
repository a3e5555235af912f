//! Proxy recorders' files (samples/recorder: mcpsnoop envelopes, MCPSpy events, mcptrace-rs
//! spans of the real stdio_py session) against the truth the generator computed from the
//! source bytes: frames, calls, events, sizes, and the byte accounting.

use serde_json::Value;

use crate::util::{load_paths, mcpsift, read_json, rows, samples};

fn truth() -> Value {
    read_json(&samples().join("recorder/truth.json"))
}

fn as_id(v: &Value) -> Value {
    v.clone()
}

/// `--stats` of one file: no `unaccounted` line, nothing skipped.
fn stats_close(path: &std::path::Path) {
    let out = mcpsift(&["query", path.to_str().expect("path"), "--stats", "--sql", "SELECT COUNT(*) AS n FROM frames"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("unaccounted"), "{}: accounting does not close:\n{text}", path.display());
    assert!(text.contains("skipped       0"), "{}: {text}", path.display());
}

#[test]
fn mcpsnoop_and_mcpspy_files_hold_every_frame_of_the_session() {
    let truth = truth();
    for name in ["mcpsnoop-billing.jsonl", "mcpspy-billing.jsonl"] {
        let path = samples().join("recorder").join(name);
        stats_close(&path);
        let loaded = load_paths(std::slice::from_ref(&path));
        let got = rows(&loaded, "SELECT direction, wire_bytes, method, rpc_id, kind FROM frames ORDER BY seq");
        let want = truth[name]["frames"].as_array().expect("frames");
        assert_eq!(got.len(), want.len(), "{name}: frames");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g["direction"], w["direction"], "{name}: {g} vs {w}");
            assert_eq!(g["wire_bytes"], w["bytes"], "{name}: {g} vs {w}");
            assert_eq!(g["method"], w["method"], "{name}: {g} vs {w}");
            assert_eq!(g["rpc_id"], as_id(&w["id"]), "{name}: {g} vs {w}");
            assert_eq!(g["kind"] == "non_json", !w["json"].as_bool().unwrap_or(true), "{name}: {g} vs {w}");
        }
        // Every request of the real session, paired, with its sizes and how it ended.
        let calls = rows(&loaded, "SELECT rpc_id, method, tool, req_bytes, resp_bytes, outcome FROM calls ORDER BY req_seq");
        let want = truth["calls"].as_array().expect("calls");
        assert_eq!(calls.len(), want.len(), "{name}: calls");
        for (g, w) in calls.iter().zip(want) {
            assert_eq!((&g["rpc_id"], &g["method"], &g["tool"]), (&w["id"], &w["method"], &w["tool"]), "{name}");
            assert_eq!((&g["req_bytes"], &g["resp_bytes"], &g["outcome"]), (&w["bytes"], &w["response_bytes"], &w["outcome"]), "{name}: {g} vs {w}");
        }
        for (kind, n) in truth[name]["events"].as_object().expect("events") {
            let got = rows(&loaded, &format!("SELECT COUNT(*) AS n FROM events WHERE kind = '{kind}'"));
            assert_eq!(&got[0]["n"], n, "{name}: events of kind {kind}");
        }
    }
}

#[test]
fn spans_become_calls_with_the_recorded_sizes_and_status() {
    let truth = truth();
    let path = samples().join("recorder/mcptrace-billing.jsonl");
    stats_close(&path);
    let loaded = load_paths(std::slice::from_ref(&path));
    let calls = rows(&loaded, "SELECT rpc_id, method, tool, req_bytes, resp_bytes, outcome, error_code, latency_ms FROM calls ORDER BY req_seq");
    let spans = truth["mcptrace-billing.jsonl"]["spans"].as_array().expect("spans");
    assert_eq!(calls.len(), spans.len());
    for (g, s) in calls.iter().zip(spans) {
        assert_eq!((&g["rpc_id"], &g["method"], &g["tool"]), (&s["id"], &s["method"], &s["tool"]));
        assert_eq!((&g["req_bytes"], &g["resp_bytes"]), (&s["request_bytes"], &s["response_bytes"]), "{g} vs {s}");
        let outcome = match s["status"].as_str() {
            Some("ok") => "ok",
            Some("error") => "rpc_error",
            _ => "no_response",
        };
        assert_eq!(g["outcome"], outcome, "{g} vs {s}");
        assert_eq!(g["error_code"], s["error_code"], "{g} vs {s}");
        assert_eq!(g["latency_ms"].as_f64(), s["duration_ms"].as_f64(), "{g} vs {s}");
    }
    // No bodies: no content facts are claimed.
    let claimed = rows(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE content_blocks IS NOT NULL AND content_blocks > 0");
    assert_eq!(claimed[0]["n"], 0);
}

/// (rule, severity, tool, client, cause) of every finding `check` gives on `path`.
fn findings(path: &std::path::Path) -> Vec<(String, String, String, String, String)> {
    let out = mcpsift(&["check", path.to_str().expect("path"), "-q", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("check json");
    let s = |f: &Value, k: &str| f[k].as_str().unwrap_or("").to_string();
    let mut got: Vec<_> = v["findings"].as_array().expect("findings").iter().map(|f| (s(f, "rule"), s(f, "severity"), s(f, "tool"), s(f, "client"), s(f, "cause"))).collect();
    got.sort();
    got
}

#[test]
fn the_recorders_files_give_the_findings_of_the_session_they_recorded() {
    let original = findings(&samples().join("stdio_py"));
    assert!(!original.is_empty());
    // mcpsnoop kept every frame, the non-JSON stdout line too: the same findings.
    assert_eq!(findings(&samples().join("recorder/mcpsnoop-billing.jsonl")), original);
    // MCPSpy only emits JSON-RPC messages: everything but the stdout pollution.
    let without_pollution: Vec<_> = original.iter().filter(|f| f.0 != "connection_deaths").cloned().collect();
    assert!(without_pollution.len() < original.len(), "stdio_py has the non-JSON line finding");
    assert_eq!(findings(&samples().join("recorder/mcpspy-billing.jsonl")), without_pollution);
}
