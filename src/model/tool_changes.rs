//! What changed in a server's tools: each session's last `tools/list` definitions compared with
//! the previous session of the same server name (in time order, across captures), and with a
//! saved baseline. A JSON structural difference names each change (a field added, a type
//! changed, a description longer by N characters); SQL cannot, so the `tool_changes` table is
//! computed here, at query time, and the `tool_definition_changed` rule flags it.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tables::string_values as strings;

/// How many differences a change names before saying how many more.
const DIFFERENCES_SHOWN: usize = 8;

/// The baseline file's format version.
pub const BASELINE_FORMAT: u32 = 1;

/// One server's tools as a session listed them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerTools {
    pub server: String,
    pub version: Option<String>,
    pub capture: String,
    pub session: String,
    /// Tool name → definition.
    pub tools: BTreeMap<String, Value>,
    /// The session's last tools/list walk reached its end: a tool it lacks was not listed
    /// (a client that read one page of several has not seen the others).
    #[serde(default = "yes")]
    pub complete: bool,
    /// When the session began (not saved in a baseline).
    #[serde(skip)]
    pub first_ts_us: Option<i64>,
}

fn yes() -> bool {
    true
}

/// A saved baseline: each server's latest tool definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub mcpsift_baseline: u32,
    pub created_by: String,
    pub servers: Vec<ServerTools>,
}

#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("{file}: not a baseline: {source}")]
    Json { file: String, source: serde_json::Error },
    #[error("{file}: baseline format {found}; this mcpsift reads format {BASELINE_FORMAT} (write it again with `mcpsift baseline`)")]
    Format { file: String, found: u32 },
    #[error("{file}: {source}")]
    Io { file: String, source: std::io::Error },
}

impl Baseline {
    /// Reads a baseline file, naming the line of what is wrong with it.
    pub fn read(path: &std::path::Path) -> Result<Baseline, BaselineError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| BaselineError::Io { file: file.clone(), source })?;
        let head: Value = serde_json::from_str(&text).map_err(|source| BaselineError::Json { file: file.clone(), source })?;
        let found = head.get("mcpsift_baseline").and_then(Value::as_u64).unwrap_or(0) as u32;
        if found != BASELINE_FORMAT {
            return Err(BaselineError::Format { file, found });
        }
        serde_json::from_str(&text).map_err(|source| BaselineError::Json { file, source })
    }
}

/// Each session's tools (its last definition of each tool), in time order per server: sessions
/// by their first timestamp, then capture and session name.
pub fn server_tools(tools: LazyFrame, sessions: LazyFrame, pages: LazyFrame) -> PolarsResult<Vec<ServerTools>> {
    let t = tools.select([col("capture"), col("session"), col("tool"), col("definition")]).collect()?;
    let s = sessions.select([col("capture"), col("session"), col("server_name"), col("server_version"), col("first_ts_us")]).collect()?;
    let (scap, ssess, sname, sver) = (strings(&s, "capture")?, strings(&s, "session")?, strings(&s, "server_name")?, strings(&s, "server_version")?);
    let first = super::tables::int_values(&s, "first_ts_us")?;
    let mut by_session: BTreeMap<(String, String), (Option<i64>, ServerTools)> = BTreeMap::new();
    for i in 0..s.height() {
        let (Some(c), Some(se)) = (scap[i].clone(), ssess[i].clone()) else { continue };
        let server = sname[i].clone().unwrap_or_else(|| "?".into());
        by_session.insert((c.clone(), se.clone()), (first[i], ServerTools { server, version: sver[i].clone(), capture: c, session: se, tools: BTreeMap::new(), complete: true, first_ts_us: first[i] }));
    }
    // A session whose last tools/list walk did not reach its end has not seen every tool.
    let p = pages
        .filter(col("chain").eq(lit("tools/list")).and(col("walk_end").is_not_null()))
        .select([col("capture"), col("session"), col("req_seq"), col("walk_end")])
        .sort(["req_seq"], SortMultipleOptions::default())
        .collect()?;
    let (pcap, psess, pend) = (strings(&p, "capture")?, strings(&p, "session")?, strings(&p, "walk_end")?);
    for i in 0..p.height() {
        let key = (pcap[i].clone().unwrap_or_default(), psess[i].clone().unwrap_or_default());
        if let Some((_, st)) = by_session.get_mut(&key) {
            st.complete = pend[i].as_deref() == Some("complete");
        }
    }
    // A session lists its tools again and again: only its last definition of each tool is
    // parsed, not every row's.
    let (tcap, tsess, tname, tdef) = (t.column("capture")?.str()?, t.column("session")?.str()?, t.column("tool")?.str()?, t.column("definition")?.str()?);
    let mut last: std::collections::HashMap<(&str, &str, &str), Option<&str>> = std::collections::HashMap::new();
    for (((c, se), name), def) in tcap.iter().zip(tsess.iter()).zip(tname.iter()).zip(tdef.iter()) {
        if let Some(name) = name {
            last.insert((c.unwrap_or_default(), se.unwrap_or_default(), name), def);
        }
    }
    for ((c, se, name), def) in last {
        if let Some((_, st)) = by_session.get_mut(&(c.to_string(), se.to_string())) {
            let def = def.and_then(|d| serde_json::from_str(d).ok()).unwrap_or(Value::Null);
            st.tools.insert(name.to_string(), def);
        }
    }
    let mut listed: Vec<(Option<i64>, ServerTools)> = by_session.into_values().filter(|(_, st)| !st.tools.is_empty()).collect();
    listed.sort_by(|a, b| (a.1.server.as_str(), a.0.is_none(), a.0, a.1.capture.as_str(), a.1.session.as_str()).cmp(&(b.1.server.as_str(), b.0.is_none(), b.0, b.1.capture.as_str(), b.1.session.as_str())));
    Ok(listed.into_iter().map(|(_, st)| st).collect())
}

