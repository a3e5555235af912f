//! Bad input never panics and never vanishes: each case becomes counted frames or skips.

use std::io::Write;

use crate::testkit::Xorshift;
use crate::util::{load_paths, mcpsift, rows, scalar, temp_dir};

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn garbage_invalid_utf8_and_nul_bytes_become_counted_frames() {
    let dir = temp_dir("garbage");
    let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n".to_vec();
    input.extend_from_slice(b"\xff\xfe\x00garbage\x00\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"cut\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    let p = write(&dir, "server.out.log", &input);
    let loaded = load_paths(&[p]);
    let r = rows(&loaded, "SELECT kind, wire_bytes, \"offset\" FROM frames ORDER BY seq");
    let kinds: Vec<&str> = r.iter().map(|x| x["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["request", "non_json", "invalid_json", "incomplete"]);
    let total: i64 = r.iter().map(|x| x["wire_bytes"].as_i64().unwrap()).sum();
    assert_eq!(total + 3, input.len() as i64, "frames + 3 newlines = every byte");
}

#[test]
fn fifty_mib_line_without_newline_is_one_incomplete_frame() {
    let dir = temp_dir("hugeline");
    let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"".to_vec();
    input.resize(50 << 20, b'a');
    let p = write(&dir, "s2c.log", &input);
    let opts = mcpsift::ingest::run::IngestOptions { max_frame_bytes: 1 << 20, ..Default::default() };
    let loaded = mcpsift::pipeline::load(&[p], &[], &opts, &Default::default(), &mcpsift::model::tables::default_limits()).unwrap();
    let r = rows(&loaded, "SELECT kind, wire_bytes, note FROM frames");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["kind"], "incomplete");
    assert_eq!(r[0]["wire_bytes"], 50 << 20);
    assert!(r[0]["note"].as_str().unwrap().contains("exceeds --max-frame-bytes"));
}

#[test]
fn truncated_gzip_keeps_what_decoded_and_says_so() {
    let dir = temp_dir("gz");
    let mut body = Vec::new();
    for i in 0..2000 {
        writeln!(body, "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progress\":{i}}}}}").unwrap();
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&body).unwrap();
    let gz = enc.finish().unwrap();
    let p = write(&dir, "s2c.log.gz", &gz[..gz.len() / 2]);
    let loaded = load_paths(&[p]);
    let n = scalar(&loaded, "SELECT COUNT(*) AS n FROM frames WHERE kind = 'notification'");
    assert!(n > 100 && n < 2000, "decoded part kept: {n}");
    let cap = &loaded.captures[0];
    assert!(cap.rows.accounting.diagnostics.iter().any(|d| d.reason == "read_error"), "{:?}", cap.rows.accounting.diagnostics);

    // In a stdio pair the diagnostic names the file that was cut, not the pair.
    write(&dir, "c2s.log", b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n");
    let loaded = load_paths(std::slice::from_ref(&dir));
    let d = loaded.captures[0].rows.accounting.diagnostics.iter().find(|d| d.reason == "read_error").expect("read_error");
    assert_eq!(d.file, dir.join("s2c.log.gz").display().to_string());
}

#[test]
fn empty_unreadable_and_unrecognised_files_are_reported() {
    let dir = temp_dir("misc");
    write(&dir, "empty.log", b"");
    write(&dir, "notes.txt", b"just some notes\nnothing here\n");
    let loaded = load_paths(std::slice::from_ref(&dir));
    let reasons: Vec<&str> = loaded.captures.iter().flat_map(|c| c.rows.accounting.diagnostics.iter().map(|d| d.reason)).collect();
    assert_eq!(reasons, vec!["unrecognized_format"]);
    let skipped: u64 = loaded.captures.iter().flat_map(|c| c.rows.accounting.skipped_bytes.values()).sum();
    assert_eq!(skipped, 29);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = write(&dir, "locked.log", b"{}\n");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&p).is_err() {
            let loaded = load_paths(&[p]);
            assert_eq!(loaded.captures[0].rows.accounting.diagnostics[0].reason, "unreadable_file");
        }
    }
}

#[test]
fn crlf_frames_count_the_carriage_return() {
    let dir = temp_dir("crlf");
    let p = write(&dir, "c2s.log", b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\r\n");
    let loaded = load_paths(&[p]);
    let r = rows(&loaded, "SELECT kind, wire_bytes, note FROM frames");
    assert_eq!(r[0]["kind"], "request");
    assert_eq!(r[0]["wire_bytes"], 41);
}

/// Deterministic pseudo-random inputs (xorshift) built from JSON-RPC fragments, newlines,
/// invalid UTF-8 and NULs, read as every text format: no panic, and every byte is in a frame,
/// framing or a skip.
#[test]
fn random_inputs_never_panic_and_stdio_bytes_add_up() {
    const PIECES: &[&[u8]] = &[
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\\u00e9\\ud83d\\ude00\"}],\"structuredContent\":{\"n\":1}}}",
        b"{\"direction\":\"s2c\",\"raw\":\"{}\"}",
        b"2026-11-30T10:15:00.000Z [docs] [info] Message from server: {",
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]",
        b"\n",
        b"\r\n",
        b"\xff\xfe\x00",
        b"\"",
        b"}",
        b"...[12 chars truncated]...",
        b"   ",
    ];
    let dir = temp_dir("random");
    let mut rng = Xorshift::new(0x9e37_79b9_7f4a_7c15);
    for case in 0..150 {
        let mut input = Vec::new();
        for _ in 0..(rng.next_u64() % 40) {
            input.extend_from_slice(PIECES[(rng.next_u64() % PIECES.len() as u64) as usize]);
        }
        let p = write(&dir, &format!("case{case}.log"), &input);
        for format in [mcpsift::ingest::formats::Format::Stdio, mcpsift::ingest::formats::Format::HostLog, mcpsift::ingest::formats::Format::Jsonl] {
            let opts = mcpsift::ingest::run::IngestOptions { forced_format: Some(format), max_frame_bytes: 64, ..Default::default() };
            let loaded = mcpsift::pipeline::load(std::slice::from_ref(&p), &[], &opts, &Default::default(), &mcpsift::model::tables::default_limits()).unwrap();
            let c = &loaded.captures[0];
            let read: u64 = c.files.iter().map(|f| f.bytes_read).sum();
            assert_eq!(read, input.len() as u64, "case {case}: all bytes read");
            let gap = mcpsift::report::stats::unaccounted(&c.files, &c.rows);
            assert_eq!(gap, 0, "case {case} as {format:?}: every byte in a frame, framing or a skip");
        }
    }
}

#[test]
fn a_capture_of_many_frames_spans_columnar_chunks_without_loss() {
    let dir = temp_dir("many");
    let mut c2s = Vec::new();
    let mut s2c = Vec::new();
    for i in 0..70_000u32 {
        writeln!(c2s, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"t{}\"}}}}", i % 7).unwrap();
        writeln!(s2c, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"content\":[]}}}}").unwrap();
    }
    write(&dir, "c2s.log", &c2s);
    write(&dir, "s2c.log", &s2c);
    let loaded = load_paths(std::slice::from_ref(&dir));
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM frames"), 140_000);
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM frames WHERE direction = 's2c' AND tool = 't3'"), 10_000);
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM calls WHERE outcome = 'ok'"), 70_000);
    assert_eq!(scalar(&loaded, "SELECT SUM(wire_bytes) AS n FROM frames") as usize + 140_000, c2s.len() + s2c.len());

    // `tables --format parquet` streams the chunks while reading: the files hold every row.
    let out_dir = temp_dir("many-out");
    let out = crate::util::mcpsift(&["tables", dir.to_str().unwrap(), "-q", "--out", out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("frames\t140000 rows"), "{stdout}");
    assert!(stdout.contains("calls\t70000 rows"), "{stdout}");
    for (table, rows) in [("frames", 140_000), ("calls", 70_000)] {
        assert_eq!(crate::util::parquet_rows(&out_dir.join(table)), rows, "{table}");
    }
}

#[test]
fn a_symlink_loop_is_reported_and_every_file_read_once() {
    let dir = temp_dir("symlink-loop");
    let line = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n";
    std::fs::write(dir.join("c2s.log"), line.repeat(3)).unwrap();
    std::fs::write(dir.join("s2c.log"), "{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":1}\n").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("sub").join("back")).unwrap();
    std::os::unix::fs::symlink(dir.join("c2s.log"), dir.join("sub").join("again.log")).unwrap();
    let out = mcpsift(&["query", dir.to_str().unwrap(), "--sql", "SELECT COUNT(*) AS n FROM frames", "--format", "csv"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "n\n4\n", "3 requests and 1 response, each read once");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("symlink loop").count(), 1, "{err}");
    assert!(err.contains("sub/back"), "{err}");
}

#[test]
fn cancelled_calls_answered_after_a_chunk_boundary_keep_their_response() {
    // 40,000 calls; every 10th is cancelled at once and answered 20,000 calls later, so its
    // response arrives after at least one 16,384-call chunk was cut. Truth comes from the bytes.
    const N: u64 = 40_000;
    const LATE: u64 = 20_000;
    let dir = temp_dir("late-cancelled");
    let mut out = Vec::new();
    let mut truth = std::collections::BTreeMap::new(); // id -> (tool, resp_bytes, latency_ms)
    let mut late: std::collections::VecDeque<(u64, u64)> = Default::default(); // (due after call, id)
    let mut ts: i64 = 1_000_000;
    let mut tick = |out: &mut Vec<u8>, dir: &str, msg: &str| -> i64 {
        ts += 10;
        writeln!(out, "{{\"dir\":\"{dir}\",\"ts_us\":{ts},\"message\":{msg}}}").unwrap();
        ts
    };
    let mut req_ts = std::collections::HashMap::new();
    let respond = |out: &mut Vec<u8>, tick: &mut dyn FnMut(&mut Vec<u8>, &str, &str) -> i64, id: u64, truth: &mut std::collections::BTreeMap<u64, (String, usize, f64)>, sent: i64| {
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"r{id}\"}}]}}}}");
        let at = tick(out, "s2c", &msg);
        truth.insert(id, (format!("t{}", id % 7), msg.len(), (at - sent) as f64 / 1000.0));
    };
    for i in 0..N {
        let msg = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"t{}\"}}}}", i % 7);
        let sent = tick(&mut out, "c2s", &msg);
        req_ts.insert(i, sent);
        if i % 10 == 3 {
            tick(&mut out, "c2s", &format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{i},\"reason\":\"user\"}}}}"));
            late.push_back((i + LATE, i));
        } else {
            respond(&mut out, &mut tick, i, &mut truth, sent);
        }
        while let Some(&(due, id)) = late.front() {
            if due > i {
                break;
            }
            late.pop_front();
            respond(&mut out, &mut tick, id, &mut truth, req_ts[&id]);
        }
    }
    while let Some((_, id)) = late.pop_front() {
        respond(&mut out, &mut tick, id, &mut truth, req_ts[&id]);
    }
    let p = write(&dir, "late.jsonl", &out);
    let loaded = load_paths(&[p]);
    assert_eq!(loaded.captures[0].rows.unmatched_responses, 0, "every response finds its call");
    let r = rows(&loaded, "SELECT CAST(rpc_id AS BIGINT) AS id, tool, resp_bytes, latency_ms, cancelled FROM calls ORDER BY id");
    assert_eq!(r.len() as u64, N);
    for row in &r {
        let id = row["id"].as_u64().unwrap();
        let (tool, resp_bytes, latency) = &truth[&id];
        assert_eq!(row["tool"].as_str(), Some(tool.as_str()), "call {id}");
        assert_eq!(row["resp_bytes"].as_u64(), Some(*resp_bytes as u64), "call {id}: {row}");
        assert_eq!(row["latency_ms"].as_f64(), Some(*latency), "call {id}: {row}");
        assert_eq!(row["cancelled"].as_bool(), Some(id % 10 == 3), "call {id}");
    }
    assert_eq!(scalar(&loaded, "SELECT COUNT(*) AS n FROM frames WHERE direction = 's2c' AND tool IS NULL"), 0);
}

