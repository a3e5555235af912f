"""Turn recorder work directories into the shipped samples + truth.json.
usage: build.py <capture> <workdir...> <samples_dir>   (see record.sh)"""
import gzip, hashlib, json, os, shutil, sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import analyze, stdio_frames, transcript_records, iso  # noqa: E402
from modern import modern_facts, client_from_meta  # noqa: E402

GZ_OVER = 1_000_000


def sha(b):
    return hashlib.sha256(b).hexdigest()


def ship(src, dst_dir, name=None):
    """Copy a file into the samples; gzip -9 -n it when over 1 MB. Returns file info."""
    name = name or os.path.basename(src)
    data = open(src, "rb").read()
    info = {"name": name, "bytes": len(data), "sha256": sha(data)}
    if len(data) > GZ_OVER:
        with open(os.path.join(dst_dir, name + ".gz"), "wb") as f:
            with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=f, mtime=0) as g:
                g.write(data)
        info["stored_as"] = name + ".gz"
        info["stored_bytes"] = os.path.getsize(os.path.join(dst_dir, name + ".gz"))
    else:
        with open(os.path.join(dst_dir, name), "wb") as f:
            f.write(data)
        info["stored_as"] = name
    return info


def dump(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def load_versions():
    p = os.environ.get("VERSIONS_JSON")
    return json.load(open(p)) if p and os.path.exists(p) else None


EXPECT = {
    "stdio_ts": [("structured_content_additional_property", "list_tags"),
                 ("error_result_invalid_structured_content", "sync_index"),
                 ("server_output_validation_error", "summarize_doc"),
                 ("text_structured_divergence", "count_links"),
                 ("empty_content_with_structured_content", "peek_cache"),
                 ("tool_cursor_drift", "query_rows"),
                 ("tools_list_next_cursor_not_followed", None),
                 ("frame_near_stdio_limit", "fetch_page")],
    "http_ts": [("text_structured_divergence", "count_links")],
    "http_py": [],
    "hostlog": [("structured_content_additional_property", "list_tags"), ("text_structured_divergence", "count_links")],
    # 2026-07-28 (mcp 2.x): the Python client reads page 1 of tools/list only (4 responses with a
    # nextCursor it never sends); over HTTP the header mismatch's re-list follows the cursor
    "stdio_py2": [("tools_list_next_cursor_not_followed", None)] * 4,
    "stdio_py2_fallback": [],
    "http_py2": [("header_mismatch", "query_region"), ("frame_over_python_sse_event_limit", "export_ledger")],
    "stdio_py": [("stdout_non_json_line", None),
                 ("result_truncated", "export_log"),
                 ("request_cancelled", "slow_export")],
}


def build_stdio(capture, work, out, session):
    os.makedirs(out, exist_ok=True)
    frames = stdio_frames(work, session)
    files = [ship(os.path.join(work, n), out) for n in ("c2s.log", "s2c.log")]
    for n in ("server.stderr.log", "shim_events.json", "observed.json"):
        shutil.copy(os.path.join(work, n), os.path.join(out, n))
    observed = json.load(open(os.path.join(work, "observed.json")))
    t = analyze(frames, capture, "stdio", EXPECT.get(capture), extra={
        "files": files, "versions": load_versions(),
        "client_observed": {"steps": observed["steps"], "transport_errors": observed["transport_errors"]},
    })
    # stdio specifics: line offsets for non-JSON / large frames are in the transcript fields
    t["lines"] = {d: sum(1 for f in frames if f["dir"] == d) for d in ("c2s", "s2c")}
    t["partial_last_lines"] = [f["seq"] for f in frames if f.get("partial")]
    dump(t, os.path.join(out, "truth.json"))
    return frames, t


# ---------------- host logs ----------------
SERVER = "docs"
CUT_HEAD, CUT_TAIL = 1000, 100
EXIT_TEXT = ("Server transport closed unexpectedly, this is likely due to the process exiting early. If you are "
             "developing this MCP server you can add output to stderr (i.e. `console.error('...')` in JavaScript, "
             "`print('...', file=sys.stderr)` in python) and it will appear in this log.")


def desktop_line(ts_us, server, level, text):
    """One Claude Desktop per-server log entry: `<RFC3339 ms Z> [server] [level] text`."""
    return f"{iso(ts_us)} [{server}] [{level}] {text}"


def desktop_message(ts_us, server, direction, body):
    """A logged JSON-RPC message: `... [info] Message from client|server: <JSON> { metadata: undefined }`."""
    who = "client" if direction == "c2s" else "server"
    return desktop_line(ts_us, server, "info", f"Message from {who}: {body} {{ metadata: undefined }}")


def build_hostlog(work_claude, work_vscode, out):
    os.makedirs(out, exist_ok=True)
    frames = stdio_frames(work_claude, "hostlog-claude-desktop")
    ev = json.load(open(os.path.join(work_claude, "shim_events.json")))
    spawn = next(e for e in ev if e["event"] == "spawn")["ts_us"]
    s2c_eof = next(e for e in ev if e["event"] == "s2c_eof")["ts_us"]
    base = analyze(frames, "hostlog", "stdio (host log)", EXPECT["hostlog"])
    # pick the message to pretty-print (the initialize result) and the one to cut (largest frame)
    init_res = next(f for f in frames if f["dir"] == "s2c" and f.get("kind") == "response")
    cut = max(frames, key=lambda f: len(f["raw"]))
    lines, logged = [], []
    P = lambda ts, lvl, text: desktop_line(ts, SERVER, lvl, text)  # noqa: E731
    first = frames[0]["ts_us"]
    started = max(spawn, first - 500)
    lines.append(P(spawn - 2_000, "info", "Initializing server..."))
    lines.append(P(started, "info", "Server started and connected successfully"))
    for f in frames:
        text = f["raw"].decode()
        who = "client" if f["dir"] == "c2s" else "server"
        rec = {"seq": f["seq"], "dir": f["dir"], "kind": f["kind"], "wire_bytes": len(f["raw"]), "line": len(lines) + 1}
        if f is init_res:
            pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
            block = P(f["ts_us"], "info", f"Message from {who}: {pretty} {{ metadata: undefined }}")
            rec.update(pretty_printed=True, physical_lines=block.count("\n") + 1)
            lines.append(block)
        elif f is cut:
            n = len(text) - CUT_HEAD - CUT_TAIL
            body = text[:CUT_HEAD] + f"...[{n} chars truncated]..." + text[-CUT_TAIL:]
            rec.update(cut_by_host=True, original_chars=len(text), kept_head_chars=CUT_HEAD, kept_tail_chars=CUT_TAIL,
                       truncated_chars=n, logged_body_bytes=len(body.encode()))
            lines.append(P(f["ts_us"], "info", f"Message from {who}: {body} {{ metadata: undefined }}"))
        else:
            lines.append(P(f["ts_us"], "info", f"Message from {who}: {text} {{ metadata: undefined }}"))
        logged.append(rec)
    lines.append(P(s2c_eof, "info", "Server transport closed"))
    lines.append(P(s2c_eof, "info", "Client transport closed"))
    lines.append(P(s2c_eof + 1000, "info", EXIT_TEXT))
    lines.append(P(s2c_eof + 1000, "error", "Server disconnected. For troubleshooting guidance, please visit our "
                   "[debugging documentation](https://modelcontextprotocol.io/docs/tools/debugging) { metadata: { context: 'connection', stack: undefined } }"))
    with open(os.path.join(out, "mcp-server-docs.log"), "w") as fh:
        fh.write("\n".join(lines) + "\n")

    # combined mcp.log: a few lines of the same session
    sel = [f for f in frames if f["seq"] <= 6]  # initialize .. first tools/call and its result
    ml = [f"{iso(spawn - 2_000)} [info] [{SERVER}] Initializing server...",
          f"{iso(started)} [info] [{SERVER}] Server started and connected successfully"]
    for f in sel:
        ml.append(f"{iso(f['ts_us'])} [info] [{SERVER}] Message from {'client' if f['dir'] == 'c2s' else 'server'}: {f['raw'].decode()}")
    with open(os.path.join(out, "mcp.log"), "w") as fh:
        fh.write("\n".join(ml) + "\n")
    mcp_log_truth = analyze([dict(f) for f in sel], "hostlog/mcp.log", "stdio (host log)")

    # VS Code output channel, from a separate recorded session
    vf = stdio_frames(work_vscode, "hostlog-vscode")
    vev = json.load(open(os.path.join(work_vscode, "shim_events.json")))
    vspawn = next(e for e in vev if e["event"] == "spawn")["ts_us"]
    vtruth = analyze(vf, "hostlog/vscode-mcp.log", "stdio (host log)")
    V = lambda ts, lvl, text: datetime.fromtimestamp(ts / 1e6, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + f" [{lvl}] {text}"  # noqa
    vl = [V(vspawn - 2_000, "info", f"Starting server {SERVER}"), V(vspawn - 1_000, "info", "Connection state: Starting")]
    for f in vf:
        vl.append(V(f["ts_us"], "info", f"[{'Client Says' if f['dir'] == 'c2s' else 'Server Says'}] {f['raw'].decode()}"))
        if f["seq"] == 1:  # the initialize result: the connection is up
            vl.append(V(f["ts_us"], "info", "Connection state: Running"))
        if f.get("kind") == "response" and any(c["method"] == "tools/list" and c.get("response_seq") == f["seq"] for c in vtruth["calls"]):
            n = len(json.loads(f["raw"])["result"]["tools"])
            vl.append(V(f["ts_us"] + 1000, "info", f"Discovered {n} tools"))
    vend = next(e for e in vev if e["event"] == "s2c_eof")["ts_us"]
    vl.append(V(vend, "info", "Connection state: Stopped"))
    with open(os.path.join(out, "vscode-mcp.log"), "w") as fh:
        fh.write("\n".join(vl) + "\n")

    truth = {
        "capture": "hostlog",
        "generated_by": "samples/record: host-log lines formatted by the recorder from real recorded stdio sessions (tee byte logs); not from mcpsift",
        "frame_definition": "one logged message; wire_bytes = UTF-8 bytes of the recorded stdio line the log entry was made from",
        "files": {
            "mcp-server-docs.log": {
                "format": "Claude Desktop per-server log: `<RFC3339 ms Z> [docs] [info] Message from client|server: <JSON> { metadata: undefined }`",
                "physical_lines": sum(l.count("\n") + 1 for l in lines),
                "entries": len(lines),
                "message_entries": len(logged),
                "non_message_entries": len(lines) - len(logged),
                "non_message_texts": ["Initializing server...", "Server started and connected successfully", "Server transport closed",
                                      "Client transport closed", EXIT_TEXT, "Server disconnected. ..."],
                "logged_messages": logged,
                "pretty_printed": [r for r in logged if r.get("pretty_printed")],
                "cut_by_host": [r for r in logged if r.get("cut_by_host")],
                "server_exited_early": True,
                "truth": base,
            },
            "mcp.log": {
                "format": "combined: `<RFC3339 ms Z> [info] [docs] Message from client|server: <JSON>`",
                "entries": len(ml), "message_entries": len(sel), "truth": mcp_log_truth,
            },
            "vscode-mcp.log": {
                "format": "VS Code MCP output channel: `YYYY-MM-DD HH:MM:SS.mmm [info] [Client Says]|[Server Says] <JSON>` (UTC clock)",
                "entries": len(vl), "message_entries": len(vf), "truth": vtruth,
            },
        },
    }
    dump(truth, os.path.join(out, "truth.json"))
    return frames


# ---------------- transcript ----------------
def build_transcript(parts, out):
    """parts: list of (frames already analysed in their own capture, session label)."""
    os.makedirs(out, exist_ok=True)
    frames = []
    for fr, label in parts:
        for f in fr:
            g = dict(f)
            g["session"] = label
            frames.append(g)
    frames.sort(key=lambda f: f["ts_us"])
    t = analyze(frames, "transcript", "jsonl transcript", EXPECT["stdio_py"])
    rows, as_raw, as_msg, identical = [], 0, 0, 0
    for f in frames:
        text = f["raw"].decode()
        row = {"ts": iso(f["ts_us"]), "session": f["session"], "direction": f["dir"]}
        use_raw = f["kind"] in ("non_json", "non_jsonrpc_json") or (f["kind"] == "response" and b"truncated" in f["raw"])
        if not use_raw:
            msg = json.loads(text)
            if json.dumps(msg, separators=(",", ":"), ensure_ascii=False) != text:
                use_raw = True  # keep exact bytes when a re-serialisation would differ
            else:
                identical += 1
        if use_raw:
            row["raw"] = text
            as_raw += 1
        else:
            row["message"] = json.loads(text)
            as_msg += 1
        rows.append(row)
    with open(os.path.join(out, "session.jsonl"), "w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    t["format"] = {"records": len(rows), "with_message": as_msg, "with_raw": as_raw,
                   "note": "`message` records re-serialise (compact JSON, key order kept) to exactly the recorded wire bytes; "
                           "`raw` holds the exact text of the non-JSON line and of the truncated result"}
    t["sessions_in_file"] = sorted({f["session"] for f in frames})
    dump(t, os.path.join(out, "truth.json"))


# ---------------- HTTP (pcaps) ----------------
import base64, codecs
from collections import Counter
from urllib.parse import urlparse, parse_qs


def sse_events(chunks):
    """Parse an SSE body chunk by chunk; yields (event dict, ts_us of the chunk that completed it)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    buf, carry, out = "", "", []
    for c in chunks:
        t = carry + dec.decode(base64.b64decode(c["b64"]))
        carry = ""
        if t.endswith("\r"):
            carry, t = "\r", t[:-1]
        buf += t.replace("\r\n", "\n").replace("\r", "\n")
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            ev = {"event": None, "data": [], "id": None, "comment": False}
            for line in block.split("\n"):
                if line.startswith(":"):
                    ev["comment"] = True
                    continue
                k, _, v = line.partition(":")
                v = v[1:] if v.startswith(" ") else v
                if k == "data":
                    ev["data"].append(v)
                elif k in ("event", "id", "retry"):
                    ev[k] = v
            ev["data"] = "\n".join(ev["data"]) if ev["data"] else None
            out.append((ev, c["ts_us"]))
    return out


def http_frames(rec, label):
    frames, legacy_sid, init_sid = [], {}, None
    for e in rec["exchanges"]:
        q = parse_qs(urlparse(e["url"]).query)
        sid = e["req_headers"].get("mcp-session-id") or (q.get("sessionId") or q.get("session_id") or [None])[0]
        if sid is None and e.get("res_headers", {}).get("mcp-session-id"):
            sid = e["res_headers"]["mcp-session-id"]  # the initialize POST
        base = {"http_ex": e["ex"], "http_method": e["method"], "url": e["url"]}
        if e["method"] == "POST" and e.get("req_body"):
            frames.append({**base, "session": sid, "dir": "c2s", "raw": e["req_body"].encode(), "ts_us": e["t_req_us"],
                           "carrier": "http-request-body", "session_label": label})
        ctype = (e.get("res_headers") or {}).get("content-type") or ""
        body_chunks = e.get("chunks") or []
        if ctype.startswith("text/event-stream"):
            gsid = sid
            for ev, ts in sse_events(body_chunks):
                if ev["event"] == "endpoint":
                    eq = parse_qs(urlparse(ev["data"]).query)
                    gsid = (eq.get("sessionId") or eq.get("session_id") or [None])[0]
                    e["sse_endpoint"] = ev["data"]
                    continue
                if ev["event"] in (None, "message") and ev["data"]:
                    frames.append({**base, "session": gsid, "dir": "s2c", "raw": ev["data"].encode(), "ts_us": ts,
                                   "carrier": "legacy-sse-stream" if e["method"] == "GET" and "/sse" in e["url"] else
                                   ("sse-get-stream" if e["method"] == "GET" else "sse-post-response"),
                                   "sse_event_id": ev["id"], "http_status": e["status"], "session_label": label})
        elif ctype.startswith("application/json") and body_chunks:
            body = b"".join(base64.b64decode(c["b64"]) for c in body_chunks)
            if body:
                frames.append({**base, "session": sid, "dir": "s2c", "raw": body, "ts_us": body_chunks[-1]["ts_us"],
                               "carrier": "http-json-response", "http_status": e["status"], "session_label": label})
    frames.sort(key=lambda f: (f["ts_us"], 0 if f["dir"] == "c2s" else 1))
    return frames


def build_http(items, out):
    """items: list of (capture file name, workdir, label, port)."""
    os.makedirs(out, exist_ok=True)
    all_truth = {"capture": "pcap", "generated_by": "samples/record: computed from the HTTP exchanges recorded inside the client "
                 "process (fetch wrapper / httpx transport wrapper teeing each response body), not from the pcap and not from mcpsift",
                 "frame_definition": "one HTTP request body (POST), one application/json response body, or one SSE `data:` payload "
                 "of a message event (the legacy `endpoint` event and empty/comment events are not messages); bytes are UTF-8 bytes",
                 "files": {}}
    for fname, work, label, port, kind in items:
        rec = json.load(open(os.path.join(work, "http_exchanges.json")))
        frames = http_frames(rec, label)
        obs = json.load(open(os.path.join(work, "observed.json")))
        t = analyze(frames, fname, kind, EXPECT["http_py" if "py" in kind else "http_ts"])
        exs = rec["exchanges"]
        t["http"] = {
            "port": port,
            "base_url": rec["base"],
            "exchanges": len(exs),
            "by_method_status": dict(Counter(f"{e['method']} {e['status'] if e.get('status') is not None else 'fetch-error'}" for e in exs)),
            "response_content_types": dict(Counter(((e.get("res_headers") or {}).get("content-type") or "none").split(";")[0] for e in exs)),
            "sse_message_events": sum(1 for f in frames if f["carrier"].startswith("sse") or f["carrier"] == "legacy-sse-stream"),
            "carriers": dict(Counter(f["carrier"] for f in frames)),
            "legacy_endpoint_events": [e["sse_endpoint"] for e in exs if e.get("sse_endpoint")],
            "exchange_list": [{"ex": e["ex"], "method": e["method"], "path": urlparse(e["url"]).path + (("?" + urlparse(e["url"]).query) if urlparse(e["url"]).query else ""),
                               "status": e.get("status"), "content_type": (e.get("res_headers") or {}).get("content-type"),
                               "req_body_bytes": len(e["req_body"].encode()) if e.get("req_body") else 0,
                               "res_body_bytes_seen_by_client": sum(len(base64.b64decode(c["b64"])) for c in e.get("chunks") or []),
                               "res_body_complete": e.get("res_body_complete"), "fetch_error": e.get("fetch_error")} for e in exs],
        }
        t["progress_notifications"] = [
            {"seq": f["seq"], "http_ex": f["http_ex"], "carrier": f["carrier"], "bytes": len(f["raw"]),
             "params": json.loads(f["raw"]).get("params")} for f in frames if f["kind"] == "notification" and b"notifications/progress" in f["raw"]]
        t["log_notifications"] = sum(1 for f in frames if f["kind"] == "notification" and b'"notifications/message"' in f["raw"])
        t["client_observed"] = obs
        t["messages_detail"] = [{"seq": f["seq"], "session": f["session"], "dir": f["dir"], "kind": f["kind"], "bytes": len(f["raw"]),
                                 "http_ex": f["http_ex"], "carrier": f["carrier"], "ts": iso(f["ts_us"])} for f in frames]
        t["files"] = [{"name": fname, "bytes": os.path.getsize(os.path.join(out, fname))}] if os.path.exists(os.path.join(out, fname)) else []
        all_truth["files"][fname] = t
    dump(all_truth, os.path.join(out, "truth.json"))


# ---------------- 2026-07-28 (mcp 2.x) ----------------
def input_schemas(frames):
    out = {}
    for f in frames:
        if f["dir"] == "s2c" and f["kind"] == "response":
            res = json.loads(f["raw"]).get("result") or {}
            for t in res.get("tools") or []:
                if isinstance(t, dict) and "name" in t:
                    out[t["name"]] = t.get("inputSchema")
    return out


def add_modern(t, frames, capture):
    """The 2026-07-28 block, its problems merged into `problems` and checked against the plan."""
    t["modern"] = m = modern_facts(frames, input_schemas(frames))
    t["problems"] = sorted(t["problems"] + m.pop("problems"), key=lambda p: (p.get("response_seq") or p.get("seq") or p.get("request_seq") or 0, p["rule"]))
    client_from_meta(t["problems"], m)
    t["problem_counts"] = dict(sorted(Counter(p["rule"] for p in t["problems"]).items()))
    want = sorted((r, tl or "") for r, tl in EXPECT[capture])
    got = sorted((p["rule"], p["tool"] or "") for p in t["problems"])
    t["seeded_problems_planned"] = [{"rule": r, "tool": tl} for r, tl in EXPECT[capture]]
    t["seeded_problems_check"] = "ok" if got == want else {"planned": want, "found": got}
    if got != want:
        raise SystemExit(f"{capture}: problems differ from the plan:\n planned {want}\n found   {got}")


def build_stdio_py2(capture, work, out, session):
    os.makedirs(out, exist_ok=True)
    frames = stdio_frames(work, session)
    files = [ship(os.path.join(work, n), out) for n in ("c2s.log", "s2c.log")]
    for n in ("server.stderr.log", "shim_events.json", "observed.json"):
        shutil.copy(os.path.join(work, n), os.path.join(out, n))
    observed = json.load(open(os.path.join(work, "observed.json")))
    t = analyze(frames, capture, "stdio", None, extra={"files": files, "versions": load_versions(), "client_observed": observed})
    t["lines"] = {d: sum(1 for f in frames if f["dir"] == d) for d in ("c2s", "s2c")}
    add_modern(t, frames, capture)
    dump(t, os.path.join(out, "truth.json"))


def build_http_py2(fname, pcap, work, label, port, out):
    """Client-side exchanges are the truth, except where the client stopped reading (the SSE
    event over its 1 MiB cap): there the body is what the server sent (server_exchanges.jsonl)."""
    os.makedirs(out, exist_ok=True)
    shutil.copy(pcap, os.path.join(out, fname))
    rec = json.load(open(os.path.join(work, "http_exchanges.json")))
    srv = [json.loads(l) for l in open(os.path.join(work, "server_exchanges.jsonl"))]
    exs = rec["exchanges"]
    if len(srv) != len(exs):
        raise SystemExit(f"{len(exs)} client exchanges, {len(srv)} server exchanges")
    for e, s in zip(exs, srv):
        if (e["method"], e["status"], e["req_headers"].get("mcp-method")) != (s["method"], s["status"], s["req_headers"].get("mcp-method")):
            raise SystemExit(f"exchange {e['ex']}: client and server records disagree")
        client_body = b"".join(base64.b64decode(c["b64"]) for c in e["chunks"])
        server_body = b"".join(base64.b64decode(c["b64"]) for c in s["chunks"])
        if not server_body.startswith(client_body):
            raise SystemExit(f"exchange {e['ex']}: the client saw bytes the server did not send")
        e["client_port"] = s["client_port"]
        if not e.get("res_body_complete"):
            e["client_seen_body_bytes"] = len(client_body)
            e["chunks"] = s["chunks"]
            e["body_from"] = "server (the client stopped reading)"
    frames = http_frames(rec, label)
    for f in frames:
        ex = exs[f["http_ex"]]
        f["client_port"] = ex["client_port"]
        if f["dir"] == "c2s":
            f["req_headers"] = ex["req_headers"]
    # every frame must be on the wire verbatim (catches packets the capture dropped)
    from pcap_payload import tcp_streams
    streams = tcp_streams(pcap)
    missing = [f["seq"] if "seq" in f else i for i, f in enumerate(frames)
               if f["raw"] not in streams.get((f["client_port"], port) if f["dir"] == "c2s" else (port, f["client_port"]), b"")]
    if missing:
        raise SystemExit(f"{fname}: {len(missing)} of {len(frames)} frames are not in the pcap's TCP payload (dropped packets?)")
    obs = json.load(open(os.path.join(work, "observed.json")))
    t = analyze(frames, fname, "streamable-http (mcp 2.x MCPServer, 2026-07-28)", None)
    add_modern(t, frames, "http_py2")
    t["http"] = {
        "port": port, "base_url": rec["base"], "exchanges": len(exs),
        "tcp_connections_by_client_port": dict(Counter(str(e["client_port"]) for e in exs)),
        "by_method_status": dict(Counter(f"{e['method']} {e['status']}" for e in exs)),
        "response_content_types": dict(Counter(((e.get("res_headers") or {}).get("content-type") or "none").split(";")[0] for e in exs)),
        "carriers": dict(Counter(f["carrier"] for f in frames)),
        "exchange_list": [{"ex": e["ex"], "method": e["method"], "client_port": e["client_port"], "status": e.get("status"),
                           "content_type": (e.get("res_headers") or {}).get("content-type"),
                           "mcp_headers": {k: v for k, v in e["req_headers"].items() if k.startswith("mcp-")},
                           "req_body_bytes": len(e["req_body"].encode()) if e.get("req_body") else 0,
                           "res_body_bytes": sum(len(base64.b64decode(c["b64"])) for c in e["chunks"]),
                           "client_seen_body_bytes": e.get("client_seen_body_bytes"), "body_from": e.get("body_from", "client")} for e in exs],
    }
    t["client_observed"] = obs
    t["messages_detail"] = [{"seq": f["seq"], "dir": f["dir"], "kind": f["kind"], "bytes": len(f["raw"]), "http_ex": f["http_ex"],
                             "client_port": f["client_port"], "carrier": f["carrier"], "ts": iso(f["ts_us"])} for f in frames]
    t["files"] = [{"name": fname, "bytes": os.path.getsize(os.path.join(out, fname))}]
    t["frames_verbatim_in_pcap"] = f"{len(frames)} of {len(frames)}"
    t["versions"] = load_versions()
    dump({"capture": "http_py2", "generated_by": "samples/record (computed from the recorded HTTP exchanges; not from the pcap and not from mcpsift)",
          "files": {fname: t}}, os.path.join(out, "truth.json"))
    with open(os.path.join(out, fname.rsplit(".", 1)[0] + ".exchanges.json.gz"), "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=f, mtime=0) as g:
            g.write(json.dumps(rec).encode())


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "stdio":
        build_stdio(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif cmd == "hostlog":
        build_hostlog(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "transcript":
        py = stdio_frames(sys.argv[2], "x")
        vs = stdio_frames(sys.argv[3], "x")
        # classify kinds (analyze sets f["kind"])
        analyze(py, "tmp", "stdio"); analyze(vs, "tmp", "stdio")
        build_transcript([(py, "stdio-py-invoice-notebook"), (vs, "stdio-ts-vscode")], sys.argv[4])
    elif cmd == "http":
        # http <out> <fname>=<workdir>=<label>=<port>=<transport> ...
        items = []
        for a in sys.argv[3:]:
            fname, work, label, port, kind = a.split("=")
            items.append((fname, work, label, int(port), kind))
        build_http(items, sys.argv[2])
    elif cmd == "stdio_py2":
        build_stdio_py2(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif cmd == "http_py2":
        build_http_py2(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), sys.argv[7])
    else:
        raise SystemExit("unknown command")
