//! Findings as read out of the findings table (one struct per row, redacted on request);
//! the formats they are written in live in `export/`.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::redact::redact;
use crate::query::rules::CAUSE_SEPARATOR;

/// One finding, read out of the findings table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    /// Stable id ([`finding_id`]): the same on every run over the same input.
    pub id: String,
    pub rule: String,
    pub severity: String,
    pub capture: String,
    pub session: Option<String>,
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub client: Option<String>,
    pub bytes: Option<i64>,
    /// Cause tokens, primary first, joined by [`CAUSE_SEPARATOR`] (as in the `cause` column).
    pub cause: Option<String>,
    pub detail: String,
}

impl Finding {
    /// The cause tokens, primary first.
    pub fn causes(&self) -> Vec<&str> {
        self.cause.as_deref().map(|c| c.split(CAUSE_SEPARATOR).map(str::trim).filter(|t| !t.is_empty()).collect()).unwrap_or_default()
    }

    /// One line for people: the cause tokens, then the detail (`predicted_reject; ...`).
    pub fn line(&self) -> String {
        let mut s: String = self.causes().iter().map(|c| format!("{c}; ")).collect();
        s.push_str(&self.detail);
        s
    }
}

/// Reads findings rows, redacting secrets in text fields when `redact_secrets`.
pub fn findings_from(df: &DataFrame, redact_secrets: bool) -> PolarsResult<Vec<Finding>> {
    let s = |name: &str| -> PolarsResult<Vec<Option<String>>> {
        Ok(df.column(name)?.str()?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let (rule, severity, capture, session, rpc_id, tool, client, cause, detail) =
        (s("rule")?, s("severity")?, s("capture")?, s("session")?, s("rpc_id")?, s("tool")?, s("client")?, s("cause")?, s("detail")?);
    let bytes: Vec<Option<i64>> = df.column("bytes")?.i64()?.iter().collect();
    let clean = |t: Option<String>| t.map(|t| if redact_secrets { redact(&t) } else { t });
    // Findings alike in every part of the key are told apart by their order (the findings are
    // sorted the same way on every run).
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    Ok((0..df.height())
        .map(|i| {
            let base = finding_id(&[&rule[i], &capture[i], &session[i], &rpc_id[i], &tool[i], &client[i], &cause[i]], bytes[i]);
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            let id = if *n == 1 { base } else { format!("{base}-{n}") };
            (i, id)
        })
        .map(|(i, id)| Finding {
            id,
            rule: rule[i].clone().unwrap_or_default(),
            severity: severity[i].clone().unwrap_or_default(),
            capture: capture[i].clone().unwrap_or_default(),
            session: clean(session[i].clone()),
            rpc_id: rpc_id[i].clone(),
            tool: tool[i].clone(),
            client: client[i].clone(),
            bytes: bytes[i],
            cause: cause[i].clone().filter(|c| !c.is_empty()),
            detail: clean(detail[i].clone()).unwrap_or_default(),
        })
        .collect())
}

/// A finding's id: `F` and 8 hex digits of the BLAKE3 hash of what names it (rule, capture,
/// session, request id, tool, client, cause, bytes), before secrets are redacted: short
/// enough to type, stable across runs and machines on the same input.
pub fn finding_id(parts: &[&Option<String>], bytes: Option<i64>) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        match p {
            Some(v) => {
                h.update(b"s");
                h.update(&(v.len() as u64).to_le_bytes());
                h.update(v.as_bytes());
            }
            None => {
                h.update(b"n");
            }
        }
    }
    if let Some(b) = bytes {
        h.update(&b.to_le_bytes());
    }
    let hex = h.finalize().to_hex();
    format!("F{}", &hex[..8])
}

/// Counts per rule and severity.
pub fn counts(findings: &[Finding]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry((f.rule.clone(), f.severity.clone())).or_default() += 1;
    }
    m
}
