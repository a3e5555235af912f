//! `mcpsift check`: every seeded problem in samples/ reported once, with the right rule, tool,
//! client and bytes; the corpus' known problems found; exit codes for CI gates.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::{corpus, load_paths, mcpsift, read_json, recorded_samples, samples, scalar};

/// Our rule for each problem name the sample recorder seeds.
pub(crate) fn rule_for(problem: &str) -> &'static str {
    match problem {
        "frame_near_stdio_limit" => "near_limit_frames",
        "structured_content_additional_property"
        | "error_result_invalid_structured_content"
        | "server_output_validation_error"
        | "text_structured_divergence"
        | "empty_content_with_structured_content" => "validation_errors",
        "tools_list_next_cursor_not_followed" | "tool_cursor_drift" => "pagination_drift",
        "result_truncated" | "request_cancelled" => "truncation_rates",
        "stdout_non_json_line" => "connection_deaths",
        "frame_over_python_sse_event_limit" => "near_limit_frames",
        "header_mismatch" => "header_mismatch",
        other => panic!("unmapped seeded problem {other}"),
    }
}

/// (capture file, tool) of the schema_compat findings about a draft-07 outputSchema.
fn draft07_tools(v: &Value) -> Vec<(String, Option<String>)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "schema_compat" && f["detail"].as_str().unwrap_or("").contains("draft-07 outputSchema: Claude Code"))
        .map(|f| {
            let capture = f["capture"].as_str().unwrap();
            let folder = capture.split('/').rev().nth(1).unwrap_or("").to_string();
            (format!("{folder}/{}", capture.rsplit('/').next().unwrap_or("")), f["tool"].as_str().map(str::to_string))
        })
        .collect()
}

fn check_json(paths: &[&str]) -> Value {
    let mut args = vec!["check"];
    args.extend_from_slice(paths);
    args.extend_from_slice(&["-q", "--format", "json"]);
    let out = mcpsift(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("check json")
}

type Key = (String, String, Option<String>, String, Option<i64>);

/// (capture file, rule, tool, client, bytes) of every warn/error finding, duplicates kept
/// (a capture may have several findings alike, e.g. one per `tools/list` page).
fn reported(v: &Value) -> Vec<Key> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "info")
        .map(|f| {
            let capture = f["capture"].as_str().unwrap();
            let folder = capture.split('/').rev().nth(1).unwrap_or("").to_string();
            let file = capture.rsplit('/').next().unwrap_or("").to_string();
            (
                format!("{folder}/{file}"),
                f["rule"].as_str().unwrap().to_string(),
                f["tool"].as_str().map(str::to_string),
                f["client"].as_str().unwrap().to_string(),
                f["bytes"].as_i64(),
            )
        })
        .collect()
}

fn seeded(capture: &str, problems: &Value) -> Vec<Key> {
    problems
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let rule = p["rule"].as_str().unwrap();
            let client = format!("{} {}", p["client"]["name"].as_str().unwrap(), p["client"]["version"].as_str().unwrap());
            // The truth counts a cancelled request by its cancel notification; the rule
            // reports the group's largest response, so bytes are not compared there.
            let bytes = if rule == "request_cancelled" { None } else { p["frame_bytes"].as_i64() };
            (capture.to_string(), rule_for(rule).to_string(), p["tool"].as_str().map(str::to_string), client, bytes)
        })
        .collect()
}

