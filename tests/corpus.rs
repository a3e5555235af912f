//! The shared corpus: every capture's frames, kinds, calls and sizes match its expected.json.

use serde_json::Value;

use crate::util::{corpus, load_paths, rows, scalar};

const STDIO: &[&str] = &[
    "stdio_ts_size_limit",
    "stdio_py_truncation",
    "stdio_ts_pollution",
    "stdio_ts_timeout",
    "stdio_pyserver_timeout",
    "lint_catalog_pyclient",
    "lint_catalog_tsclient",
];
const HTTP: &[&str] = &["http_ts_streamable", "http_ts_legacy_sse", "http_py_streamable"];

fn expected(folder: &str) -> Value {
    crate::util::read_json(&corpus().join(folder).join("expected.json"))
}

/// Our kind names for the ground truth's.
fn kind_name(truth: &str) -> &str {
    match truth {
        "error_response" => "error",
        other => other,
    }
}

/// Checks one capture of `folder` (the stdio pair or the transcript) against expected.json.
fn check_capture(folder: &str, capture_suffix: &str) {
    let exp = expected(folder);
    let loaded = load_paths(&[corpus().join(folder)]);
    let capture = loaded
        .captures
        .iter()
        .map(|c| c.name.clone())
        .find(|n| n.ends_with(capture_suffix))
        .unwrap_or_else(|| panic!("{folder}: no capture ending in {capture_suffix}"));
    let w = format!("capture = '{capture}'");
    for dir in ["c2s", "s2c"] {
        let n = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND direction = '{dir}'"));
        assert_eq!(n, exp["messages"][dir].as_i64().unwrap(), "{capture}: {dir} frames");
        let truth = exp["kinds_by_direction"][dir].as_object().unwrap();
        for (kind, count) in truth {
            let n = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND direction = '{dir}' AND kind = '{}'", kind_name(kind)));
            assert_eq!(n, count.as_i64().unwrap(), "{capture}: {dir} {kind}");
        }
    }
    let unparsable = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE {w} AND kind IN ('non_json', 'invalid_json')"));
    assert_eq!(unparsable, exp["messages"]["unparsable"].as_i64().unwrap(), "{capture}: unparsable");
    let largest = scalar(&loaded, &format!("SELECT MAX(wire_bytes) AS m FROM frames WHERE {w}"));
    assert_eq!(largest, exp["frames"]["largest"]["bytes"].as_i64().unwrap(), "{capture}: largest frame");
    for (tool, t) in exp["tools"].as_object().unwrap() {
        let calls = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}'"));
        assert_eq!(calls, t["calls"].as_i64().unwrap(), "{capture}: calls of {tool}");
        let is_error = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND is_error"));
        assert_eq!(is_error, t["isError"].as_i64().unwrap(), "{capture}: isError of {tool}");
        let server_validation = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND validation = 'server_output'"));
        assert_eq!(server_validation, t["server_output_validation_errors"].as_i64().unwrap(), "{capture}: server validation errors of {tool}");
        if t["responses"].as_i64().unwrap() > 0 {
            let max = scalar(&loaded, &format!("SELECT MAX(resp_bytes) AS m FROM calls WHERE {w} AND tool = '{tool}'"));
            assert_eq!(max, t["max_response_frame_bytes"].as_i64().unwrap(), "{capture}: largest response of {tool}");
        }
        let marked = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w} AND tool = '{tool}' AND truncated"));
        let truth_marked = [&t["text_truncation_marker"], &t["structured_truncated_true"], &t["meta_truncated_true"]].iter().map(|v| v.as_i64().unwrap_or(0)).max().unwrap_or(0);
        assert_eq!(marked, truth_marked, "{capture}: truncated results of {tool}");
    }
    let outcomes = rows(&loaded, &format!("SELECT outcome, COUNT(*) AS n FROM calls WHERE {w} GROUP BY outcome"));
    for (outcome, n) in exp["call_outcomes"].as_object().unwrap() {
        let got = outcomes.iter().find(|r| r["outcome"] == outcome.as_str()).map(|r| r["n"].as_i64().unwrap()).unwrap_or(0);
        assert_eq!(got, n.as_i64().unwrap(), "{capture}: outcome {outcome}");
    }
    let total_calls = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE {w}"));
    assert_eq!(total_calls, exp["calls"].as_array().unwrap().len() as i64, "{capture}: calls");
}

#[test]
fn stdio_pairs_match_ground_truth() {
    for folder in STDIO {
        let suffix = if *folder == "stdio_ts_size_limit" { "c2s.log+s2c.log.gz" } else { "c2s.log+s2c.log" };
        check_capture(folder, suffix);
    }
}

#[test]
fn transcripts_match_ground_truth() {
    for folder in STDIO.iter().chain(HTTP) {
        let gz = matches!(*folder, "stdio_ts_size_limit") || HTTP.contains(folder);
        check_capture(folder, if gz { "transcript.jsonl.gz" } else { "transcript.jsonl" });
    }
}

#[test]
fn client_and_server_versions_come_from_initialize() {
    let loaded = load_paths(&[corpus().join("stdio_ts_pollution")]);
    let r = rows(&loaded, "SELECT client_name, client_version, server_name, server_version, protocol_version, ending FROM sessions WHERE capture LIKE '%s2c.log'");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["client_name"], "Docs Assistant for VS Code");
    assert_eq!(r[0]["client_version"], "1.96.0-insider");
    assert_eq!(r[0]["server_name"], "docs-indexer-dev");
    assert_eq!(r[0]["server_version"], "2.4.0-dev");
    assert_eq!(r[0]["protocol_version"], "2025-11-25");
}

#[test]
fn pollution_line_names_the_embedded_response() {
    let loaded = load_paths(&[corpus().join("stdio_ts_pollution")]);
    let exp = expected("stdio_ts_pollution");
    let glued = exp["unparsable_messages"].as_array().unwrap().iter().find(|u| u.get("embedded_jsonrpc").is_some()).expect("truth has a glued line");
    let offset = glued["offset"].as_i64().unwrap();
    let r = rows(&loaded, &format!("SELECT kind, note FROM frames WHERE capture LIKE '%s2c.log' AND direction = 's2c' AND \"offset\" = {offset}"));
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["kind"], "non_json");
    let at = glued["embedded_jsonrpc"]["offset_in_line"].as_i64().unwrap();
    let note = r[0]["note"].as_str().unwrap();
    assert!(note.contains(&format!("embedded at byte {at}")), "{note}");
}

#[test]
fn stdio_and_transcript_of_the_same_traffic_agree_frame_by_frame() {
    let loaded = load_paths(&[corpus().join("stdio_ts_size_limit")]);
    let q = |suffix: &str| {
        rows(&loaded, &format!("SELECT direction, \"offset\", wire_bytes, kind, method, rpc_id, tool, text_bytes, blob_bytes_decoded FROM frames WHERE capture LIKE '%{suffix}' ORDER BY direction, \"offset\""))
    };
    let pair = q("s2c.log.gz");
    assert_eq!(pair.len(), 55);
    let transcript = crate::util::rows(&loaded, "SELECT direction, wire_bytes, kind, method, rpc_id, tool, text_bytes, blob_bytes_decoded FROM frames WHERE capture LIKE '%transcript.jsonl.gz' ORDER BY direction, seq");
    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("offset");
        v
    };
    let pair: Vec<Value> = pair.into_iter().map(strip).collect();
    assert_eq!(pair, transcript);
}
