//! Latency over logical calls: a 2026-07-28 multi-round-trip chain (`input_required` rounds and
//! their retries) is one call, timed from its first request to its final answer. Truth comes
//! from the recorded bytes: the packet timestamps of `samples/http_py2/py2_streamable.pcap`
//! (parsed here: pcap, Ethernet, IPv4, TCP), each message located by the exact body the
//! recorder logged (`py2_streamable.exchanges.json.gz`), and the chains the recorder wrote in
//! `truth.json` (`modern.mrtr_chains`). Nothing is taken from mcpsift.

use std::collections::BTreeMap;
use std::io::Read as _;

use mcpsift::ingest::base64::decode_base64;
use serde_json::Value;

use crate::util::{mcpsift, read_json, samples};

/// One direction of one TCP connection: its payload bytes in sequence order, and for each
/// packet the stream offset just past its last byte with the packet's timestamp.
#[derive(Default)]
struct Stream {
    bytes: Vec<u8>,
    ends: Vec<(usize, i64)>,
    next_seq: Option<u32>,
    cursor: usize,
}

impl Stream {
    /// The timestamp of the packet holding byte `at`.
    fn ts_at(&self, at: usize) -> i64 {
        self.ends.iter().find(|(end, _)| *end > at).map(|(_, ts)| *ts).expect("byte inside the stream")
    }

    /// Finds `needle` after the cursor; returns the timestamp of its last byte and advances.
    fn take(&mut self, needle: &[u8]) -> Option<i64> {
        let pos = self.bytes[self.cursor..].windows(needle.len()).position(|w| w == needle)? + self.cursor;
        self.cursor = pos + needle.len();
        Some(self.ts_at(pos + needle.len() - 1))
    }
}

/// The TCP streams of a little-endian µs pcap of Ethernet frames, keyed by (src port, dst port).
fn tcp_streams(pcap: &[u8]) -> BTreeMap<(u16, u16), Stream> {
    assert_eq!(&pcap[..4], &[0xd4, 0xc3, 0xb2, 0xa1], "little-endian microsecond pcap");
    assert_eq!(u32::from_le_bytes(pcap[20..24].try_into().unwrap()), 1, "Ethernet link type");
    let mut streams: BTreeMap<(u16, u16), Stream> = BTreeMap::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let word = |k: usize| u32::from_le_bytes(pcap[at + k..at + k + 4].try_into().unwrap());
        let ts = i64::from(word(0)) * 1_000_000 + i64::from(word(4));
        let caplen = word(8) as usize;
        let pkt = &pcap[at + 16..at + 16 + caplen];
        at += 16 + caplen;
        if pkt.len() < 14 + 20 || pkt[12..14] != [0x08, 0x00] {
            continue;
        }
        let ip = &pkt[14..];
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        if ip[9] != 6 {
            continue;
        }
        let tcp = &ip[ihl..total];
        let (src, dst) = (u16::from_be_bytes([tcp[0], tcp[1]]), u16::from_be_bytes([tcp[2], tcp[3]]));
        let seq = u32::from_be_bytes(tcp[4..8].try_into().unwrap());
        let data = &tcp[usize::from(tcp[12] >> 4) * 4..];
        let s = streams.entry((src, dst)).or_default();
        let syn = tcp[13] & 0x02 != 0;
        if syn {
            s.next_seq = Some(seq.wrapping_add(1));
            continue;
        }
        if data.is_empty() {
            continue;
        }
        // Loopback delivers in order; a retransmission (an old sequence number) is skipped.
        if s.next_seq.is_some_and(|n| n != seq) {
            assert!(seq.wrapping_sub(s.next_seq.unwrap()) > u32::MAX / 2, "no gap on loopback");
            continue;
        }
        s.bytes.extend_from_slice(data);
        s.ends.push((s.bytes.len(), ts));
        s.next_seq = Some(seq.wrapping_add(data.len() as u32));
    }
    streams
}

/// Finds `body` in the first stream toward (`to_server`) or from port `port` that has it
/// after its cursor: the timestamp of the body's last byte.
fn locate(streams: &mut BTreeMap<(u16, u16), Stream>, port: u16, to_server: bool, body: &[u8]) -> i64 {
    streams
        .iter_mut()
        .filter(|((src, dst), _)| if to_server { *dst == port } else { *src == port })
        .find_map(|(_, s)| s.take(body))
        .unwrap_or_else(|| panic!("body not in the capture: {}", String::from_utf8_lossy(&body[..body.len().min(120)])))
}

