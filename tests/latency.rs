//! Latency per tool × client name × client version and the `latency` rule, against truth
//! computed here from the recorded timestamps of the JSONL transcripts (samples and corpus):
//! each tools/call request paired with its response by session and id, cancellations by
//! `params.requestId`, quantiles by linear interpolation. Nothing is taken from mcpsift.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{corpus, mcpsift, read_json, samples};

/// Every JSONL transcript: the samples' and the corpus's.
fn transcripts() -> Vec<PathBuf> {
    let mut out = vec![samples().join("transcript/session.jsonl")];
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus()).expect("corpus").filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for d in dirs {
        for name in ["transcript.jsonl", "transcript.jsonl.gz"] {
            if d.join(name).is_file() {
                out.push(d.join(name));
            }
        }
    }
    assert!(out.len() >= 8, "the corpus has transcripts: {out:?}");
    out
}

fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read transcript");
    if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut s).expect("gunzip");
        s
    } else {
        String::from_utf8(bytes).expect("utf-8 transcript")
    }
}

/// `2026-12-02T11:12:07.104Z` in microseconds since the epoch (days from the civil date).
fn rfc3339_us(s: &str) -> Option<i64> {
    let (date, time) = s.trim_end_matches('Z').split_once('T')?;
    let d: Vec<i64> = date.split('-').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let (y, m) = if d[1] <= 2 { (d[0] - 1, d[1] + 9) } else { (d[0], d[1] - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let frac_us: i64 = format!("{frac:0<6}")[..6].parse().ok()?;
    Some(((days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1_000_000) + frac_us)
}

#[derive(Debug, Default, Clone)]
struct Call {
    tool: String,
    client: (String, String),
    req_us: i64,
    resp_us: Option<i64>,
    error_code: Option<i64>,
    cancel: Option<(i64, String)>,
}

/// The tools/call calls of one transcript, from its records.
fn calls_of(path: &Path) -> Vec<Call> {
    let default_session = path.file_name().expect("name").to_string_lossy().into_owned();
    let mut client_of: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut calls: BTreeMap<(String, String), Call> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    // HTTP: an `"id": null` error answers the request of its exchange (`http_ex`).
    let mut by_exchange: BTreeMap<i64, (String, String)> = BTreeMap::new();
    for line in read_text(path).lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).expect("transcript record");
        let ts = rec["ts_us"].as_i64().or_else(|| rec["ts"].as_str().and_then(rfc3339_us)).expect("every record has a timestamp");
        let session = rec["session"].as_str().map_or(default_session.clone(), str::to_string);
        let dir = rec["direction"].as_str().or(rec["dir"].as_str()).expect("direction").to_string();
        let msg: Value = match (&rec["message"], rec["raw"].as_str()) {
            (Value::Null, Some(raw)) => match serde_json::from_str(raw) {
                Ok(v) => v,
                Err(_) => continue,
            },
            (m, _) => m.clone(),
        };
        let method = msg["method"].as_str();
        let mut id = (!msg["id"].is_null()).then(|| msg["id"].to_string());
        let exchange = rec["http_ex"].as_i64();
        let mut session = session;
        if dir == "s2c"
            && id.is_none()
            && method.is_none()
            && let Some((s, i)) = exchange.and_then(|x| by_exchange.get(&x))
        {
            (session, id) = (s.clone(), Some(i.clone()));
        }
        let info = |v: &Value| (v["name"].as_str().unwrap_or("?").to_string(), v["version"].as_str().unwrap_or("?").to_string());
        match (dir.as_str(), method, id) {
            ("c2s", Some("initialize"), _) => {
                client_of.insert(session.clone(), info(&msg["params"]["clientInfo"]));
            }
            ("c2s", Some("tools/call"), Some(id)) => {
                let meta = &msg["params"]["_meta"]["io.modelcontextprotocol/clientInfo"];
                let client = if meta.is_object() { info(meta) } else { client_of.get(&session).cloned().unwrap_or(("?".into(), "?".into())) };
                let tool = msg["params"]["name"].as_str().unwrap_or("?").to_string();
                order.push((session.clone(), id.clone()));
                if let Some(x) = exchange {
                    by_exchange.insert(x, (session.clone(), id.clone()));
                }
                calls.insert((session, id), Call { tool, client, req_us: ts, ..Call::default() });
            }
            ("c2s", Some("notifications/cancelled"), None) => {
                let target = msg["params"]["requestId"].to_string();
                if let Some(c) = calls.get_mut(&(session, target)) {
                    c.cancel = Some((ts, msg["params"]["reason"].as_str().unwrap_or("").to_string()));
                }
            }
            ("s2c", None, Some(id)) => {
                if let Some(c) = calls.get_mut(&(session, id))
                    && c.resp_us.is_none()
                {
                    c.resp_us = Some(ts);
                    c.error_code = msg["error"]["code"].as_i64();
                }
            }
            _ => {}
        }
    }
    order.iter().filter_map(|k| calls.get(k).cloned()).collect()
}

fn is_timeout(c: &Call) -> bool {
    c.cancel.as_ref().is_some_and(|(_, r)| r.contains("timed out") || r.contains("-32001")) || c.error_code == Some(-32001)
}

/// Answered, neither cancelled nor timed out: the latency in ms.
fn latency_ms(c: &Call) -> Option<f64> {
    if c.cancel.is_some() || is_timeout(c) {
        return None;
    }
    c.resp_us.map(|r| (r - c.req_us) as f64 / 1000.0)
}

/// Linear interpolation between closest ranks (position q·(n−1)).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64))
}

