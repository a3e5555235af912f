"""Build samples/stdio_ts2 and samples/http_ts2 (TS SDK 2.x, 2026-07-28) and their truth.json from
the recorded bytes (tee logs; HTTP exchanges checked against the pcap) and the driver's plan.
Never from mcpsift.
usage: build_ts2.py stdio <workdir> <out>
       build_ts2.py http <pcap name> <pcap> <workdir> <port> <out>"""
import base64, gzip, json, os, shutil, sys
from collections import Counter, defaultdict

LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")
sys.path.insert(0, LIB)
from truth import analyze, stdio_frames, iso, STDIO_LIMIT  # noqa: E402
from modern import modern_facts, client_from_meta, META_CI  # noqa: E402
from build import ship, dump, load_versions, http_frames, input_schemas  # noqa: E402

# the driver's plan (record/ts2/*_client.mjs); the problems found in the bytes must equal it
BIG_OK, BIG_OVER = 10_381_095, 11_534_336
CLIENTS = {"A": {"name": "bistro-frontdesk", "version": "5.2.0"}, "B": {"name": "bistro-kitchen-agent", "version": "0.9.1"}}
EXPECT = {
    "stdio_ts2": [("tools_list_page_overlap", None)] * 3 + [("tool_cursor_drift", "list_orders")] * 4 +
                 [("error_32020_then_relist", "query_region"), ("request_cancelled", "slow_report"),
                  ("frame_near_stdio_limit", "export_receipts"), ("frame_over_stdio_limit", "export_receipts"),
                  ("request_unanswered", "slow_report")],
    "http_ts2": [("tools_list_page_overlap", None)] * 3 + [("tool_cursor_drift", "list_orders")] * 4 +
                [("error_32020_then_relist", "query_region"), ("header_mismatch", "query_region"),
                 ("request_unanswered", "slow_report"), ("request_unanswered", "flaky_report"),
                 ("request_reissued_after_broken_stream", "flaky_report")],
}
WALK_TOOLS = {"list_orders": "id"}     # tool-level paginated lists: tool -> item key


def msg_of(f):
    try:
        return json.loads(f["raw"])
    except Exception:
        return None


def client_name(m):
    ci = ((m or {}).get("params") or {}).get("_meta", {}).get(META_CI) or {}
    return ci.get("name")


def conversations(frames, key):
    """Label every frame with the client (from the request's `_meta` clientInfo); responses take the
    label of the request they answer: key(f) gives the pairing key (stdio: id; HTTP: exchange)."""
    req_by_key = {}
    for f in frames:
        m = msg_of(f)
        if f["dir"] == "c2s" and m is not None:
            f["conversation"] = client_name(m)
            if "id" in m and "method" in m:
                req_by_key[key(f, m)] = f
    for f in frames:
        m = msg_of(f)
        if f["dir"] == "s2c":
            r = req_by_key.get(key(f, m)) if m is not None else None
            f["conversation"] = r["conversation"] if r else None


