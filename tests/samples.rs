//! The shipped samples: every capture matches the truth.json its recorder wrote.

use serde_json::Value;

use crate::util::{check_against_truth, check_sessions_against_truth, load_paths, read_json, rows, samples, scalar};

fn truth(folder: &str) -> Value {
    read_json(&samples().join(folder).join("truth.json"))
}

#[test]
fn stdio_samples_match_truth() {
    for (folder, suffix) in [("stdio_ts", "c2s.log+s2c.log.gz"), ("stdio_py", "c2s.log+s2c.log")] {
        let t = truth(folder);
        let loaded = load_paths(&[samples().join(folder)]);
        check_against_truth(&loaded, suffix, &t, t["largest_frame"]["bytes"].as_i64());
    }
}

#[test]
fn transcript_sample_matches_truth() {
    let t = truth("transcript");
    let loaded = load_paths(&[samples().join("transcript")]);
    check_against_truth(&loaded, "session.jsonl", &t, t["largest_frame"]["bytes"].as_i64());
    let sessions = scalar(&loaded, "SELECT COUNT(*) AS n FROM sessions");
    assert_eq!(sessions, t["sessions"].as_array().unwrap().len() as i64);
}

#[test]
fn host_log_samples_match_truth() {
    let t = truth("hostlog");
    let loaded = load_paths(&[samples().join("hostlog")]);
    for (file, f) in t["files"].as_object().unwrap() {
        check_against_truth(&loaded, file, &f["truth"], None);
    }
    let docs = &t["files"]["mcp-server-docs.log"];
    let events = scalar(&loaded, "SELECT COUNT(*) AS n FROM events WHERE capture LIKE '%mcp-server-docs.log' AND kind <> 'unparsed_line'");
    assert_eq!(events, docs["non_message_entries"].as_i64().unwrap());
    let s = rows(&loaded, "SELECT client_name, client_version, server_name, ending FROM sessions WHERE capture LIKE '%mcp-server-docs.log'");
    assert_eq!(s.len(), 1);
    let truth_session = &docs["truth"]["sessions"][0];
    assert_eq!(s[0]["client_name"], truth_session["clientInfo"]["name"]);
    assert_eq!(s[0]["server_name"], truth_session["serverInfo"]["name"]);
    assert_eq!(s[0]["ending"], "abrupt", "the server exited early: the host logged it");
    let cut = &docs["cut_by_host"][0];
    let marker = format!("[{} chars truncated]", cut["truncated_chars"]);
    let r = rows(&loaded, "SELECT kind, truncation_marker, wire_bytes FROM frames WHERE capture LIKE '%mcp-server-docs.log' AND truncation_marker IS NOT NULL");
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["kind"], "response", "the cut keeps the JSON valid");
    assert_eq!(r[0]["truncation_marker"], marker.as_str());
    assert_eq!(r[0]["wire_bytes"], cut["logged_body_bytes"]);
}

#[test]
fn packet_capture_samples_match_truth() {
    let t = truth("pcap");
    let loaded = load_paths(&[samples().join("pcap")]);
    for (file, f) in t["files"].as_object().unwrap() {
        check_against_truth(&loaded, file, f, f["largest_frame"]["bytes"].as_i64());
        check_sessions_against_truth(&loaded, file, &f["sessions"]);
    }
}
