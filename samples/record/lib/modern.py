"""2026-07-28 facts for the truth files, computed from the recorded bytes (never from mcpsift):
per-request `_meta` (protocol version, clientInfo), `resultType`, multi-round-trip chains
(an `input_required` result and the retries carrying its `requestState`), the negotiation
(`server/discover` answered, or the `initialize` fallback), routing headers against the body
(HTTP), and SSE events over the Python client's 1 MiB cap."""
import base64, json, re
from collections import Counter

META_PV = "io.modelcontextprotocol/protocolVersion"
META_CI = "io.modelcontextprotocol/clientInfo"
PY_SSE_EVENT_LIMIT = 1024 * 1024      # mcp 2.x DEFAULT_MAX_SSE_EVENT_SIZE
SENTINEL = re.compile(r"^=\?base64\?([A-Za-z0-9+/=]*)\?=$")
NAME_KEY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def decode_header(v):
    if v is None:
        return None
    m = SENTINEL.match(v)
    return base64.b64decode(m.group(1)).decode("utf-8") if m else v


def modern_facts(frames, tool_schemas=None):
    """frames: the analysed frame list (seq, dir, kind, raw, optional req_headers)."""
    msgs = {}
    for f in frames:
        try:
            msgs[f["seq"]] = json.loads(f["raw"])
        except Exception:
            pass
    requests, by_key = [], {}
    for f in frames:
        m = msgs.get(f["seq"])
        if f["kind"] == "request" and f["dir"] == "c2s":
            p = m.get("params") or {}
            meta = p.get("_meta") or {}
            r = {"seq": f["seq"], "id": m["id"], "method": m["method"], "tool": p.get("name") if m["method"] == "tools/call" else None,
                 "protocolVersion_meta": meta.get(META_PV), "clientInfo_meta": meta.get(META_CI),
                 "requestState": p.get("requestState"), "inputResponses": p.get("inputResponses"), "bytes": len(f["raw"])}
            if f.get("http_ex") is not None:
                r["http_ex"] = f["http_ex"]
            requests.append(r)
            by_key[(f.get("http_ex"), json.dumps(m["id"]))] = r
    # responses: by exchange on HTTP (ids repeat across clients on one connection), else by id
    for f in frames:
        if f["kind"] not in ("response", "error") or f["dir"] != "s2c":
            continue
        m = msgs[f["seq"]]
        r = by_key.get((f.get("http_ex"), json.dumps(m.get("id"))))
        if r is None or "response_seq" in r:
            continue
        r["response_seq"], r["response_bytes"] = f["seq"], len(f["raw"])
        if f["kind"] == "error":
            r["error"] = m["error"]
            r["result_type"] = None
        else:
            res = m["result"]
            r["result_type"] = res.get("resultType")
            r["is_error"] = res.get("isError") is True
            r["structuredContent"] = "structuredContent" in res
            if res.get("resultType") == "input_required":
                r["input_request_keys"] = sorted((res.get("inputRequests") or {}).keys())
                r["next_requestState"] = res.get("requestState")
            if m.get("result", {}).get("_meta", {}).get("io.modelcontextprotocol/serverInfo"):
                r["serverInfo_meta"] = res["_meta"]["io.modelcontextprotocol/serverInfo"]
            for k in ("ttlMs", "cacheScope", "supportedVersions"):
                if k in res:
                    r[k] = res[k]
    # multi-round-trip chains: a retry joins the chain whose input_required result issued its requestState
    issued = {}
    chains = []
    for r in requests:
        st = r.get("requestState")
        if st is not None and st in issued:
            ch = issued.pop(st)
            ch["rounds"].append(r)
        elif r["method"] in ("tools/call", "prompts/get", "resources/read"):
            ch = {"rounds": [r]}
            chains.append(ch)
        else:
            continue
        if r.get("result_type") == "input_required" and r.get("next_requestState"):
            issued[r["next_requestState"]] = ch
    chain_rows = []
    for i, ch in enumerate(chains):
        rs = ch["rounds"]
        for n, r in enumerate(rs):
            r["chain"], r["round"] = i, n + 1
        last = rs[-1]
        chain_rows.append({"chain": i, "method": rs[0]["method"], "tool": rs[0]["tool"], "ids": [r["id"] for r in rs],
                           "seqs": [r["seq"] for r in rs], "rounds": len(rs), "result_types": [r.get("result_type") for r in rs],
                           "input_request_keys": [r.get("input_request_keys") for r in rs[:-1]],
                           "input_actions": [{k: v.get("action") for k, v in (r.get("inputResponses") or {}).items()} for r in rs[1:]],
                           "final": "rpc_error" if "error" in last else ("no_response" if "response_seq" not in last else
                                    ("tool_error" if last.get("is_error") else last.get("result_type"))),
                           "final_structuredContent": last.get("structuredContent")})
    multi = [c for c in chain_rows if c["rounds"] > 1]
    # negotiation
    disc = [r for r in requests if r["method"] == "server/discover"]
    init = [r for r in requests if r["method"] == "initialize"]
    answered = [r for r in disc if r.get("result_type") is not None and "error" not in r]
    with_meta = [r for r in requests if r["protocolVersion_meta"] is not None]
    # the era is what was answered: a discover probe the server rejected does not make a conversation stateless
    modern_answered = [r for r in with_meta if r.get("result_type") is not None]
    init_answered = [r for r in init if "response_seq" in r and "error" not in r]
    era = ("mixed" if modern_answered and init_answered else "stateless" if modern_answered else
           "handshake" if init_answered else None)
    negotiation = {"discover_requests": len(disc), "discover_answered": len(answered),
                   "discover_errors": [r.get("error") for r in disc if "error" in r],
                   "initialize_requests": len(init),
                   "outcome": "discover" if answered else ("fallback_initialize" if disc and init else ("initialize" if init else None)),
                   "protocol_era": era,
                   "requests_with_protocol_version_meta": len(with_meta),
                   "requests_without_protocol_version_meta": len(requests) - len(with_meta)}
    idents = Counter(json.dumps(r["clientInfo_meta"], sort_keys=True) for r in requests if r["clientInfo_meta"])
    out = {
        "negotiation": negotiation,
        "client_identities_from_meta": [{"clientInfo": json.loads(k), "requests": n} for k, n in sorted(idents.items())],
        "result_types": dict(Counter(str(r.get("result_type")) for r in requests if "response_seq" in r and "error" not in r)),
        "mrtr_chains": multi,
        "logical_calls": {"tools/call requests": sum(1 for r in requests if r["method"] == "tools/call"),
                          "tools/call logical calls": sum(1 for c in chain_rows if c["method"] == "tools/call"),
                          "input_required rounds": sum(1 for r in requests if r.get("result_type") == "input_required")},
        "list_results_cache": [{"seq": r["response_seq"], "method": r["method"], "ttlMs": r.get("ttlMs"), "cacheScope": r.get("cacheScope")}
                               for r in requests if r["method"].endswith("/list") and "response_seq" in r],
        "requests": [{k: r.get(k) for k in ("seq", "id", "method", "tool", "protocolVersion_meta", "clientInfo_meta", "chain", "round",
                                             "response_seq", "result_type", "error", "http_ex")} for r in requests],
    }
    # routing headers (HTTP)
    hdr_rows, mism = [], []
    for f in frames:
        h = f.get("req_headers")
        if h is None or f["dir"] != "c2s" or f["kind"] not in ("request", "notification"):
            continue
        m = msgs[f["seq"]]
        p = m.get("params") or {}
        params = {k[len("mcp-param-"):]: v for k, v in h.items() if k.startswith("mcp-param-")}
        row = {"seq": f["seq"], "http_ex": f["http_ex"], "mcp-method": h.get("mcp-method"), "mcp-name": h.get("mcp-name"),
               "mcp-protocol-version": h.get("mcp-protocol-version"), "mcp-param": params,
               "mcp-param-decoded": {k: decode_header(v) for k, v in params.items()}}
        hdr_rows.append(row)
        why = []
        if h.get("mcp-method") != m.get("method"):
            why.append("Mcp-Method")
        if h.get("mcp-protocol-version") != (p.get("_meta") or {}).get(META_PV):
            why.append("MCP-Protocol-Version")
        nk = NAME_KEY.get(m.get("method"))
        if nk and p.get(nk) is not None and decode_header(h.get("mcp-name")) != p.get(nk):
            why.append("Mcp-Name")
        schema = (tool_schemas or {}).get(p.get("name")) if m.get("method") == "tools/call" else None
        for prop, ps in ((schema or {}).get("properties") or {}).items():
            tok = ps.get("x-mcp-header") if isinstance(ps, dict) else None
            if tok is None:
                continue
            val = (p.get("arguments") or {}).get(prop)
            hv = decode_header(params.get(tok.lower()))
            if (val is None) != (hv is None) or (val is not None and str(val) != hv):
                why.append(f"Mcp-Param-{tok}")
        if why:
            mism.append({"seq": f["seq"], "http_ex": f["http_ex"], "headers": why})
    if hdr_rows:
        out["routing_headers"] = hdr_rows
        out["header_mismatches"] = mism
        out["mcp_errors_32020_32022"] = [{"request_seq": r["seq"], "response_seq": r["response_seq"], "tool": r["tool"], "error": r["error"]}
                                         for r in requests if "error" in r and r["error"].get("code") in (-32020, -32021, -32022)]
    out["frames_over_python_sse_event_limit"] = [
        {"seq": f["seq"], "bytes": len(f["raw"]), "carrier": f.get("carrier"), "limit_bytes": PY_SSE_EVENT_LIMIT}
        for f in frames if f.get("carrier", "").startswith("sse") and len(f["raw"]) > PY_SSE_EVENT_LIMIT]
    out["problems"] = modern_problems(out, requests, frames)
    return out


