//! OTLP/JSON (the OpenTelemetry protocol's JSON encoding): the telemetry of `mcpsift export
//! otlp` as two lines, an `ExportTraceServiceRequest` then an `ExportMetricsServiceRequest`,
//! the layout the Collector's `file` exporter writes and its `otlpjsonfile` receiver reads.
//! As the OTLP spec's JSON mapping says: trace and span ids are hex strings (not base64),
//! enums are integers, 64-bit integers are decimal strings, keys are lowerCamelCase.
//! Hand-written with serde_json: the OpenTelemetry crates export to a collector, not to a file
//! of past calls with their recorded times and ids.

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use super::{ExportError, Exporter};
use crate::report::telemetry::{AttrValue, Attrs, DURATION_BOUNDS_S, Telemetry};

pub struct Otlp;

/// OTLP span kind CLIENT (the requester's view: the wire shows when it sent and got the answer).
const SPAN_KIND_CLIENT: u8 = 3;
/// OTLP status code ERROR.
const STATUS_CODE_ERROR: u8 = 2;
/// OTLP aggregation temporality CUMULATIVE: each point covers its calls from the first to the last.
const AGGREGATION_TEMPORALITY_CUMULATIVE: u8 = 2;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attributes(attrs: &Attrs) -> Value {
    Value::Array(
        attrs
            .iter()
            .map(|(k, v)| match v {
                AttrValue::Str(s) => json!({"key": k, "value": {"stringValue": s}}),
                AttrValue::Int(i) => json!({"key": k, "value": {"intValue": i.to_string()}}),
            })
            .collect(),
    )
}

fn scope() -> Value {
    json!({"name": "mcpsift", "version": env!("CARGO_PKG_VERSION")})
}

fn service(name: &str, version: Option<&String>, capture: Option<&str>) -> Value {
    let mut attrs: Attrs = vec![("service.name", AttrValue::Str(name.to_string()))];
    if let Some(v) = version {
        attrs.push(("service.version", AttrValue::Str(v.clone())));
    }
    if let Some(c) = capture {
        attrs.push(("mcpsift.capture", AttrValue::Str(c.to_string())));
    }
    json!({"attributes": attributes(&attrs)})
}

/// `{"resourceSpans": [...]}`: one resource per capture × client (service.name the client).
pub fn traces(t: &Telemetry) -> Value {
    let mut by_resource: BTreeMap<&(String, Option<String>, String), Vec<Value>> = BTreeMap::new();
    for s in &t.spans {
        let mut span = json!({
            "traceId": hex(&s.trace_id),
            "spanId": hex(&s.span_id),
            "name": s.name,
            "kind": SPAN_KIND_CLIENT,
            "startTimeUnixNano": s.start_ns.to_string(),
            "endTimeUnixNano": s.end_ns.to_string(),
            "attributes": attributes(&s.attributes),
        });
        if let Some(p) = &s.parent_span_id {
            span["parentSpanId"] = json!(hex(p));
        }
        if s.failed {
            span["status"] = match &s.error {
                Some(m) => json!({"code": STATUS_CODE_ERROR, "message": m}),
                None => json!({"code": STATUS_CODE_ERROR}),
            };
        }
        by_resource.entry(&s.resource).or_default().push(span);
    }
    let resource_spans: Vec<Value> = by_resource
        .into_iter()
        .map(|((name, version, capture), spans)| json!({"resource": service(name, version.as_ref(), Some(capture)), "scopeSpans": [{"scope": scope(), "spans": spans}]}))
        .collect();
    json!({"resourceSpans": resource_spans})
}

/// `{"resourceMetrics": [...]}`: `mcp.client.operation.duration` per client and attribute set.
pub fn metrics(t: &Telemetry) -> Value {
    let resource_metrics: Vec<Value> = t
        .durations
        .iter()
        .map(|((name, version), points)| {
            let data_points: Vec<Value> = points
                .iter()
                .map(|(attrs, p)| {
                    json!({
                        "attributes": attributes(attrs),
                        "startTimeUnixNano": p.start_ns.to_string(),
                        "timeUnixNano": p.end_ns.to_string(),
                        "count": p.count.to_string(),
                        "sum": p.sum_s,
                        "min": p.min_s,
                        "max": p.max_s,
                        "bucketCounts": p.buckets.iter().map(u64::to_string).collect::<Vec<_>>(),
                        "explicitBounds": DURATION_BOUNDS_S,
                    })
                })
                .collect();
            json!({
                "resource": service(name, version.as_ref(), None),
                "scopeMetrics": [{
                    "scope": scope(),
                    "metrics": [{
                        "name": "mcp.client.operation.duration",
                        "description": "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
                        "unit": "s",
                        "histogram": {"aggregationTemporality": AGGREGATION_TEMPORALITY_CUMULATIVE, "dataPoints": data_points},
                    }],
                }],
            })
        })
        .collect();
    json!({"resourceMetrics": resource_metrics})
}

impl Exporter<Telemetry> for Otlp {
    fn export(&self, t: &Telemetry, out: &mut dyn Write) -> Result<(), ExportError> {
        serde_json::to_writer(&mut *out, &traces(t))?;
        writeln!(out)?;
        serde_json::to_writer(&mut *out, &metrics(t))?;
        writeln!(out)?;
        Ok(())
    }
}