#[test]
fn extreme_transcript_timestamps_give_a_latency_not_a_panic() {
    let dir = temp_dir("extreme-ts");
    let input = format!(
        "{{\"dir\":\"c2s\",\"ts_us\":{},\"message\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}}}\n{{\"dir\":\"s2c\",\"ts_us\":{},\"message\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}}}\n",
        i64::MIN,
        i64::MAX
    );
    let p = write(&dir, "extreme.jsonl", input.as_bytes());
    let loaded = load_paths(&[p]);
    let r = rows(&loaded, "SELECT latency_ms FROM calls");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["latency_ms"].as_f64(), Some(u64::MAX as f64 / 1000.0));
}

/// `[` … `]` nested `depth` levels around a value (JSON text).
fn nested(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn a_message_nested_100000_levels_deep_is_a_counted_frame() {
    let dir = temp_dir("deep");
    let deep = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[],\"structuredContent\":{{\"v\":{}}}}}}}\n", nested(100_000, "1"));
    let request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"deep\"}}\n";
    std::fs::write(dir.join("c2s.log"), request).unwrap();
    std::fs::write(dir.join("s2c.log"), &deep).unwrap();
    let loaded = load_paths(std::slice::from_ref(&dir));
    let r = rows(&loaded, "SELECT direction, kind, wire_bytes FROM frames ORDER BY seq");
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[1]["kind"], "response");
    assert_eq!(r[1]["wire_bytes"].as_u64(), Some(deep.len() as u64 - 1));
}

