"""samples/tool_change: one server (`inventory-server`) recorded as release 1.4.0 and then 1.5.0,
two real stdio sessions (tee byte logs), shipped as raw logs and as one Claude Desktop
per-server host log; truth.json holds both tool lists and their diff, computed from the bytes.
usage: tool_change.py <workdir with v1/ and v2/> <samples/tool_change>"""
import json, os, shutil, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import analyze, stdio_frames, iso  # noqa: E402
from build import desktop_line, desktop_message, dump, load_versions, sha  # noqa: E402

SERVER = "inventory"            # the host's config key: mcp-server-inventory.log
SESSIONS = [("v1", "1.4.0"), ("v2", "1.5.0")]
TOOL_KEYS = ("name", "description", "inputSchema", "outputSchema", "annotations")

# The planned differences between the two tools/list results (what inventory_server.py was written
# to change). The generic diff below must find exactly these, or the sample is not written.
PLANNED = [
    {"tool": "adjust_stock", "change": "changed", "fields": [
        {"field": "inputSchema.properties.quantity.type", "from": "integer", "to": "string"},
        {"field": "inputSchema.properties.reason", "added": True},
        {"field": "inputSchema.required", "added": ["reason"]}]},
    {"tool": "bulk_import", "change": "added"},
    {"tool": "delete_item", "change": "changed", "fields": [
        {"field": "annotations.destructiveHint", "from": False, "to": True}]},
    {"tool": "get_item", "change": "changed", "fields": [
        {"field": "outputSchema.properties.warehouse", "added": True}]},
    {"tool": "legacy_export", "change": "removed"},
    {"tool": "search_items", "change": "changed", "fields": [
        {"field": "description", "delta_chars": 37}]},
]
PLANNED_UNCHANGED = ["ping"]


def scalar(v):
    return not isinstance(v, (dict, list))