/// The latest tools of each server: what a baseline saves.
pub fn latest_per_server(listed: Vec<ServerTools>) -> Vec<ServerTools> {
    let mut latest: BTreeMap<String, ServerTools> = BTreeMap::new();
    for st in listed {
        latest.insert(st.server.clone(), st);
    }
    latest.into_values().collect()
}

/// One change: (capture, session, server, version, tool, change, against, previous session,
/// previous version, what differs).
type ChangeRow = (String, String, String, Option<String>, String, &'static str, &'static str, String, Option<String>, String);

/// The `tool_changes` table: every tool added, removed or changed between consecutive sessions
/// of a server, and (with a baseline) between the baseline and each server's latest session.
pub fn tool_changes(listed: &[ServerTools], baseline: Option<&Baseline>) -> PolarsResult<DataFrame> {
    let mut rows: Vec<ChangeRow> = Vec::new();
    let mut compare = |before: &ServerTools, after: &ServerTools, against: &'static str| {
        let before_name = if against == "baseline" { "baseline".to_string() } else { before.session.clone() };
        // Added and removed tools need both lists whole; a changed definition does not.
        let whole = before.complete && after.complete;
        for (tool, def) in &after.tools {
            let (change, what) = match before.tools.get(tool) {
                None if !whole => continue,
                None => ("added", "not in the earlier list".to_string()),
                Some(old) if old == def => continue,
                Some(old) => ("changed", differences(old, def)),
            };
            rows.push((after.capture.clone(), after.session.clone(), after.server.clone(), after.version.clone(), tool.clone(), change, against, before_name.clone(), before.version.clone(), what));
        }
        for tool in before.tools.keys().filter(|t| whole && !after.tools.contains_key(*t)) {
            rows.push((after.capture.clone(), after.session.clone(), after.server.clone(), after.version.clone(), tool.clone(), "removed", against, before_name.clone(), before.version.clone(), "no longer listed".to_string()));
        }
    };
    // Sessions are in time order only when both have timestamps (or share a capture).
    for pair in listed.windows(2) {
        let ordered = (pair[0].first_ts_us.is_some() && pair[1].first_ts_us.is_some()) || pair[0].capture == pair[1].capture;
        if pair[0].server == pair[1].server && ordered {
            compare(&pair[0], &pair[1], "previous_session");
        }
    }
    if let Some(b) = baseline {
        for latest in latest_per_server(listed.to_vec()) {
            if let Some(saved) = b.servers.iter().find(|s| s.server == latest.server) {
                compare(saved, &latest, "baseline");
            }
        }
    }
    let col_of = |f: &dyn Fn(&ChangeRow) -> Option<String>, name: &str| Column::new(name.into(), rows.iter().map(f).collect::<Vec<Option<String>>>());
    DataFrame::new(
        rows.len(),
        vec![
            col_of(&|r| Some(r.0.clone()), "capture"),
            col_of(&|r| Some(r.1.clone()), "session"),
            col_of(&|r| Some(r.2.clone()), "server"),
            col_of(&|r| r.3.clone(), "server_version"),
            col_of(&|r| Some(r.4.clone()), "tool"),
            col_of(&|r| Some(r.5.to_string()), "change"),
            col_of(&|r| Some(r.6.to_string()), "against"),
            col_of(&|r| Some(r.7.clone()), "previous_session"),
            col_of(&|r| r.8.clone(), "previous_version"),
            col_of(&|r| Some(r.9.clone()), "difference"),
        ],
    )
}