/// A tool call the client cancelled after its timeout is also a `latency` finding (cause
/// `timeouts`), with the client of the seeded `request_cancelled` problem.
fn timed_out(capture: &str, truth: &Value) -> Vec<Key> {
    truth["cancellations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["request_method"] == "tools/call" && c["reason"].as_str().is_some_and(|r| r.contains("timed out")))
        .map(|c| {
            let tool = c["request_tool"].as_str().unwrap();
            let p = truth["problems"].as_array().unwrap().iter().find(|p| p["rule"] == "request_cancelled" && p["tool"] == tool).expect("a timed-out call is a seeded cancellation");
            let client = format!("{} {}", p["client"]["name"].as_str().unwrap(), p["client"]["version"].as_str().unwrap());
            (capture.to_string(), "latency".to_string(), Some(tool.to_string()), client, None)
        })
        .collect()
}

#[test]
fn check_reports_each_seeded_problem_in_samples_exactly_once() {
    // The SDK recordings, the client logs (their truth lists what Claude Code dropped or rejected)
    // and the embedded logs (their truth lists the stdio_py problems each file holds).
    let mut folders = recorded_samples();
    folders.extend(["claude_code", "client_logs", "embedded_log"].map(|f| samples().join(f).to_str().expect("utf-8 path").to_string()));
    let v = check_json(&folders.iter().map(String::as_str).collect::<Vec<_>>());
    let mut got = reported(&v);
    let mut expected: Vec<Key> = Vec::new();
    expected.extend(seeded("stdio_ts/c2s.log+s2c.log.gz", &read_json(&samples().join("stdio_ts/truth.json"))["problems"]));
    expected.extend(seeded("stdio_py/c2s.log+s2c.log", &read_json(&samples().join("stdio_py/truth.json"))["problems"]));
    expected.extend(seeded("transcript/session.jsonl", &read_json(&samples().join("transcript/truth.json"))["problems"]));
    for folder in ["stdio_py2", "stdio_py2_fallback"] {
        expected.extend(seeded(&format!("{folder}/c2s.log+s2c.log"), &read_json(&samples().join(folder).join("truth.json"))["problems"]));
    }
    let timeouts = [("stdio_py/c2s.log+s2c.log", "stdio_py/truth.json"), ("transcript/session.jsonl", "transcript/truth.json")];
    for (capture, truth) in timeouts {
        let found = timed_out(capture, &read_json(&samples().join(truth)));
        assert_eq!(found.len(), 1, "{capture}: the samples record one client timeout");
        expected.extend(found);
    }
    let hostlog = read_json(&samples().join("hostlog/truth.json"));
    for (file, f) in hostlog["files"].as_object().unwrap() {
        expected.extend(seeded(&format!("hostlog/{file}"), &f["truth"]["problems"]));
    }
    for folder in ["pcap", "http_py2"] {
        let pcap = read_json(&samples().join(folder).join("truth.json"));
        for (file, f) in pcap["files"].as_object().unwrap() {
            let truth = if f.get("truth").is_some() { &f["truth"] } else { f };
            expected.extend(seeded(&format!("{folder}/{file}"), &truth["problems"]));
        }
    }
    // 2026-07-28 walks: a tools/list page whose nextCursor its own client's next tools/list
    // request did not send, while that client went on sending requests, left the walk
    // abandoned (the py2 client lists one page, calls a tool it has not seen, gets -32020, then
    // walks the whole list: its first walk never saw the rest).
    let py2 = read_json(&samples().join("http_py2/truth.json"))["files"]["py2_streamable.pcap"].clone();
    let requests = py2["modern"]["requests"].as_array().unwrap();
    let pages = py2["tools_list_pages"].as_array().unwrap();
    for r in requests.iter().filter(|r| r["method"] == "tools/list") {
        let me = &r["clientInfo_meta"];
        let page = pages.iter().find(|p| p["seq"] == r["response_seq"]).expect("a page per answered tools/list");
        let Some(next) = page["nextCursor"].as_str() else { continue };
        let mine: Vec<&Value> = requests.iter().filter(|o| o["clientInfo_meta"] == *me && o["seq"].as_i64() > r["seq"].as_i64()).collect();
        let next_list = mine.iter().find(|o| o["method"] == "tools/list");
        let followed = next_list.is_some_and(|o| pages.iter().any(|p| p["seq"] == o["response_seq"] && p["cursor_in"] == next));
        if !followed && !mine.is_empty() {
            let client = format!("{} {}", me["name"].as_str().unwrap(), me["version"].as_str().unwrap());
            expected.push(("http_py2/py2_streamable.pcap".to_string(), "pagination_drift".to_string(), None, client, page["frame_bytes"].as_i64()));
        }
    }
    // Client logs: the results Claude Code dropped over its token cap, and the one it rejected.
    let claude = read_json(&samples().join("claude_code/truth.json"));
    for (kind, rule, client) in [("result_over_client_cap", "truncation_rates", "claude-code ?"), ("output_schema_rejected", "validation_errors", "? ?")] {
        for e in claude[kind].as_array().unwrap() {
            let mut parts = e["file"].as_str().unwrap().rsplit('/');
            let name = parts.next().unwrap();
            let folder = parts.next().unwrap_or("claude_code");
            expected.push((format!("{folder}/{name}"), rule.to_string(), e["tool"].as_str().map(str::to_string), client.to_string(), None));
        }
    }
    // The embedded logs carry the stdio_py messages: its truncated result and its timeout
    // where the file holds them, and a call lost before a close line.
    let embedded = read_json(&samples().join("embedded_log/truth.json"));
    for (file, f) in embedded["files"].as_object().unwrap() {
        let capture = format!("embedded_log/{file}");
        for p in f["problems"].as_array().unwrap() {
            let client = format!("{} {}", p["client"]["name"].as_str().unwrap(), p["client"]["version"].as_str().unwrap());
            let tool = p["tool"].as_str().map(str::to_string);
            let key = |rule: &str, tool: Option<String>, bytes: Option<i64>| (capture.clone(), rule.to_string(), tool, client.clone(), bytes);
            match p["rule"].as_str().unwrap() {
                "result_truncated" => expected.push(key("truncation_rates", tool, p["frame_bytes"].as_i64())),
                "request_cancelled" => expected.extend([key("truncation_rates", tool.clone(), None), key("latency", tool, None)]),
                "call_lost" => expected.extend([key("truncation_rates", tool, None), key("connection_deaths", None, None)]),
                other => panic!("unmapped embedded_log problem {other}"),
            }
        }
    }
    // draft-07 outputSchema warnings are checked against the bytes in
    // `draft07_output_schemas_are_warned_naming_claude_code`.
    got.retain(|g| !(g.1 == "schema_compat" && draft07_tools(&v).contains(&(g.0.clone(), g.2.clone()))));
    for key in &expected {
        let found = got.iter().find(|g| g.0 == key.0 && g.1 == key.1 && g.2 == key.2 && g.3 == key.3 && (key.4.is_none() || g.4 == key.4)).cloned();
        let found = found.unwrap_or_else(|| panic!("seeded problem not reported: {key:?}\nreported: {got:#?}"));
        let at = got.iter().position(|g| *g == found).expect("found above");
        got.remove(at);
    }
    // The only other problem: the host log records the server exiting early.
    assert!(hostlog["files"]["mcp-server-docs.log"]["server_exited_early"].as_bool().unwrap());
    let rest: Vec<_> = got.into_iter().collect();
    assert_eq!(rest.len(), 1, "unexpected findings: {rest:#?}");
    assert_eq!((rest[0].0.as_str(), rest[0].1.as_str()), ("hostlog/mcp-server-docs.log", "connection_deaths"));
}

#[test]
fn validation_predictions_match_what_the_ts_client_threw() {
    let dir = corpus().join("stdio_ts_size_limit");
    let v = check_json(&[dir.join("c2s.log").to_str().unwrap(), dir.join("s2c.log.gz").to_str().unwrap()]);
    let exp = read_json(&dir.join("expected.json"));
    let findings = v["findings"].as_array().unwrap();
    for (tool, t) in exp["tools"].as_object().unwrap() {
        let of_tool = |cause: &str| findings.iter().filter(|f| f["rule"] == "validation_errors" && f["tool"] == tool.as_str() && f["detail"].as_str().unwrap().contains(cause)).count() as i64;
        assert_eq!(of_tool("predicted_reject"), t["client_validation_errors"].as_i64().unwrap(), "{tool}: client rejections");
        assert_eq!(of_tool("server_output"), t["server_output_validation_errors"].as_i64().unwrap(), "{tool}: server validation");
        assert_eq!(of_tool("error_with_structured"), t["structuredContent_with_isError"].as_i64().unwrap(), "{tool}: isError with structuredContent");
        assert_eq!(of_tool("empty_content"), t["empty_content_with_structuredContent"].as_i64().unwrap(), "{tool}: empty content");
        assert_eq!(of_tool("text_disagrees"), t["text_structured_divergence"].as_i64().unwrap(), "{tool}: divergence");
    }
    let limit = exp["frames"]["limit_bytes"].as_i64().unwrap();
    let near: Vec<&Value> = findings.iter().filter(|f| f["rule"] == "near_limit_frames").collect();
    let errors = near.iter().filter(|f| f["bytes"].as_i64().unwrap() >= limit).count() as i64;
    assert_eq!(errors, exp["frames"]["count_ge_limit"].as_i64().unwrap());
    let ge90 = exp["frames"]["count_ge_90pct"].as_i64().unwrap();
    assert_eq!(near.len() as i64, ge90, "one finding per frame at or over 90% of the TS limit");
    assert!(findings.iter().any(|f| f["rule"] == "connection_deaths" && f["detail"].as_str().unwrap().contains("over the TypeScript stdio reader limit")));
}

#[test]
fn pagination_drift_finds_each_chain_problem_of_the_corpus() {
    let path = corpus().join("http_ts_streamable/transcript.jsonl.gz");
    let exp = read_json(&corpus().join("http_ts_streamable/expected.json"));
    let tp = &exp["tool_pagination"];
    let chains = tp["chains"].as_array().unwrap();
    let truth_sum = |k: &str| chains.iter().map(|c| c[k].as_i64().unwrap()).sum::<i64>();
    let loaded = load_paths(std::slice::from_ref(&path));
    let pages_sum = |col: &str| scalar(&loaded, &format!("SELECT COALESCE(SUM({col}), 0) AS n FROM pages WHERE followed AND chain = 'query_rows'"));
    assert_eq!(pages_sum("repeated_items"), truth_sum("repeated_rows"), "rows repeated across followed pages");
    // Skips show only in the decoded offsets: no page returns the skipped rows, so identity cannot see them within a walk.
    assert_eq!(pages_sum("offset_skips"), truth_sum("skipped_rows_within_range"), "rows skipped within walked range");
    let reuses: i64 = tp["cursors_reused"].as_array().unwrap().iter().map(|c| c["times_sent"].as_i64().unwrap() - 1).sum();
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM pages WHERE cursor_seen_before"), reuses);
    let foreign = tp["cursors_sent_but_not_issued_in_session"].as_array().unwrap().len() as i64;
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM pages WHERE cursor_in IS NOT NULL AND NOT cursor_issued_before"), foreign);
    let changed = chains.iter().filter(|c| c["page_size_changed"].as_bool().unwrap()).count() as i64;
    assert_eq!(scalar(&loaded, "SELECT COUNT(DISTINCT walk) AS n FROM pages WHERE page_size_changed"), changed);

    let v = check_json(&[path.to_str().unwrap()]);
    let drift: Vec<&Value> = v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "pagination_drift").collect();
    let with = |cause: &str| drift.iter().filter(|f| f["detail"].as_str().unwrap().contains(cause)).count();
    assert_eq!(with("cursor_reused"), reuses as usize);
    assert_eq!(with("cursor_not_issued"), foreign as usize);
    assert_eq!(with("items_skipped"), 1);
    let list_abandoned: Vec<_> = drift.iter().filter(|f| f["tool"].is_null() && f["detail"].as_str().unwrap().contains("not_followed")).collect();
    assert_eq!(list_abandoned.len(), 1, "session D never followed tools/list page 1");
    assert_eq!(list_abandoned[0]["client"], "catalog-browser 3.2.0-beta.1");
    assert_eq!(list_abandoned[0]["severity"], "error");
}

