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

/// The 2026-07-28 recordings (mcp 2.x `Client` and `MCPServer`): frames, kinds, calls and
/// outcomes as the truth counts them from the bytes, and the per-request client identities
/// from `_meta` (two on one HTTP connection).
#[test]
fn protocol_2026_samples_match_truth() {
    for folder in ["stdio_py2", "stdio_py2_fallback"] {
        let t = truth(folder);
        let loaded = load_paths(&[samples().join(folder)]);
        check_against_truth(&loaded, &format!("{folder}/c2s.log+s2c.log"), &t, t["largest_frame"]["bytes"].as_i64());
    }
    let t = truth("http_py2");
    let f = &t["files"]["py2_streamable.pcap"];
    let loaded = load_paths(&[samples().join("http_py2")]);
    check_against_truth(&loaded, "py2_streamable.pcap", f, f["largest_frame"]["bytes"].as_i64());
    for ident in f["modern"]["client_identities_from_meta"].as_array().unwrap() {
        let (name, version) = (ident["clientInfo"]["name"].as_str().unwrap(), ident["clientInfo"]["version"].as_str().unwrap());
        let n = scalar(&loaded, &format!("SELECT COUNT(*) AS n FROM calls WHERE client_name = '{name}' AND client_version = '{version}'"));
        assert_eq!(n, ident["requests"].as_i64().unwrap(), "requests of {name} {version}");
    }
    assert_eq!(f["modern"]["client_identities_from_meta"].as_array().unwrap().len(), 2, "two identities in the recording");
}