def walks_of(frames):
    """List walks per (client, method or tool): a request without a cursor starts a walk, one whose
    cursor is the previous page's cursor_out continues it."""
    reqs = {}
    for f in frames:
        m = msg_of(f)
        if m is None:
            continue
        if f["dir"] == "c2s" and "method" in m and "id" in m:
            reqs[(f["conversation"], f.get("http_ex"), json.dumps(m["id"]))] = (f, m)
    walks, open_walk, last_error = [], {}, {}
    for f in frames:
        m = msg_of(f)
        if m is None or f["dir"] != "s2c" or "method" in m:
            continue
        hit = reqs.get((f["conversation"], f.get("http_ex"), json.dumps(m.get("id"))))
        if not hit:
            continue
        rf, rm = hit
        p = rm.get("params") or {}
        conv = f["conversation"]
        if "error" in m:
            if m["error"].get("code") == -32020:
                last_error[conv] = {"seq": f["seq"], "request_seq": rf["seq"], "tool": p.get("name"), "id": rm["id"]}
            continue
        res = m.get("result") or {}
        if rm["method"] == "tools/list":
            what, cin, cout = "tools/list", p.get("cursor"), res.get("nextCursor")
            items = [t.get("name") for t in res.get("tools", [])]
        elif rm["method"] == "tools/call" and p.get("name") in WALK_TOOLS and isinstance(res.get("structuredContent"), dict):
            what = p["name"]
            sc = res["structuredContent"]
            cin, cout = (p.get("arguments") or {}).get("cursor"), sc.get("nextCursor")
            items = [it.get(WALK_TOOLS[what]) for it in sc.get("items", []) if isinstance(it, dict)]
        else:
            continue
        k = (conv, what)
        w = open_walk.get(k)
        if cin is None or w is None or w["pages"][-1]["cursor_out"] != cin:
            w = {"conversation_client": conv, "method" if what == "tools/list" else "tool": what, "pages": [],
                 "started_by": "cursor" if cin is not None else "first_page"}
            if what == "tools/list" and conv in last_error:
                w["after_error_32020"] = last_error.pop(conv)
            walks.append(w)
            open_walk[k] = w
        seen = {it for pg in w["pages"] for it in pg["items"]}
        w["pages"].append({"rpc_id": rm["id"], "request_seq": rf["seq"], "response_seq": f["seq"], "http_ex": f.get("http_ex"),
                           "cursor_in": cin, "cursor_out": cout, "items": items,
                           "repeated": [it for it in items if it in seen], "response_bytes": len(f["raw"])})
    for i, w in enumerate(walks):
        w["walk"] = i
        allit = [it for pg in w["pages"] for it in pg["items"]]
        w.update(pages_count=len(w["pages"]), items_returned=len(allit), distinct_items=len(set(allit)),
                 repeated_items=len(allit) - len(set(allit)), complete=w["pages"][-1]["cursor_out"] is None)
        # a walk repeating the cursor strings of an earlier walk is a new walk, not a loop
        cur = [pg["cursor_in"] for pg in w["pages"] if pg["cursor_in"] is not None]
        w["same_cursors_as_walk"] = next((v["walk"] for v in walks[:i] if [pg["cursor_in"] for pg in v["pages"] if pg["cursor_in"] is not None] == cur and cur), None)
    return walks


def ts2_problems(frames, walks, reqs_modern):
    probs = []
    ci = lambda name: next((c for c in CLIENTS.values() if c["name"] == name), {"name": name, "version": None})  # noqa: E731
    for w in walks:
        for a, b in zip(w["pages"], w["pages"][1:]):
            if b["repeated"]:
                rule = "tools_list_page_overlap" if "method" in w else "tool_cursor_drift"
                probs.append({"rule": rule, "client": ci(w["conversation_client"]), "tool": w.get("tool"),
                              "request_id": a["rpc_id"], "request_seq": a["request_seq"], "response_seq": a["response_seq"],
                              "frame_bytes": a["response_bytes"],
                              "detail": {"walk": w["walk"], "items_returned": len(a["items"]), "next_cursor": a["cursor_out"],
                                         "next_page_repeats": b["repeated"]}})
    for w in walks:
        e = w.get("after_error_32020")
        if e:
            retry = next((r for r in reqs_modern if r["method"] == "tools/call" and r["tool"] == e["tool"] and r["seq"] > w["pages"][-1]["response_seq"]
                          and (r["clientInfo_meta"] or {}).get("name") == w["conversation_client"]), None)
            probs.append({"rule": "error_32020_then_relist", "client": ci(w["conversation_client"]), "tool": e["tool"], "request_id": e["id"],
                          "request_seq": e["request_seq"], "response_seq": e["seq"], "frame_bytes": len(frames[e["seq"]]["raw"]),
                          "detail": {"relist_walk": w["walk"], "relist_pages": w["pages_count"], "retry_id": retry and retry["id"],
                                     "retry_seq": retry and retry["seq"], "retry_outcome": retry and (retry.get("result_type") or retry.get("error"))}})
    return probs