#[test]
fn schema_compat_flags_planted_defects_and_spares_controls() {
    let v = check_json(&[corpus().join("lint_catalog_tsclient").to_str().unwrap(), "--rule", "schema_compat"]);
    let findings: Vec<&Value> = v["findings"].as_array().unwrap().iter().filter(|f| f["capture"].as_str().unwrap().ends_with("s2c.log")).collect();
    let flagged: BTreeSet<String> = findings.iter().filter_map(|f| f["tool"].as_str().map(str::to_string)).collect();
    let exp = read_json(&corpus().join("lint_catalog_tsclient/expected.json"));
    let lint = &exp["lint"];
    let defects: BTreeSet<String> = lint["defects"].as_array().unwrap().iter().filter_map(|d| d["tool_name"].as_str().map(str::to_string)).collect();
    assert_eq!(defects.len(), 9);
    assert_eq!(flagged, defects, "exactly the planted tools are flagged");
    for c in lint["non_defect_controls"].as_array().unwrap() {
        let tool = c["tool_name"].as_str().unwrap();
        assert!(!flagged.contains(tool), "control {tool} flagged");
    }
    assert!(!flagged.iter().any(|t| t.starts_with("catalog_op_")), "fillers are clean");
    assert!(findings.iter().any(|f| f["tool"].is_null() && f["detail"].as_str().unwrap().contains("over the 204800-byte client budget")));
}

