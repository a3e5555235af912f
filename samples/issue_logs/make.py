#!/usr/bin/env python3
"""Writes samples of log shapes posted in public issues that mcpsift did not read, and
truth.json (deterministic; run from anywhere). Content is made up here; the shapes follow:

- claude_debug_banner.txt: `claude --debug` output starting with Claude Code's welcome box
  and tip, ending in `Connection failed` / `Error stack:` with a JS stack, as quoted in
  https://github.com/andycufari/ClaudePoint/issues/2
- unsupported_protocol_version.md: a fenced paste of a shell call whose JSON-RPC request and
  `-32022 Unsupported protocol version` error are wrapped over indented lines, as quoted in
  https://github.com/Higangssh/homebutler/issues/133
- output_schema_error.md: the TypeScript SDK's `MCP error -32602: Structured content does
  not match the tool's output schema: ...` wrapped over several lines (trailing spaces), each
  under its tool's name, as quoted in https://github.com/cyanheads/obsidian-mcp-server/issues/87
- jsonl_message_with_prefix.log: a JSON-lines server log whose `message` field holds a log
  line with the escaped message after its words (`"Received request: {\\"jsonrpc\\"...`);
  docker_json_file.log: the same records as docker's json-file driver stores them (each one
  escaped again in `log`, https://docs.docker.com/engine/logging/drivers/json-file/). No public
  issue quoting these two was found (searched issues and pages); issue is null for them.

truth.json is what this script wrote: per file its bytes, the issue, the JSON-RPC messages
(direction, kind, method, id, bytes, error code and message), the client the initialize
names, the events each line means (kind, server, error code, the phrase it carries) and the
bytes of terminal decoration (welcome box, tip).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def compact(v):
    return json.dumps(v, separators=(",", ":"))


def event(kind, server=None, error_code=None, phrase=None):
    return {"kind": kind, "server": server, "error_code": error_code, "phrase": phrase}


def message(direction, m, nbytes, method=None):
    kind = ("request" if "id" in m else "notification") if "method" in m else ("error" if "error" in m else "response")
    err = m.get("error") or {}
    return {"direction": direction, "kind": kind, "method": m.get("method", method), "id": m.get("id"),
            "bytes": nbytes, "error_code": err.get("code"), "error_message": err.get("message")}


def claude_debug_banner():
    box = [
        "\u256d" + "\u2500" * 51 + "\u256e",
        "\u2502 \u273b Welcome to Claude Code!                         \u2502",
        "\u2502" + " " * 51 + "\u2502",
        "\u2502   /help for help, /status for your current setup  \u2502",
        "\u2502" + " " * 51 + "\u2502",
        "\u2502   cwd: /Users/dev/Projects/ledger-app             \u2502",
        "\u2570" + "\u2500" * 51 + "\u256f",
    ]
    tip = " \u203b Tip: Run /mcp to see the state of each MCP server"
    cli = "file:///Users/dev/.nvm/versions/node/v22.11.0/lib/node_modules/@anthropic-ai/claude-code/cli.js"
    stack = [f"    at Qd1._onclose ({cli}:1358:17695)", f"    at _transport.onclose ({cli}:1358:17194)",
             f"    at ChildProcess.<anonymous> ({cli}:1360:2101)", "    at ChildProcess.emit (node:events:518:28)"]
    lines = ["dev@mac ledger-app % claude --debug"] + box + ["", tip]
    lines += ['[DEBUG] MCP server "invoice-search": Connection failed: McpError: MCP error -32000: Connection closed',
              '[DEBUG] MCP server "invoice-search": Error message: MCP error -32000: Connection closed',
              '[DEBUG] MCP server "invoice-search": Error stack: McpError: MCP error -32000: Connection closed'] + stack
    text = "\n".join(lines) + "\n"
    return text, {
        "issue": "https://github.com/andycufari/ClaudePoint/issues/2",
        "messages": [],
        "client": None,
        "events": [
            event("log"),
            event("connection_failed", "invoice-search", -32000, "Connection failed"),
            event("connection_closed", "invoice-search", -32000, "Error message"),
            event("connection_closed", "invoice-search", -32000, "Error stack"),
        ],
        "stack_lines_of_last_event": len(stack),
        "decoration_bytes": sum(len(l.encode()) for l in box + [tip]),
    }


def unsupported_protocol_version():
    req_lines = ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{',
                 '"io.modelcontextprotocol/protocolVersion":"2024-11-05",',
                 '"io.modelcontextprotocol/clientCapabilities":{}}}}']
    err_lines = ['{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version",',
                 '"data":{"requested":"2024-11-05",',
                 '"supported":["2026-07-28","2025-11-25","2025-06-18"]}}}']
    req_indent, err_indent = ["", "    ", "    "], ["", "  ", "          "]
    lines = ["## What breaks", "", "```",
             "$ echo '" + req_lines[0]] + [i + l for i, l in zip(req_indent[1:], req_lines[1:-1])] + [
             req_indent[-1] + req_lines[-1] + "' | ledger-mcp serve", ""] + [
             i + l for i, l in zip(err_indent, err_lines)] + ["```", ""]
    text = "\n".join(lines) + "\n"
    # A message's bytes: its lines joined by their newlines; the indentation a paste gives
    # its continuation lines is layout, not message.
    req_text, err_text = "\n".join(req_lines), "\n".join(err_lines)
    req, err = json.loads(req_text), json.loads(err_text)
    return text, {
        "issue": "https://github.com/Higangssh/homebutler/issues/133",
        "messages": [message("c2s", req, len(req_text.encode())), message("s2c", err, len(err_text.encode()), method="tools/list")],
        "client": None,
        "events": [],
    }


def output_schema_error():
    head = "MCP error -32602: Structured content does not match the tool's output schema: "
    blocks = [
        ("list_invoices", ["data must have required property 'items', data must have required property 'total', ",
                           "data must have required property 'nextCursor', data must NOT have additional properties"]),
        ("get_invoice", ["data must have required property 'invoice', data must NOT have additional properties"]),
    ]
    lines = ["## Errors observed", ""]
    events = [event("log")]
    for tool, wrapped in blocks:
        lines += [tool + ":", head] + wrapped + [""]
        events += [event("log"), event("output_schema_rejected", None, -32602, (head + "".join(wrapped)).strip())]
    text = "\n".join(lines)
    return text, {
        "issue": "https://github.com/cyanheads/obsidian-mcp-server/issues/87",
        "messages": [],
        "client": None,
        "events": events,
    }


CLIENT = {"name": "ledger-desktop", "version": "3.4.1"}


def server_records():
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": {"listChanged": True}}, "clientInfo": CLIENT}}
    result = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": False}},
              "serverInfo": {"name": "ledger-mcp", "version": "0.7.0"}}}
    listing = dict(jsonrpc="2.0", id=1, method="tools/list")
    recs, messages = [], []
    t = ["2026-12-01T10:00:00.000Z", "2026-12-01T10:00:00.012Z", "2026-12-01T10:00:00.020Z", "2026-12-01T10:00:00.031Z"]
    recs.append({"@timestamp": t[0], "log.level": "info", "message": "ledger-mcp 0.7.0 listening on stdio"})
    for ts, words, m, d in [(t[1], "Received request: ", init, "c2s"), (t[2], "Sending response: ", result, "s2c"), (t[3], "Received request: ", listing, "c2s")]:
        recs.append({"@timestamp": ts, "log.level": "debug", "message": words + compact(m)})
        messages.append(message(d, m, len(compact(m).encode()), method="initialize" if m is result else None))
    return recs, messages


def jsonl_message_with_prefix():
    recs, messages = server_records()
    text = "".join(compact(r) + "\n" for r in recs)
    return text, {"issue": None, "messages": messages, "client": CLIENT, "events": [event("log")]}


def docker_json_file():
    recs, messages = server_records()
    text = "".join(compact({"log": compact(r) + "\n", "stream": "stderr", "time": r["@timestamp"][:-1] + "123456Z"}) + "\n" for r in recs)
    return text, {"issue": None, "messages": messages, "client": CLIENT, "events": [event("log")]}


def main():
    files = {}
    for name, make in [("claude_debug_banner.txt", claude_debug_banner), ("unsupported_protocol_version.md", unsupported_protocol_version),
                       ("output_schema_error.md", output_schema_error), ("jsonl_message_with_prefix.log", jsonl_message_with_prefix),
                       ("docker_json_file.log", docker_json_file)]:
        text, truth = make()
        data = text.encode()
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        truth["bytes"] = len(data)
        files[name] = truth
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump({"files": files}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
