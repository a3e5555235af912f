//! `mcpsift diff` on two real captures of the same client version (ledger-cli 3.4.0 against
//! ledger-service over stdio, `samples/stdio_py2`, and over Streamable HTTP,
//! `samples/http_py2`) and on two cohorts of one capture (the two clients of `http_py2`).
//! Truth comes from the recorded bytes: the stdio tee lines, the HTTP bodies the recorder
//! logged (`py2_streamable.exchanges.json.gz`) and the pcap's packet timestamps; chains are
//! linked by the `requestState` a retry echoes. Nothing is taken from mcpsift.

use std::collections::BTreeMap;
use std::io::Read as _;

use serde_json::Value;

use crate::latency_chains::{Key, answer, http_truth, quantile};
use crate::util::{mcpsift, samples};

/// One round: request and answer as sent.
struct Round {
    request: Value,
    answer_bytes: usize,
    answer: Value,
}

/// A side's truth per group: (calls, errors, truncated, last-round answer sizes).
#[derive(Debug, Default, Clone)]
struct Truth {
    calls: u64,
    errors: u64,
    truncated: u64,
    sizes: Vec<f64>,
}

fn client_key(request: &Value) -> Key {
    let info = &request["params"]["_meta"]["io.modelcontextprotocol/clientInfo"];
    (request["params"]["name"].as_str().unwrap().to_string(), info["name"].as_str().unwrap().to_string(), info["version"].as_str().unwrap().to_string())
}

/// Logical calls from rounds in order: a request echoing an `input_required` answer's
/// `requestState` continues that chain; the chain's last answer is the call's.
fn logical(rounds: Vec<Round>) -> BTreeMap<Key, Truth> {
    let mut open: BTreeMap<String, usize> = BTreeMap::new();
    let mut chains: Vec<(Key, Round)> = Vec::new();
    for r in rounds.into_iter().filter(|r| r.request["method"] == "tools/call") {
        let key = client_key(&r.request);
        let issued = (r.answer["result"]["resultType"] == "input_required").then(|| r.answer["result"]["requestState"].as_str().map(str::to_string)).flatten();
        let at = match r.request["params"]["requestState"].as_str().and_then(|s| open.remove(s)) {
            Some(i) => {
                chains[i].1 = r;
                i
            }
            None => {
                chains.push((key, r));
                chains.len() - 1
            }
        };
        if let Some(s) = issued {
            open.insert(s, at);
        }
    }
    let mut out: BTreeMap<Key, Truth> = BTreeMap::new();
    for (key, last) in chains {
        let t = out.entry(key).or_default();
        t.calls += 1;
        let result = &last.answer["result"];
        t.errors += u64::from(last.answer.get("error").is_some() || result["isError"] == true);
        t.truncated += u64::from(result["_meta"]["truncated"] == true || result["structuredContent"]["truncated"] == true);
        t.sizes.push(last.answer_bytes as f64);
    }
    for t in out.values_mut() {
        t.sizes.sort_by(f64::total_cmp);
    }
    out
}

fn stdio_rounds() -> Vec<Round> {
    let dir = samples().join("stdio_py2");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let (c2s, s2c) = (read("c2s.log"), read("s2c.log"));
    let mut answers: BTreeMap<String, (usize, Value)> = BTreeMap::new();
    for line in s2c.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("method").is_none() {
            answers.insert(v["id"].to_string(), (line.len(), v));
        }
    }
    c2s.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("id").is_some() && v.get("method").is_some())
        .map(|request| {
            let (answer_bytes, answer) = answers[&request["id"].to_string()].clone();
            Round { request, answer_bytes, answer }
        })
        .collect()
}

fn http_rounds() -> Vec<Round> {
    let mut gz = String::new();
    flate2::read::GzDecoder::new(&std::fs::read(samples().join("http_py2/py2_streamable.exchanges.json.gz")).unwrap()[..]).read_to_string(&mut gz).unwrap();
    let log: Value = serde_json::from_str(&gz).unwrap();
    log["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["req_body"].as_str().is_some_and(|b| !b.is_empty()))
        .map(|x| {
            let bytes = answer(x);
            Round { request: serde_json::from_str(x["req_body"].as_str().unwrap()).unwrap(), answer_bytes: bytes.len(), answer: serde_json::from_slice(&bytes).unwrap() }
        })
        .collect()
}

fn diff_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["diff"];
    all.extend(args);
    all.extend(["-q", "--format", "json"]);
    let out = mcpsift(&all);
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "diff: {}", String::from_utf8_lossy(&out.stderr));
    (code, serde_json::from_slice(&out.stdout).expect("diff json"))
}