#[test]
fn fail_on_sets_the_exit_code() {
    let dir = samples().join("stdio_ts");
    let d = dir.to_str().unwrap();
    assert_eq!(mcpsift(&["check", d, "-q", "--fail-on", "error"]).status.code(), Some(1));
    assert_eq!(mcpsift(&["check", d, "-q"]).status.code(), Some(0));
    let clean = samples().join("pcap/py_streamable.pcap");
    assert_eq!(mcpsift(&["check", clean.to_str().unwrap(), "-q", "--fail-on", "warn"]).status.code(), Some(0));
    // Clean sessions get no finding at all, not even info; the TypeScript server's sessions
    // only the draft-07 outputSchema warnings (Claude Code rejects those tools' calls).
    for clean in ["hostlog/mcp.log", "hostlog/vscode-mcp.log", "pcap/py_streamable.pcap"] {
        let v = check_json(&[samples().join(clean).to_str().unwrap()]);
        let other: Vec<&Value> = v["findings"].as_array().unwrap().iter().filter(|f| draft07_tools(&serde_json::json!({"findings": [f]})).is_empty()).collect();
        assert_eq!(other.len(), 0, "{clean}: {v:#}");
    }
    let mcp_log = samples().join("hostlog/mcp.log");
    assert_eq!(mcpsift(&["check", mcp_log.to_str().unwrap(), "-q", "--fail-on", "warn"]).status.code(), Some(1), "draft-07 outputSchemas are warnings");
    assert_eq!(mcpsift(&["check", mcp_log.to_str().unwrap(), "-q", "--fail-on", "error"]).status.code(), Some(0));
    assert_eq!(mcpsift(&["check", d, "-q", "--rule", "no_such_rule"]).status.code(), Some(2));
}