#[derive(Debug, Default)]
struct Group {
    calls: u64,
    latencies: Vec<f64>,
    timeouts: u64,
    waits: Vec<f64>,
}

type GroupKey = (String, String, String);

fn groups<'a>(calls: impl Iterator<Item = &'a Call>) -> BTreeMap<GroupKey, Group> {
    let mut out: BTreeMap<GroupKey, Group> = BTreeMap::new();
    for c in calls {
        let g = out.entry((c.tool.clone(), c.client.0.clone(), c.client.1.clone())).or_default();
        g.calls += 1;
        if let Some(l) = latency_ms(c) {
            g.latencies.push(l);
        }
        if is_timeout(c) {
            g.timeouts += 1;
            if let Some((ts, _)) = &c.cancel {
                g.waits.push((ts - c.req_us) as f64 / 1000.0);
            }
        }
    }
    for g in out.values_mut() {
        g.latencies.sort_by(f64::total_cmp);
        g.waits.sort_by(f64::total_cmp);
    }
    out
}

fn close(a: Option<f64>, b: &Value, what: &str) {
    match (a, b.as_f64()) {
        (None, None) => {}
        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-6, "{what}: truth {a}, mcpsift {b}"),
        (a, _) => panic!("{what}: truth {a:?}, mcpsift {b}"),
    }
}