def finish(t, frames, capture, extra_probs):
    t["modern"] = m = modern_facts(frames, input_schemas(frames))
    t["problems"] = t["problems"] + m.pop("problems") + extra_probs
    client_from_meta(t["problems"], m)
    t["problems"].sort(key=lambda p: (p.get("response_seq") or p.get("seq") or p.get("request_seq") or 0, p["rule"]))
    t["problem_counts"] = dict(sorted(Counter(p["rule"] for p in t["problems"]).items()))
    want = sorted((r, tl or "") for r, tl in EXPECT[capture])
    got = sorted((p["rule"], p["tool"] or "") for p in t["problems"])
    t["seeded_problems_planned"] = [{"rule": r, "tool": tl} for r, tl in EXPECT[capture]]
    t["seeded_problems_check"] = "ok" if got == want else {"planned": want, "found": got}
    if got != want:
        raise SystemExit(f"{capture}: problems differ from the plan:\n planned {want}\n found   {got}")


def frame_rows(frames):
    rows = []
    for f in frames:
        m = msg_of(f) or {}
        rows.append({"seq": f["seq"], "dir": f["dir"], "kind": f["kind"], "bytes": len(f["raw"]), "conversation_client": f["conversation"],
                     "meta_client": ((m.get("params") or {}).get("_meta") or {}).get(META_CI) if f["dir"] == "c2s" else None,
                     "method": m.get("method"), "id": m.get("id"), "tool": (m.get("params") or {}).get("name") if m.get("method") == "tools/call" else None,
                     **({"http_ex": f["http_ex"], "client_port": f.get("client_port"), "carrier": f.get("carrier")} if "http_ex" in f else {}),
                     "ts": iso(f["ts_us"])})
    return rows


def common_truth(t, frames, walks, observed):
    t["frames"] = frame_rows(frames)
    t["walks"] = walks
    t["walks_summary"] = [{"walk": w["walk"], "client": w["conversation_client"], "what": w.get("method") or w.get("tool"), "pages": w["pages_count"],
                           "items_returned": w["items_returned"], "distinct": w["distinct_items"], "repeated": w["repeated_items"],
                           "after_error_32020": bool(w.get("after_error_32020")), "same_cursors_as_walk": w["same_cursors_as_walk"]} for w in walks]
    t["conversations"] = {name: {"clientInfo": c, "frames": sum(1 for f in frames if f["conversation"] == c["name"]),
                                 "requests": sum(1 for f in frames if f["conversation"] == c["name"] and f["kind"] == "request")}
                          for name, c in CLIENTS.items()}
    t["frames_without_conversation"] = [f["seq"] for f in frames if f["conversation"] is None]
    t["client_observed"] = observed
    t["versions"] = load_versions()


# ---------------- stdio ----------------
def build_stdio(work, out):
    os.makedirs(out, exist_ok=True)
    frames = stdio_frames(work, "stdio-ts2")
    conversations(frames, lambda f, m: json.dumps(m.get("id")))
    files = [ship(os.path.join(work, n), out) for n in ("c2s.log", "s2c.log")]
    for n in ("server.stderr.log", "shim_events.json", "observed.json"):
        shutil.copy(os.path.join(work, n), os.path.join(out, n))
    observed = json.load(open(os.path.join(work, "observed.json")))
    t = analyze(frames, "stdio_ts2", "stdio", None, extra={"files": files})
    t["lines"] = {d: sum(1 for f in frames if f["dir"] == d) for d in ("c2s", "s2c")}
    walks = walks_of(frames)
    finish(t, frames, "stdio_ts2", ts2_problems(frames, walks, modern_facts(frames)["requests"]))
    common_truth(t, frames, walks, observed)
    # the big frames: exact sizes, and what the TS client did with them
    died = next((e for e in observed["events"] if e["kind"] == "onerror" and e["who"] == "stdio-transport"), None)
    big = []
    for f in frames:
        if len(f["raw"]) >= 1_000_000:
            req = next(c for c in t["calls"] if c.get("response_seq") == f["seq"])
            big.append({"seq": f["seq"], "bytes": len(f["raw"]), "line_bytes_with_newline": len(f["raw"]) + len(f["eol"]), "id": req["id"],
                        "tool": req["tool"], "conversation_client": f["conversation"], "pct_of_ts_stdio_limit": round(100 * len(f["raw"]) / STDIO_LIMIT, 3),
                        "over_ts_stdio_limit": len(f["raw"]) > STDIO_LIMIT,
                        "read_by_ts_client": len(f["raw"]) <= STDIO_LIMIT})
    assert [b["bytes"] for b in big] == [BIG_OK, BIG_OVER], big
    t["big_frames"] = big
    # the pipe's end: which requests were pending (no answer read) when the TS client dropped the connection
    unread = [c for c in t["calls"] if c["outcome"] != "cancelled" and (c.get("response_seq") is None or c["response_seq"] >= big[-1]["seq"])]
    t["pipe_dropped"] = {"error": died and died["detail"], "by": "StdioClientTransport ReadBuffer (TS client)",
                         "after_frame_seq": big[-1]["seq"],
                         "requests_without_an_answer_read_by_the_client": [{"id": c["id"], "tool": c["tool"], "seq": c["seq"],
                                                                             "conversation_client": frames[c["seq"]]["conversation"],
                                                                             "answer_on_wire_seq": c.get("response_seq")} for c in unread],
                         "clients_closed": sorted({e["who"] for e in observed["events"] if e["kind"] == "client_onclose"}),
                         "server_stdin_eof": True}
    t["wire_id_map"] = observed.get("wire_id_map")
    dump(t, os.path.join(out, "truth.json"))


