#!/usr/bin/env python3
"""Writes what three proxy recorders would have recorded of the real session in ../stdio_py/.

The messages are the bytes the Python SDK wrote (../stdio_py/c2s.log, s2c.log); only the
recorders' records around them are built here, in each recorder's own shape:

- mcpsnoop-billing.jsonl: mcpsnoop session-log envelopes (kerlenton/mcpsnoop
  internal/proxy/frame.go `Envelope`): a `meta` envelope with the server command, one
  envelope per frame (`raw` = the message as JSON, `text` = a non-JSON stdout line), one per
  server stderr line (../stdio_py/server.stderr.log).
- mcpspy-billing.jsonl: MCPSpy `--output` events (alex-ilgayev/MCPSpy pkg/event/mcp.go
  `MCPEvent`): one per JSON-RPC message (MCPSpy only emits messages it parsed, so the non-JSON
  stdout line is not there), `raw` = the message text, stdio pids from the shim's spawn event.
- mcptrace-billing.jsonl: mcptrace-rs spans (JSLEEKR/mcptrace-rs src/span.rs `Span`): one per
  request, metadata only (sizes, status, tool, sha256 digests), no bodies.

truth.json is computed here from the source bytes and ../stdio_py/truth.json (the recorder's
truth), never from mcpsift. Deterministic: run `python3 make.py` in this folder.
"""

import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "stdio_py")


def lines(name):
    with open(os.path.join(SRC, name), "rb") as f:
        return [l[:-1] if l.endswith(b"\n") else l for l in f.read().split(b"\n") if l != b""]