def json_diff(a, b, path):
    """Generic structural diff of two JSON values. Leaves: {field, from, to}; object keys only on one
    side: {field, added|removed: true}; arrays of scalars (e.g. `required`) compared as sets:
    {field, added: [...], removed: [...]}; a string field named `description`: {field, delta_chars}."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            p = f"{path}.{k}" if path else k
            if k not in b:
                out.append({"field": p, "removed": True})
            elif k not in a:
                out.append({"field": p, "added": True})
            else:
                out += json_diff(a[k], b[k], p)
        return out
    if isinstance(a, list) and isinstance(b, list) and all(map(scalar, a + b)):
        if a == b:
            return []
        add = [x for x in b if x not in a]
        rem = [x for x in a if x not in b]
        if not add and not rem:
            return [{"field": path, "from": a, "to": b}]      # same members, new order
        d = {"field": path}
        if add:
            d["added"] = add
        if rem:
            d["removed"] = rem
        return [d]
    if a == b and type(a) is type(b):
        return []
    if path.rsplit(".", 1)[-1] == "description" and isinstance(a, str) and isinstance(b, str):
        return [{"field": path, "delta_chars": len(b) - len(a)}]
    return [{"field": path, "from": a, "to": b}]


def tool_changes(old, new):
    """old/new: lists of tool definitions (as listed). Returns (changes, unchanged tool names)."""
    o, n = {t["name"]: t for t in old}, {t["name"]: t for t in new}
    changes, same = [], []
    for name in list(o) + [x for x in n if x not in o]:
        if name not in n:
            changes.append({"tool": name, "change": "removed"})
        elif name not in o:
            changes.append({"tool": name, "change": "added"})
        else:
            f = json_diff({k: o[name].get(k) for k in o[name]}, {k: n[name].get(k) for k in n[name]}, "")
            if f:
                changes.append({"tool": name, "change": "changed", "fields": f})
            else:
                same.append(name)
    return changes, same


def norm(changes):
    key = lambda d: json.dumps(d, sort_keys=True)  # noqa: E731
    return sorted((dict(c, fields=sorted(c["fields"], key=key)) if "fields" in c else c for c in changes), key=key)


def session_facts(frames):
    """serverInfo, protocolVersion and the tools/list result of one session, from its frames."""
    init_id = list_id = None
    facts = {}
    for f in frames:
        m = json.loads(f["raw"])
        if f["dir"] == "c2s" and m.get("method") == "initialize":
            init_id = m["id"]
            facts["clientInfo"] = m["params"]["clientInfo"]
        elif f["dir"] == "c2s" and m.get("method") == "tools/list":
            list_id = m["id"]
        elif f["dir"] == "s2c" and "result" in m and m.get("id") == init_id:
            facts["serverInfo"] = m["result"]["serverInfo"]
            facts["protocolVersion"] = m["result"]["protocolVersion"]
        elif f["dir"] == "s2c" and "result" in m and m.get("id") == list_id:
            facts["tools_list_nextCursor"] = m["result"].get("nextCursor")
            facts["tools"] = [{k: t.get(k) for k in TOOL_KEYS} for t in m["result"]["tools"]]
            facts["tools_list_response_bytes"] = len(f["raw"])
    return facts


def parse_hostlog(path):
    """Read the written host log back: (session index, direction, JSON text) of every message line."""
    out, sess = [], -1
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.endswith(f"[{SERVER}] [info] Initializing server..."):
            sess += 1
        for who, d in (("client", "c2s"), ("server", "s2c")):
            tag = f"[{SERVER}] [info] Message from {who}: "
            if tag in line:
                body = line.split(tag, 1)[1]
                assert body.endswith(" { metadata: undefined }"), line[:80]
                out.append((sess, d, body[: -len(" { metadata: undefined }")]))
    return out


def build(work, out):
    per, all_frames, lines, logged = [], [], [], []
    for label, version in SESSIONS:
        w = os.path.join(work, label)
        frames = stdio_frames(w, label)
        if any(f.get("partial") for f in frames):
            raise SystemExit(f"{label}: a partial last line")
        ev = json.load(open(os.path.join(w, "shim_events.json")))
        t = {e["event"]: e["ts_us"] for e in ev}
        facts = session_facts(frames)
        if facts["serverInfo"] != {"name": "inventory-server", "version": version}:
            raise SystemExit(f"{label}: serverInfo {facts['serverInfo']}, wanted inventory-server {version}")
        per.append((label, w, frames, t, facts))
        all_frames += frames
    all_frames.sort(key=lambda f: (f["ts_us"], 0 if f["dir"] == "c2s" else 1, f["offset"]))
    if [f["session"] for f in all_frames] != sorted((f["session"] for f in all_frames)):
        raise SystemExit("the two sessions overlap in time")
    common = analyze(all_frames, "tool_change", "stdio (two sessions of one server)", [],
                     extra={"versions": load_versions()})

    # ---- the host log: both sessions in time order, every message line from the recorded bytes
    for label, w, frames, t, facts in per:
        first = frames[0]["ts_us"]
        lines.append(desktop_line(t["spawn"] - 2_000, SERVER, "info", "Initializing server..."))
        lines.append(desktop_line(max(t["spawn"], first - 500), SERVER, "info", "Server started and connected successfully"))
        for f in frames:
            lines.append(desktop_message(f["ts_us"], SERVER, f["dir"], f["raw"].decode()))
            m = json.loads(f["raw"])
            logged.append({"line": len(lines), "session": label, "seq": f["seq"], "dir": f["dir"],
                           "method": m.get("method"), "id": m.get("id"), "wire_bytes": len(f["raw"])})
        lines.append(desktop_line(t["c2s_eof"], SERVER, "info", "Client transport closed"))
        lines.append(desktop_line(t["s2c_eof"], SERVER, "info", "Server transport closed"))
    final, out = out, os.path.join(work, "sample")      # staged in the work dir: nothing lands in `final` unless every check passes
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    hl = os.path.join(out, "mcp-server-inventory.log")
    with open(hl, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    back = parse_hostlog(hl)
    want = [(i, f["dir"], f["raw"].decode()) for i, (_, _, frames, _, _) in enumerate(per) for f in frames]
    if back != want:
        raise SystemExit("the host log's messages are not the recorded lines")

    # ---- raw tee bytes of each session
    files = {}
    for label, w, *_ in per:
        os.makedirs(os.path.join(out, label), exist_ok=True)
        for n in ("c2s.log", "s2c.log"):
            shutil.copy(os.path.join(w, n), os.path.join(out, label, n))
            data = open(os.path.join(w, n), "rb").read()
            files[f"{label}/{n}"] = {"bytes": len(data), "lines": data.count(b"\n"), "sha256": sha(data)}

    # ---- the diff, from the recorded tools/list results; the host log must give the same
    (_, _, _, _, f1), (_, _, _, _, f2) = per
    changes, unchanged = tool_changes(f1["tools"], f2["tools"])
    hl_sessions = [session_facts([{"dir": d, "raw": body.encode()} for s, d, body in back if s == i]) for i in range(2)]
    if tool_changes(hl_sessions[0]["tools"], hl_sessions[1]["tools"]) != (changes, unchanged):
        raise SystemExit("the host log gives a different diff")
    check = "ok" if norm(changes) == norm(PLANNED) and unchanged == PLANNED_UNCHANGED else \
        {"planned": norm(PLANNED), "found": norm(changes), "unchanged": unchanged}
    if check != "ok":
        raise SystemExit("tool changes differ from the plan:\n" + json.dumps(check, indent=1))

    truth = {
        "capture": "tool_change",
        "generated_by": "samples/record/lib/tool_change.py: computed from the tee byte logs of two real stdio sessions "
                        "(mcp 1.30.0 ClientSession <-> low-level Server), not from mcpsift",
        "server": "inventory-server",
        "host_log_server_name": SERVER,
        "tool_change": {
            "sessions": [{"session": label, "clientInfo": fa["clientInfo"], "serverInfo": fa["serverInfo"],
                          "protocolVersion": fa["protocolVersion"], "initialize_request_ts": iso(fr[0]["ts_us"]),
                          "tools_list_response_bytes": fa["tools_list_response_bytes"],
                          "tools_list_nextCursor": fa["tools_list_nextCursor"],
                          "tool_names": [x["name"] for x in fa["tools"]], "tools": fa["tools"]}
                         for label, _, fr, _, fa in per],
            "from_version": f1["serverInfo"]["version"], "to_version": f2["serverInfo"]["version"],
            "changes": changes,
            "unchanged": unchanged,
            "diff_rules": "tools matched by name; fields compared over name, description, inputSchema, outputSchema, annotations "
                          "(null = absent); object keys on one side only -> added/removed: true; arrays of scalars as sets "
                          "(added/removed members); `description` strings -> delta_chars (new length - old length, in characters); "
                          "other leaves -> from/to",
            "planned_changes": PLANNED,
            "changes_check": check,
        },
        "files": {
            "mcp-server-inventory.log": {
                "format": "Claude Desktop per-server log: `<RFC3339 ms Z> [inventory] [info] Message from client|server: <JSON> "
                          "{ metadata: undefined }`; each session opens with `Initializing server...` and `Server started and "
                          "connected successfully` and ends with `Client transport closed` (client closed stdin) and "
                          "`Server transport closed` (server stdout EOF); no message pretty-printed or cut",
                "bytes": os.path.getsize(hl), "entries": len(lines), "message_entries": len(logged),
                "initialize_requests_at_lines": [r["line"] for r in logged if r["method"] == "initialize"],
                "logged_messages": logged,
            },
            **files,
        },
        **{k: v for k, v in common.items() if k not in ("capture", "generated_by")},
    }
    dump(truth, os.path.join(out, "truth.json"))
    shutil.rmtree(final, ignore_errors=True)
    shutil.copytree(out, final)
    return truth


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