#[test]
fn structured_content_deeper_than_128_levels_is_not_a_predicted_rejection() {
    // The schema accepts any `v`; the content nests 200 arrays, which the clients' parsers
    // (JSON.parse, Python json) read fine: no rejection can be predicted.
    let dir = temp_dir("deep-structured");
    let c2s = [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"deep\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"deep\"}}",
    ];
    let schema = "{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"array\"}},\"required\":[\"v\"]}";
    let s2c = [
        format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"tools\":[{{\"name\":\"deep\",\"inputSchema\":{{\"type\":\"object\"}},\"outputSchema\":{schema}}}]}}}}"),
        format!("{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[],\"structuredContent\":{{\"v\":{}}}}}}}", nested(200, "1")),
        // The same tool's shallow result that breaks the schema is still caught.
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[],\"structuredContent\":{\"v\":7}}}".to_string(),
    ];
    std::fs::write(dir.join("c2s.log"), c2s.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("s2c.log"), s2c.join("\n") + "\n").unwrap();
    let loaded = load_paths(std::slice::from_ref(&dir));
    let r = rows(&loaded, "SELECT rpc_id, validation, schema_valid, validation_detail FROM calls WHERE method = 'tools/call' ORDER BY rpc_id");
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(r[0]["validation"], "none", "{r:?}");
    assert!(r[0]["schema_valid"].is_null(), "not checked is neither valid nor invalid: {r:?}");
    assert!(r[0]["validation_detail"].as_str().unwrap_or("").contains("not checked"), "{r:?}");
    assert_eq!(r[1]["validation"], "predicted_reject", "{r:?}");
}

