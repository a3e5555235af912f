#!/usr/bin/env python3
"""Writes the Claude Code log samples and their truth.json (deterministic; run from anywhere).

Shapes (cited in samples/README.md):
- claude-cli-nodejs/<project>/mcp-logs-<server>/<time>.txt: Claude Code's per-server MCP log,
  a JSON array of {"debug"|"error", "timestamp", "sessionId", "cwd"} objects, indent 2, as
  quoted in modelcontextprotocol/servers#2338. One file is complete, one cut mid-entry (the
  process died while writing it, as these files often are).
- debug.txt: `claude --debug` output (`[DEBUG] MCP server "NAME": ...`, stack lines below).
- terminal.txt: what Claude Code's terminal UI prints (`⏺ SERVER - TOOL (MCP)(...)` then
  `  ⎿  Error: ...`), with the 25,000-token cap, a Streamable HTTP error quoting a JSON-RPC
  body, an output-schema rejection, a closed connection and a timeout.

truth.json is what this script wrote: per file its bytes, the events it meant (kind and the
numbers each line names), the JSON-RPC bodies it quoted, and the bytes it cut off.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = "claude-cli-nodejs/-home-dev-shop"
SESSION = "6f1d2c3a-94b1-4c57-9a0e-2b8f71d4c0aa"
CWD = "/home/dev/shop"
STACK_CLOSED = [
    "    at Client._onclose (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1336:15216)",
    "    at _transport.onclose (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1336:14535)",
    "    at ChildProcess.<anonymous> (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1338:1820)",
    "    at ChildProcess.emit (node:events:518:28)",
]


def event(kind, server=None, tool=None, **numbers):
    e = {"kind": kind, "server": server, "tool": tool}
    for k in ("tokens", "token_limit", "timeout_ms", "error_code", "http_status"):
        e[k] = numbers.get(k)
    return e


def mcp_log(entries, cut_tail=None):
    """The file text: a JSON array of entries as Claude Code writes it (indent 2), optionally
    followed by the start of one more entry and nothing else (the cut)."""
    objs = []
    for level, text, ts in entries:
        objs.append(json.dumps({level: text, "timestamp": ts, "sessionId": SESSION, "cwd": CWD}, indent=2))
    body = ",\n".join("  " + o.replace("\n", "\n  ") for o in objs)
    if cut_tail is None:
        return "[\n" + body + "\n]", 0
    return "[\n" + body + ",\n  " + cut_tail, len(cut_tail.encode())


def main():
    files = {}

    # 1. A complete per-server log.
    entries = [
        ("debug", "Starting connection attempt", "2026-11-30T10:15:00.120Z"),
        ("debug", "Successfully connected to stdio server in 812ms", "2026-11-30T10:15:00.932Z"),
        ("debug", 'Connection established with capabilities: {"hasTools":true,"hasPrompts":false,"hasResources":false,"serverVersion":{"name":"docs-search","version":"1.4.0"}}', "2026-11-30T10:15:00.940Z"),
        ("debug", "Calling MCP tool: search_docs", "2026-11-30T10:16:12.004Z"),
        ("error", 'Error: MCP tool "search_docs" response (31245 tokens) exceeds maximum allowed tokens (25000). Please use pagination, filtering, or limit parameters to reduce the response size.', "2026-11-30T10:16:13.771Z"),
        ("debug", "Calling MCP tool: get_page", "2026-11-30T10:17:02.310Z"),
        ("error", "Error calling tool get_page: McpError: MCP error -32001: Request timed out", "2026-11-30T10:18:02.312Z"),
    ]
    text, _ = mcp_log(entries)
    rel = f"{PROJECT}/mcp-logs-docs-search/2026-11-30T10-15-00-120Z.txt"
    s = "docs-search"
    files[rel] = {
        "text": text,
        "events": [
            event("connection_starting", s),
            event("server_connected", s),
            event("server_connected", s),
            event("tool_call", s, "search_docs"),
            event("result_over_client_cap", s, "search_docs", tokens=31245, token_limit=25000),
            event("tool_call", s, "get_page"),
            event("request_timed_out", s, "get_page", error_code=-32001),
        ],
        "frames": [],
        "skipped": {},
    }

    # 2. A per-server log cut inside its last entry.
    entries = [
        ("debug", "Starting connection attempt", "2026-11-30T11:02:41.517Z"),
        ("debug", "Connection failed: McpError: MCP error -32000: Connection closed", "2026-11-30T11:02:41.716Z"),
        ("debug", "Error message: MCP error -32000: Connection closed", "2026-11-30T11:02:41.716Z"),
        ("debug", "Error stack: McpError: MCP error -32000: Connection closed\n" + "\n".join(STACK_CLOSED), "2026-11-30T11:02:41.717Z"),
    ]
    cut = '{\n    "debug": "Starting connection attempt",\n    "timestamp": "2026-11-30T11:02:44.'
    text, cut_bytes = mcp_log(entries, cut)
    rel = f"{PROJECT}/mcp-logs-ledger/2026-11-30T11-02-41-517Z.txt"
    s = "ledger"
    files[rel] = {
        "text": text,
        "events": [
            event("connection_starting", s),
            event("connection_failed", s, error_code=-32000),
            event("connection_closed", s, error_code=-32000),
            event("connection_closed", s, error_code=-32000),
        ],
        "frames": [],
        "skipped": {"cut_log_entry": cut_bytes},
    }

    # 3. `claude --debug` output.
    lines = []
    evs = []

    def add(line, ev, more=()):
        lines.append(line)
        lines.extend(more)
        evs.append(ev)

    add('[DEBUG] MCP server "docs-search": Starting connection with timeout of 30000ms', event("connection_starting", "docs-search", timeout_ms=30000))
    add('[DEBUG] MCP server "docs-search": Successfully connected to stdio server in 812ms', event("server_connected", "docs-search"))
    add('[DEBUG] MCP server "ledger": Starting connection with timeout of 30000ms', event("connection_starting", "ledger", timeout_ms=30000))
    add('[DEBUG] MCP server "ledger": Server stderr: ledger-mcp 0.3.1 listening on stdio', event("server_stderr", "ledger"))
    add('[ERROR] MCP server "ledger" Connection failed: Error: Server\'s protocol version is not supported: 2026-07-28', event("protocol_version_rejected", "ledger"))
    add('[DEBUG] MCP server "billing": Starting connection with timeout of 30000ms', event("connection_starting", "billing", timeout_ms=30000))
    add('[ERROR] MCP server "billing" Connection failed: McpError: MCP error -32000: Connection closed', event("connection_failed", "billing", error_code=-32000), STACK_CLOSED)
    add('[DEBUG] MCP server "docs-search": Calling MCP tool: get_page', event("tool_call", "docs-search", "get_page"))
    add(
        "[ERROR] MCP server \"docs-search\" Tool 'get_page' failed: McpError: MCP error -32001: Request timed out",
        event("request_timed_out", "docs-search", "get_page", error_code=-32001, timeout_ms=60000),
        [
            "    at Timeout.timeoutHandler (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1336:9012)",
            "    at listOnTimeout (node:internal/timers:588:17)",
            "    at process.processTimers (node:internal/timers:523:7) {",
            "  code: -32001,",
            "  data: { timeout: 60000 }",
            "}",
        ],
    )
    files["debug.txt"] = {"text": "\n".join(lines) + "\n", "events": evs, "frames": [], "skipped": {}}

    # 4. Claude Code's terminal.
    lines, evs, frames = [], [], []
    body = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}'
    add("> find the refund policy and the March invoices", event("log"))
    add('\u23fa docs-search - search_docs (MCP)(query: "refund policy", limit: 200)', event("tool_call", "docs-search", "search_docs"))
    add(
        '  \u23bf  Error: MCP tool "search_docs" response (31245 tokens) exceeds maximum allowed tokens (25000). Please use pagination, filtering, or limit',
        event("result_over_client_cap", "docs-search", "search_docs", tokens=31245, token_limit=25000),
        ["     parameters to reduce the response size."],
    )
    add('\u23fa ledger - list_invoices (MCP)(month: "2026-03")', event("tool_call", "ledger", "list_invoices"))
    add("  \u23bf  Error: Streamable HTTP error: Error POSTing to endpoint: " + body, event("http_error", "ledger", "list_invoices", error_code=-32000))
    frames.append({"session": "ledger", "payload": body})
    add('\u23fa ledger - get_invoice (MCP)(id: "INV-1042")', event("tool_call", "ledger", "get_invoice"))
    add(
        "  \u23bf  Error: MCP error -32602: Structured content does not match the tool's output schema: data must have required property 'total'",
        event("output_schema_rejected", "ledger", "get_invoice", error_code=-32602),
    )
    add('\u23fa billing - export_csv (MCP)(month: "2026-03")', event("tool_call", "billing", "export_csv"))
    add("  \u23bf  Error: MCP error -32000: Connection closed", event("connection_closed", "billing", "export_csv", error_code=-32000))
    add('\u23fa docs-search - get_page (MCP)(url: "https://docs.example.com/refunds")', event("tool_call", "docs-search", "get_page"))
    add("  \u23bf  Error: MCP error -32001: Request timed out", event("request_timed_out", "docs-search", "get_page", error_code=-32001))
    text = lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n"
    files["terminal.txt"] = {"text": text, "events": evs, "frames": frames, "skipped": {}}

    truth = {"files": {}, "events_by_kind": {}, "result_over_client_cap": [], "output_schema_rejected": []}
    for rel, f in files.items():
        path = os.path.join(HERE, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = f["text"].encode()
        with open(path, "wb") as out:
            out.write(data)
        truth["files"][rel] = {"bytes": len(data), "events": f["events"], "frames": f["frames"], "skipped": f["skipped"]}
        for e in f["events"]:
            truth["events_by_kind"][e["kind"]] = truth["events_by_kind"].get(e["kind"], 0) + 1
            if e["kind"] in ("result_over_client_cap", "output_schema_rejected"):
                truth[e["kind"]].append({"file": rel, "tool": e["tool"], "server": e["server"]})
    with open(os.path.join(HERE, "truth.json"), "w") as out:
        json.dump(truth, out, indent=2, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
