//! `mcpsift export otlp`: the file is parsed with the official OpenTelemetry protobuf
//! definitions (PyPI `opentelemetry-proto`, `google.protobuf.json_format`) into
//! `ExportTraceServiceRequest` and `ExportMetricsServiceRequest`, and the spans are compared
//! with truth the same Python script computes from the samples' raw bytes: every JSON-RPC
//! request in the stdio tee logs and in the HTTP bodies the recorder logged, its answer,
//! its cancellation. Nothing is taken from mcpsift.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{mcpsift, samples};

fn python() -> PathBuf {
    let venv = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mcpsift-venv/bin/python"));
    let py = std::env::var_os("MCPSIFT_PYTHON").map(PathBuf::from).or(venv).filter(|p| p.is_file());
    py.expect("a Python with opentelemetry-proto is required: run `bash .ci/test` (it creates ~/.cache/mcpsift-venv), or set MCPSIFT_PYTHON")
}

/// Parses an OTLP/JSON file (line 1 traces, line 2 metrics) with the protobuf definitions and
/// prints it back as JSON (ids as hex), so what is asserted is what a receiver reads.
const PARSE: &str = r#"
import base64, json, sys
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 2, f"two lines (traces, metrics), got {len(lines)}"
traces = json.loads(lines[0])
# OTLP/JSON carries trace and span ids as hex; protobuf's JSON mapping reads bytes as base64.
for rs in traces["resourceSpans"]:
    for ss in rs["scopeSpans"]:
        for s in ss["spans"]:
            for k in ("traceId", "spanId", "parentSpanId"):
                if k in s:
                    s[k] = base64.b64encode(bytes.fromhex(s[k])).decode()
treq = json_format.Parse(json.dumps(traces), ExportTraceServiceRequest())
mreq = json_format.Parse(lines[1], ExportMetricsServiceRequest())

def attrs(kvs):
    out = {}
    for kv in kvs:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out

spans = []
for rs in treq.resource_spans:
    res = attrs(rs.resource.attributes)
    for ss in rs.scope_spans:
        for s in ss.spans:
            spans.append({"resource": res, "name": s.name, "kind": s.kind, "trace_id": s.trace_id.hex(), "span_id": s.span_id.hex(),
                          "parent_span_id": s.parent_span_id.hex(), "start": s.start_time_unix_nano, "end": s.end_time_unix_nano,
                          "status": s.status.code, "status_message": s.status.message, "attributes": attrs(s.attributes)})
points = []
for rm in mreq.resource_metrics:
    res = attrs(rm.resource.attributes)
    for sm in rm.scope_metrics:
        for m in sm.metrics:
            assert m.HasField("histogram"), m.name
            for p in m.histogram.data_points:
                points.append({"resource": res, "name": m.name, "unit": m.unit, "count": p.count, "sum": p.sum, "min": p.min, "max": p.max,
                               "buckets": list(p.bucket_counts), "bounds": list(p.explicit_bounds), "attributes": attrs(p.attributes)})
print(json.dumps({"spans": spans, "points": points}))
"#;

/// Truth from the samples' bytes: per capture folder, every request (c2s or s2c) with its
/// answer and cancellation, as the spans should describe them.
const TRUTH: &str = r#"
import base64, gzip, json, os, sys

def lines(path):
    if not os.path.exists(path):
        path += ".gz"
    data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    return [l for l in data.split(b"\n") if l.strip()]

def parse(l):
    try:
        v = json.loads(l)
        return v if isinstance(v, dict) else None
    except ValueError:
        return None