#[test]
fn a_reused_request_id_is_noted_with_the_first_request_and_answered_once() {
    // Three requests, the third reusing the first one's id; the answer goes to the latest.
    let lines = [
        r#"{"dir":"c2s","message":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a"}}}"#,
        r#"{"dir":"c2s","message":{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"b"}}}"#,
        r#"{"dir":"c2s","message":{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"c"}}}"#,
        r#"{"dir":"s2c","message":{"jsonrpc":"2.0","id":7,"result":{"content":[]}}}"#,
    ];
    let dir = temp_dir("reused-id");
    let p = write(&dir, "reused.jsonl", (lines.join("\n") + "\n").as_bytes());
    let loaded = load_paths(&[p]);
    let notes = rows(&loaded, "SELECT seq, note FROM frames ORDER BY seq");
    let note_of = |seq: u64| notes.iter().find(|r| r["seq"].as_u64() == Some(seq)).and_then(|r| r["note"].as_str().map(str::to_string));
    assert_eq!(note_of(2).as_deref(), Some("duplicate request id 7 (first at seq 0)"), "{notes:?}");
    assert_eq!(note_of(0), None);
    assert_eq!(note_of(1), None);
    let answered = rows(&loaded, "SELECT tool, req_seq FROM calls WHERE resp_seq IS NOT NULL");
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["tool"].as_str(), Some("c"), "the answer goes to the latest request with that id");
}
