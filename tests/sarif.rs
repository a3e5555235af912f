//! SARIF stays within GitHub code scanning's limits: a generated stdio log whose every one of
//! 6,000 tool results carries structuredContent beside `content: []` (an `empty_content`
//! finding each) gives a run of exactly 5,000 results under 10 MB, the last one summarising the
//! rest, and a line on stderr.

use serde_json::Value;

use crate::util::mcpsift;

const CALLS: usize = 6_000;

/// A stdio pair: initialize, then CALLS tools/call whose results have an empty content array.
fn generated_pair(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let mut c2s = String::from(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gen","version":"1.0.0"}}}"#);
    c2s.push('\n');
    c2s.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let mut s2c = String::from(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"gen-server","version":"1.0.0"}}}"#);
    s2c.push('\n');
    for k in 1..=CALLS {
        c2s.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{k},\"method\":\"tools/call\",\"params\":{{\"name\":\"tool_{}\",\"arguments\":{{}}}}}}\n", k % 7));
        s2c.push_str(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{k},\"result\":{{\"content\":[],\"structuredContent\":{{\"n\":{k}}}}}}}\n"));
    }
    let (a, b) = (dir.join("c2s.log"), dir.join("s2c.log"));
    std::fs::write(&a, c2s).unwrap();
    std::fs::write(&b, s2c).unwrap();
    (a, b)
}

#[test]
fn sarif_with_more_than_5000_findings_is_capped_summarised_and_said_on_stderr() {
    let dir = crate::util::temp_dir("sarif-cap");
    let (a, b) = generated_pair(&dir);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let json = mcpsift(&["check", a, b, "-q", "--format", "json"]);
    let json: Value = serde_json::from_slice(&json.stdout).expect("check json");
    let all = json["findings"].as_array().expect("findings");
    let empty: Vec<&Value> = all.iter().filter(|f| f["cause"].as_str().is_some_and(|c| c.split(',').any(|t| t == "empty_content"))).collect();
    assert_eq!(empty.len(), CALLS, "one empty_content finding per generated result");

    let out = mcpsift(&["check", a, b, "--format", "sarif"]);
    assert!(out.status.success());
    assert!(out.stdout.len() < 10_000_000, "under the upload cap: {} bytes", out.stdout.len());
    let sarif: Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 5_000, "GitHub keeps 5,000 results per run");
    let summary = &results[4_999];
    assert_eq!(summary["ruleId"], "sarif_overflow");
    let omitted = all.len() - 4_999;
    assert_eq!(summary["properties"]["omitted"].as_u64(), Some(omitted as u64));
    assert!(summary["message"]["text"].as_str().unwrap().starts_with(&format!("{omitted} more finding(s) not listed")));
    let rules: Vec<&str> = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().iter().filter_map(|r| r["id"].as_str()).collect();
    assert!(rules.contains(&"sarif_overflow"), "the summary's rule is described");
    // The listed results are the first findings, most severe first, as check lists them.
    for (r, f) in results[..4_999].iter().zip(all) {
        assert_eq!(r["ruleId"], f["rule"]);
        assert_eq!(r["properties"]["rpc_id"], f["rpc_id"]);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("SARIF run capped for GitHub code scanning (5000 results, 10000000 bytes): 4999 of {} finding(s) listed", all.len())), "{stderr}");
    // -q keeps stderr quiet; the file is the same.
    let quiet = mcpsift(&["check", a, b, "-q", "--format", "sarif"]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("capped"));
    assert_eq!(quiet.stdout, out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}
