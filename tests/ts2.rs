//! The TypeScript SDK 2.x recordings (protocol 2026-07-28, two clients sharing a pipe and a
//! connection pool): pagination walks by item identity, conversations as sessions, the
//! limits of the client that reads, requests re-issued after a broken stream. Every expected
//! value comes from the recorder's truth (computed from the recorded bytes and the driver's
//! plan), never from mcpsift.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::{load_paths, mcpsift, read_json, rows, samples};

/// session → client name, from the `sessions` table of a sample folder.
fn clients_by_session(folder: &str) -> std::collections::BTreeMap<String, String> {
    let loaded = load_paths(&[samples().join(folder)]);
    rows(&loaded, "SELECT session, client_name FROM sessions")
        .into_iter()
        .map(|r| (r["session"].as_str().unwrap().to_string(), r["client_name"].as_str().unwrap_or("?").to_string()))
        .collect()
}

/// (sample folder, the truth of its capture).
fn captures() -> Vec<(&'static str, Value)> {
    let stdio = read_json(&samples().join("stdio_ts2/truth.json"));
    let http = read_json(&samples().join("http_ts2/truth.json"))["files"]["ts2_streamable.pcap"].clone();
    vec![("stdio_ts2", stdio), ("http_ts2", http)]
}

fn check(folder: &str) -> Vec<Value> {
    let out = mcpsift(&["check", samples().join(folder).to_str().unwrap(), "-q", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("check json");
    v["findings"].as_array().unwrap().clone()
}

fn id_text(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

#[test]
fn every_page_whose_next_page_repeats_items_is_an_error_naming_its_walk_and_items_and_complete_walks_are_clean() {
    for (folder, truth) in captures() {
        let findings = check(folder);
        let client_of = clients_by_session(folder);
        let drift: Vec<&Value> = findings.iter().filter(|f| f["rule"] == "pagination_drift").collect();
        // (conversation client, request id) of each page whose next page returned items the
        // walk already had: its cursor advanced too little.
        let mut want: BTreeSet<(String, String)> = BTreeSet::new();
        for w in truth["walks"].as_array().unwrap() {
            assert_eq!(w["complete"], true, "{folder}: the recorded walks are complete");
            let client = w["conversation_client"].as_str().unwrap();
            let pages = w["pages"].as_array().unwrap();
            for pair in pages.windows(2) {
                let repeated = pair[1]["repeated"].as_array().unwrap();
                if repeated.is_empty() {
                    continue;
                }
                let id = id_text(&pair[0]["rpc_id"]);
                want.insert((client.to_string(), id.clone()));
                let f = drift
                    .iter()
                    .find(|f| f["rpc_id"] == id.as_str() && client_of[f["session"].as_str().unwrap()] == client)
                    .unwrap_or_else(|| panic!("{folder}: no finding for {client} page {id}"));
                assert_eq!(f["severity"], "error");
                assert!(f["cause"].as_str().unwrap().contains("items_repeated"), "{f}");
                let detail = f["detail"].as_str().unwrap();
                assert!(detail.contains(&format!("the next page returned {} of the walk's items again", repeated.len())), "{detail}");
                // The first ten keys are named, the rest counted.
                for k in repeated.iter().take(10) {
                    assert!(detail.contains(k.as_str().unwrap()), "{detail} lacks {k}");
                }
                let what = w.get("method").and_then(Value::as_str).or(w["tool"].as_str()).unwrap();
                assert!(detail.contains(&format!("; {what}#1 page ")) || detail.contains(&format!("; {what}#2 page ")), "{detail} names the walk");
            }
        }
        let got: BTreeSet<(String, String)> = drift
            .iter()
            .filter(|f| f["severity"] == "error")
            .map(|f| (client_of[f["session"].as_str().unwrap()].clone(), f["rpc_id"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(got, want, "{folder}: errors exactly on the pages whose cursor made the next page repeat items");
        for f in &drift {
            let cause = f["cause"].as_str().unwrap();
            for false_alarm in ["cursor_reused", "not_followed", "cursor_not_issued"] {
                assert!(!cause.contains(false_alarm), "{folder}: complete walks re-sending cursors: {f}");
            }
        }
    }
}

#[test]
fn every_finding_names_the_client_of_its_own_request_and_sessions_are_conversations() {
    for (folder, truth) in captures() {
        let frames = truth["frames"].as_array().unwrap();
        let client_of = clients_by_session(folder);
        for f in check(folder) {
            let client = f["client"].as_str().unwrap();
            let session = f["session"].as_str().unwrap_or("");
            let Some(id) = f["rpc_id"].as_str() else { continue };
            // The request with that id in the finding's conversation carries this client in `_meta`.
            let mine: Vec<&Value> = frames
                .iter()
                .filter(|r| r["kind"] == "request" && id_text(&r["id"]) == id && client_of.get(session) == r["meta_client"]["name"].as_str().map(str::to_string).as_ref())
                .collect();
            assert_eq!(mine.len(), 1, "{folder}: {f}");
            let m = &mine[0]["meta_client"];
            assert_eq!(client, format!("{} {}", m["name"].as_str().unwrap(), m["version"].as_str().unwrap()), "{folder}: {f}");
        }
        let loaded = load_paths(&[samples().join(folder)]);
        let sessions = rows(&loaded, "SELECT session, client_name, client_version, connections, protocol_era FROM sessions ORDER BY session");
        let convs = truth["conversations"].as_object().unwrap();
        assert_eq!(sessions.len(), convs.len(), "{folder}: one session per conversation: {sessions:?}");
        for c in convs.values() {
            let (name, version) = (c["clientInfo"]["name"].as_str().unwrap(), c["clientInfo"]["version"].as_str().unwrap());
            let s = sessions.iter().find(|s| s["client_name"] == name).unwrap_or_else(|| panic!("{folder}: no session of {name}"));
            assert_eq!(s["client_version"], version);
            // A pipe's first client keeps the pipe's name; other conversations name their client.
            let named = s["session"].as_str().unwrap();
            assert!(named == folder || named.starts_with(&format!("{name} {version} @ ")), "{s}");
            assert_eq!(s["protocol_era"], "stateless");
            let frames_of = rows(&loaded, &format!("SELECT COUNT(*) AS n FROM frames WHERE session = '{}'", s["session"].as_str().unwrap()));
            assert_eq!(frames_of[0]["n"], c["frames"], "{folder}: {name}'s frames");
            if folder == "http_ts2" {
                // The connections each client used, as Node's pool handed them out.
                let used = truth["tcp_connections"].as_array().unwrap().iter().filter(|t| t["clients"].as_array().unwrap().iter().any(|n| n == name)).count();
                assert_eq!(s["connections"].as_str().unwrap().split(',').count(), used, "{folder}: {s}");
            }
        }
    }
}

#[test]
fn the_result_the_typescript_client_read_is_not_an_error_and_the_one_it_dropped_is() {
    let truth = read_json(&samples().join("stdio_ts2/truth.json"));
    let findings = check("stdio_ts2");
    let near: Vec<&Value> = findings.iter().filter(|f| f["rule"] == "near_limit_frames").collect();
    for big in truth["big_frames"].as_array().unwrap() {
        let bytes = big["bytes"].as_i64().unwrap();
        let f = near.iter().find(|f| f["bytes"].as_i64() == Some(bytes)).unwrap_or_else(|| panic!("no finding for {bytes} bytes"));
        if big["read_by_ts_client"] == true {
            assert_eq!(f["severity"], "warn", "{f}");
            assert!(f["detail"].as_str().unwrap().contains("near ts_sdk_stdio 10485760"), "{f}");
            assert!(f["detail"].as_str().unwrap().contains("would break codex"), "{f}");
        } else {
            assert_eq!(f["severity"], "error", "{f}");
            assert!(f["detail"].as_str().unwrap().contains("over ts_sdk_stdio 10485760"), "{f}");
        }
        let client = big["conversation_client"].as_str().unwrap();
        assert!(f["client"].as_str().unwrap().starts_with(client), "{f}");
        // Whether a later frame of its conversation went the same way, from the recorded order.
        let seq = big["seq"].as_i64().unwrap();
        let last = !truth["frames"].as_array().unwrap().iter().any(|t| t["seq"].as_i64().unwrap() > seq && t["dir"] == "s2c" && t["conversation_client"] == client);
        let detail = f["detail"].as_str().unwrap();
        let said = detail.contains("nothing followed it in this direction") || detail.contains("the session died right after it");
        assert_eq!(said, last, "last in its direction: {last}: {f}");
    }
    // Every limit says whom it applies to and where its number comes from.
    let loaded = load_paths(&[samples().join("stdio_ts2")]);
    let limits = rows(&loaded, "SELECT name, reader, applies_to, source FROM limits");
    assert!(limits.len() >= 10);
    for l in &limits {
        assert!(!l["applies_to"].as_str().unwrap().is_empty() && !l["source"].as_str().unwrap().is_empty(), "{l}");
    }
}

#[test]
fn a_request_reissued_after_a_broken_stream_replaces_the_lost_one() {
    let truth = read_json(&samples().join("http_ts2/truth.json"))["files"]["ts2_streamable.pcap"].clone();
    let r = &truth["reissued_after_broken_stream"][0];
    let loaded = load_paths(&[samples().join("http_ts2")]);
    let calls = rows(&loaded, "SELECT rpc_id, tool, req_seq, retry_of, outcome, chain_id, round FROM calls WHERE retry_of IS NOT NULL");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["rpc_id"], r["reissue_id"].to_string());
    assert_eq!(calls[0]["tool"], r["tool"]);
    assert_eq!(calls[0]["round"], 2);
    let first = rows(&loaded, &format!("SELECT rpc_id, outcome, req_seq, chain_id FROM calls WHERE req_seq = {}", calls[0]["retry_of"]));
    assert_eq!(first[0]["rpc_id"], r["broken_id"].to_string());
    assert_eq!(first[0]["outcome"], "retried");
    assert_eq!(first[0]["chain_id"], calls[0]["chain_id"]);
    let findings = check("http_ts2");
    let tool = r["tool"].as_str().unwrap();
    assert!(
        findings.iter().any(|f| f["rule"] == "protocol_conformance" && f["cause"] == "reissued_request" && f["tool"] == tool),
        "the re-issue is said"
    );
    assert!(
        !findings.iter().any(|f| f["rule"] == "truncation_rates" && f["tool"] == tool && f["detail"].as_str().unwrap().contains(" 1 lost")),
        "the broken stream's call is not counted lost"
    );
}
