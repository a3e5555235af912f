#!/usr/bin/env python3
"""Writes the Cursor, Gemini CLI and MCP Inspector log samples and their truth.json
(deterministic; run from anywhere).

Shapes (cited in samples/README.md):
- cursor.log: Cursor's "MCP Logs" output channel, `YYYY-MM-DD HH:MM:SS.mmm [level] NAME: text`
  (GLips/Figma-Context-MCP#77, BrowserMCP/mcp#9, designcomputer/mysql_mcp_server#49).
- gemini.txt: `gemini --debug` output: `MCP STDERR (NAME): text`, `[DEBUG] [MCP STDERR (NAME)]:`
  with the server's own lines below, `Error during discovery for server 'NAME': ...`
  (google-gemini/gemini-cli#3148, semgrep/mcp#180, cmer81/open-meteo-mcp#12).
- inspector.txt: MCP Inspector's proxy console: `Error from MCP server: SyntaxError: ...
  is not valid JSON` and its stack: the server wrote non-JSON to stdout
  (modelcontextprotocol/inspector#305, #343, yosider/cosense-mcp-server#17).

truth.json is what this script wrote: per file its bytes and the events it meant (kind and
the numbers each line names).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def event(kind, server=None, tool=None, **numbers):
    e = {"kind": kind, "server": server, "tool": tool}
    for k in ("tokens", "token_limit", "timeout_ms", "error_code", "http_status"):
        e[k] = numbers.get(k)
    return e


def main():
    files = {}

    # Cursor.
    rows = [
        ("09:41:02.114", "info", "ledger", "Handling CreateClient action", event("log", "ledger")),
        ("09:41:02.115", "info", "ledger", "Starting new stdio process with command: npx -y ledger-mcp@0.3.1", event("connection_starting", "ledger")),
        ("09:41:03.870", "info", "ledger", "Client closed for command", event("connection_closed", "ledger")),
        ("09:41:03.870", "error", "ledger", "Error in MCP: Client closed", event("connection_closed", "ledger")),
        ("09:41:03.871", "error", "ledger", "Failed to reload client: MCP error -32000: Connection closed", event("connection_failed", "ledger", error_code=-32000)),
        ("09:41:03.872", "info", "ledger", "Handling ListOfferings action", event("log", "ledger")),
        ("09:41:03.872", "error", "ledger", "No server info found", event("error", "ledger")),
        ("09:42:10.003", "info", "docs-search", "Handling CallTool action for tool 'search_docs'", event("tool_call", "docs-search", "search_docs")),
        ("09:42:10.004", "info", "docs-search", "Calling tool 'search_docs'", event("tool_call", "docs-search", "search_docs")),
        ("09:43:10.006", "error", "docs-search", "Error calling tool 'search_docs': MCP error -32001: Request timed out", event("request_timed_out", "docs-search", "search_docs", error_code=-32001)),
        ("09:44:00.500", "error", "billing", "Client error for command npx -y billing-mcp@2.0.0: spawn npx ENOENT", event("connection_failed", "billing")),
    ]
    text = "".join(f"2026-11-30 {t} [{lvl}] {name}: {msg}\n" for t, lvl, name, msg, _ in rows)
    files["cursor.log"] = {"text": text, "events": [r[4] for r in rows]}

    # Gemini CLI.
    lines, evs = [], []

    def add(line, ev, more=()):
        lines.append(line)
        lines.extend(more)
        evs.append(ev)

    add("MCP STDERR (weather): Weather MCP server running on stdio", event("server_stderr", "weather"))
    add(
        "[DEBUG] [MCP STDERR (ledger)]:  \u00d7 No solution found when resolving tool dependencies:",
        event("server_stderr", "ledger"),
        [
            "  \u2570\u2500\u25b6 Because ledger-mcp was not found in the package registry and you",
            "      require ledger-mcp, we can conclude that your requirements are",
            "      unsatisfiable.",
        ],
    )
    add("Error during discovery for server 'ledger': MCP error -32000: Connection closed", event("connection_failed", "ledger", error_code=-32000))
    add("Error during discovery for MCP server 'docs-search': MCP error -32001: Request timed out", event("connection_failed", "docs-search", error_code=-32001))
    files["gemini.txt"] = {"text": "\n".join(lines) + "\n", "events": evs}

    # MCP Inspector.
    lines, evs = [], []
    stack = [
        "    at JSON.parse (<anonymous>)",
        "    at deserializeMessage (file:///home/dev/.npm/_npx/5a9d879542beca3a/node_modules/@modelcontextprotocol/sdk/dist/esm/shared/stdio.js:26:44)",
        "    at ReadBuffer.readMessage (file:///home/dev/.npm/_npx/5a9d879542beca3a/node_modules/@modelcontextprotocol/sdk/dist/esm/shared/stdio.js:19:16)",
        "    at StdioClientTransport.processReadBuffer (file:///home/dev/.npm/_npx/5a9d879542beca3a/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js:127:50)",
    ]
    add("Starting MCP inspector...", event("log"))
    add("\u2699\ufe0f Proxy server listening on localhost:6277", event("log"))
    add("New STDIO connection request", event("log"))
    add('Query parameters: {"command":"python","args":"ledger_server.py","env":"{}","transportType":"stdio"}', event("log"))
    add("STDIO transport: command=/usr/bin/python, args=ledger_server.py", event("log"))
    add("Created server transport", event("log"))
    add("Created client transport", event("log"))
    add("Received POST message for sessionId 27d6f2b2-903d-4b9d-801a-1d07217ef656", event("log"))
    add("Error from MCP server: SyntaxError: Unexpected token 'L', \"Loading le\"... is not valid JSON", event("stdout_pollution"), stack)
    add("Error from MCP server: SyntaxError: Unexpected end of JSON input", event("stdout_pollution"), stack[:1])
    files["inspector.txt"] = {"text": "\n".join(lines) + "\n", "events": evs}

    truth = {"files": {}, "events_by_kind": {}}
    for rel, f in files.items():
        data = f["text"].encode()
        with open(os.path.join(HERE, rel), "wb") as out:
            out.write(data)
        truth["files"][rel] = {"bytes": len(data), "events": f["events"], "frames": [], "skipped": {}}
        for e in f["events"]:
            truth["events_by_kind"][e["kind"]] = truth["events_by_kind"].get(e["kind"], 0) + 1
    with open(os.path.join(HERE, "truth.json"), "w") as out:
        json.dump(truth, out, indent=2, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
