#!/usr/bin/env python3
"""Writes the embedded-log samples: one file per log style that embeds whole JSON-RPC
messages in its lines, plus truth.json. Deterministic (no clock, no randomness).

The messages are not written by hand: they are the lines of a real recorded stdio session
(samples/stdio_py, Python `mcp` 1.30.0 client and server), put back in conversation order
(each request, then its cancellation if any, then its answer). Only the log prefixes around
them are formatted here, each after a public source cited in samples/README.md.

truth.json is computed from what this script wrote, never from mcpsift: per file, every
message (1-based line, direction, kind, method, id, bytes of the message as recorded),
every event line (line, level shown or null), the requests unanswered where the file ends
with no close or error line after them (`unanswered_at_end`) and those unanswered with a
close line after them (`lost`), the markup lines (fences, labels, headers), and `problems`
(a `_meta.truncated` result, a call cancelled after a timeout, a lost call; with the client
the file's initialize names, `?` when it has none).
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "stdio_py")
BASE_US = 1_796_119_200_000_000  # 2026-12-01T10:00:00Z
STEP_US = 50_000


def conversation():
    """(direction, raw bytes, parsed) in conversation order, from the recorded tee logs."""
    c2s = [l for l in open(os.path.join(SOURCE, "c2s.log"), "rb").read().split(b"\n") if l]
    s2c = [l for l in open(os.path.join(SOURCE, "s2c.log"), "rb").read().split(b"\n") if l]
    answers = {}
    for raw in s2c:
        try:
            m = json.loads(raw)
        except ValueError:
            continue  # the server's banner line: not a message
        answers[m.get("id")] = raw
    out = []
    for raw in c2s:
        m = json.loads(raw)
        out.append(("c2s", raw, m))
        if "id" in m and m.get("method") and m["id"] in answers:
            cancels = [r for r in c2s if json.loads(r).get("method") == "notifications/cancelled" and json.loads(r)["params"]["requestId"] == m["id"]]
            if cancels:
                continue  # the answer follows the cancellation
            out.append(("s2c", answers[m["id"]], json.loads(answers[m["id"]])))
        if m.get("method") == "notifications/cancelled":
            rid = m["params"]["requestId"]
            out.append(("s2c", answers[rid], json.loads(answers[rid])))
    return out


def kind_of(m):
    if "method" in m:
        return "request" if "id" in m else "notification"
    return "error" if "error" in m else "response"


def ts(i, style):
    us = BASE_US + i * STEP_US
    sec, frac = divmod(us, 1_000_000)
    import time as _t
    g = _t.gmtime(sec)
    if style == "rfc3339_us":
        return _t.strftime("%Y-%m-%dT%H:%M:%S", g) + ".%06dZ" % frac
    if style == "python":
        return _t.strftime("%Y-%m-%d %H:%M:%S", g) + ",%03d" % (frac // 1000)
    if style == "go":
        return _t.strftime("%Y/%m/%d %H:%M:%S", g)
    if style == "rfc3339_ms":
        return _t.strftime("%Y-%m-%dT%H:%M:%S", g) + ".%03dZ" % (frac // 1000)
    raise ValueError(style)


class Writer:
    """Collects a file's lines and its truth."""

    def __init__(self, name, style):
        self.name, self.style = name, style
        self.lines = []
        self.messages = []
        self.events = []
        self.markup = 0
        self.pending = {}  # request id -> line, unanswered so far
        self.lost = []
        self.tools = {}  # request id -> tool name
        self.client = {"name": "?", "version": "?"}  # from initialize, when the file has it
        self.problems = []

    def message(self, text, direction, m, raw, pretty_lines=1):
        line = len(self.lines) + 1
        self.lines.extend(text.split("\n"))
        entry = {"line": line, "direction": direction, "kind": kind_of(m), "method": m.get("method"), "id": m.get("id"),
                 "bytes": None if pretty_lines > 1 else len(raw)}
        if pretty_lines > 1:
            entry["physical_lines"] = pretty_lines
        self.messages.append(entry)
        if entry["kind"] == "request":
            self.pending[m["id"]] = line
            if m["method"] == "tools/call":
                self.tools[m["id"]] = m["params"]["name"]
            if m["method"] == "initialize":
                self.client = dict(m["params"]["clientInfo"])
        if entry["kind"] == "response" and (m.get("result") or {}).get("_meta", {}).get("truncated") is True and m["id"] in self.tools:
            self.problems.append({"rule": "result_truncated", "tool": self.tools[m["id"]], "request_id": m["id"], "frame_bytes": len(raw)})
        if m.get("method") == "notifications/cancelled" and "timed out" in m["params"].get("reason", "") and m["params"]["requestId"] in self.tools:
            rid = m["params"]["requestId"]
            self.problems.append({"rule": "request_cancelled", "tool": self.tools[rid], "request_id": rid})
        elif entry["kind"] in ("response", "error"):
            self.pending.pop(m.get("id"), None)
        elif m.get("method") == "notifications/cancelled":
            self.pending.pop(m["params"]["requestId"], None)

    def event(self, text, level, closes=False):
        self.lines.append(text)
        self.events.append({"line": len(self.lines), "level": level})
        if closes:
            self.lost.extend(sorted(self.pending))
            for rid in sorted(self.pending):
                self.problems.append({"rule": "call_lost", "tool": self.tools.get(rid), "request_id": rid})
            self.pending.clear()

    def markup_line(self, text):
        self.lines.append(text)
        self.markup += 1

    def write(self):
        with open(os.path.join(HERE, self.name), "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(self.lines) + "\n")
        return {
            "style": self.style,
            "physical_lines": len(self.lines),
            "messages": self.messages,
            "events": self.events,
            "markup_lines": self.markup,
            "unanswered_at_end": sorted(self.pending),
            "lost": self.lost,
            "problems": [dict(p, client=self.client) for p in self.problems],
        }


def text_of(raw):
    return raw.decode("utf-8")


def docker_compose(conv):
    w = Writer("docker_compose.log", "docker compose logs: `service-1  | ` before each line (Python logging format inside)")
    w.event("web-1          | INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)", "info")
    w.event("billing-mcp-1  | billing-exporter 0.4.0: starting MCP server on stdio (log level INFO)", None)
    for i, (d, raw, m) in enumerate(conv):
        verb = "Received message" if d == "c2s" else "Sending message"
        w.message(f"billing-mcp-1  | {ts(i, 'python')} - mcp.server.lowlevel.server - DEBUG - {verb}: {text_of(raw)}", d, m, raw)
        if i == 3:
            w.event("web-1          | INFO:     172.18.0.1:51234 - \"GET /health HTTP/1.1\" 200 OK", "info")
    return w


def rust_tracing(conv):
    w = Writer("rust_tracing.log", "Rust tracing fmt: `<RFC3339 µs Z> LEVEL span{..}: target: sending|received message=<JSON>`")
    w.event(f"{ts(0, 'rfc3339_us')}  INFO rmcp::service: client started", "info")
    for i, (d, raw, m) in enumerate(conv):
        verb = "sending message" if d == "c2s" else "received message"
        w.message(f"{ts(i, 'rfc3339_us')} DEBUG client{{name=\"invoice-notebook\"}}: rmcp::service: {verb}={text_of(raw)}", d, m, raw)
    w.event(f"{ts(len(conv), 'rfc3339_us')}  INFO rmcp::service: input stream terminated", "info")
    return w


def go_log(conv):
    w = Writer("go_log.log", "Go log package: `YYYY/MM/DD HH:MM:SS -> <JSON>` / `<- <JSON>`, a close after an unanswered request")
    cut = next(i for i, (d, raw, m) in enumerate(conv) if m.get("id") == 4 and d == "c2s")
    for i, (d, raw, m) in enumerate(conv[: cut + 1]):
        arrow = "->" if d == "c2s" else "<-"
        w.message(f"{ts(i, 'go')} {arrow} {text_of(raw)}", d, m, raw)
    w.event(f"{ts(cut + 1, 'go')} transport error: connection closed: EOF", None, closes=True)
    return w


def python_basic(conv):
    w = Writer("python_basic.log", "Python logging.basicConfig: `LEVEL:logger:text`, client side")
    w.event("INFO:billing:billing-exporter 0.4.0: starting MCP server on stdio (log level INFO)", "info")
    for i, (d, raw, m) in enumerate(conv):
        text = f"DEBUG:mcp.client.stdio:Sending client message: {text_of(raw)}" if d == "c2s" else f"DEBUG:mcp.client.session:Received server message: {text_of(raw)}"
        w.message(text, d, m, raw)
    w.event("WARNING:mcp.client.stdio:Process group termination timed out, sending SIGKILL", "warning")
    return w


def python_formatted(conv):
    w = Writer("python_formatted.log", "Python logging `%(asctime)s - %(name)s - %(levelname)s - %(message)s`, server side, one message pretty-printed")
    w.event(f"{ts(0, 'python')} - mcp.server.lowlevel.server - INFO - Processing request of type ListToolsRequest", "info")
    for i, (d, raw, m) in enumerate(conv):
        verb = "Received message" if d == "c2s" else "Sending message"
        head = f"{ts(i, 'python')} - mcp.server.lowlevel.server - DEBUG - {verb}: "
        if m.get("id") == 1 and d == "s2c":
            pretty = json.dumps(m, indent=2, ensure_ascii=False)
            w.message(head + pretty, d, m, raw, pretty_lines=pretty.count("\n") + 1)
        else:
            w.message(head + text_of(raw), d, m, raw)
    return w


def jsonl_field(conv):
    w = Writer("jsonl_field.log", "JSON-lines structured log (Go slog / structlog style): the message as an escaped string field")
    w.event(json.dumps({"time": ts(0, "rfc3339_ms"), "level": "INFO", "logger": "mcp.server", "msg": "server session connected"}), "info")
    for i, (d, raw, m) in enumerate(conv):
        rec = {"time": ts(i, "rfc3339_ms"), "level": "DEBUG", "logger": "mcp.server", "msg": "received" if d == "c2s" else "sending", "payload": text_of(raw)}
        w.message(json.dumps(rec, ensure_ascii=False), d, m, raw)
    return w


def sse_chunks(conv):
    w = Writer("python_sse_chunks.log", "Python server debug log of Streamable HTTP: requests logged as JSON, answers as sse_starlette `chunk: b'...'` bytes reprs")
    for i, (d, raw, m) in enumerate(conv):
        if d == "c2s":
            w.message(f"DEBUG:mcp.server.streamable_http:Received message from client: {text_of(raw)}", d, m, raw)
        else:
            chunk = b"event: message\r\ndata: " + raw + b"\r\n\r\n"
            w.message(f"DEBUG:sse_starlette.sse:chunk: {chunk!r}", d, m, raw)
    return w


def pasted(conv):
    w = Writer("pasted_excerpt.md", "a markdown paste: heading, `tail -f` header, fences, request/response labels, indented and pretty-printed messages")
    w.markup_line("## What the server got")
    w.markup_line("==> billing-server.log <==")
    w.markup_line("```json")
    picked = [(d, raw, m) for d, raw, m in conv if m.get("id") in (2, 3)]
    for d, raw, m in picked:
        w.markup_line("Request:" if d == "c2s" else "Response:")
        if m.get("id") == 3 and d == "s2c":
            pretty = json.dumps(m, indent=2, ensure_ascii=False)
            w.message("\n".join("    " + l for l in pretty.split("\n")), d, m, raw, pretty_lines=pretty.count("\n") + 1)
        else:
            w.message("    " + text_of(raw), d, m, raw)
    w.markup_line("```")
    return w


def excerpt(conv):
    w = Writer("excerpt_unanswered.log", "a cut excerpt of a tracing log: the last request is still unanswered where the paste ends")
    cut = next(i for i, (d, raw, m) in enumerate(conv) if m.get("id") == 6 and d == "c2s")
    for i, (d, raw, m) in enumerate(conv[3: cut + 1], start=3):
        verb = "sending message" if d == "c2s" else "received message"
        w.message(f"{ts(i, 'rfc3339_us')} DEBUG client{{name=\"invoice-notebook\"}}: rmcp::service: {verb}={text_of(raw)}", d, m, raw)
    return w


def main():
    conv = conversation()
    truth = {
        "generated_by": "samples/embedded_log/make.py: log prefixes formatted around the messages of samples/stdio_py (real recorded session); not from mcpsift",
        "frame_definition": "one logged message; bytes = UTF-8 bytes of the recorded stdio line (null for pretty-printed ones)",
        "files": {},
    }
    for make in (docker_compose, rust_tracing, go_log, python_basic, python_formatted, jsonl_field, sse_chunks, pasted, excerpt):
        w = make(conv)
        truth["files"][w.name] = w.write()
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