fn check_json(args: &[&str]) -> Value {
    let out = mcpsift(args);
    assert!(out.status.code().is_some_and(|c| c <= 1), "check: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("check json")
}

fn path_args(paths: &[PathBuf]) -> Vec<&str> {
    paths.iter().map(|p| p.to_str().expect("utf-8 path")).collect()
}

/// A fresh dataset of `paths` (`mcpsift tables`) in a temporary folder named after `what`.
fn dataset_of(paths: &[PathBuf], what: &str) -> PathBuf {
    let dir = crate::util::temp_dir(&format!("latency-{what}")).join("dataset");
    let mut args = vec!["tables"];
    args.extend(path_args(paths));
    args.extend(["--out", dir.to_str().expect("utf-8 path"), "-q"]);
    assert!(mcpsift(&args).status.success(), "tables {what}");
    dir
}

#[test]
fn latency_quantiles_and_timeouts_match_the_transcripts_timestamps() {
    let paths = transcripts();
    let all: Vec<Call> = paths.iter().flat_map(|p| calls_of(p)).collect();
    let truth = groups(all.iter());
    assert!(truth.values().any(|g| g.latencies.len() >= 4), "some group has several timed calls, so p95 interpolates");
    assert!(truth.values().map(|g| g.timeouts).sum::<u64>() >= 4, "the corpus and samples record client timeouts");
    let mut args = vec!["check"];
    args.extend(path_args(&paths));
    args.extend(["-q", "--format", "json"]);
    let v = check_json(&args);
    assert_groups_are_the_truth(v["latency"].as_array().expect("check json has latency"), &truth);
}

/// Latency groups as mcpsift printed them against the groups computed from the transcripts.
fn assert_groups_are_the_truth(got: &[Value], truth: &BTreeMap<GroupKey, Group>) {
    assert_eq!(got.len(), truth.len(), "one latency group per tool x client name x client version");
    for g in got {
        let key = (g["tool"].as_str().unwrap().to_string(), g["client_name"].as_str().unwrap().to_string(), g["client_version"].as_str().unwrap().to_string());
        let t = truth.get(&key).unwrap_or_else(|| panic!("{key:?} is not a group of the transcripts"));
        let what = |s: &str| format!("{key:?} {s}");
        assert_eq!(g["calls"].as_u64(), Some(t.calls), "{}", what("calls"));
        assert_eq!(g["timed"].as_u64(), Some(t.latencies.len() as u64), "{}", what("timed"));
        close(quantile(&t.latencies, 0.5), &g["p50_ms"], &what("p50"));
        close(quantile(&t.latencies, 0.95), &g["p95_ms"], &what("p95"));
        close(quantile(&t.latencies, 0.99), &g["p99_ms"], &what("p99"));
        close(t.latencies.last().copied(), &g["max_ms"], &what("max"));
        assert_eq!(g["timeouts"].as_u64(), Some(t.timeouts), "{}", what("timeouts"));
        assert_eq!(g["timeouts_timed"].as_u64(), Some(t.waits.len() as u64), "{}", what("timeouts_timed"));
        close(t.waits.first().copied(), &g["timeout_min_ms"], &what("timeout_min"));
        close(t.waits.last().copied(), &g["timeout_max_ms"], &what("timeout_max"));
    }
}

#[test]
fn latency_groups_merge_across_pieces_of_a_dataset() {
    // A dataset is queried in pieces of whole captures; a group's quantiles are taken once
    // over the latencies of all its pieces. Every transcript is read twice (itself and a copy
    // under another name, so another capture), one capture per piece: each group's calls are
    // in two pieces, and its quantiles must be those of both copies' latencies together.
    let originals = transcripts();
    let copies_dir = crate::util::temp_dir("latency-copies");
    let mut paths = originals.clone();
    for (i, p) in originals.iter().enumerate() {
        let copy = copies_dir.join(format!("copy{i}-{}", p.file_name().expect("name").to_string_lossy()));
        std::fs::copy(p, &copy).expect("copy transcript");
        paths.push(copy);
    }
    let all: Vec<Call> = paths.iter().flat_map(|p| calls_of(p)).collect();
    let truth = groups(all.iter());
    assert!(truth.values().any(|g| g.latencies.len() >= 4), "groups have several timed calls, so quantiles interpolate");
    let dir = dataset_of(&paths, "pieces");
    let dataset = mcpsift::dataset::Dataset::open(&dir).expect("dataset");
    let source = dataset.source(&mcpsift::model::tables::default_limits()).expect("source").with_piece_frames(1);
    let got = mcpsift::report::gather::latency(&source).expect("latency");
    let got: Vec<Value> = got.iter().map(|g| serde_json::to_value(g).expect("json")).collect();
    assert_groups_are_the_truth(&got, &truth);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&copies_dir);
}

#[test]
fn transcript_latencies_agree_with_the_recorders_truth() {
    // samples/transcript/truth.json has the recorder's per-call latency (from the tee); the
    // transcript's millisecond timestamps give the same figure to within their rounding.
    let path = samples().join("transcript/session.jsonl");
    let truth = read_json(&samples().join("transcript/truth.json"));
    let recorded: Vec<&Value> = truth["calls"].as_array().expect("calls").iter().filter(|c| c["method"] == "tools/call").collect();
    let ours = calls_of(&path);
    assert_eq!(ours.len(), recorded.len(), "tools/call count");
    for (c, r) in ours.iter().zip(&recorded) {
        assert_eq!(c.tool, r["tool"].as_str().unwrap_or("?"));
        if let (Some(resp), Some(l)) = (c.resp_us, r["latency_ms"].as_f64()) {
            let ms = (resp - c.req_us) as f64 / 1000.0;
            assert!((ms - l).abs() <= 2.0, "{}: transcript {ms} ms, recorder {l} ms", c.tool);
        }
    }
}

