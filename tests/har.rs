//! HAR 1.2 files: the samples give the frames their generator wrote (truth.json), the same
//! frames, calls and sessions as the packet capture of the same traffic, and closed accounting.

use serde_json::Value;

use crate::util::{id_text, load_paths, mcpsift, read_json, rows, samples};

fn truth() -> Value {
    read_json(&samples().join("har/truth.json"))
}

#[test]
fn har_samples_give_the_frames_of_their_truth() {
    let truth = truth();
    let files = truth["files"].as_object().expect("files");
    assert_eq!(files.len(), 4);
    for (name, file) in files {
        let loaded = load_paths(&[samples().join("har").join(name)]);
        let mut got: Vec<(String, Value, i64, Value)> = rows(&loaded, "SELECT direction, rpc_id, wire_bytes, method FROM frames")
            .into_iter()
            .map(|r| (r["direction"].as_str().unwrap_or_default().to_string(), r["rpc_id"].clone(), r["wire_bytes"].as_i64().unwrap_or(-1), r["method"].clone()))
            .collect();
        let mut want: Vec<(String, Value, i64, Value)> = file["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .flat_map(|e| e["frames"].as_array().cloned().unwrap_or_default())
            .map(|f| (f["direction"].as_str().unwrap_or_default().to_string(), id_text(&f["id"]), f["bytes"].as_i64().unwrap_or(-2), f["method"].clone()))
            .collect();
        assert_eq!(want.len() as u64, file["frames"].as_u64().unwrap_or(0), "{name}");
        let key = |x: &(String, Value, i64, Value)| (x.0.clone(), x.1.to_string(), x.2);
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got.len(), want.len(), "{name}: frames\n{got:?}\n{want:?}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(key(g), key(w), "{name}");
            // Responses carry no method on the wire; the table names the request's.
            if !w.3.is_null() {
                assert_eq!(g.3, w.3, "{name}: method of {w:?}");
            }
        }
    }
}

/// Rows of `sql` on a capture, connection-numbered sessions (`conn:N`, numbered capture-wide
/// among all TCP connections in a pcap) by order of first appearance, and conversations
/// without their place (a pcap knows the client's address, `@ ip:ADDR`; a HAR does not, `@ http`).
fn key_rows(file: &str, sql: &str) -> Vec<String> {
    let loaded = load_paths(&[samples().join(file)]);
    let mut conns: Vec<String> = Vec::new();
    rows(&loaded, sql)
        .into_iter()
        .map(|mut r| {
            if let Some((who, _)) = r["session"].as_str().and_then(|s| s.split_once(" @ ")).map(|(w, p)| (w.to_string(), p.to_string())) {
                r["session"] = Value::String(who);
            }
            if let Some(s) = r["session"].as_str().filter(|s| s.starts_with("conn:")).map(str::to_string) {
                let n = conns.iter().position(|c| *c == s).unwrap_or_else(|| {
                    conns.push(s.clone());
                    conns.len() - 1
                });
                r["session"] = Value::String(format!("conn#{n}"));
            }
            // Event texts end in the capture's own connection and exchange numbers.
            if let Some(t) = r["text"].as_str().and_then(|t| t.rfind(" (connection ").map(|i| t[..i].to_string())) {
                r["text"] = Value::String(t);
            }
            r.to_string()
        })
        .collect()
}