def main():
    truth_src = json.load(open(os.path.join(SRC, "truth.json")))
    shim = json.load(open(os.path.join(SRC, "shim_events.json")))
    spawn = next(e for e in shim if e["event"] == "spawn")
    c2s, s2c = lines("c2s.log"), lines("s2c.log")
    stderr_lines = [l.decode() for l in lines("server.stderr.log")]

    # Arrival order: the recorder's truth gives the seq of every request, response and non-JSON
    # line; the other c2s frames (notifications) take the remaining seqs in file order.
    known = {}
    for c in truth_src["calls"]:
        known[("c2s", c["id"], "req")] = c["seq"]
        if c.get("response_seq") is not None:
            known[("s2c", c["id"], "resp")] = c["response_seq"]
    non_json_seqs = [n["seq"] for n in truth_src["non_json_frames"]]
    frames = []  # (direction, bytes, message or None, seq or None)
    for direction, src in (("c2s", c2s), ("s2c", s2c)):
        nj = iter(non_json_seqs if direction == "s2c" else [])
        for raw in src:
            try:
                msg = json.loads(raw)
            except ValueError:
                frames.append((direction, raw, None, next(nj)))
                continue
            key = (direction, msg.get("id"), "req" if "method" in msg else "resp")
            frames.append((direction, raw, msg, known.get(key) if "id" in msg else None))
    used = {f[3] for f in frames if f[3] is not None}
    missing = iter(sorted(set(range(len(frames))) - used))
    frames = [(d, r, m, s if s is not None else next(missing)) for d, r, m, s in frames]
    frames.sort(key=lambda f: f[3])

    # Clock (the tee kept no times): the spawn time, 1 ms between frames, a response no
    # earlier than its request plus the latency the recorder measured, a cancellation when the
    # client gave up.
    latency = {c["id"]: c["latency_ms"] for c in truth_src["calls"]}
    # A cancellation goes out when the client gave up: the wait its SDK reported (observed.json).
    steps = json.load(open(os.path.join(SRC, "observed.json")))["steps"]
    gave_up = {s["requestId"]: steps[i - 1]["ms"] for i, s in enumerate(steps) if "requestId" in s and i > 0}
    t = spawn["ts_us"]
    ts = {}
    req_ts = {}
    for d, raw, msg, seq in frames:
        t += 1000
        if msg is not None and d == "s2c" and "method" not in msg and msg.get("id") in req_ts:
            t = max(t, req_ts[msg["id"]] + int(latency[msg["id"]] * 1000))
        if msg is not None and msg.get("method") == "notifications/cancelled":
            rid = msg["params"]["requestId"]
            if rid in req_ts and rid in gave_up:
                t = max(t, req_ts[rid] + gave_up[rid] * 1000)
        if msg is not None and d == "c2s" and "method" in msg and "id" in msg:
            req_ts[msg["id"]] = t
        ts[seq] = t

    def rfc3339(us):
        import datetime
        dt = datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc)
        return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (us % 1_000_000)

    session_id = "9f1c2e7a-4b3d-4e11-a2f0-6d5b8c9e0a11"
    label = "billing-exporter"

    # mcpsnoop
    out = []
    out.append({"session_id": session_id, "server_label": label, "seq": 0, "ts": rfc3339(spawn["ts_us"]), "direction": "meta",
                "transport": "stdio", "raw": {"command": spawn["cmd"]}})
    for d, raw, msg, seq in frames:
        env = {"session_id": session_id, "server_label": label, "seq": len(out), "ts": rfc3339(ts[seq]), "direction": d, "transport": "stdio"}
        if msg is None:
            env["text"] = raw.decode()
        else:
            env["raw"] = "@RAW@"
        out.append((env, raw))
    last = max(ts.values())
    for i, line in enumerate(stderr_lines):
        out.append({"session_id": session_id, "server_label": label, "seq": len(out), "ts": rfc3339(last + 1000 * (i + 1)), "direction": "stderr",
                    "transport": "stdio", "text": line})
    with open(os.path.join(HERE, "mcpsnoop-billing.jsonl"), "wb") as f:
        for item in out:
            if isinstance(item, tuple):
                env, raw = item
                text = json.dumps(env, separators=(",", ":"))
                if env.get("raw") == "@RAW@":
                    text = text.replace('"@RAW@"', raw.decode(), 1)
                f.write(text.encode() + b"\n")
            else:
                f.write(json.dumps(item, separators=(",", ":")).encode() + b"\n")

    # MCPSpy
    client_pid, server_pid = spawn["pid"] - 1, spawn["pid"]
    internal = hashlib.sha256(f"{client_pid}:{server_pid}:".encode()).hexdigest()
    internal = f"{internal[0:8]}-{internal[8:12]}-4{internal[13:16]}-{internal[16:20]}-{internal[20:32]}"
    with open(os.path.join(HERE, "mcpspy-billing.jsonl"), "wb") as f:
        for d, raw, msg, seq in frames:
            if msg is None:
                continue
            from_pid, to_pid = (client_pid, server_pid) if d == "c2s" else (server_pid, client_pid)
            from_comm, to_comm = ("notebook", "python") if d == "c2s" else ("python", "notebook")
            kind = "request" if "method" in msg and "id" in msg else "notification" if "method" in msg else "response"
            ev = {"timestamp": rfc3339(ts[seq]), "transport_type": "stdio",
                  "stdio_transport": {"from_pid": from_pid, "from_comm": from_comm, "to_pid": to_pid, "to_comm": to_comm},
                  "session": {"internal_id": internal}, "type": kind}
            for k in ("id", "method", "params", "result", "error"):
                if k in msg:
                    ev[k] = msg[k]
            ev["raw"] = raw.decode()
            f.write(json.dumps(ev, separators=(",", ":")).encode() + b"\n")

    # mcptrace-rs
    by_id = {}
    for d, raw, msg, seq in frames:
        if msg is not None and d == "s2c" and "method" not in msg:
            by_id[msg.get("id")] = (raw, msg)
    trace_id = hashlib.sha256(session_id.encode()).hexdigest()[:32]
    spans = []
    for d, raw, msg, seq in frames:
        if msg is None or d != "c2s" or "method" not in msg or "id" not in msg:
            continue
        args = json.dumps(msg.get("params", {}).get("arguments"), separators=(",", ":")).encode() if msg["method"] == "tools/call" else None
        span = {"schema_version": 1, "span_id": hashlib.sha256(raw).hexdigest()[:16], "trace_id": trace_id, "service_name": "mcptrace",
                "method": msg["method"], "request_id": msg["id"]}
        if msg["method"] == "tools/call":
            span["tool_name"] = msg["params"]["name"]
            span["arg_digest"] = hashlib.sha256(args).hexdigest()
        span["arg_bytes"] = len(args) if args else 0
        span["start_unix_nanos"] = ts[seq] * 1000
        resp = by_id.get(msg["id"])
        span["duration_ms"] = int(latency[msg["id"]])
        span["request_bytes"] = len(raw)
        span["response_bytes"] = len(resp[0]) if resp else 0
        if resp and "error" in resp[1]:
            span["error_code"] = resp[1]["error"]["code"]
            span["error_message_digest"] = hashlib.sha256(resp[1]["error"]["message"].encode()).hexdigest()
            span["status"] = "error"
        else:
            span["status"] = "ok" if resp else "orphan"
        spans.append(span)
    with open(os.path.join(HERE, "mcptrace-billing.jsonl"), "w") as f:
        for s in spans:
            f.write(json.dumps(s, separators=(",", ":")) + "\n")

    # Truth, from the source bytes.
    # A response's method is its request's (as the source truth attributes it).
    request_method = {m["id"]: m["method"] for d, _, m, _ in frames if m is not None and d == "c2s" and "method" in m and "id" in m}

    def frame_truth(d, raw, msg):
        method = (msg.get("method") or request_method.get(msg.get("id"))) if msg else None
        return {"direction": d, "bytes": len(raw), "method": method,
                "id": json.dumps(msg["id"]) if msg and "id" in msg else None, "json": msg is not None}
    truth = {
        "source": "../stdio_py (mcp 1.30.0 client and server over stdio)",
        "mcpsnoop-billing.jsonl": {"frames": [frame_truth(d, r, m) for d, r, m, _ in frames],
                                   "events": {"session_meta": 1, "server_stderr": len(stderr_lines)}},
        "mcpspy-billing.jsonl": {"frames": [frame_truth(d, r, m) for d, r, m, _ in frames if m is not None], "events": {}},
        "mcptrace-billing.jsonl": {"spans": [{"id": json.dumps(s["request_id"]), "method": s["method"], "tool": s.get("tool_name"),
                                              "request_bytes": s["request_bytes"], "response_bytes": s["response_bytes"],
                                              "duration_ms": s["duration_ms"], "status": s["status"], "error_code": s.get("error_code")}
                                             for s in spans]},
        "calls": [{"id": json.dumps(c["id"]), "method": c["method"], "tool": c["tool"], "bytes": c["bytes"],
                   "response_bytes": c["response_bytes"], "outcome": c["outcome"]} for c in truth_src["calls"]],
    }
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