/// The differences between two definitions, named by path, at most [`DIFFERENCES_SHOWN`].
pub fn differences(old: &Value, new: &Value) -> String {
    let mut out = Vec::new();
    diff(old, new, "", &mut out);
    let more = out.len().saturating_sub(DIFFERENCES_SHOWN);
    out.truncate(DIFFERENCES_SHOWN);
    let mut s = out.join("; ");
    if more > 0 {
        s.push_str(&format!("; and {more} more"));
    }
    s
}

fn diff(old: &Value, new: &Value, path: &str, out: &mut Vec<String>) {
    let at = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get(k) {
                    None => out.push(format!("{} added", at(k))),
                    Some(o) => diff(o, v, &at(k), out),
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                out.push(format!("{} removed", at(k)));
            }
        }
        (Value::Array(a), Value::Array(b)) if a.iter().chain(b).all(|v| !v.is_object() && !v.is_array()) => {
            let added: Vec<String> = b.iter().filter(|v| !a.contains(v)).map(Value::to_string).collect();
            let removed: Vec<String> = a.iter().filter(|v| !b.contains(v)).map(Value::to_string).collect();
            if !added.is_empty() {
                out.push(format!("{path} added [{}]", added.join(", ")));
            }
            if !removed.is_empty() {
                out.push(format!("{path} removed [{}]", removed.join(", ")));
            }
            if added.is_empty() && removed.is_empty() && a != b {
                out.push(format!("{path} reordered"));
            }
        }
        (Value::String(a), Value::String(b)) if (path == "description" || path.ends_with(".description")) && a != b => {
            let delta = b.chars().count() as i64 - a.chars().count() as i64;
            out.push(if delta == 0 { format!("{path} reworded (same length)") } else { format!("{path} changed by {delta:+} characters") });
        }
        (a, b) if a != b => out.push(format!("{path}: {a} → {b}")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_name_the_field_and_what_happened() {
        let old = json!({"description":"Adjust stock","inputSchema":{"type":"object","properties":{"quantity":{"type":"integer"}},"required":["quantity"]},"annotations":{"destructiveHint":false}});
        let new = json!({"description":"Adjust stock of an item","inputSchema":{"type":"object","properties":{"quantity":{"type":"string"},"reason":{"type":"string"}},"required":["quantity","reason"]},"annotations":{"destructiveHint":true}});
        assert_eq!(
            differences(&old, &new),
            "description changed by +11 characters; inputSchema.properties.quantity.type: \"integer\" → \"string\"; inputSchema.properties.reason added; inputSchema.required added [\"reason\"]; annotations.destructiveHint: false → true"
        );
    }

    #[test]
    fn a_session_keeps_its_last_definition_of_each_tool() {
        let tools = df!(
            "capture" => ["c", "c", "c", "c"],
            "session" => ["s1", "s1", "s1", "s2"],
            "tool" => ["x", "y", "x", "x"],
            "definition" => [r#"{"description":"first"}"#, r#"{"description":"y"}"#, r#"{"description":"second"}"#, "not json"],
        )
        .unwrap();
        let sessions = df!(
            "capture" => ["c", "c"], "session" => ["s1", "s2"], "server_name" => ["srv", "srv"],
            "server_version" => [Some("1"), None::<&str>], "first_ts_us" => [Some(1i64), Some(2)],
        )
        .unwrap();
        let pages = df!("capture" => [""; 0], "session" => [""; 0], "req_seq" => [0u64; 0], "chain" => [""; 0], "walk_end" => [""; 0]).unwrap();
        let listed = server_tools(tools.lazy(), sessions.lazy(), pages.lazy()).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].tools["x"], json!({"description":"second"}), "the later listing wins");
        assert_eq!(listed[0].tools["y"], json!({"description":"y"}));
        assert_eq!(listed[1].tools["x"], Value::Null, "a definition that does not parse");
    }

    #[test]
    fn a_baseline_from_another_version_or_broken_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("mcpsift-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join("old.json");
        std::fs::write(&old, r#"{"mcpsift_baseline": 7, "servers": []}"#).unwrap();
        assert!(Baseline::read(&old).unwrap_err().to_string().contains("baseline format 7; this mcpsift reads format 1"));
        let broken = dir.join("broken.json");
        std::fs::write(&broken, "{\n  \"mcpsift_baseline\": 1,\n  \"servers\": [ oops ]\n}\n").unwrap();
        assert!(Baseline::read(&broken).unwrap_err().to_string().contains("line 3"), "{}", Baseline::read(&broken).unwrap_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