#[test]
fn har_and_pcap_of_the_same_traffic_give_the_same_frames_calls_and_sessions() {
    let queries = [
        "SELECT session, direction, transport, method, rpc_id, tool, kind, wire_bytes, is_error, error_code, hdr_protocol_version, hdr_method, hdr_name, hdr_params FROM frames ORDER BY session, direction, rpc_id, method, wire_bytes",
        "SELECT session, rpc_id, method, tool, outcome, client_name, client_version, server_name, protocol_version, req_bytes, resp_bytes, is_error, error_code, validation FROM calls ORDER BY session, rpc_id, method, req_bytes",
        "SELECT session, transport, client_name, client_version, server_name, server_version, protocol_version, frames, bytes_c2s, bytes_s2c, max_frame_bytes, ending, protocol_era FROM sessions ORDER BY session",
        // The pcap also holds a 400 on a connection whose request the capture missed.
        "SELECT session, kind, level, text FROM events WHERE text NOT LIKE '(request not captured)%' ORDER BY session, kind, text",
    ];
    for (pcap, har) in [("http_py2/py2_streamable.pcap", "har/py2_streamable.har"), ("pcap/ts_legacy_sse.pcap", "har/ts_legacy_sse.har")] {
        for sql in queries {
            let (a, b) = (key_rows(pcap, sql), key_rows(har, sql));
            assert!(!a.is_empty() || sql.contains("events"), "{pcap}: {sql}");
            assert_eq!(a, b, "{pcap} vs {har}: {sql}");
        }
    }
    // The HAR's http_status event is the pcap's (py2 seeds a 400 for a missing routing header).
    let events = key_rows("har/py2_streamable.har", "SELECT kind FROM events");
    assert_eq!(events, vec![r#"{"kind":"http_status"}"#.to_string()]);
}

#[test]
fn har_stats_close_and_name_what_is_missing() {
    let truth = truth();
    for (name, file) in truth["files"].as_object().expect("files") {
        let path = samples().join("har").join(name);
        let out = mcpsift(&["query", path.to_str().unwrap_or_default(), "--stats", "--sql", "SELECT COUNT(*) AS n FROM frames"]);
        let stats = String::from_utf8_lossy(&out.stderr);
        assert!(!stats.contains("unaccounted"), "{name}: {stats}");
        assert!(stats.contains("(har, ") && stats.contains("har_envelope"), "{name}: {stats}");
        let cut = file["cut"].as_bool().unwrap_or(false);
        assert_eq!(stats.contains("har_truncated"), cut, "{name}: {stats}");
        if cut {
            assert!(file["entries_complete"].as_u64() < file["entries_total"].as_u64());
        }
        let missing = file["entries"].as_array().map_or(0, |e| e.iter().filter(|e| e["response_body_missing"] == true).count());
        let loaded = load_paths(std::slice::from_ref(&path));
        let events = rows(&loaded, "SELECT kind FROM events WHERE kind = 'har_body_missing'");
        assert_eq!(events.len(), missing, "{name}");
    }
}

#[test]
fn a_dropped_body_is_not_invented_and_its_call_is_not_lost() {
    let loaded = load_paths(&[samples().join("har/py_streamable.dropped.har")]);
    let lost = rows(&loaded, "SELECT tool FROM calls WHERE outcome = 'no_response'");
    assert!(lost.is_empty(), "the server answered; the HAR writer dropped the body: {lost:?}");
    let calls = rows(&loaded, "SELECT tool, outcome FROM calls WHERE outcome = 'unknown_not_recorded'");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let frames = rows(&loaded, "SELECT COUNT(*) AS n FROM frames WHERE rpc_id IN (SELECT rpc_id FROM calls WHERE outcome = 'unknown_not_recorded') AND direction = 's2c'");
    assert_eq!(frames[0]["n"], 0, "no response frame is invented");
    let f = findings("har/py_streamable.dropped.har");
    assert!(!f.iter().any(|f| f.0 == "connection_deaths" || (f.0 == "truncation_rates" && f.3 == "error")), "no lost-call finding: {f:?}");
    let pcap = load_paths(&[samples().join("pcap/py_streamable.pcap")]);
    let answered = rows(&pcap, &format!("SELECT outcome FROM calls WHERE tool = '{}'", calls[0]["tool"].as_str().unwrap_or_default()));
    assert!(answered.iter().all(|r| r["outcome"] == "ok"), "the pcap has its answer: {answered:?}");
}

/// (rule, tool, client, severity, detail) of each finding of `check` on one sample.
fn findings(file: &str) -> Vec<(String, String, String, String, String)> {
    let out = mcpsift(&["check", samples().join(file).to_str().unwrap_or_default(), "-q", "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let text = |f: &Value, k: &str| f[k].as_str().unwrap_or_default().to_string();
    let mut all: Vec<_> = v["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|f| (text(f, "rule"), text(f, "tool"), text(f, "client"), text(f, "severity"), text(f, "detail")))
        .collect();
    all.sort();
    all
}

#[test]
fn check_on_a_har_finds_what_it_finds_on_the_pcap_and_what_the_har_lacks() {
    for (pcap, har) in [("http_py2/py2_streamable.pcap", "har/py2_streamable.har"), ("pcap/ts_legacy_sse.pcap", "har/ts_legacy_sse.har")] {
        let (a, b) = (findings(pcap), findings(har));
        assert!(!a.is_empty(), "{pcap}");
        assert_eq!(a, b, "{pcap} vs {har}");
    }
    // The cut file keeps the seeded header mismatch; the pages after the cut are missing, so
    // the first tools/list cursor looks never followed (the conversation went on after it),
    // while the last walk is cut off by the file's end: `unknown`, not abandoned.
    let rules: Vec<String> = findings("har/py2_streamable.cut.har").into_iter().map(|f| format!("{} {}", f.0, f.1)).collect();
    assert_eq!(rules, vec!["header_mismatch query_region", "pagination_drift "]);
    // A dropped response body is not a lost call: the HAR gives what the (clean) pcap gives.
    assert!(findings("pcap/py_streamable.pcap").is_empty());
    let dropped = findings("har/py_streamable.dropped.har");
    assert!(dropped.is_empty(), "{dropped:?}");
}