/// Multi-round-trip calls: each chain of the truth (an `input_required` result and the retries
/// carrying its `requestState`) is one `chain_id` with rounds 1..n in request order and the
/// truth's `resultType` per round; logical calls are counted once; no `input_required` round
/// is `missing_structured`, truncated or lost.
#[test]
fn multi_round_trip_chains_match_truth() {
    let cases = [("stdio_py2", truth("stdio_py2")), ("http_py2", truth("http_py2")["files"]["py2_streamable.pcap"].clone())];
    for (folder, t) in cases {
        let loaded = load_paths(&[samples().join(folder)]);
        let m = &t["modern"];
        let chains = m["mrtr_chains"].as_array().unwrap();
        assert!(chains.len() >= 2, "{folder}: the recording has an accepted and a declined chain");
        for c in chains {
            let ids: Vec<String> = c["ids"].as_array().unwrap().iter().map(|i| i.to_string()).collect();
            let first = &ids[0];
            let r = rows(&loaded, &format!(
                "SELECT rpc_id, round, result_type FROM calls WHERE chain_id IN (SELECT chain_id FROM calls WHERE method = 'tools/call' AND rpc_id = '{first}') ORDER BY round"
            ));
            let got: Vec<(String, i64, Value)> = r.iter().map(|x| (x["rpc_id"].as_str().unwrap().to_string(), x["round"].as_i64().unwrap(), x["result_type"].clone())).collect();
            let want: Vec<(String, i64, Value)> = ids.iter().zip(c["result_types"].as_array().unwrap()).enumerate().map(|(i, (id, rt))| (id.clone(), i as i64 + 1, rt.clone())).collect();
            assert_eq!(got, want, "{folder}: chain of {} ({})", c["tool"], c["input_actions"]);
        }
        let lc = &m["logical_calls"];
        assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE method = 'tools/call'"), lc["tools/call requests"].as_i64().unwrap(), "{folder}: rounds");
        assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM (SELECT DISTINCT chain_id FROM calls WHERE method = 'tools/call')"), lc["tools/call logical calls"].as_i64().unwrap(), "{folder}: logical calls");
        assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE result_type = 'input_required'"), lc["input_required rounds"].as_i64().unwrap(), "{folder}: input_required rounds");
        let wrong = scalar(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE result_type = 'input_required' AND (missing_structured OR truncated OR outcome <> 'ok')");
        assert_eq!(wrong, 0, "{folder}: input_required rounds are never missing_structured, truncated or lost");
    }
}

/// Routing headers: every HTTP request frame's `MCP-Protocol-Version`, `Mcp-Method`,
/// `Mcp-Name` and `Mcp-Param-*` (base64 form decoded) equal what the recorder sent, in order;
/// the header mismatch the server answered with -32020 is one `header_mismatch` finding.
#[test]
fn routing_headers_match_truth() {
    let t = truth("http_py2");
    let f = &t["files"]["py2_streamable.pcap"];
    let loaded = load_paths(&[samples().join("http_py2")]);
    let got = rows(&loaded, "SELECT hdr_protocol_version, hdr_method, hdr_name, hdr_params FROM frames WHERE direction = 'c2s' AND kind IN ('request', 'notification') ORDER BY seq");
    let want = f["modern"]["routing_headers"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        let params = w["mcp-param-decoded"].as_object().unwrap();
        let params = (!params.is_empty()).then(|| params.iter().map(|(k, v)| format!("{k}={}", v.as_str().unwrap())).collect::<Vec<_>>().join("; "));
        assert_eq!(g["hdr_protocol_version"], w["mcp-protocol-version"], "{w}");
        assert_eq!(g["hdr_method"], w["mcp-method"], "{w}");
        assert_eq!(g["hdr_name"], w["mcp-name"], "{w}");
        assert_eq!(g["hdr_params"].as_str().map(|s| s.to_lowercase()), params.map(|s| s.to_lowercase()), "{w}");
    }
    assert!(want.iter().any(|w| w["mcp-param"].as_object().unwrap().values().any(|v| v.as_str().unwrap().starts_with("=?base64?"))), "the recording has a base64 header");
    let check = crate::util::mcpsift(&["check", samples().join("http_py2").to_str().unwrap(), "-q", "--format", "json", "--rule", "header_mismatch"]);
    let v: Value = serde_json::from_slice(&check.stdout).unwrap();
    let found = v["findings"].as_array().unwrap();
    let truth_errors = f["modern"]["mcp_errors_32020_32022"].as_array().unwrap();
    assert_eq!(found.len(), truth_errors.len(), "{found:?}");
    for (x, e) in found.iter().zip(truth_errors) {
        assert_eq!(x["tool"], e["tool"]);
        assert!(x["detail"].as_str().unwrap().contains(e["error"]["message"].as_str().unwrap()), "{x}");
    }
}

/// Sessions in a stateless protocol: the era and the negotiation of each 2026 recording as the
/// truth reads them from the bytes (the fallback speaks the version its `initialize` asked
/// for), and the conversation key: one per client identity from `_meta`, across the two TCP
/// connections of the HTTP recording.
#[test]
fn protocol_era_negotiation_and_conversations_match_truth() {
    for folder in ["stdio_py2", "stdio_py2_fallback"] {
        let t = truth(folder);
        let n = &t["modern"]["negotiation"];
        let loaded = load_paths(&[samples().join(folder)]);
        let s = rows(&loaded, "SELECT protocol_era, negotiation, protocol_version FROM sessions");
        assert_eq!(s.len(), 1, "{folder}");
        assert_eq!(s[0]["protocol_era"], n["protocol_era"], "{folder}");
        assert_eq!(s[0]["negotiation"], n["outcome"], "{folder}");
        let requested = t["sessions"][0]["requested_protocolVersion"].clone();
        let want = if requested.is_null() { t["modern"]["requests"][0]["protocolVersion_meta"].clone() } else { requested };
        assert_eq!(s[0]["protocol_version"], want, "{folder}");
    }
    let f = truth("http_py2")["files"]["py2_streamable.pcap"].clone();
    let loaded = load_paths(&[samples().join("http_py2")]);
    // Each conversation (client identity) probes with server/discover on its own.
    let s = rows(&loaded, "SELECT protocol_era, negotiation FROM sessions WHERE negotiation IS NOT NULL");
    let probes = f["modern"]["requests"].as_array().unwrap().iter().filter(|r| r["method"] == "server/discover").count();
    assert_eq!(s.len(), probes, "{s:?}");
    for s in &s {
        assert_eq!(s["protocol_era"], f["modern"]["negotiation"]["protocol_era"]);
        assert_eq!(s["negotiation"], f["modern"]["negotiation"]["outcome"]);
    }
    // Stateless sessions are conversations (client identity at the client address), not the
    // TCP connections they used.
    let idents = f["modern"]["client_identities_from_meta"].as_array().unwrap();
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM sessions"), idents.len() as i64, "one session per conversation");
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE conversation <> session"), 0);
    let used = rows(&loaded, "SELECT connections FROM sessions");
    let listed: usize = used.iter().map(|r| r["connections"].as_str().unwrap().split(',').count()).sum();
    assert!(listed >= f["http"]["tcp_connections_by_client_port"].as_object().unwrap().len(), "every connection is some conversation's: {used:?}");
    let convs = rows(&loaded, "SELECT conversation, COUNT(*) AS n FROM calls GROUP BY conversation ORDER BY conversation");
    assert_eq!(convs.len(), idents.len(), "{convs:?}");
    let host = f["http"]["base_url"].as_str().unwrap().trim_start_matches("http://").split(':').next().unwrap().to_string();
    for (c, i) in convs.iter().zip(idents) {
        let who = format!("{} {} @ ip:{host}", i["clientInfo"]["name"].as_str().unwrap(), i["clientInfo"]["version"].as_str().unwrap());
        assert_eq!(c["conversation"], who.as_str());
        assert_eq!(c["n"], i["requests"]);
    }
}