fn close(truth: Option<f64>, got: &Value, what: &str) {
    match (truth, got.as_f64()) {
        (None, None) => {}
        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-6, "{what}: truth {a}, mcpsift {b}"),
        (a, _) => panic!("{what}: truth {a:?}, mcpsift {got}"),
    }
}

/// Compares one side of a row with truth (and, when given, the side's pcap latencies).
fn check_side(got: &Value, truth: Option<&Truth>, latency: Option<&Vec<f64>>, what: &str) {
    let Some(t) = truth else {
        assert!(got.is_null(), "{what}: no such calls on this side, got {got}");
        return;
    };
    assert_eq!(got["calls"].as_u64(), Some(t.calls), "{what} calls");
    assert_eq!(got["errors"].as_u64(), Some(t.errors), "{what} errors");
    assert_eq!(got["truncated"].as_u64(), Some(t.truncated), "{what} truncated");
    assert_eq!(got["validation_errors"].as_u64(), Some(0), "{what}: these samples seed no validation problem");
    assert_eq!(got["answered"].as_u64(), Some(t.sizes.len() as u64), "{what} answered");
    close(quantile(&t.sizes, 0.5), &got["resp_p50_bytes"], &format!("{what} p50 bytes"));
    close(quantile(&t.sizes, 0.95), &got["resp_p95_bytes"], &format!("{what} p95 bytes"));
    close(t.sizes.last().copied(), &got["resp_max_bytes"], &format!("{what} max bytes"));
    match latency {
        Some(l) => {
            assert_eq!(got["timed"].as_u64(), Some(l.len() as u64), "{what} timed");
            close(quantile(l, 0.5), &got["latency_p50_ms"], &format!("{what} p50 ms"));
            close(quantile(l, 0.95), &got["latency_p95_ms"], &format!("{what} p95 ms"));
        }
        None => assert_eq!(got["timed"].as_u64(), Some(0), "{what}: a stdio tee log has no timestamps"),
    }
}

fn key_of(row: &Value) -> Key {
    let s = |k: &str| row[k].as_str().unwrap().to_string();
    (s("tool"), s("client_name"), s("client_version"))
}

#[test]
fn diff_of_stdio_and_http_captures_matches_the_recorded_bytes() {
    let (a, b) = (logical(stdio_rounds()), logical(http_rounds()));
    let latency = http_truth();
    let stdio = samples().join("stdio_py2");
    let http = samples().join("http_py2");
    let (code, v) = diff_json(&[stdio.to_str().unwrap(), http.to_str().unwrap()]);
    assert_eq!(code, 0, "without --fail-on-regression the exit code is 0");
    let rows = v["rows"].as_array().unwrap();
    let keys: Vec<Key> = rows.iter().map(key_of).collect();
    let mut union: Vec<Key> = a.keys().chain(b.keys()).cloned().collect();
    union.sort();
    union.dedup();
    assert_eq!(keys, union, "one row per tool x client of either side");
    // The known changes: query_region's first HTTP call is rejected (-32020) and
    // export_ledger's result is larger over HTTP; the subagent exists only over HTTP.
    let qr = ("query_region".to_string(), "ledger-cli".to_string(), "3.4.0".to_string());
    assert_eq!((a[&qr].errors, b[&qr].errors), (0, 1));
    for row in rows {
        let k = key_of(row);
        check_side(&row["a"], a.get(&k), None, &format!("{k:?} A"));
        check_side(&row["b"], b.get(&k), latency.get(&k), &format!("{k:?} B"));
    }
    assert_eq!(v["regressed"], false, "one more failed call is noise under the default thresholds");

    // With the noise guard off (1 more call is enough, any p-value), the error-rate rise is a
    // regression: exit 1 and exactly the groups whose error rate at least doubled.
    let (code, v) = diff_json(&[stdio.to_str().unwrap(), http.to_str().unwrap(), "--fail-on-regression", "--min-more", "1", "--alpha", "1"]);
    assert_eq!(code, 1);
    let mut flagged: Vec<(Key, String)> = Vec::new();
    for row in v["rows"].as_array().unwrap() {
        for r in row["regressions"].as_array().unwrap() {
            flagged.push((key_of(row), r["measure"].as_str().unwrap().to_string()));
        }
    }
    let mut expect = Vec::new();
    for (k, ta) in &a {
        let Some(tb) = b.get(k) else { continue };
        for (measure, na, nb) in [("truncation", ta.truncated, tb.truncated), ("errors", ta.errors, tb.errors)] {
            let (ra, rb) = (na as f64 / ta.calls as f64, nb as f64 / tb.calls as f64);
            if rb > ra && rb >= 2.0 * ra && nb as f64 - ra * tb.calls as f64 >= 1.0 {
                expect.push((k.clone(), measure.to_string()));
            }
        }
    }
    assert_eq!(flagged, expect);
    assert_eq!(flagged, vec![(qr, "errors".to_string())]);
    // The same without --fail-on-regression: reported, exit 0.
    assert_eq!(diff_json(&[stdio.to_str().unwrap(), http.to_str().unwrap(), "--min-more", "1", "--alpha", "1"]).0, 0);
}