/// The JSON-RPC answer of an exchange: the JSON body, or the SSE `data:` payload with an id.
pub fn answer(exchange: &Value) -> Vec<u8> {
    let body: Vec<u8> = exchange["chunks"].as_array().expect("chunks").iter().flat_map(|c| decode_base64(c["b64"].as_str().unwrap()).expect("base64 chunk")).collect();
    let sse = exchange["res_headers"]["content-type"].as_str().is_some_and(|t| t.starts_with("text/event-stream"));
    if !sse {
        return body;
    }
    let text = String::from_utf8(body).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|d| serde_json::from_str::<Value>(d).is_ok_and(|v| v.get("id").is_some() && v.get("method").is_none()))
        .expect("the SSE stream carries the answer")
        .as_bytes()
        .to_vec()
}

/// Linear interpolation between closest ranks (position q·(n−1)).
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

pub type Key = (String, String, String);

/// Logical tools/call latencies per tool × client of the HTTP sample, from its packets.
pub fn http_truth() -> BTreeMap<Key, Vec<f64>> {
    let dir = samples().join("http_py2");
    let mut gz = String::new();
    flate2::read::GzDecoder::new(&std::fs::read(dir.join("py2_streamable.exchanges.json.gz")).unwrap()[..]).read_to_string(&mut gz).unwrap();
    let log: Value = serde_json::from_str(&gz).unwrap();
    let port: u16 = log["base"].as_str().unwrap().rsplit(':').next().unwrap().parse().unwrap();
    let mut streams = tcp_streams(&std::fs::read(dir.join("py2_streamable.pcap")).unwrap());
    // Every exchange in order, so repeated bodies (two clients' server/discover) are found in turn.
    let mut rounds: BTreeMap<(String, i64), (Key, i64, i64)> = BTreeMap::new();
    let mut order = Vec::new();
    for x in log["exchanges"].as_array().unwrap() {
        let Some(req) = x["req_body"].as_str().filter(|b| !b.is_empty()) else { continue };
        let req_ts = locate(&mut streams, port, true, req.as_bytes());
        let resp_ts = locate(&mut streams, port, false, &answer(x));
        let msg: Value = serde_json::from_str(req).unwrap();
        if msg["method"] != "tools/call" {
            continue;
        }
        let info = &msg["params"]["_meta"]["io.modelcontextprotocol/clientInfo"];
        let key = (msg["params"]["name"].as_str().unwrap().to_string(), info["name"].as_str().unwrap().to_string(), info["version"].as_str().unwrap().to_string());
        let id = (key.1.clone(), msg["id"].as_i64().unwrap());
        order.push(id.clone());
        rounds.insert(id, (key, req_ts, resp_ts));
    }
    let truth = read_json(&dir.join("truth.json"));
    let file = &truth["files"]["py2_streamable.pcap"];
    let chains = file["modern"]["mrtr_chains"].as_array().unwrap();
    assert_eq!(chains.len(), 2, "two refund chains");
    let mut out: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    let mut in_chain = std::collections::BTreeSet::new();
    for c in chains {
        // The chains are the main client's (the subagent calls get_balance only).
        let ids: Vec<(String, i64)> = c["ids"].as_array().unwrap().iter().map(|i| ("ledger-cli".to_string(), i.as_i64().unwrap())).collect();
        let (key, first_req, _) = rounds[&ids[0]].clone();
        let (_, _, last_resp) = rounds[ids.last().unwrap()].clone();
        out.entry(key).or_default().push((last_resp - first_req) as f64 / 1000.0);
        in_chain.extend(ids);
    }
    for id in order.iter().filter(|id| !in_chain.contains(*id)) {
        let (key, req, resp) = rounds[id].clone();
        out.entry(key).or_default().push((resp - req) as f64 / 1000.0);
    }
    let logical: usize = out.values().map(Vec::len).sum();
    assert_eq!(logical as u64, file["modern"]["logical_calls"]["tools/call logical calls"].as_u64().unwrap(), "the recorder's logical calls");
    for v in out.values_mut() {
        v.sort_by(f64::total_cmp);
    }
    out
}

fn latency_groups(paths: &[&str], rule: Option<&str>) -> Value {
    let mut args = vec!["check"];
    args.extend(paths.iter().copied());
    args.extend(["-q", "--format", "json"]);
    if let Some(r) = rule {
        args.extend(["--rule", r]);
    }
    let out = mcpsift(&args);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(truth: Option<f64>, got: &Value, what: &str) {
    match (truth, got.as_f64()) {
        (None, None) => {}
        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-6, "{what}: truth {a}, mcpsift {b}"),
        (a, _) => panic!("{what}: truth {a:?}, mcpsift {got}"),
    }
}