def modern_problems(out, requests, frames):
    """Problems a 2026-07-28 analyser must find: routing headers disagreeing with the body (the
    server answers -32020), and SSE events the Python client rejects (over 1 MiB)."""
    by_seq = {r["seq"]: r for r in requests}
    by_resp = {r.get("response_seq"): r for r in requests if "response_seq" in r}
    probs = []
    for m in out.get("header_mismatches", []):
        r = by_seq[m["seq"]]
        probs.append({"rule": "header_mismatch", "client": r["clientInfo_meta"], "tool": r["tool"], "request_id": r["id"],
                      "request_seq": r["seq"], "response_seq": r.get("response_seq"), "frame_bytes": r["bytes"],
                      "detail": {"headers": m["headers"], "answered_with": r.get("error")}})
    for g in out["frames_over_python_sse_event_limit"]:
        r = by_resp.get(g["seq"])
        probs.append({"rule": "frame_over_python_sse_event_limit", "client": r and r["clientInfo_meta"], "tool": r and r["tool"],
                      "request_id": r and r["id"], "response_seq": g["seq"], "frame_bytes": g["bytes"],
                      "detail": {"limit_bytes": g["limit_bytes"], "carrier": g["carrier"]}})
    return probs


def client_from_meta(problems, modern):
    """Fill a problem's client from the per-request `_meta` clientInfo (there is no initialize)."""
    reqs = modern["requests"]
    for p in problems:
        if p.get("client") and p["client"].get("name"):
            continue
        r = next((r for r in reqs if r["seq"] == p.get("request_seq") or (r.get("response_seq") is not None and r["response_seq"] == p.get("response_seq"))), None)
        ci = (r or {}).get("clientInfo_meta") or {}
        p["client"] = {"name": ci.get("name"), "version": ci.get("version")}
