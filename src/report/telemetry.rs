//! The read model of `mcpsift export otlp`: one span per request (`queries/report/otlp_spans.sql`)
//! with what the OpenTelemetry MCP semantic conventions name (method, tool, request id,
//! session, protocol version, transport, error type), trace context from the request's
//! `params._meta.traceparent` or derived ids, and the `mcp.client.operation.duration`
//! histogram. Writes nothing (export/otlp.rs encodes it as OTLP/JSON).

use std::collections::BTreeMap;

use polars::prelude::*;

use super::document::DocumentError;
use crate::query::{TableSource, run_sql};

const SPANS_SQL: &str = include_str!("../../queries/report/otlp_spans.sql");

/// The explicit bucket boundaries the conventions give `mcp.client.operation.duration`, seconds.
pub const DURATION_BOUNDS_S: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// An attribute value: OTLP's `stringValue` or `intValue`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum AttrValue {
    Str(String),
    Int(i64),
}

pub type Attrs = Vec<(&'static str, AttrValue)>;

/// One request as a client span.
#[derive(Debug, Clone)]
pub struct CallSpan {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// From `params._meta.traceparent`: the requester's span.
    pub parent_span_id: Option<[u8; 8]>,
    /// `{mcp.method.name} {gen_ai.tool.name}`, or the method alone.
    pub name: String,
    /// Nanoseconds since the epoch; 0 when the capture has no timestamps (stdio tee logs).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Seconds from request to response, when both are timed.
    pub duration_s: Option<f64>,
    pub attributes: Attrs,
    /// The JSON-RPC error message (the span status message when `error.type` is set).
    pub error: Option<String>,
    pub failed: bool,
    /// (service.name, service.version, capture): the resource this span belongs to.
    pub resource: (String, Option<String>, String),
}

/// One data point of the duration histogram.
#[derive(Debug, Clone, Default)]
pub struct DurationPoint {
    pub count: u64,
    pub sum_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    /// One count per bucket: `DURATION_BOUNDS_S.len() + 1`.
    pub buckets: Vec<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What the export holds.
#[derive(Debug, Clone, Default)]
pub struct Telemetry {
    pub spans: Vec<CallSpan>,
    /// Per (service name, service version) and attribute set.
    pub durations: BTreeMap<(String, Option<String>), BTreeMap<Attrs, DurationPoint>>,
}

/// `00-<32 hex>-<16 hex>-<2 hex>` (W3C Trace Context version 00), not all zeros.
pub fn parse_traceparent(s: &str) -> Option<([u8; 16], [u8; 8])> {
    let parts: Vec<&str> = s.trim().split('-').collect();
    let [version, trace, parent, _flags] = parts.as_slice() else { return None };
    if version.len() != 2 || *version == "ff" || trace.len() != 32 || parent.len() != 16 {
        return None;
    }
    let hex = |s: &str, out: &mut [u8]| -> Option<()> {
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(())
    };
    let (mut t, mut p) = ([0u8; 16], [0u8; 8]);
    hex(trace, &mut t)?;
    hex(parent, &mut p)?;
    (t != [0; 16] && p != [0; 8]).then_some((t, p))
}

/// Ids derived from the capture: blake3 of a label and the parts, cut to length.
fn derived<const N: usize>(label: &str, parts: &[&str]) -> [u8; N] {
    let mut h = blake3::Hasher::new();
    h.update(label.as_bytes());
    for p in parts {
        h.update(b"\0");
        h.update(p.as_bytes());
    }
    let mut out = [0u8; N];
    out.copy_from_slice(&h.finalize().as_bytes()[..N]);
    out
}

/// The trace of a call without traceparent: one per logical call (capture, chain).
pub fn derived_trace_id(capture: &str, chain_id: u64) -> [u8; 16] {
    derived("mcpsift/trace", &[capture, &chain_id.to_string()])
}

/// A call's span id: (capture, request sequence number), unique within a capture.
pub fn derived_span_id(capture: &str, req_seq: u64) -> [u8; 8] {
    derived("mcpsift/span", &[capture, &req_seq.to_string()])
}

/// `jsonrpc.request.id`: the id's string form (a string id without its quotes).
fn request_id(rpc_id: &str) -> String {
    serde_json::from_str::<String>(rpc_id).unwrap_or_else(|_| rpc_id.to_string())
}

fn bucket(seconds: f64) -> usize {
    DURATION_BOUNDS_S.iter().position(|b| seconds <= *b).unwrap_or(DURATION_BOUNDS_S.len())
}

fn col_err(source: PolarsError) -> DocumentError {
    DocumentError::Table { table: "calls", source }
}

/// Spans and the duration histogram of every call of `tables`.
pub fn gather(tables: &dyn TableSource) -> Result<Telemetry, DocumentError> {
    let df = run_sql(tables, SPANS_SQL)?;
    let s = |name: &str| -> Result<Vec<Option<String>>, DocumentError> {
        let c = df.column(name).map_err(col_err)?.cast(&DataType::String).map_err(col_err)?;
        Ok(c.str().map_err(col_err)?.iter().map(|v| v.map(str::to_string)).collect())
    };
    let i = |name: &str| -> Result<Vec<Option<i64>>, DocumentError> {
        let c = df.column(name).map_err(col_err)?.cast(&DataType::Int64).map_err(col_err)?;
        Ok(c.i64().map_err(col_err)?.iter().collect())
    };
    let (capture, session, transport, rpc_id, method, tool) = (s("capture")?, s("session")?, s("transport")?, s("rpc_id")?, s("method")?, s("tool")?);
    let (client, version, protocol, outcome, message, traceparent) = (s("client_name")?, s("client_version")?, s("protocol_version")?, s("outcome")?, s("error_message")?, s("traceparent")?);
    let (seq, req_ts, resp_ts, cancel_ts, req_bytes, resp_bytes) = (i("req_seq")?, i("req_ts_us")?, i("resp_ts_us")?, i("cancel_ts_us")?, i("req_bytes")?, i("resp_bytes")?);
    let (code, chain, round, timeout) = (i("error_code")?, i("chain_id")?, i("round")?, i("timeout")?);
    let mut out = Telemetry::default();
    let ns = |us: i64| u64::try_from(us).unwrap_or(0).saturating_mul(1000);
    for k in 0..df.height() {
        let cap = capture[k].clone().unwrap_or_default();
        let method_name = method[k].clone().unwrap_or_default();
        let req_seq = seq[k].unwrap_or(0).max(0) as u64;
        let (trace_id, parent) = match traceparent[k].as_deref().and_then(parse_traceparent) {
            Some((t, p)) => (t, Some(p)),
            None => (derived_trace_id(&cap, chain[k].unwrap_or(0).max(0) as u64), None),
        };
        let transport_name = transport[k].as_deref().unwrap_or("");
        let mut attrs: Attrs = vec![("mcp.method.name", AttrValue::Str(method_name.clone()))];
        if let Some(t) = &tool[k] {
            attrs.push(("gen_ai.tool.name", AttrValue::Str(t.clone())));
        }
        if method_name == "tools/call" {
            attrs.push(("gen_ai.operation.name", AttrValue::Str("execute_tool".into())));
        }
        if let Some(v) = &protocol[k] {
            attrs.push(("mcp.protocol.version", AttrValue::Str(v.clone())));
        }
        match transport_name {
            "stdio" | "hostlog" => attrs.push(("network.transport", AttrValue::Str("pipe".into()))),
            "http" | "sse" => {
                attrs.push(("network.transport", AttrValue::Str("tcp".into())));
                attrs.push(("network.protocol.name", AttrValue::Str("http".into())));
            }
            _ => {}
        }
        let outcome_name = outcome[k].as_deref().unwrap_or("");
        let error_type = match (outcome_name, code[k]) {
            ("rpc_error", Some(c)) => Some(c.to_string()),
            ("rpc_error", None) => Some("_OTHER".to_string()),
            ("tool_error", _) => Some("tool_error".to_string()),
            ("cancelled", _) if timeout[k] == Some(1) => Some("timeout".to_string()),
            ("cancelled", _) => Some("cancelled".to_string()),
            ("no_response", _) => Some("no_response".to_string()),
            _ => None,
        };
        if let Some(e) = &error_type {
            attrs.push(("error.type", AttrValue::Str(e.clone())));
        }
        if let Some(c) = code[k] {
            attrs.push(("rpc.response.status_code", AttrValue::Str(c.to_string())));
        }
        // The histogram's attributes: the conventions' low-cardinality set.
        let metric_attrs: Attrs = attrs.clone();
        attrs.push(("jsonrpc.request.id", AttrValue::Str(request_id(rpc_id[k].as_deref().unwrap_or("")))));
        if let Some(sess) = session[k].as_deref().filter(|s| matches!(transport_name, "http" | "sse") && !s.starts_with("conn:") && !s.contains(" @ ")) {
            attrs.push(("mcp.session.id", AttrValue::Str(sess.to_string())));
        }
        attrs.push(("mcpsift.capture", AttrValue::Str(cap.clone())));
        attrs.push(("mcpsift.session", AttrValue::Str(session[k].clone().unwrap_or_default())));
        attrs.push(("mcpsift.outcome", AttrValue::Str(outcome_name.to_string())));
        attrs.push(("mcpsift.request.bytes", AttrValue::Int(req_bytes[k].unwrap_or(0))));
        if let Some(b) = resp_bytes[k] {
            attrs.push(("mcpsift.response.bytes", AttrValue::Int(b)));
        }
        attrs.push(("mcpsift.chain_id", AttrValue::Int(chain[k].unwrap_or(0))));
        attrs.push(("mcpsift.round", AttrValue::Int(round[k].unwrap_or(1))));
        let start = req_ts[k].map_or(0, ns);
        let end = resp_ts[k].or(cancel_ts[k]).map_or(start, ns).max(start);
        let duration_s = req_ts[k].zip(resp_ts[k]).map(|(a, b)| (b - a) as f64 / 1e6).filter(|d| *d >= 0.0);
        let service = (client[k].clone().unwrap_or_else(|| "unknown_service".to_string()), version[k].clone());
        if let Some(d) = duration_s {
            let point = out.durations.entry(service.clone()).or_default().entry(metric_attrs).or_insert_with(|| DurationPoint {
                buckets: vec![0; DURATION_BOUNDS_S.len() + 1],
                min_s: f64::INFINITY,
                max_s: f64::NEG_INFINITY,
                start_ns: u64::MAX,
                ..DurationPoint::default()
            });
            point.count += 1;
            point.sum_s += d;
            point.min_s = point.min_s.min(d);
            point.max_s = point.max_s.max(d);
            point.buckets[bucket(d)] += 1;
            point.start_ns = point.start_ns.min(start);
            point.end_ns = point.end_ns.max(end);
        }
        out.spans.push(CallSpan {
            trace_id,
            span_id: derived_span_id(&cap, req_seq),
            parent_span_id: parent,
            name: match &tool[k] {
                Some(t) => format!("{method_name} {t}"),
                None => method_name.clone(),
            },
            start_ns: start,
            end_ns: end,
            duration_s,
            attributes: attrs,
            error: error_type.as_ref().and(message[k].clone()),
            failed: error_type.is_some(),
            resource: (service.0, service.1, cap),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_parses_the_w3c_form_only() {
        let (t, p) = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").expect("valid");
        assert_eq!(t[0], 0x4b);
        assert_eq!(p[7], 0xb7);
        assert!(parse_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none(), "all-zero trace id");
        assert!(parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01").is_none(), "short");
        assert!(parse_traceparent("garbage").is_none());
    }

    #[test]
    fn durations_fall_in_the_conventions_buckets() {
        assert_eq!(bucket(0.005), 0);
        assert_eq!(bucket(0.01), 0);
        assert_eq!(bucket(0.011), 1);
        assert_eq!(bucket(301.0), DURATION_BOUNDS_S.len());
    }
}