def request_entry(req, req_bytes, answer, answer_bytes, cancel, transport, proto):
    params = req.get("params") or {}
    meta = params.get("_meta") or {}
    tool = params.get("name") if req["method"] == "tools/call" else None
    if cancel is not None:
        reason = (cancel.get("params") or {}).get("reason") or ""
        err = "timeout" if ("timed out" in reason or "-32001" in reason) else "cancelled"
    elif answer is None:
        err = "no_response"
    elif "error" in answer:
        err = str(answer["error"]["code"])
    elif (answer.get("result") or {}).get("isError") is True:
        err = "tool_error"
    else:
        err = None
    info = meta.get("io.modelcontextprotocol/clientInfo")
    return {"id": str(req["id"]) if not isinstance(req["id"], str) else req["id"], "method": req["method"], "tool": tool,
            "client": info["name"] if info else None, "error_type": err, "req_bytes": req_bytes,
            "resp_bytes": answer_bytes, "transport": transport,
            "protocol": meta.get("io.modelcontextprotocol/protocolVersion") or proto}

def stdio(folder):
    c2s = [(l, parse(l)) for l in lines(os.path.join(folder, "c2s.log"))]
    s2c = [(l, parse(l)) for l in lines(os.path.join(folder, "s2c.log"))]
    out = []
    for sent, got in ((c2s, s2c), (s2c, c2s)):
        answers = {json.dumps(m["id"]): (l, m) for l, m in got if m and "id" in m and "method" not in m}
        cancels = {json.dumps((m.get("params") or {}).get("requestId")): m for l, m in sent if m and m.get("method") == "notifications/cancelled"}
        init = [m for l, m in got if m and "method" not in m and "protocolVersion" in (m.get("result") or {})]
        proto = init[0]["result"]["protocolVersion"] if init else None
        client = [m for l, m in c2s if m and m.get("method") == "initialize"]
        name = client[0]["params"]["clientInfo"]["name"] if client else None
        for l, m in sent:
            if m and "method" in m and "id" in m:
                a = answers.get(json.dumps(m["id"]))
                e = request_entry(m, len(l), a[1] if a else None, len(a[0]) if a else None, cancels.get(json.dumps(m["id"])), "pipe", proto)
                e["client"] = e["client"] or name
                out.append(e)
    return out

def http(folder):
    log = json.load(gzip.open(os.path.join(folder, "py2_streamable.exchanges.json.gz")))
    out = []
    for x in log["exchanges"]:
        if not x.get("req_body"):
            continue
        req = json.loads(x["req_body"])
        body = b"".join(base64.b64decode(c["b64"]) for c in x["chunks"])
        if (x["res_headers"].get("content-type") or "").startswith("text/event-stream"):
            datas = [d[6:] for d in body.decode().splitlines() if d.startswith("data: ")]
            body = [d for d in datas if "id" in json.loads(d) and "method" not in json.loads(d)][0].encode()
        out.append(request_entry(req, len(x["req_body"].encode()), json.loads(body), len(body), None, "tcp", None))
    return out

root = sys.argv[1]
truth = {"stdio_py": stdio(os.path.join(root, "stdio_py")), "stdio_py2": stdio(os.path.join(root, "stdio_py2")),
         "stdio_ts": stdio(os.path.join(root, "stdio_ts")), "http_py2": http(os.path.join(root, "http_py2"))}
chains = {}
for name in ("stdio_py2", "http_py2"):
    t = json.load(open(os.path.join(root, name, "truth.json")))
    t = t if "modern" in t else t["files"]["py2_streamable.pcap"]
    chains[name] = [[str(i) for i in c["ids"]] for c in t["modern"]["mrtr_chains"]]
print(json.dumps({"requests": truth, "chains": chains}))
"#;