# ---------------- HTTP ----------------
def build_http(fname, pcap, work, port, out):
    os.makedirs(out, exist_ok=True)
    shutil.copy(pcap, os.path.join(out, fname))
    rec = json.load(open(os.path.join(work, "http_exchanges.json")))
    srv = [json.loads(l) for l in open(os.path.join(work, "server_exchanges.jsonl"))]
    exs = rec["exchanges"]
    if len(srv) != len(exs):
        raise SystemExit(f"{len(exs)} client exchanges, {len(srv)} server exchanges")
    by_body = defaultdict(list)
    for s in srv:
        by_body[(s["method"], s["req_body"])].append(s)
    for e in exs:
        cands = by_body.get((e["method"], e.get("req_body") or ""), [])
        if len(cands) != 1:
            raise SystemExit(f"exchange {e['ex']}: {len(cands)} server records with the same request body")
        s = cands[0]
        client_body = b"".join(base64.b64decode(c["b64"]) for c in e["chunks"])
        server_body = b"".join(base64.b64decode(c["b64"]) for c in s["chunks"])
        if not server_body.startswith(client_body):
            raise SystemExit(f"exchange {e['ex']}: the client saw bytes the server did not send")
        e["client_port"] = s["client_port"]
        e["server_status"] = s.get("status")
        e["server_finished"] = s.get("finished")
        e["server_body_bytes"] = len(server_body)
    frames = http_frames(rec, "http-ts2")
    for f in frames:
        ex = exs[f["http_ex"]]
        f["client_port"] = ex["client_port"]
        if f["dir"] == "c2s":
            f["req_headers"] = ex["req_headers"]
    conversations(frames, lambda f, m: f["http_ex"])
    for f in frames:
        f["session"] = f["conversation"]     # request ids repeat across the two clients: pair per client
    from pcap_payload import tcp_streams
    streams = tcp_streams(pcap)
    missing = [i for i, f in enumerate(frames)
               if f["raw"] not in streams.get((f["client_port"], port) if f["dir"] == "c2s" else (port, f["client_port"]), b"")]
    if missing:
        raise SystemExit(f"{fname}: {len(missing)} of {len(frames)} frames are not in the pcap's TCP payload")
    observed = json.load(open(os.path.join(work, "observed.json")))
    t = analyze(frames, fname, "streamable-http (TS SDK 2.x McpServer via createMcpHandler, 2026-07-28)", None)
    walks = walks_of(frames)
    mreqs = modern_facts(frames, input_schemas(frames))["requests"]
    extra = ts2_problems(frames, walks, mreqs)
    # a request whose response stream broke (the connection died, not the client's abort), re-sent
    # later by the same client with the same method, name and arguments under a new id
    reissues = []
    for e in exs:
        if e.get("res_body_error") and not e.get("res_body_complete") and e.get("status") == 200:
            f = next(f for f in frames if f["http_ex"] == e["ex"] and f["dir"] == "c2s")
            m = msg_of(f)
            p = m["params"]
            later = next((g for g in frames if g["dir"] == "c2s" and g["seq"] > f["seq"] and g["conversation"] == f["conversation"]
                          and (msg_of(g) or {}).get("method") == m["method"] and msg_of(g)["params"].get("name") == p.get("name")
                          and msg_of(g)["params"].get("arguments") == p.get("arguments")), None)
            row = {"broken_http_ex": e["ex"], "broken_request_seq": f["seq"], "broken_id": m["id"], "tool": p.get("name"),
                   "stream_error_seen_by_client": e["res_body_error"], "client_port": e["client_port"],
                   "frames_received_before_break": [g["seq"] for g in frames if g["http_ex"] == e["ex"] and g["dir"] == "s2c"],
                   "reissue_request_seq": later and later["seq"], "reissue_id": later and msg_of(later)["id"],
                   "reissue_http_ex": later and later["http_ex"], "reissued_by": "driver (the SDK does not re-issue; see NOTES.md)",
                   "params_differ_only_in": sorted(k for k in set(p.get("_meta", {})) | set(msg_of(later)["params"].get("_meta", {}))
                                                   if p.get("_meta", {}).get(k) != msg_of(later)["params"].get("_meta", {}).get(k)) if later else None}
            reissues.append(row)
            if later:
                extra.append({"rule": "request_reissued_after_broken_stream", "client": None, "tool": p.get("name"), "request_id": m["id"],
                              "request_seq": f["seq"], "response_seq": None, "seq": later["seq"], "frame_bytes": len(later["raw"]), "detail": row})
    finish(t, frames, "http_ts2", extra)
    common_truth(t, frames, walks, observed)
    t["reissued_after_broken_stream"] = reissues
    conns = defaultdict(lambda: {"exchanges": [], "clients": set()})
    for e in exs:
        c = conns[e["client_port"]]
        c["exchanges"].append(e["ex"])
        f = next((f for f in frames if f["http_ex"] == e["ex"] and f["dir"] == "c2s"), None)
        if f and f["conversation"]:
            c["clients"].add(f["conversation"])
    t["tcp_connections"] = [{"client_port": p, "exchanges": v["exchanges"], "clients": sorted(v["clients"])} for p, v in sorted(conns.items())]
    t["tcp_connections_shared_by_both_clients"] = sum(1 for v in conns.values() if len(v["clients"]) == 2)
    t["http"] = {
        "port": port, "base_url": rec["base"], "exchanges": len(exs),
        "by_method_status": dict(Counter(f"{e['method']} {e['status'] if e.get('status') is not None else 'aborted-by-client'}" for e in exs)),
        "response_content_types": dict(Counter(((e.get("res_headers") or {}).get("content-type") or "none").split(";")[0] for e in exs)),
        "carriers": dict(Counter(f["carrier"] for f in frames)),
        "exchange_list": [{"ex": e["ex"], "who": e["who"], "method": e["method"], "client_port": e["client_port"], "status": e.get("status"),
                           "server_status": e["server_status"], "content_type": (e.get("res_headers") or {}).get("content-type"),
                           "mcp_headers": {k: v for k, v in e["req_headers"].items() if k.startswith("mcp-")},
                           "req_body_bytes": len(e["req_body"].encode()) if e.get("req_body") else 0,
                           "res_body_bytes_seen_by_client": sum(len(base64.b64decode(c["b64"])) for c in e["chunks"]),
                           "res_body_complete": e.get("res_body_complete"), "res_body_error": e.get("res_body_error"),
                           "fetch_error": e.get("fetch_error"), "server_finished": e["server_finished"]} for e in exs],
    }
    t["files"] = [{"name": fname, "bytes": os.path.getsize(os.path.join(out, fname))}]
    t["frames_verbatim_in_pcap"] = f"{len(frames)} of {len(frames)}"
    dump({"capture": "http_ts2", "generated_by": "samples/record/ts2/build_ts2.py (computed from the recorded HTTP exchanges, checked "
          "against the server's record and the pcap; not from mcpsift)", "files": {fname: t}}, os.path.join(out, "truth.json"))
    with open(os.path.join(out, fname.rsplit(".", 1)[0] + ".exchanges.json.gz"), "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=fh, mtime=0) as g:
            g.write(json.dumps(rec).encode())


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        build_stdio(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "http":
        build_http(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6])
    else:
        raise SystemExit(__doc__)
