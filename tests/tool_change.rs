//! `tool_definition_changed` and `baseline`: a recorded server whose tool definitions change
//! between two sessions (samples/tool_change, Python `mcp` 1.30.0), against the recorder's diff.

use serde_json::Value;

use crate::util::{mcpsift, read_json, samples, temp_dir};

fn findings(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-q", "--format", "json", "--rule", "tool_definition_changed"]);
    let out = mcpsift(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["findings"].as_array().unwrap().clone()
}

/// How mcpsift words one field of the truth's diff.
fn worded(field: &Value) -> String {
    let name = field["field"].as_str().unwrap();
    if let Some(d) = field["delta_chars"].as_i64() {
        format!("{name} changed by {d:+} characters")
    } else if let Some(list) = field["added"].as_array() {
        format!("{name} added [{}]", list.iter().map(Value::to_string).collect::<Vec<_>>().join(", "))
    } else if field["added"] == true {
        format!("{name} added")
    } else {
        format!("{name}: {} → {}", field["from"], field["to"])
    }
}

/// Each change of the truth is one finding naming every field that changed; nothing else.
fn assert_matches_truth(found: &[Value], against: &str) {
    let truth = read_json(&samples().join("tool_change/truth.json"));
    let changes = truth["tool_change"]["changes"].as_array().unwrap();
    assert_eq!(found.len(), changes.len(), "{found:#?}");
    for c in changes {
        let tool = c["tool"].as_str().unwrap();
        let f = found.iter().find(|f| f["tool"] == tool).unwrap_or_else(|| panic!("no finding for {tool}"));
        let change = c["change"].as_str().unwrap();
        assert_eq!(f["cause"], format!("tool_{change}"));
        let against_baseline = against.contains("baseline");
        assert_eq!(f["severity"], if change != "added" && against_baseline { "warn" } else { "info" });
        let detail = f["detail"].as_str().unwrap();
        assert!(detail.contains(against), "{detail}");
        assert!(detail.contains(&format!("{} -> {}", truth["tool_change"]["from_version"].as_str().unwrap(), truth["tool_change"]["to_version"].as_str().unwrap())), "{detail}");
        for field in c["fields"].as_array().into_iter().flatten() {
            assert!(detail.contains(&worded(field)), "{detail} lacks {}", worded(field));
        }
    }
    for tool in truth["tool_change"]["unchanged"].as_array().unwrap() {
        assert!(!found.iter().any(|f| f["tool"] == *tool), "{tool} did not change");
    }
}

#[test]
fn a_changed_server_between_two_sessions_of_a_host_log_is_named_field_by_field() {
    let log = samples().join("tool_change/mcp-server-inventory.log");
    assert_matches_truth(&findings(&[log.to_str().unwrap()]), "(since session inventory)");
}

#[test]
fn check_against_a_baseline_reports_what_changed_since() {
    let dir = temp_dir("baseline");
    let file = dir.join("inventory.baseline.json");
    let v1 = samples().join("tool_change/v1");
    let out = mcpsift(&["baseline", v1.to_str().unwrap(), "-q", "-o", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["servers"][0]["version"], "1.4.0");
    let v2 = samples().join("tool_change/v2");
    assert_matches_truth(&findings(&[v2.to_str().unwrap(), "--baseline", file.to_str().unwrap()]), "(against the baseline)");
    // The same server against its own baseline: nothing changed.
    assert!(findings(&[v1.to_str().unwrap(), "--baseline", file.to_str().unwrap()]).is_empty());
    // A baseline hand-edited badly names the line; one of another format says so.
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\n  \"mcpsift_baseline\": 1,\n  \"servers\": [ {\"server\": 3} ]\n}\n").unwrap();
    let out = mcpsift(&["check", v2.to_str().unwrap(), "-q", "--baseline", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_dataset_answers_from_the_table_its_writer_stored_and_otherwise_from_its_tools() {
    let log = samples().join("tool_change/mcp-server-inventory.log");
    let ds = temp_dir("tool-change-ds");
    let out = mcpsift(&["tables", log.to_str().unwrap(), "-q", "--out", ds.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let manifest_path = ds.join("manifest.json");
    let mut manifest = read_json(&manifest_path);
    let over = manifest["tool_changes_over"].as_str().expect("the writer says which inputs it stored the table of").to_string();
    let part = manifest["tool_changes"]["file"].as_str().expect("the changes have a part").to_string();
    assert_matches_truth(&findings(&[ds.to_str().unwrap()]), "(since session inventory)");
    let mut rewrite = |edit: &dyn Fn(&mut Value)| {
        edit(&mut manifest);
        std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    };
    // Stored by a writer that did not say (an older one), or over other inputs (a manifest
    // merged by another program): the same changes, computed from the listed tools.
    rewrite(&|m| _ = m.as_object_mut().unwrap().remove("tool_changes_over"));
    assert_matches_truth(&findings(&[ds.to_str().unwrap()]), "(since session inventory)");
    rewrite(&|m| m["tool_changes_over"] = Value::from("0123456789abcdef"));
    rewrite(&|m| _ = m.as_object_mut().unwrap().remove("tool_changes"));
    assert_matches_truth(&findings(&[ds.to_str().unwrap()]), "(since session inventory)");
    // A stored part that is not readable is not read either.
    rewrite(&|m| m["tool_changes_over"] = Value::from(over.clone()));
    rewrite(&|m| m["tool_changes"] = serde_json::json!({"file": part.clone(), "rows": 1, "bytes": 11}));
    std::fs::write(ds.join(&part), b"not parquet").unwrap();
    assert_matches_truth(&findings(&[ds.to_str().unwrap()]), "(since session inventory)");
}