#[test]
fn latency_groups_are_the_same_from_a_dataset() {
    let paths = transcripts();
    let dir = dataset_of(&paths, "dataset");
    let mut raw = vec!["check"];
    raw.extend(path_args(&paths));
    raw.extend(["-q", "--format", "json"]);
    let from_raw = check_json(&raw);
    let from_dataset = check_json(&["check", dir.to_str().unwrap(), "-q", "--format", "json"]);
    assert!(!from_raw["latency"].as_array().expect("latency").is_empty());
    assert_eq!(from_raw["latency"], from_dataset["latency"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `latency` rule's thresholds (the `params` row of queries/latency.sql).
struct Params {
    ratio: f64,
    min_p95_ms: f64,
    min_calls: usize,
}

/// (capture, tool, client, cause) the rule should flag on one transcript, computed from its calls.
fn expected_flags(path: &Path, p: &Params) -> Vec<(String, String, String, String)> {
    let g = groups(calls_of(path).iter());
    let p95s: Vec<(&GroupKey, Option<f64>)> = g.iter().map(|(k, g)| (k, quantile(&g.latencies, 0.95))).collect();
    let mut known: Vec<f64> = g.values().flat_map(|g| g.latencies.iter().copied()).collect();
    known.sort_by(f64::total_cmp);
    let median = quantile(&known, 0.5);
    let mut out = Vec::new();
    for (k, p95) in &p95s {
        let outlier = known.len() >= p.min_calls && p95.zip(median).is_some_and(|(x, m)| x >= p.min_p95_ms && x >= p.ratio * m);
        let timeouts = g[*k].timeouts > 0;
        let cause = match (timeouts, outlier) {
            (true, true) => "timeouts,p95_outlier",
            (true, false) => "timeouts",
            (false, true) => "p95_outlier",
            _ => continue,
        };
        out.push((path.to_str().unwrap().to_string(), k.0.clone(), format!("{} {}", k.1, k.2), cause.to_string()));
    }
    out
}

fn flagged(v: &Value) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            (s("capture"), s("tool"), s("client"), s("cause"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn latency_rule_flags_p95_outliers_and_timeouts_with_overridable_thresholds() {
    let paths = transcripts();
    let run = |extra: &[&str]| {
        let mut args = vec!["check"];
        args.extend(path_args(&paths));
        args.extend(["-q", "--format", "json", "--rule", "latency"]);
        args.extend(extra);
        flagged(&check_json(&args))
    };
    let expect = |p: &Params| {
        let mut e: Vec<_> = paths.iter().flat_map(|path| expected_flags(path, p)).collect();
        e.sort();
        e
    };
    let defaults = Params { ratio: 5.0, min_p95_ms: 500.0, min_calls: 3 };
    let found = run(&[]);
    assert!(found.iter().any(|f| f.3.contains("timeouts")), "timeouts are flagged: {found:?}");
    assert!(found.iter().any(|f| f.3.contains("p95_outlier")), "the corpus has slow tools: {found:?}");
    assert_eq!(found, expect(&defaults));

    // The thresholds are the `params` row: a copy of the rule with others replaces the built-in.
    let dir = crate::util::temp_dir("latency-rule");
    let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("queries/latency.sql")).unwrap();
    let default_row = "SELECT 5.0 AS outlier_ratio, 500.0 AS min_p95_ms, 3 AS min_calls";
    assert!(sql.contains(default_row), "the documented params row");
    std::fs::write(dir.join("latency.sql"), sql.replace(default_row, "SELECT 2.0 AS outlier_ratio, 5.0 AS min_p95_ms, 2 AS min_calls")).unwrap();
    let stricter = run(&["--queries", dir.to_str().unwrap()]);
    let lower = Params { ratio: 2.0, min_p95_ms: 5.0, min_calls: 2 };
    assert!(stricter.len() > found.len(), "lower thresholds flag more groups");
    assert_eq!(stricter, expect(&lower));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_report_format_carries_the_latency_groups_check_prints() {
    let paths = transcripts();
    let mut args = vec!["check"];
    args.extend(path_args(&paths));
    args.extend(["-q", "--format", "json"]);
    let from_check = check_json(&args)["latency"].clone();
    let dir = crate::util::temp_dir("latency-report");
    for ext in ["json", "md", "html"] {
        let file = dir.join(format!("r.{ext}"));
        let mut args = vec!["report"];
        args.extend(path_args(&paths));
        args.extend(["-q", "-o", file.to_str().unwrap()]);
        assert!(mcpsift(&args).status.success(), "report {ext}");
        let text = std::fs::read_to_string(&file).unwrap();
        if ext == "json" {
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["latency"], from_check, "the JSON report has the same groups as check");
            continue;
        }
        assert!(text.contains("Latency by tool and client version"), "{ext}: latency section");
        // The slowest timed group's p95, as the page prints it (one decimal, thousands separated).
        let slowest = from_check.as_array().unwrap().iter().filter_map(|g| g["p95_ms"].as_f64()).fold(f64::MIN, f64::max);
        let tenths = (slowest * 10.0).round() as u64;
        let int = (tenths / 10).to_string();
        let grouped: Vec<String> = int.as_bytes().rchunks(3).rev().map(|c| String::from_utf8_lossy(c).into_owned()).collect();
        let label = format!("{}.{} ms", grouped.join(","), tenths % 10);
        assert!(text.contains(&label), "{ext}: the slowest p95 {label} is shown");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
