//! Log shapes posted in public issues (samples/issue_logs, each file's issue in truth.json):
//! `claude --debug` output under Claude Code's welcome box ending in a stack, a wrapped
//! `-32022 Unsupported protocol version` paste, the SDK's wrapped output-schema error, and
//! JSON-lines logs holding the escaped `initialize` inside a log line or a docker json-file
//! record. Messages are frames with truth's methods, ids and bytes, errors are events or error
//! frames with their codes, the client the initialize names is in `sessions`, and `--stats`
//! closes.

use serde_json::Value;

use crate::util::{load_paths, mcpsift, read_json, rows, samples, thousands};

fn truth() -> Value {
    read_json(&samples().join("issue_logs").join("truth.json"))
}

fn capture(file: &str) -> String {
    samples().join("issue_logs").join(file).display().to_string()
}

#[test]
fn issue_log_shapes_match_truth() {
    let truth = truth();
    let loaded = load_paths(&[samples().join("issue_logs")]);
    for (file, t) in truth["files"].as_object().unwrap() {
        let cap = capture(file);
        let frames = rows(&loaded, &format!("SELECT direction, CAST(kind AS STRING) AS kind, method, rpc_id, wire_bytes, error_code, error_message FROM frames WHERE capture = '{cap}' ORDER BY seq"));
        let want = t["messages"].as_array().unwrap();
        assert_eq!(frames.len(), want.len(), "{file}: frames {frames:#?}");
        for (g, w) in frames.iter().zip(want) {
            assert_eq!(g["direction"], w["direction"], "{file}: {g}");
            assert_eq!(g["kind"], w["kind"], "{file}: {g}");
            assert_eq!(g["method"], w["method"], "{file}: {g}");
            assert_eq!(g["rpc_id"].as_str().map(str::to_string), w["id"].as_i64().map(|i| i.to_string()), "{file}: {g}");
            assert_eq!(g["wire_bytes"], w["bytes"], "{file}: {g}");
            assert_eq!(g["error_code"], w["error_code"], "{file}: {g}");
            assert_eq!(g["error_message"], w["error_message"], "{file}: {g}");
        }
        let events = rows(&loaded, &format!("SELECT kind, server, error_code, text FROM events WHERE capture = '{cap}' ORDER BY \"offset\""));
        let want = t["events"].as_array().unwrap();
        assert_eq!(events.len(), want.len(), "{file}: events {events:#?}");
        for (g, w) in events.iter().zip(want) {
            assert_eq!((&g["kind"], &g["server"], &g["error_code"]), (&w["kind"], &w["server"], &w["error_code"]), "{file}: {g}");
            if let Some(phrase) = w["phrase"].as_str() {
                // A wrapped message is one event: its lines joined are the phrase.
                assert!(g["text"].as_str().unwrap().replace('\n', "").contains(phrase), "{file}: {g} lacks {phrase}");
            }
        }
        if let Some(client) = t["client"].as_object() {
            let s = rows(&loaded, &format!("SELECT client_name, client_version FROM sessions WHERE capture = '{cap}'"));
            assert_eq!(s.len(), 1, "{file}: {s:?}");
            assert_eq!((&s[0]["client_name"], &s[0]["client_version"]), (&client["name"], &client["version"]), "{file}");
        }
    }
}

#[test]
fn the_stack_belongs_to_its_line_and_the_welcome_box_is_framing() {
    let t = &truth()["files"]["claude_debug_banner.txt"];
    let loaded = load_paths(&[samples().join("issue_logs").join("claude_debug_banner.txt")]);
    let events = rows(&loaded, "SELECT text FROM events ORDER BY \"offset\"");
    let last = events.last().unwrap()["text"].as_str().unwrap();
    assert_eq!(last.lines().filter(|l| l.trim_start().starts_with("at ")).count() as u64, t["stack_lines_of_last_event"].as_u64().unwrap());
    assert!(events.iter().all(|e| !e["text"].as_str().unwrap().contains("Welcome to Claude Code")), "{events:?}");
    let out = mcpsift(&["query", &capture("claude_debug_banner.txt"), "--stats", "-q", "--sql", "SELECT 1 AS x"]);
    let stats = String::from_utf8_lossy(&out.stderr);
    assert!(stats.contains(&format!("paste_markup {}", t["decoration_bytes"])), "{stats}");
}

#[test]
fn issue_logs_stats_close() {
    let truth = truth();
    let dir = samples().join("issue_logs");
    let out = mcpsift(&["query", dir.to_str().unwrap(), "--stats", "-q", "--sql", "SELECT 1 AS x"]);
    assert!(out.status.success());
    let stats = String::from_utf8_lossy(&out.stderr);
    assert!(!stats.contains("unaccounted"), "{stats}");
    for (file, t) in truth["files"].as_object().unwrap() {
        let path = capture(file);
        let block: String = stats.split(&format!("{path}\n")).nth(1).unwrap_or_else(|| panic!("{path} in {stats}")).lines().take(6).collect::<Vec<_>>().join("\n");
        let bytes = t["bytes"].as_u64().unwrap();
        assert!(block.contains(&format!(" {} bytes)", thousands(bytes))), "{block}");
        assert!(block.contains("skipped       0"), "{block}");
    }
}
