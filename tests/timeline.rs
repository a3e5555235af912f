//! `mcpsift timeline` and `mcpsift frame`: the story around each finding, checked against the
//! recorders' truth (sizes, directions, request before answer), and one frame's bytes against
//! the recorded bytes.

use std::io::Write as _;

use serde_json::Value;

use crate::util::{mcpsift, read_json, samples, temp_dir};

fn json(args: &[&str]) -> Value {
    let out = mcpsift(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// (request bytes, response bytes) of the call with this id in the truth's `calls`.
fn truth_call(calls: &[Value], id: &str) -> Option<(i64, Option<i64>)> {
    calls.iter().find(|c| (c["id"].is_i64() && id.parse::<i64>().ok() == c["id"].as_i64()) || c["id"].as_str() == Some(id)).map(|c| (c["bytes"].as_i64().unwrap(), c["response_bytes"].as_i64()))
}

#[test]
fn each_finding_of_a_request_is_told_at_its_answer_after_its_request() {
    // stdio (no timestamps: causal order) and a pcap (timestamps), each with its truth's calls.
    let cases = [("stdio_ts", read_json(&samples().join("stdio_ts/truth.json"))["calls"].clone()), ("stdio_py", read_json(&samples().join("stdio_py/truth.json"))["calls"].clone())];
    let mut told = 0;
    for (folder, calls) in cases {
        let dir = samples().join(folder);
        let d = dir.to_str().unwrap();
        let check = json(&["check", d, "-q", "--format", "json"]);
        let calls = calls.as_array().unwrap();
        for f in check["findings"].as_array().unwrap() {
            let (Some(id), Some(_)) = (f["rpc_id"].as_str(), f["session"].as_str()) else { continue };
            let fid = f["id"].as_str().unwrap();
            let t = json(&["timeline", d, "-q", "--finding", fid, "--format", "json", "--window", "4"]);
            let lines = t["lines"].as_array().unwrap();
            let at = lines.iter().position(|l| l["anchor"] == true).unwrap_or_else(|| panic!("{folder} {fid}: no anchor: {t}"));
            let anchor = &lines[at];
            assert!(anchor["findings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().starts_with(fid)), "{folder} {fid}: the finding is written at its frame");
            let (req_bytes, resp_bytes) = truth_call(calls, id).unwrap_or_else(|| panic!("{folder}: no call {id} in the truth"));
            match resp_bytes {
                Some(b) => {
                    assert_eq!((anchor["direction"].as_str(), anchor["bytes"].as_i64()), (Some("s2c"), Some(b)), "{folder} {fid}: the answer, its size from the truth");
                    // The request is before it in the story.
                    let req = lines[..at].iter().rev().find(|l| l["rpc_id"].as_str() == Some(id)).unwrap_or_else(|| panic!("{folder} {fid}: request not before the answer"));
                    assert_eq!((req["direction"].as_str(), req["kind"].as_str(), req["bytes"].as_i64()), (Some("c2s"), Some("request"), Some(req_bytes)));
                }
                None => assert_eq!((anchor["direction"].as_str(), anchor["bytes"].as_i64()), (Some("c2s"), Some(req_bytes)), "{folder} {fid}: unanswered: the request"),
            }
            assert_eq!(t["ordered_by"], "causal", "stdio tee logs carry no timestamps");
            assert!(lines.len() <= 4 + 1 + 3, "the window bounds the story: {}", lines.len());
            told += 1;
        }
    }
    assert!(told >= 6, "findings with a request id told: {told}");
}

#[test]
fn a_pcap_timeline_is_in_time_order_with_deltas_and_says_what_it_left_out() {
    let dir = samples().join("http_ts2");
    let truth = read_json(&dir.join("truth.json"))["files"]["ts2_streamable.pcap"].clone();
    let t = json(&["timeline", dir.to_str().unwrap(), "-q", "--session", "bistro-frontdesk 5.2.0 @ ip:127.0.0.1", "--format", "json", "--window", "5"]);
    assert_eq!(t["ordered_by"], "time");
    let a_frames = truth["conversations"]["A"]["frames"].as_i64().unwrap();
    assert_eq!(t["frames_total"].as_i64(), Some(a_frames));
    let lines: Vec<&Value> = t["lines"].as_array().unwrap().iter().filter(|l| l["what"] == "frame").collect();
    assert_eq!(lines.len() as i64 + t["left_out_before"].as_i64().unwrap() + t["left_out_after"].as_i64().unwrap(), a_frames);
    let ts: Vec<i64> = lines.iter().map(|l| l["ts_us"].as_i64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "time order: {ts:?}");
    assert!(lines.iter().skip(1).all(|l| l["delta_us"].is_i64()));
    // Each frame's size and direction is the truth's frame at that position of A's frames.
    let mine: Vec<&Value> = truth["frames"].as_array().unwrap().iter().filter(|f| f["conversation_client"] == "bistro-frontdesk").collect();
    let tail = &mine[mine.len() - lines.len()..];
    for (l, f) in lines.iter().zip(tail) {
        assert_eq!((l["direction"].as_str(), l["bytes"].as_i64()), (f["dir"].as_str(), f["bytes"].as_i64()), "{l} vs {f}");
    }
    let text = String::from_utf8(mcpsift(&["timeline", dir.to_str().unwrap(), "-q", "--session", "bistro-frontdesk 5.2.0 @ ip:127.0.0.1", "--window", "5"]).stdout).unwrap();
    assert!(text.contains(&format!("… {} earlier frame(s) left out (--window)", t["left_out_before"])), "{text}");
    assert!(!text.contains('\x1b'), "plain when piped");
}

#[test]
fn unknown_findings_and_sessions_are_clear_errors() {
    let d = samples().join("stdio_ts");
    let out = mcpsift(&["timeline", d.to_str().unwrap(), "-q", "--finding", "Fdeadbeef"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no finding Fdeadbeef"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = mcpsift(&["timeline", d.to_str().unwrap(), "-q", "--session", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session \"nope\""));
}

#[test]
fn frame_prints_the_recorded_bytes_and_redacts_secrets_by_default() {
    // The first line of the client's file is frame 0 of the pair, byte for byte.
    let dir = samples().join("stdio_ts");
    let c2s = std::fs::read(dir.join("c2s.log")).unwrap();
    let first = &c2s[..c2s.iter().position(|b| *b == b'\n').unwrap()];
    let out = mcpsift(&["frame", dir.to_str().unwrap(), "-q", "--seq", "0", "--no-redact"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, first);
    // The 9,961,474-byte answer of request 11, cut with a marker.
    let out = mcpsift(&["frame", dir.to_str().unwrap(), "-q", "--rpc-id", "11", "--max-bytes", "100"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("… [mcpsift: cut at 100 of 9961474 bytes; --max-bytes]\n"), "{}", &text[text.len().saturating_sub(200)..]);
    // A bearer token is redacted unless --no-redact.
    let tmp = temp_dir("frame-secret");
    let path = tmp.join("leak.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, r#"{{"dir":"c2s","message":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"fetch","arguments":{{"header":"Authorization: Bearer sk-live-SECRET42"}}}}}}}}"#).unwrap();
    drop(f);
    let p = path.to_str().unwrap();
    let red = String::from_utf8(mcpsift(&["frame", p, "-q", "--rpc-id", "1", "--request"]).stdout).unwrap();
    assert!(!red.contains("SECRET42") && red.contains("REDACTED"), "{red}");
    let raw = String::from_utf8(mcpsift(&["frame", p, "-q", "--rpc-id", "1", "--request", "--no-redact", "--pretty"]).stdout).unwrap();
    assert!(raw.contains("SECRET42") && raw.contains("\n  \"id\": 1"), "{raw}");
}

#[test]
fn a_clock_going_backwards_is_said_and_the_window_counts_what_it_leaves_out() {
    // A transcript whose third message is stamped before the second, then 40 pings.
    let dir = temp_dir("timeline-clock");
    let path = dir.join("clock.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let line = |f: &mut std::fs::File, ts: i64, dir: &str, msg: &str| writeln!(f, r#"{{"ts_us":{ts},"session":"s","direction":"{dir}","message":{msg}}}"#).unwrap();
    line(&mut f, 1_000_000, "c2s", r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#);
    line(&mut f, 3_000_000, "s2c", r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#);
    line(&mut f, 2_000_000, "c2s", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    for i in 0..40 {
        line(&mut f, 4_000_000 + i * 1000, if i % 2 == 0 { "c2s" } else { "s2c" }, &if i % 2 == 0 { format!(r#"{{"jsonrpc":"2.0","id":{},"method":"ping"}}"#, 100 + i / 2) } else { format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, 100 + i / 2) });
    }
    drop(f);
    let p = path.to_str().unwrap();
    let t = json(&["timeline", p, "-q", "--session", "s", "--around", "1", "--window", "5", "--format", "json"]);
    assert_eq!(t["clock_went_backwards"], true, "{t}");
    let back: Vec<&Value> = t["lines"].as_array().unwrap().iter().filter(|l| l["clock_backwards"] == true).collect();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0]["ts_us"], 2_000_000);
    // 43 frames: the window shows up to 5 before the anchor (seq 2) and 3 after it.
    let shown = t["lines"].as_array().unwrap().len() as i64;
    assert_eq!(shown + t["left_out_before"].as_i64().unwrap() + t["left_out_after"].as_i64().unwrap(), 43);
    assert_eq!(t["left_out_after"].as_i64().unwrap(), 43 - 3 - 3);
    let text = String::from_utf8(mcpsift(&["timeline", p, "-q", "--session", "s", "--around", "1", "--window", "5"]).stdout).unwrap();
    assert!(text.contains("the capture's clock went backwards") && text.contains("⟲"), "{text}");
    assert!(text.contains(&format!("… {} later frame(s) left out (--window)", 43 - 6)), "{text}");
}