#[test]
fn sarif_and_single_rule_query() {
    let dir = samples().join("stdio_ts");
    let out = mcpsift(&["check", dir.to_str().unwrap(), "-q", "--format", "sarif"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().unwrap();
    // 9,961,474 bytes: near the TypeScript client's 10 MiB, past Codex's 8 MiB (no Codex here).
    assert!(results.iter().any(|r| r["ruleId"] == "near_limit_frames" && r["level"] == "warning"));
    let out = mcpsift(&["query", dir.to_str().unwrap(), "near_limit_frames", "-q", "--format", "jsonl"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["tool"], "fetch_page");
    assert_eq!(rows[0]["bytes"], 9961474);
}

/// Every tool whose outputSchema says `"$schema": "...draft-07..."` in the stdio_ts capture's
/// tools/list (read from the bytes with serde_json) gets one schema_compat warn naming Claude
/// Code (claude-code #88882), and no other tool does.
#[test]
fn draft07_output_schemas_are_warned_naming_claude_code() {
    use std::io::Read as _;
    let mut s2c = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(samples().join("stdio_ts/s2c.log.gz")).unwrap()).read_to_string(&mut s2c).unwrap();
    let mut want: Vec<(String, Option<String>)> = Vec::new();
    for line in s2c.lines() {
        let Ok(m) = serde_json::from_str::<Value>(line) else { continue };
        for t in m["result"]["tools"].as_array().into_iter().flatten() {
            if t["outputSchema"]["$schema"].as_str().is_some_and(|d| d.contains("draft-07")) {
                want.push(("stdio_ts/c2s.log+s2c.log.gz".into(), t["name"].as_str().map(str::to_string)));
            }
        }
    }
    assert!(!want.is_empty(), "the TS server emits draft-07 outputSchemas");
    let v = check_json(&[samples().join("stdio_ts").to_str().unwrap()]);
    let mut got = draft07_tools(&v);
    got.sort();
    want.sort();
    assert_eq!(got, want);
    for f in v["findings"].as_array().unwrap().iter().filter(|f| f["rule"] == "schema_compat") {
        assert_eq!(f["severity"], "warn", "{f}");
    }
}

/// Every finding over samples/ and the corpus names its cause: tokens its rule's header
/// declares (`-- causes:`), so users can group and filter by them; a rule whose case has no
/// token fails here, naming the rule and the finding.
#[test]
fn every_finding_carries_causes_its_rule_declares() {
    let declared: std::collections::HashMap<String, BTreeSet<String>> = mcpsift::query::rules::builtin_rules()
        .into_iter()
        .map(|r| (r.name.clone(), r.header.causes.iter().map(|(token, _)| token.clone()).collect()))
        .collect();
    let samples = samples();
    let corpus = corpus();
    for dir in [&samples, &corpus] {
        let v = check_json(&[dir.to_str().unwrap()]);
        let findings = v["findings"].as_array().unwrap();
        assert!(!findings.is_empty(), "{}: findings expected", dir.display());
        for f in findings {
            let rule = f["rule"].as_str().unwrap();
            let cause = f["cause"].as_str().unwrap_or("");
            assert!(!cause.is_empty(), "{rule} finding without a cause: {f}");
            let tokens = &declared[rule];
            for token in cause.split(',') {
                assert!(tokens.contains(token), "{rule}: cause {token} is not in its header's causes {tokens:?}: {f}");
            }
        }
    }
}
