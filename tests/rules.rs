//! Each rule on a small synthetic session with exact expected findings: positive cases
//! (a tool page of 200 items whose cursor advanced 20, a cursor loop, a tools/list nextCursor
//! never followed, an outputSchema tool without structuredContent) and negative ones (a valid
//! result whose text agrees with its structuredContent, a complete list, a clean session).

use std::io::Write;

use serde_json::{Value, json};

use crate::util::{mcpsift, temp_dir};

fn b64(text: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let bytes = text.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn line(out: &mut Vec<u8>, v: Value) {
    serde_json::to_writer(&mut *out, &v).unwrap();
    out.push(b'\n');
}

fn items(from: u64, n: u64) -> Value {
    Value::Array((from..from + n).map(|i| json!({"row_id": format!("r-{i:04}"), "amount": i})).collect())
}

/// Writes the synthetic stdio pair and returns its folder.
fn session() -> std::path::PathBuf {
    let dir = temp_dir("rules");
    let (mut c2s, mut s2c) = (Vec::new(), Vec::new());
    let call = |id: u64, name: &str, args: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
    let result = |id: u64, r: Value| json!({"jsonrpc":"2.0","id":id,"result":r});
    line(&mut c2s, json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"synthetic-client","version":"1.0.0"}}}));
    line(&mut s2c, result(0, json!({"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"synthetic-server","version":"0.1.0"}})));
    line(&mut c2s, json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    line(&mut c2s, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let schema = json!({"type":"object","properties":{"total":{"type":"integer"}},"required":["total"],"additionalProperties":false});
    line(&mut s2c, result(1, json!({"tools":[
        {"name":"report","inputSchema":{"type":"object"},"outputSchema":schema},
        {"name":"rows","inputSchema":{"type":"object","properties":{"cursor":{"type":"string"},"page_size":{"type":"integer"}}}},
        {"name":"loop","inputSchema":{"type":"object"}}
    ],"nextCursor":"bW9yZQ"})));
    // outputSchema declared, text only, no error: a validating client rejects it.
    line(&mut c2s, call(2, "report", json!({})));
    line(&mut s2c, result(2, json!({"content":[{"type":"text","text":"done"}]})));
    // Negative: valid structuredContent whose text agrees.
    line(&mut c2s, call(3, "report", json!({})));
    line(&mut s2c, result(3, json!({"content":[{"type":"text","text":"total=3"}],"structuredContent":{"total":3}})));
    // A page of 200 items whose cursor advanced 20, then the next page.
    let c20 = b64("{\"offset\":20}");
    line(&mut c2s, call(4, "rows", json!({"page_size":200})));
    line(&mut s2c, result(4, json!({"content":[{"type":"text","text":"200 rows"}],"structuredContent":{"items":items(0, 200),"next_cursor":c20}})));
    line(&mut c2s, call(5, "rows", json!({"page_size":200,"cursor":c20})));
    line(&mut s2c, result(5, json!({"content":[{"type":"text","text":"200 rows"}],"structuredContent":{"items":items(20, 200)}})));
    // A cursor loop: the server returns the cursor it was sent; the client sends it again.
    line(&mut c2s, call(6, "loop", json!({})));
    line(&mut s2c, result(6, json!({"content":[{"type":"text","text":"p1"}],"structuredContent":{"items":items(0, 5),"nextCursor":"L"}})));
    line(&mut c2s, call(7, "loop", json!({"cursor":"L"})));
    line(&mut s2c, result(7, json!({"content":[{"type":"text","text":"p2"}],"structuredContent":{"items":items(5, 5),"nextCursor":"L"}})));
    line(&mut c2s, call(8, "loop", json!({"cursor":"L"})));
    line(&mut s2c, result(8, json!({"content":[{"type":"text","text":"p2"}],"structuredContent":{"items":items(5, 5),"nextCursor":"L"}})));
    std::fs::File::create(dir.join("c2s.log")).unwrap().write_all(&c2s).unwrap();
    std::fs::File::create(dir.join("s2c.log")).unwrap().write_all(&s2c).unwrap();
    dir
}

fn findings(dir: &std::path::Path) -> Vec<Value> {
    let out = mcpsift(&["check", dir.to_str().unwrap(), "-q", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["findings"].as_array().unwrap().clone()
}

#[test]
fn synthetic_session_yields_exactly_the_expected_findings() {
    let dir = session();
    let got: Vec<(String, String, Option<String>, String)> = findings(&dir)
        .iter()
        .map(|f| {
            let detail = f["detail"].as_str().unwrap();
            let cause = detail.split(';').next().unwrap().to_string();
            (f["rule"].as_str().unwrap().into(), f["severity"].as_str().unwrap().into(), f["tool"].as_str().map(str::to_string), cause)
        })
        .collect();
    let expected: Vec<(String, String, Option<String>, String)> = vec![
        ("validation_errors", "error", Some("report"), "missing_structured"),
        ("pagination_drift", "error", None, "not_followed"),
        ("pagination_drift", "error", Some("rows"), "items_repeated"),
        ("pagination_drift", "error", Some("loop"), "cursor_reused"),
        // The loop's third page returned the second page's five items again.
        ("pagination_drift", "error", Some("loop"), "items_repeated"),
    ]
    .into_iter()
    .map(|(r, s, t, c)| (r.to_string(), s.to_string(), t.map(str::to_string), c.to_string()))
    .collect();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    let mut expected_sorted = expected;
    expected_sorted.sort();
    assert_eq!(got_sorted, expected_sorted, "{got:#?}");
    let all = findings(&dir);
    let repeated = all.iter().find(|f| f["tool"] == "rows").unwrap();
    assert!(repeated["detail"].as_str().unwrap().contains("200 items, cursor advanced 20, next cursor advanced too little: the next page returned 180 of the walk's items again (row_id: r-0020, r-0021"), "{repeated}");
    assert_eq!(repeated["client"], "synthetic-client 1.0.0");
}

#[test]
fn limits_can_be_overridden_and_a_frame_over_one_is_an_error() {
    let dir = session();
    // The largest frame is the 200-item page; a 4 KiB budget makes it an error and
    // near_limit_frames names the limit.
    let out = mcpsift(&["query", dir.to_str().unwrap(), "near_limit_frames", "-q", "--format", "jsonl", "--limit", "tiny=4096:0.5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert!(rows.iter().all(|r| r["severity"] == "error" && r["tool"] == "rows" && r["detail"].as_str().unwrap().contains("over tiny 4096")));
    let bad = mcpsift(&["check", dir.to_str().unwrap(), "-q", "--limit", "tiny"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn truncation_marker_regex_adds_a_marker() {
    let dir = session();
    let out = mcpsift(&["query", dir.to_str().unwrap(), "-q", "--format", "csv", "--truncation-marker", "p2\"", "--sql", "SELECT rpc_id, truncation_marker FROM calls WHERE truncated ORDER BY rpc_id"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "rpc_id,truncation_marker\n7,\"p2\"\"\"\n8,\"p2\"\"\"\n");
}

/// A rule file given with `--queries DIR` brings its own words: the title, advice and cause
/// sentences of its header appear in `check` text, SARIF and the Markdown and HTML report.
#[test]
fn a_new_rule_file_brings_its_title_advice_and_cause_sentences() {
    let dir = temp_dir("new-rule");
    let sql = "-- call_census: every tools/call, twice (a rule written for this test).\n\
        -- title: Census of tool calls\n\
        -- severity warn: a call counted by its first cause\n\
        -- severity info: a call counted by its second cause\n\
        -- advice: Count fewer calls per census.\n\
        -- causes:\n\
        --   counted_once: The call was counted once.\n\
        --   counted_twice: The call was counted a second time.\n\
        SELECT 'call_census' AS rule, 'warn' AS severity, capture, session, rpc_id, tool, client_name AS client, CAST(resp_bytes AS BIGINT) AS bytes, 'counted_once' AS cause, 'first count' AS detail FROM calls WHERE method = 'tools/call'\n\
        UNION ALL\n\
        SELECT 'call_census' AS rule, 'info' AS severity, capture, session, rpc_id, tool, client_name AS client, CAST(resp_bytes AS BIGINT) AS bytes, 'counted_twice,counted_once' AS cause, 'second count' AS detail FROM calls WHERE method = 'tools/call'\n";
    std::fs::write(dir.join("call_census.sql"), sql).unwrap();
    let queries = dir.to_str().unwrap();
    let input = crate::util::samples().join("stdio_ts");
    let input = input.to_str().unwrap();
    let words = ["Census of tool calls", "Count fewer calls per census.", "The call was counted once.", "The call was counted a second time."];

    let text = String::from_utf8(mcpsift(&["check", input, "-q", "--queries", queries, "--rule", "call_census"]).stdout).unwrap();
    for w in words {
        assert!(text.contains(w), "check text lacks {w:?}:\n{text}");
    }
    assert!(text.contains("counted_once; first count"), "{text}");

    let sarif: Value = serde_json::from_slice(&mcpsift(&["check", input, "-q", "--queries", queries, "--rule", "call_census", "--format", "sarif"]).stdout).unwrap();
    let rule = &sarif["runs"][0]["tool"]["driver"]["rules"][0];
    assert_eq!(rule["id"], "call_census");
    assert_eq!(rule["shortDescription"]["text"], words[0]);
    assert_eq!(rule["help"]["text"], words[1]);
    assert_eq!(rule["properties"]["causes"]["counted_once"], words[2]);
    assert_eq!(rule["properties"]["causes"]["counted_twice"], words[3]);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["properties"]["cause"] == "counted_twice,counted_once"), "{results:?}");

    for format in ["md", "html"] {
        let report = String::from_utf8(mcpsift(&["report", input, "-q", "--queries", queries, "--format", format]).stdout).unwrap();
        for w in words {
            assert!(report.contains(w), "{format} report lacks {w:?}");
        }
    }
}

/// A 2026-07-28 stdio conversation whose list result lacks `ttlMs`, `cacheScope` and
/// `resultType`, with Logging and Roots in it, and an HTTP 400 that says the request was too
/// large: each is a `protocol_conformance` finding of its cause; a conformant result is not.
#[test]
fn protocol_conformance_flags_what_2026_requires_and_deprecates() {
    let dir = temp_dir("conformance");
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"conf-client","version":"1.0"}});
    let (mut c2s, mut s2c) = (Vec::new(), Vec::new());
    line(&mut c2s, json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta}}));
    line(&mut s2c, json!({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}));
    line(&mut c2s, json!({"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"_meta":meta}}));
    line(&mut s2c, json!({"jsonrpc":"2.0","id":2,"result":{"prompts":[],"resultType":"complete","ttlMs":60000,"cacheScope":"public"}}));
    line(&mut c2s, json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":meta}}));
    line(&mut s2c, json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}));
    line(&mut s2c, json!({"jsonrpc":"2.0","id":9,"method":"roots/list"}));
    line(&mut c2s, json!({"jsonrpc":"2.0","id":9,"result":{"roots":[]}}));
    line(&mut s2c, json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"resultType":"complete"}}));
    std::fs::File::create(dir.join("c2s.log")).unwrap().write_all(&c2s).unwrap();
    std::fs::File::create(dir.join("s2c.log")).unwrap().write_all(&s2c).unwrap();
    // A legacy SSE server's answer to an oversize POST: 400, not 413.
    let body = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":meta}})).unwrap();
    let mut conn = crate::testpcap::Connection::new();
    let mut req = format!("POST /messages?sessionId=abc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    req.extend_from_slice(&body);
    conn.send(true, &req);
    let text = "PayloadTooLargeError: request entity too large";
    conn.send(false, format!("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{text}", text.len()).as_bytes());
    let pcap = temp_dir("conformance-pcap").join("oversize.pcap");
    std::fs::write(&pcap, conn.finish()).unwrap();

    let mut got: Vec<(String, String, String)> = Vec::new();
    for path in [dir.as_path(), pcap.as_path()] {
        for f in findings(path).iter().filter(|f| f["rule"] == "protocol_conformance") {
            let detail = f["detail"].as_str().unwrap();
            got.push((f["severity"].as_str().unwrap().into(), f["cause"].as_str().unwrap().into(), detail.split_once("; ").map_or(detail, |(_, d)| d).to_string()));
        }
    }
    got.sort();
    let want: Vec<(String, String, String)> = [
        ("info", "deprecated_feature", "1 notifications/message message(s) in a 2026-07-28 conversation: Logging is deprecated"),
        ("info", "deprecated_feature", "1 roots/list message(s) in a 2026-07-28 conversation: Roots is deprecated"),
        ("warn", "list_without_cache_fields", "1 tools/list result(s) without ttlMs or cacheScope (required on 2026-07-28 list results)"),
        ("warn", "mislabelled_413", "HTTP 400 for a request that was too large (a 413 in disguise): POST /messages?sessionId=abc -> 400 Bad Request: PayloadTooLargeError: request entity too large (connection 0, exchange 0)"),
        ("warn", "result_without_result_type", "1 tools/list result(s) without resultType (required in 2026-07-28; read as complete)"),
    ]
    .into_iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(got, want);
}