#[test]
fn a_multi_round_trip_chain_is_one_call_timed_from_its_first_request_to_its_final_answer() {
    let truth = http_truth();
    let refund = &truth[&("approve_refund".to_string(), "ledger-cli".to_string(), "3.4.0".to_string())];
    assert_eq!(refund.len(), 2, "two logical refund calls, not five rounds");
    let pcap = samples().join("http_py2/py2_streamable.pcap");
    let v = latency_groups(&[pcap.to_str().unwrap()], None);
    let got = v["latency"].as_array().unwrap();
    assert_eq!(got.len(), truth.len(), "one group per tool x client");
    for g in got {
        let key = (g["tool"].as_str().unwrap().to_string(), g["client_name"].as_str().unwrap().to_string(), g["client_version"].as_str().unwrap().to_string());
        let t = truth.get(&key).unwrap_or_else(|| panic!("{key:?} is not in the capture"));
        let what = |s: &str| format!("{key:?} {s}");
        assert_eq!(g["calls"].as_u64(), Some(t.len() as u64), "{}", what("calls"));
        assert_eq!(g["timed"].as_u64(), Some(t.len() as u64), "{}", what("timed"));
        close(quantile(t, 0.5), &g["p50_ms"], &what("p50"));
        close(quantile(t, 0.95), &g["p95_ms"], &what("p95"));
        close(quantile(t, 0.99), &g["p99_ms"], &what("p99"));
        close(t.last().copied(), &g["max_ms"], &what("max"));
    }
}

#[test]
fn stdio_chains_count_once_though_untimed() {
    // samples/stdio_py2: a tee pair (no timestamps); the recorder counts 10 tools/call
    // requests, 7 logical calls, the refund chains of 3 and 2 rounds.
    let dir = samples().join("stdio_py2");
    let truth = read_json(&dir.join("truth.json"));
    let logical = truth["modern"]["logical_calls"]["tools/call logical calls"].as_u64().unwrap();
    let rounds_beyond_first: u64 = truth["modern"]["mrtr_chains"].as_array().unwrap().iter().map(|c| c["rounds"].as_u64().unwrap() - 1).sum();
    let mut per_tool: BTreeMap<String, u64> = BTreeMap::new();
    for (tool, t) in truth["tools"].as_object().unwrap() {
        per_tool.insert(tool.clone(), t["calls"].as_u64().unwrap());
    }
    for c in truth["modern"]["mrtr_chains"].as_array().unwrap() {
        *per_tool.get_mut(c["tool"].as_str().unwrap()).unwrap() -= c["rounds"].as_u64().unwrap() - 1;
    }
    assert_eq!(per_tool.values().sum::<u64>(), logical);
    assert!(rounds_beyond_first > 0);
    let v = latency_groups(&[dir.to_str().unwrap()], None);
    let got: BTreeMap<String, (u64, u64)> =
        v["latency"].as_array().unwrap().iter().map(|g| (g["tool"].as_str().unwrap().to_string(), (g["calls"].as_u64().unwrap(), g["timed"].as_u64().unwrap()))).collect();
    let expect: BTreeMap<String, (u64, u64)> = per_tool.into_iter().map(|(t, n)| (t, (n, 0))).collect();
    assert_eq!(got, expect);
}

#[test]
fn the_latency_rule_reads_chains_as_logical_calls() {
    // The rule's p95 for a group is the logical-call p95: with thresholds low enough to flag
    // every timed group, the refund group's detail carries the chain latency truth gives.
    let truth = http_truth();
    let refund = &truth[&("approve_refund".to_string(), "ledger-cli".to_string(), "3.4.0".to_string())];
    let dir = crate::util::temp_dir("latency-chains");
    let sql = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("queries/latency.sql")).unwrap();
    let default_row = "SELECT 5.0 AS outlier_ratio, 500.0 AS min_p95_ms, 3 AS min_calls";
    assert!(sql.contains(default_row));
    std::fs::write(dir.join("latency.sql"), sql.replace(default_row, "SELECT 0.0 AS outlier_ratio, 0.0 AS min_p95_ms, 1 AS min_calls")).unwrap();
    let pcap = samples().join("http_py2/py2_streamable.pcap");
    let out = mcpsift(&["check", pcap.to_str().unwrap(), "-q", "--format", "json", "--rule", "latency", "--queries", dir.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = v["findings"].as_array().unwrap().iter().find(|f| f["tool"] == "approve_refund").expect("refund flagged");
    let p95 = quantile(refund, 0.95).unwrap();
    let want = format!("p95 {} ms, max {} ms over 2 answered call(s)", (p95 * 10.0).round() / 10.0, (refund[1] * 10.0).round() / 10.0);
    assert!(f["detail"].as_str().unwrap().contains(&want), "{} lacks {want}", f["detail"]);
    let _ = std::fs::remove_dir_all(&dir);
}
