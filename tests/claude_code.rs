//! Client logs users already have: Claude Code's per-server MCP logs, `--debug` output and
//! terminal errors, and Cursor, Gemini CLI and MCP Inspector logs. Each sample matches the
//! truth.json its generator wrote (events by kind and the numbers each names, quoted JSON-RPC
//! bodies, the bytes cut off), `--stats` closes, and `check` counts the dropped and rejected
//! results for the right tool.

use serde_json::Value;

use crate::util::{load_paths, mcpsift, read_json, rows, samples, thousands};

const FACTS: [&str; 5] = ["tokens", "token_limit", "timeout_ms", "error_code", "http_status"];

/// The events of one capture as mcpsift read them, in file order, as truth.json spells them.
fn events_of(folder: &str, file: &str) -> Vec<Value> {
    let loaded = load_paths(&[samples().join(folder)]);
    let capture = samples().join(folder).join(file).display().to_string();
    let sql = format!(
        "SELECT kind, server, tool, tokens, token_limit, timeout_ms, error_code, http_status FROM events WHERE capture = '{}' ORDER BY \"offset\"",
        capture.replace('\'', "''")
    );
    rows(&loaded, &sql)
}

fn assert_folder_matches_truth(folder: &str) {
    let truth = read_json(&samples().join(folder).join("truth.json"));
    let loaded = load_paths(&[samples().join(folder)]);
    for (file, t) in truth["files"].as_object().unwrap() {
        let got = events_of(folder, file);
        let want = t["events"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{folder}/{file}: events {got:#?}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            for key in ["kind", "server", "tool"].into_iter().chain(FACTS) {
                assert_eq!(g[key], w[key], "{folder}/{file}: event {i} {key}: got {g}, want {w}");
            }
        }
        let capture = samples().join(folder).join(file).display().to_string();
        let frames = rows(&loaded, &format!("SELECT session, wire_bytes, kind FROM frames WHERE capture = '{capture}' ORDER BY seq"));
        let want_frames = t["frames"].as_array().unwrap();
        assert_eq!(frames.len(), want_frames.len(), "{folder}/{file}: frames {frames:?}");
        for (g, w) in frames.iter().zip(want_frames) {
            assert_eq!(g["session"], w["session"]);
            assert_eq!(g["wire_bytes"].as_u64(), Some(w["payload"].as_str().unwrap().len() as u64));
            assert_eq!(g["kind"], "error", "the quoted body is a JSON-RPC error");
        }
    }
}

#[test]
fn claude_code_logs_match_truth() {
    assert_folder_matches_truth("claude_code");
}

#[test]
fn cursor_gemini_and_inspector_logs_match_truth() {
    assert_folder_matches_truth("client_logs");
}

#[test]
fn stats_close_and_the_cut_entry_is_a_counted_skip() {
    for folder in ["claude_code", "client_logs"] {
        let truth = read_json(&samples().join(folder).join("truth.json"));
        let dir = samples().join(folder);
        let out = mcpsift(&["query", dir.to_str().unwrap(), "--stats", "-q", "--sql", "SELECT 1 AS x"]);
        assert!(out.status.success());
        let stats = String::from_utf8_lossy(&out.stderr);
        assert!(!stats.contains("unaccounted"), "{stats}");
        for (file, t) in truth["files"].as_object().unwrap() {
            let path = dir.join(file).display().to_string();
            let block: String = stats.split(&format!("{path}\n")).nth(1).unwrap_or_else(|| panic!("{path} in {stats}")).lines().take(6).collect::<Vec<_>>().join("\n");
            let bytes = t["bytes"].as_u64().unwrap();
            assert!(block.contains(&format!("bytes read    {}", thousands(bytes))), "{block}");
            let skipped: u64 = t["skipped"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
            assert!(block.contains(&format!("skipped       {}", thousands(skipped))), "{block}");
            for (reason, n) in t["skipped"].as_object().unwrap() {
                assert!(block.contains(&format!("{reason} {}", thousands(n.as_u64().unwrap()))), "{block}");
            }
        }
    }
}

/// `check --format json`'s findings of one rule: (capture, tool, detail).
fn findings(dir: &str, rule: &str) -> Vec<(String, String, String)> {
    let out = mcpsift(&["check", dir, "-q", "--format", "json", "--rule", rule]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["capture"].as_str().unwrap().to_string(), f["tool"].as_str().unwrap_or("").to_string(), f["detail"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn check_counts_results_over_the_cap_as_truncated_and_rejections_as_validation_errors() {
    let truth = read_json(&samples().join("claude_code").join("truth.json"));
    let dir = samples().join("claude_code");
    let dir = dir.to_str().unwrap();
    let truncated = findings(dir, "truncation_rates");
    let want = truth["result_over_client_cap"].as_array().unwrap();
    assert_eq!(truncated.len(), want.len(), "{truncated:?}");
    for w in want {
        let capture = samples().join("claude_code").join(w["file"].as_str().unwrap()).display().to_string();
        let f = truncated.iter().find(|f| f.0 == capture).unwrap_or_else(|| panic!("{capture} in {truncated:?}"));
        assert_eq!(f.1, w["tool"].as_str().unwrap());
        assert!(f.2.starts_with("over_client_token_cap; 1 of 1 calls truncated"), "the cause, then the counts: {}", f.2);
        assert!(f.2.contains("1 over the client token cap (largest 31245 tokens)"), "{}", f.2);
    }
    let rejected = findings(dir, "validation_errors");
    let want = truth["output_schema_rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), want.len(), "{rejected:?}");
    for (f, w) in rejected.iter().zip(want) {
        assert_eq!(f.1, w["tool"].as_str().unwrap());
        assert!(f.2.contains("Structured content does not match the tool's output schema"), "{}", f.2);
    }
}
