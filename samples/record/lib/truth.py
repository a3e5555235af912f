"""Ground truth for the mcpsift samples, computed from the recorded bytes (never from mcpsift).

Input: an ordered list of frames {session, dir, raw: bytes, ts_us, ...}. A frame is one stdio
line without its terminator, or one HTTP body / SSE `data:` payload.
"""
import base64, json, re
from collections import Counter, defaultdict
from datetime import datetime, timezone

STDIO_LIMIT = 10 * 1024 * 1024          # TS SDK STDIO_DEFAULT_MAX_BUFFER_SIZE
NEAR = int(STDIO_LIMIT * 0.9)           # 9,437,184
MARKERS = ["... [truncated]", "[Response truncated due to size limit]", "[output truncated]"]


def iso(ts_us):
    return datetime.fromtimestamp(ts_us / 1e6, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def classify(raw):
    try:
        msg = json.loads(raw.decode("utf-8"))
    except Exception:
        return "non_json", None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return "non_jsonrpc_json", msg
    if "method" in msg:
        return ("request" if "id" in msg else "notification"), msg
    if "result" in msg and "id" in msg:
        return "response", msg
    if "error" in msg and "id" in msg:
        return "error", msg
    return "non_jsonrpc_json", msg


# --- minimal JSON Schema check (type/properties/required/additionalProperties/items) ---
def schema_errors(v, s, path="$"):
    errs = []
    if not isinstance(s, dict):
        return errs
    t = s.get("type")
    tmap = {"object": dict, "array": list, "string": str, "boolean": bool}
    if t == "integer":
        if not (isinstance(v, int) and not isinstance(v, bool)) and not (isinstance(v, float) and v.is_integer()):
            errs.append(f"{path}: not an integer")
    elif t == "number":
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            errs.append(f"{path}: not a number")
    elif t in tmap and not isinstance(v, tmap[t]):
        errs.append(f"{path}: not {t}")
        return errs
    if isinstance(v, dict):
        props = s.get("properties", {})
        for r in s.get("required", []):
            if r not in v:
                errs.append(f"{path}: missing required property '{r}'")
        for k, val in v.items():
            if k in props:
                errs += schema_errors(val, props[k], f"{path}.{k}")
            elif s.get("additionalProperties") is False:
                errs.append(f"{path}: additional property '{k}'")
    if isinstance(v, list) and isinstance(s.get("items"), dict):
        for i, it in enumerate(v):
            errs += schema_errors(it, s["items"], f"{path}[{i}]")
    return errs


def decode_cursor(c):
    for dec in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            return json.loads(dec(c + "=" * (-len(c) % 4)))
        except Exception:
            pass
    return None


def text_blocks(res):
    return [b.get("text", "") for b in res.get("content", []) or [] if isinstance(b, dict) and b.get("type") == "text"]


def analyze(frames, capture, transport, expected_problems=None, extra=None):
    """frames: list of dicts with session, dir, raw (bytes), ts_us; optional offset/eol/partial."""
    kinds = {"c2s": Counter(), "s2c": Counter()}
    methods = defaultdict(Counter)
    tools = defaultdict(lambda: Counter(max_response_frame_bytes=0))
    sessions = {}
    pending = {}   # (session, id-json) -> request info
    calls = []
    problems = []
    tool_schemas = defaultdict(dict)   # session -> tool -> outputSchema
    list_pages = []
    cursors_issued = defaultdict(list)
    cursors_sent = defaultdict(list)
    cancellations = []
    non_json = []
    largest = None
    ge90 = []
    tool_pages = []

    def sess(s):
        return sessions.setdefault(s, {"session": s, "clientInfo": None, "serverInfo": None,
                                       "protocolVersion": None, "messages": {"c2s": 0, "s2c": 0}})

    def client_of(s):
        ci = sessions.get(s, {}).get("clientInfo") or {}
        return {"name": ci.get("name"), "version": ci.get("version")}

    for seq, f in enumerate(frames):
        f["seq"] = seq
        d, s, raw = f["dir"], f["session"], f["raw"]
        nbytes = len(raw)
        kind, msg = classify(raw)
        f["kind"] = kind
        kinds[d][kind] += 1
        sess(s)["messages"][d] += 1
        if largest is None or nbytes > largest["bytes"]:
            largest = {"seq": seq, "session": s, "dir": d, "bytes": nbytes, "kind": kind}
        if nbytes >= NEAR:
            ge90.append({"seq": seq, "session": s, "dir": d, "bytes": nbytes, "kind": kind})
        if kind == "non_json":
            txt = raw.decode("utf-8", "replace")
            non_json.append({"seq": seq, "session": s, "dir": d, "bytes": nbytes, "offset": f.get("offset"), "text": txt[:200]})
            if d == "s2c":
                problems.append({"rule": "stdout_non_json_line", "session": s, "client": None, "tool": None,
                                 "seq": seq, "frame_bytes": nbytes, "detail": {"text": txt[:200], "offset": f.get("offset")}})
            continue
        if kind == "non_jsonrpc_json":
            continue
        if kind in ("request", "notification"):
            m = msg["method"]
            methods[m]["requests" if kind == "request" else "notifications"] += 1
            methods[m][f"{kind}s_{d}"] += 1
            p = msg.get("params") or {}
            if m == "initialize":
                sess(s)["clientInfo"] = p.get("clientInfo")
                sess(s)["requested_protocolVersion"] = p.get("protocolVersion")
            if kind == "request":
                info = {"seq": seq, "session": s, "id": msg["id"], "method": m, "dir": d, "bytes": nbytes,
                        "ts_us": f["ts_us"], "params": p}
                if m == "tools/call":
                    info["tool"] = p.get("name")
                    tools[p.get("name")]["calls"] += 1
                if m == "tools/list" and p.get("cursor") is not None:
                    cursors_sent[s].append(p["cursor"])
                pending[(s, json.dumps(msg["id"]))] = info
                calls.append(info)
            if m == "notifications/cancelled":
                rid = p.get("requestId")
                req = pending.get((s, json.dumps(rid)))
                cancellations.append({"seq": seq, "session": s, "requestId": rid, "reason": p.get("reason"),
                                      "request_method": req and req["method"], "request_tool": req and req.get("tool"),
                                      "request_seq": req and req["seq"]})
                if req:
                    req["cancelled_seq"] = seq
            continue
        # response or error
        key = (s, json.dumps(msg.get("id")))
        req = pending.get(key)
        if req is None or "response_seq" in req:
            methods["<unmatched>"]["responses" if kind == "response" else "errors"] += 1
            continue
        req["response_seq"] = seq
        req["response_bytes"] = nbytes
        req["latency_ms"] = round((f["ts_us"] - req["ts_us"]) / 1000, 3)
        m = req["method"]
        methods[m]["responses" if kind == "response" else "errors"] += 1
        if kind == "error":
            req["outcome"] = "rpc_error"
            req["error"] = msg["error"]
            if m == "tools/call":
                tools[req["tool"]]["errors"] += 1
            continue
        res = msg["result"]
        req["outcome"] = "ok"
        if m == "initialize":
            sess(s)["serverInfo"] = res.get("serverInfo")
            sess(s)["protocolVersion"] = res.get("protocolVersion")
        if m == "tools/list":
            for t in res.get("tools", []):
                if "outputSchema" in t:
                    tool_schemas[s][t["name"]] = t["outputSchema"]
            nc = res.get("nextCursor")
            list_pages.append({"session": s, "seq": seq, "cursor_in": req["params"].get("cursor"),
                               "tools_returned": len(res.get("tools", [])), "tool_names": [t["name"] for t in res.get("tools", [])],
                               "nextCursor": nc, "frame_bytes": nbytes})
            if nc:
                cursors_issued[s].append({"cursor": nc, "seq": seq, "frame_bytes": nbytes})
        if m != "tools/call":
            continue
        tool = req["tool"]
        T = tools[tool]
        T["responses"] += 1
        T["max_response_frame_bytes"] = max(T["max_response_frame_bytes"], nbytes)
        sc = res.get("structuredContent")
        is_err = res.get("isError") is True
        texts = text_blocks(res)
        if is_err:
            T["isError"] += 1
            req["outcome"] = "tool_error"
        if sc is not None:
            T["structuredContent"] += 1
        base = {"session": s, "client": None, "tool": tool, "request_id": req["id"], "request_seq": req["seq"],
                "response_seq": seq, "frame_bytes": nbytes}
        schema = tool_schemas[s].get(tool)
        if sc is not None and schema is not None:
            errs = schema_errors(sc, schema)
            if errs and is_err:
                problems.append({**base, "rule": "error_result_invalid_structured_content", "detail": {"schema_errors": errs}})
            elif errs:
                extra_only = all("additional property" in e for e in errs)
                problems.append({**base, "rule": "structured_content_additional_property" if extra_only else "structured_content_schema_mismatch",
                                 "detail": {"schema_errors": errs}})
        if is_err and sc is None and any("Output validation error" in t or "validation error for" in t for t in texts):
            T["server_output_validation_errors"] += 1
            problems.append({**base, "rule": "server_output_validation_error", "detail": {"text": texts[0][:300]}})
        if sc is not None and res.get("content") == []:
            problems.append({**base, "rule": "empty_content_with_structured_content", "detail": {}})
        if sc is not None and texts and not is_err:
            t0 = texts[0]
            div = None
            try:
                j = json.loads(t0)
                if isinstance(j, dict) and j != sc:
                    div = {"text_json_differs": True}
            except Exception:
                for k, v in re.findall(r"\b(\w+)=(-?\d+)\b", t0):
                    if k in sc and sc[k] != int(v):
                        div = {"key": k, "text_value": int(v), "structured_value": sc[k]}
            if div:
                problems.append({**base, "rule": "text_structured_divergence", "detail": div})
        trunc = {}
        for t in texts:
            for mk in MARKERS:
                if t.endswith(mk):
                    trunc["text_marker"] = mk
                    T["text_truncation_marker"] += 1
        if isinstance(res.get("_meta"), dict) and res["_meta"].get("truncated") is True:
            trunc["meta_truncated"] = True
            trunc["meta"] = res["_meta"]
            T["meta_truncated_true"] += 1
        if isinstance(sc, dict) and sc.get("truncated") is True:
            trunc["structured_truncated"] = True
        if trunc:
            trunc["text_bytes"] = [len(t.encode()) for t in texts]
            problems.append({**base, "rule": "result_truncated", "detail": trunc})
        # tool-level cursor pagination (opaque base64 JSON {"offset": N})
        if isinstance(sc, dict) and isinstance(sc.get("items"), list) and ("next_cursor" in sc or "cursor" in (req["params"].get("arguments") or {})):
            args = req["params"].get("arguments") or {}
            cin = args.get("cursor")
            off_in = (decode_cursor(cin) or {}).get("offset", 0) if cin else 0
            nc = sc.get("next_cursor")
            off_next = (decode_cursor(nc) or {}).get("offset") if nc else None
            pg = {"session": s, "tool": tool, "request_id": req["id"], "response_seq": seq, "cursor_in": cin,
                  "offset_in": off_in, "page_size": args.get("page_size"), "items_returned": len(sc["items"]),
                  "item_ids": [it.get("row_id") for it in sc["items"] if isinstance(it, dict)],
                  "next_cursor": nc, "next_cursor_decoded": decode_cursor(nc) if nc else None,
                  "advance": (off_next - off_in) if off_next is not None else None}
            tool_pages.append(pg)
            if off_next is not None and off_next - off_in != len(sc["items"]):
                problems.append({**base, "rule": "tool_cursor_drift" if off_next - off_in < len(sc["items"]) else "tool_cursor_skip",
                                 "detail": {"items_returned": len(sc["items"]), "offset_in": off_in, "offset_next": off_next,
                                            "advance": off_next - off_in, "next_cursor": nc}})
        req["isError"] = is_err

    # requests never answered
    unanswered = []
    for c in calls:
        if "response_seq" not in c:
            c["outcome"] = "cancelled" if "cancelled_seq" in c else "no_response"
            if c["method"] == "tools/call":
                tools[c["tool"]]["no_response_on_wire"] += 1
            unanswered.append({"session": c["session"], "id": c["id"], "method": c["method"], "tool": c.get("tool"),
                               "seq": c["seq"], "cancelled_by_client": "cancelled_seq" in c})
        elif "cancelled_seq" in c:
            c["response_after_cancel"] = c["response_seq"] > c["cancelled_seq"]
            c["outcome"] = "cancelled"
    for cx in cancellations:
        req = next((c for c in calls if c["session"] == cx["session"] and c["id"] == cx["requestId"]), None)
        cx["response_on_wire"] = bool(req and "response_seq" in req)
        if req and "response_seq" in req:
            cx["response_seq"] = req["response_seq"]
            cx["response_after_cancel"] = req["response_seq"] > cx["seq"]
            cx["response_kind"] = frames[req["response_seq"]]["kind"]
            if req.get("error"):
                cx["response_error"] = req["error"]
        problems.append({"rule": "request_cancelled", "session": cx["session"], "client": None, "tool": cx["request_tool"],
                         "request_id": cx["requestId"], "request_seq": cx["request_seq"], "seq": cx["seq"],
                         "frame_bytes": frames[cx["seq"]]["raw"].__len__(),
                         "detail": {k: cx.get(k) for k in ("reason", "response_on_wire", "response_after_cancel", "response_error")}})
    for u in unanswered:
        if not u["cancelled_by_client"]:
            problems.append({"rule": "request_unanswered", "session": u["session"], "client": None, "tool": u["tool"],
                             "request_id": u["id"], "request_seq": u["seq"], "frame_bytes": frames[u["seq"]]["raw"].__len__(), "detail": {}})
    # tools/list cursors never followed
    never = []
    for s, iss in cursors_issued.items():
        for c in iss:
            if c["cursor"] not in cursors_sent[s]:
                never.append({"session": s, **c})
                shown = sum(p["tools_returned"] for p in list_pages if p["session"] == s)
                problems.append({"rule": "tools_list_next_cursor_not_followed", "session": s, "client": None, "tool": None,
                                 "response_seq": c["seq"], "frame_bytes": c["frame_bytes"],
                                 "detail": {"nextCursor": c["cursor"], "nextCursor_decoded": decode_cursor(c["cursor"]), "tools_seen": shown}})
    for g in ge90:
        fr = frames[g["seq"]]
        req = next((c for c in calls if c.get("response_seq") == g["seq"]), None)
        g.update({"id": req and req["id"], "method": req and req["method"], "tool": req and req.get("tool")})
        problems.append({"rule": "frame_over_stdio_limit" if g["bytes"] >= STDIO_LIMIT else "frame_near_stdio_limit",
                         "session": g["session"], "client": None, "tool": g["tool"], "request_id": g["id"],
                         "response_seq": g["seq"], "frame_bytes": g["bytes"],
                         "detail": {"limit_bytes": STDIO_LIMIT, "threshold_bytes": NEAR, "pct_of_limit": round(100 * g["bytes"] / STDIO_LIMIT, 2)}})
    if largest is not None:
        req = next((c for c in calls if c.get("response_seq") == largest["seq"] or c["seq"] == largest["seq"]), None)
        largest.update({"id": req and req["id"], "method": req and req["method"], "tool": req and req.get("tool")})
    for p in problems:
        p["client"] = client_of(p["session"])
    problems.sort(key=lambda p: (p.get("response_seq") or p.get("seq") or p.get("request_seq") or 0, p["rule"]))

    out = {
        "capture": capture,
        "transport": transport,
        "generated_by": "samples/record (computed from the recorded bytes; not from mcpsift)",
        "frame_definition": ("one line of c2s.log / s2c.log without its terminator" if transport == "stdio" else
                             "one HTTP request/response body, or one SSE `data:` payload of a message event") +
                            "; bytes are UTF-8 bytes",
        "messages": {
            "total": len(frames),
            "c2s": sum(kinds["c2s"].values()),
            "s2c": sum(kinds["s2c"].values()),
            "by_kind": {k: kinds["c2s"][k] + kinds["s2c"][k] for k in ("request", "notification", "response", "error", "non_json", "non_jsonrpc_json")},
        },
        "kinds_by_direction": {d: {k: kinds[d][k] for k in ("request", "notification", "response", "error", "non_json", "non_jsonrpc_json")} for d in ("c2s", "s2c")},
        "methods": {m: dict(sorted(c.items())) for m, c in sorted(methods.items())},
        "tools": {t: {k: c[k] for k in ("calls", "responses", "errors", "no_response_on_wire", "isError", "structuredContent",
                                           "server_output_validation_errors", "text_truncation_marker", "meta_truncated_true",
                                           "max_response_frame_bytes")} for t, c in sorted(tools.items())},
        "tool_calls_total": sum(c["calls"] for c in tools.values()),
        "largest_frame": largest,
        "stdio_limit_bytes": STDIO_LIMIT,
        "frames_ge_90pct_of_stdio_limit": ge90,
        "sessions": list(sessions.values()),
        "distinct_clientInfo": sorted({json.dumps(v["clientInfo"], sort_keys=True) for v in sessions.values() if v["clientInfo"]}),
        "problems": problems,
        "problem_counts": dict(sorted(Counter(p["rule"] for p in problems).items())),
        "non_json_frames": non_json,
        "unanswered_requests": unanswered,
        "cancellations": cancellations,
        "tools_list_pages": list_pages,
        "tools_list_cursors_never_followed": never,
        "tool_pagination_pages": tool_pages,
        "calls": [{k: c.get(k) for k in ("session", "id", "method", "tool", "seq", "bytes", "response_seq", "response_bytes",
                                         "latency_ms", "outcome", "isError")} for c in calls],
        "call_outcomes": dict(Counter(c["outcome"] for c in calls)),
    }
    out["distinct_clientInfo"] = [json.loads(x) for x in out["distinct_clientInfo"]]
    if extra:
        out.update(extra)
    if expected_problems is not None:
        got = sorted((p["rule"], p["tool"] or "") for p in problems)
        want = sorted((r, t or "") for r, t in expected_problems)
        out["seeded_problems_planned"] = [{"rule": r, "tool": t} for r, t in expected_problems]
        out["seeded_problems_check"] = "ok" if got == want else {"planned": want, "found": got}
        if got != want:
            raise SystemExit(f"{capture}: seeded problems differ from the plan:\n planned {want}\n found   {got}")
    return out


# ---------------- stdio ----------------
def stdio_frames(workdir, session):
    """Split c2s.log / s2c.log into lines; timestamp each line with the pipe read that completed it."""
    import os
    chunks = [json.loads(l) for l in open(os.path.join(workdir, "chunks.jsonl"))]
    frames = []
    for d in ("c2s", "s2c"):
        data = open(os.path.join(workdir, f"{d}.log"), "rb").read()
        # cumulative byte ends per chunk
        ends, pos = [], 0
        for c in chunks:
            if c["dir"] == d:
                pos += c["n"]
                ends.append((pos, c["ts_us"]))
        assert pos == len(data), (d, pos, len(data))

        def ts_at(byte_index):
            for e, t in ends:
                if byte_index < e:
                    return t
            return ends[-1][1]
        off = 0
        while off < len(data):
            nl = data.find(b"\n", off)
            if nl < 0:
                line, eol, nxt, partial = data[off:], b"", len(data), True
            else:
                line, eol, nxt, partial = data[off:nl], b"\n", nl + 1, False
            if line.endswith(b"\r"):
                line, eol = line[:-1], b"\r" + eol
            fr = {"session": session, "dir": d, "raw": line, "offset": off, "eol": eol.decode(),
                  "ts_us": ts_at(nxt - 1), "first_byte_ts_us": ts_at(off)}
            if partial:
                fr["partial"] = True
            frames.append(fr)
            off = nxt
    frames.sort(key=lambda f: (f["ts_us"], 0 if f["dir"] == "c2s" else 1, f["offset"]))
    return frames


def transcript_records(frames):
    out = []
    for f in frames:
        r = {"seq": f["seq"], "ts": iso(f["ts_us"]), "ts_us": f["ts_us"], "dir": f["dir"], "session": f["session"], "len": len(f["raw"])}
        for k in ("offset", "eol", "partial", "http_ex", "carrier"):
            if k in f:
                r[k] = f[k]
        r["raw"] = f["raw"].decode("utf-8")
        out.append(r)
    return out
