//! The shared corpus: every capture's frames, kinds, calls and sizes match its expected.json.

use serde_json::Value;

use crate::util::{check_against_truth, check_sessions_against_truth, corpus, load_paths, rows, scalar};

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

/// Checks one capture of `folder` (the stdio pair or the transcript) against expected.json.
fn check_capture(folder: &str, capture_suffix: &str) {
    let exp = expected(folder);
    let loaded = load_paths(&[corpus().join(folder)]);
    let largest = exp["frames"]["largest"]["bytes"].as_i64();
    check_against_truth(&loaded, capture_suffix, &exp, largest);
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
fn packet_captures_match_ground_truth() {
    for folder in HTTP {
        let loaded = load_paths(&[corpus().join(folder)]);
        for file in ["traffic.pcap.gz", "traffic.pcapng.gz"] {
            check_capture(folder, file);
            check_sessions_against_truth(&loaded, file, &expected(folder)["sessions"]);
        }
    }
}

#[test]
fn http_sessions_carry_client_info_and_end_with_delete() {
    let exp = expected("http_ts_streamable");
    let loaded = load_paths(&[corpus().join("http_ts_streamable/traffic.pcapng.gz")]);
    for s in exp["sessions"].as_array().unwrap() {
        let Some(id) = s["session"].as_str() else { continue };
        let r = rows(&loaded, &format!("SELECT client_name, client_version, transport FROM sessions WHERE session = '{id}'"));
        assert_eq!(r.len(), 1, "{id}");
        assert_eq!(r[0]["client_name"], s["clientInfo"]["name"]);
        assert_eq!(r[0]["client_version"], s["clientInfo"]["version"]);
    }
    let errors = scalar(&loaded, "SELECT COUNT(*) AS n FROM events WHERE kind = 'http_status'");
    assert_eq!(errors, 1, "one HTTP 400 after DELETE");
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