#[test]
fn diff_of_two_cohorts_of_one_capture_by_tool() {
    let b_all = logical(http_rounds());
    let latency = http_truth();
    let cohort = |client: &str| -> (BTreeMap<Key, Truth>, BTreeMap<Key, Vec<f64>>) {
        let mut t: BTreeMap<Key, Truth> = BTreeMap::new();
        for (k, v) in b_all.iter().filter(|(k, _)| k.1 == client) {
            t.insert((k.0.clone(), "*".into(), "*".into()), v.clone());
        }
        let l = latency.iter().filter(|(k, _)| k.1 == client).map(|(k, v)| ((k.0.clone(), "*".into(), "*".into()), v.clone())).collect();
        (t, l)
    };
    let ((ta, la), (tb, lb)) = (cohort("ledger-cli"), cohort("ledger-subagent"));
    assert!(!ta.is_empty() && !tb.is_empty());
    let http = samples().join("http_py2");
    let (code, v) = diff_json(&[http.to_str().unwrap(), "--where-a", "client_name = 'ledger-cli'", "--where-b", "client_name = 'ledger-subagent'", "--by", "tool"]);
    assert_eq!(code, 0);
    assert_eq!(v["a"]["where"], "client_name = 'ledger-cli'");
    let rows = v["rows"].as_array().unwrap();
    let mut union: Vec<Key> = ta.keys().chain(tb.keys()).cloned().collect();
    union.sort();
    union.dedup();
    assert_eq!(rows.iter().map(key_of).collect::<Vec<_>>(), union);
    for row in rows {
        let k = key_of(row);
        check_side(&row["a"], ta.get(&k), la.get(&k), &format!("{k:?} A"));
        check_side(&row["b"], tb.get(&k), lb.get(&k), &format!("{k:?} B"));
    }
}

#[test]
fn diff_text_and_markdown_show_the_counts_behind_each_rate() {
    let stdio = samples().join("stdio_py2");
    let http = samples().join("http_py2");
    let (a, b) = (logical(stdio_rounds()), logical(http_rounds()));
    let thousands = |n: f64| {
        let s = (n as u64).to_string();
        s.as_bytes().rchunks(3).rev().map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(",")
    };
    let sizes = |t: &Truth| format!("{}/{}/{} B", thousands(quantile(&t.sizes, 0.5).unwrap().round()), thousands(quantile(&t.sizes, 0.95).unwrap().round()), thousands(*t.sizes.last().unwrap()));
    let (qr, el) = (("query_region".to_string(), "ledger-cli".to_string(), "3.4.0".to_string()), ("export_ledger".to_string(), "ledger-cli".to_string(), "3.4.0".to_string()));
    let pct = |t: &Truth| format!("{}/{} {:.0}%", t.errors, t.calls, 100.0 * t.errors as f64 / t.calls as f64);
    let errors = format!("{} -> {}", pct(&a[&qr]), pct(&b[&qr]));
    let export_sizes = format!("{} -> {}", sizes(&a[&el]), sizes(&b[&el]));
    for format in ["text", "md"] {
        let out = mcpsift(&["diff", stdio.to_str().unwrap(), http.to_str().unwrap(), "-q", "--format", format]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().find(|l| l.contains("query_region")).expect("query_region row");
        assert!(line.contains(&errors), "{format}: the error counts behind the rate {errors}: {line}");
        assert!(text.contains(&export_sizes), "{format}: export_ledger sizes {export_sizes}");
    }
    let out = mcpsift(&["diff", stdio.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(2), "one input needs --where-a and --where-b");
}