fn run_python(script: &str, args: &[&str]) -> Value {
    let dir = crate::util::temp_dir("otlp-py");
    let file = dir.join(format!("s{}.py", script.len()));
    std::fs::write(&file, script).unwrap();
    let out = std::process::Command::new(python()).arg(&file).args(args).output().expect("run python");
    assert!(out.status.success(), "python: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("python prints JSON")
}

fn export(paths: &[PathBuf], name: &str) -> PathBuf {
    let file = crate::util::temp_dir(&format!("otlp-{name}")).join("export.json");
    let mut args = vec!["export".to_string(), "otlp".to_string()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.extend(["-q".to_string(), "-o".to_string(), file.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = mcpsift(&args);
    assert!(out.status.success(), "export: {}", String::from_utf8_lossy(&out.stderr));
    file
}

/// The sample folder a span's capture is in.
fn folder_of(span: &Value) -> String {
    let cap = span["attributes"]["mcpsift.capture"].as_str().expect("capture attribute");
    ["stdio_py2", "stdio_py", "stdio_ts", "http_py2"].iter().find(|f| cap.contains(&format!("/{f}/"))).expect("a sample folder").to_string()
}

#[test]
fn otlp_spans_and_metrics_parse_with_the_official_protos_and_match_the_recorded_requests() {
    let folders = ["stdio_py", "stdio_py2", "stdio_ts", "http_py2"];
    let paths: Vec<PathBuf> = folders.iter().map(|f| samples().join(f)).collect();
    let file = export(&paths, "samples");
    let got = run_python(PARSE, &[file.to_str().unwrap()]);
    let truth = run_python(TRUTH, &[samples().to_str().unwrap()]);
    let spans = got["spans"].as_array().unwrap();
    let total: usize = folders.iter().map(|f| truth["requests"][f].as_array().unwrap().len()).sum();
    assert_eq!(spans.len(), total, "one span per request in the raw bytes");
    for folder in folders {
        let want = truth["requests"][folder].as_array().unwrap();
        let mine: Vec<&Value> = spans.iter().filter(|s| folder_of(s) == folder).collect();
        assert_eq!(mine.len(), want.len(), "{folder}: spans");
        for w in want {
            let id = w["id"].as_str().unwrap();
            let method = w["method"].as_str().unwrap();
            let s = mine
                .iter()
                .find(|s| s["attributes"]["jsonrpc.request.id"] == id && s["attributes"]["mcp.method.name"] == method && (w["client"].is_null() || s["resource"]["service.name"] == w["client"]))
                .unwrap_or_else(|| panic!("{folder}: no span for request {id} {method}"));
            let what = format!("{folder} {id} {method}");
            let a = &s["attributes"];
            let name = match w["tool"].as_str() {
                Some(t) => format!("{method} {t}"),
                None => method.to_string(),
            };
            assert_eq!(s["name"], name.as_str(), "{what}: span name");
            assert_eq!(s["kind"], 3, "{what}: SPAN_KIND_CLIENT");
            assert_eq!(a["gen_ai.tool.name"], w["tool"], "{what}: tool");
            assert_eq!(a["gen_ai.operation.name"].as_str(), (method == "tools/call").then_some("execute_tool"), "{what}: operation");
            assert_eq!(a["network.transport"], w["transport"], "{what}: transport");
            assert_eq!(a["mcp.protocol.version"], w["protocol"], "{what}: protocol version");
            assert_eq!(a["error.type"], w["error_type"], "{what}: error.type");
            assert_eq!(s["status"], if w["error_type"].is_null() { 0 } else { 2 }, "{what}: status ERROR iff error.type");
            assert_eq!(a["mcpsift.request.bytes"], w["req_bytes"], "{what}: request bytes");
            assert_eq!(a["mcpsift.response.bytes"], w["resp_bytes"], "{what}: response bytes");
            assert!(a.get("mcp.session.id").is_none(), "{what}: no MCP session id (stdio pipes and stateless HTTP)");
            if folder == "http_py2" {
                assert!(s["start"].as_u64().unwrap() > 0 && s["end"].as_u64() >= s["start"].as_u64(), "{what}: pcap times");
            } else {
                assert_eq!((s["start"].as_u64(), s["end"].as_u64()), (Some(0), Some(0)), "{what}: a tee log has no times");
            }
        }
        // The rounds of a multi-round-trip chain share one trace; chains have their own.
        if let Some(chains) = truth["chains"][folder].as_array() {
            let mut seen = Vec::new();
            for chain in chains {
                let traces: Vec<&Value> = chain
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|id| &mine.iter().find(|s| s["attributes"]["jsonrpc.request.id"] == *id && s["resource"]["service.name"] == "ledger-cli").unwrap()["trace_id"])
                    .collect();
                assert!(traces.windows(2).all(|w| w[0] == w[1]), "{folder}: one trace per chain");
                assert!(!seen.contains(&traces[0]), "{folder}: chains have their own traces");
                seen.push(traces[0]);
            }
        }
    }
    // The histogram: only requests answered with timestamps on both frames (the pcap).
    let points = got["points"].as_array().unwrap();
    let bounds = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];
    let answered = truth["requests"]["http_py2"].as_array().unwrap().iter().filter(|w| !w["resp_bytes"].is_null()).count() as u64;
    assert_eq!(points.iter().map(|p| p["count"].as_u64().unwrap()).sum::<u64>(), answered);
    for p in points {
        assert_eq!(p["name"], "mcp.client.operation.duration");
        assert_eq!(p["unit"], "s");
        assert_eq!(p["bounds"].as_array().unwrap().iter().map(|b| b.as_f64().unwrap()).collect::<Vec<_>>(), bounds);
        assert_eq!(p["buckets"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).sum::<u64>(), p["count"].as_u64().unwrap());
        assert!(p["attributes"].get("jsonrpc.request.id").is_none(), "metric attributes stay low-cardinality");
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn otlp_takes_trace_context_from_params_meta_traceparent() {
    // A transcript of two calls, one carrying W3C trace context in params._meta.
    let dir = crate::util::temp_dir("otlp-tp");
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let records = [
        format!(r#"{{"direction":"c2s","ts_us":1796000000000000,"message":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_weather","_meta":{{"traceparent":"00-{trace}-{parent}-01"}}}}}}}}"#),
        r#"{"direction":"s2c","ts_us":1796000000250000,"message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"sunny"}],"isError":false}}}"#.to_string(),
        r#"{"direction":"c2s","ts_us":1796000001000000,"message":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather"}}}"#.to_string(),
        r#"{"direction":"s2c","ts_us":1796000001003000,"message":{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool"}}}"#.to_string(),
    ];
    let transcript = dir.join("session.jsonl");
    std::fs::write(&transcript, records.join("\n") + "\n").unwrap();
    let file = export(&[transcript], "traceparent");
    let got = run_python(PARSE, &[file.to_str().unwrap()]);
    let spans = got["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 2);
    let by_id = |id: &str| spans.iter().find(|s| s["attributes"]["jsonrpc.request.id"] == id).unwrap();
    let (with, without) = (by_id("1"), by_id("2"));
    assert_eq!(with["trace_id"], trace);
    assert_eq!(with["parent_span_id"], parent);
    assert_ne!(without["trace_id"], trace);
    assert_eq!(without["parent_span_id"], "", "no parent without traceparent");
    assert_eq!((with["start"].as_u64(), with["end"].as_u64()), (Some(1_796_000_000_000_000_000), Some(1_796_000_000_250_000_000)));
    assert_eq!(without["attributes"]["error.type"], "-32602");
    assert_eq!(without["attributes"]["rpc.response.status_code"], "-32602");
    assert_eq!(without["status_message"], "Unknown tool");
    // 0.25 s falls in the (0.2, 0.5] bucket, 3 ms in the first.
    let points = got["points"].as_array().unwrap();
    let ok = points.iter().find(|p| p["attributes"].get("error.type").is_none()).unwrap();
    assert_eq!(ok["buckets"][5], 1);
    assert!((ok["sum"].as_f64().unwrap() - 0.25).abs() < 1e-9);
    let failed = points.iter().find(|p| p["attributes"]["error.type"] == "-32602").unwrap();
    assert_eq!(failed["buckets"][0], 1);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
}
