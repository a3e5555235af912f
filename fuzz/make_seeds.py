#!/usr/bin/env python3
"""Writes the committed seed corpora (fuzz/seeds/TARGET/) from samples/ and the shared corpus.

Each seed is small (a few KB): the head of a recorded capture or log, behind the target's
configuration byte (see fuzz_targets/common.rs: the low two bits pick the frame cap, 3 = 1 MiB).
Run from the repository root: python3 fuzz/make_seeds.py [CORPUS_DIR]
"""
import gzip, json, os, struct, sys, zlib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "corpus")
out = os.path.join(root, "fuzz", "seeds")

def read(path, limit):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read(limit)

def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

S = lambda *p: os.path.join(root, "samples", *p)
C = lambda *p: os.path.join(corpus, *p)
cfg = lambda cap=3, bits=0: bytes([cap | (bits << 2)])

# Line readers: heads of real logs, with a tiny cap (0: 16 bytes) as well as 1 MiB.
for name, path in [("py_s2c", S("stdio_py", "s2c.log")), ("py_c2s", S("stdio_py", "c2s.log")),
                   ("ts_c2s", S("stdio_ts", "c2s.log")), ("ts_s2c", S("stdio_ts", "s2c.log.gz")),
                   ("pollution", C("stdio_ts_pollution", "s2c.log")), ("timeout", C("stdio_pyserver_timeout", "s2c.log"))]:
    if os.path.exists(path):
        head = read(path, 4096)
        put("stdio", name, cfg(3, 2) + head)
        put("stdio", name + "_cap16", cfg(0) + head[:512])
for name in ["mcp.log", "vscode-mcp.log", "mcp-server-docs.log"]:
    put("hostlog", name, cfg() + read(S("hostlog", name), 8192))
    put("hostlog", name + "_cap300", cfg(1) + read(S("hostlog", name), 2048))
for name in sorted(os.listdir(S("embedded_log"))):
    if name.endswith((".log", ".md")):
        put("embedded", name, cfg() + read(S("embedded_log", name), 4096))
        put("embedded", name + "_cap300", cfg(1) + read(S("embedded_log", name), 2048))
put("jsonl", "session", cfg() + read(S("transcript", "session.jsonl"), 8192))
for name in ["mcpsnoop-billing.jsonl", "mcpspy-billing.jsonl", "mcptrace-billing.jsonl"]:
    put("recorder", name, cfg() + read(S("recorder", name), 4096))
    put("recorder", name + "_cap300", cfg(1) + read(S("recorder", name), 2048))
# HAR: a whole small file (legacy SSE, one line) and heads of the pretty ones (cut files).
put("har", "legacy", cfg() + read(S("har", "ts_legacy_sse.har"), 65536))
put("har", "dropped_cap300", cfg(1) + read(S("har", "py_streamable.dropped.har"), 65536))
put("har", "py2_head", cfg() + read(S("har", "py2_streamable.har"), 16384))
# Client logs: bit 0 of the selector picks the reader (0: Claude Code MCP log, 1: line log).
for name, path in [("mcp_log_cut", S("claude_code", "claude-cli-nodejs", "-home-dev-shop", "mcp-logs-ledger", "2026-11-30T11-02-41-517Z.txt")),
                   ("mcp_log", S("claude_code", "claude-cli-nodejs", "-home-dev-shop", "mcp-logs-docs-search", "2026-11-30T10-15-00-120Z.txt"))]:
    put("client_logs", name, cfg() + read(path, 8192))
    put("client_logs", name + "_cap300", cfg(1) + read(path, 2048))
for name in ["debug.txt", "terminal.txt"]:
    put("client_logs", name, cfg(3, 1) + read(S("claude_code", name), 8192))
for name in ["cursor.log", "gemini.txt", "inspector.txt"]:
    put("client_logs", name, cfg(3, 1) + read(S("client_logs", name), 8192))
    put("client_logs", name + "_cap16", cfg(0, 1) + read(S("client_logs", name), 2048))
put("jsonl", "session_cap300", cfg(1) + read(S("transcript", "session.jsonl"), 2048))
for case in ["stdio_py_truncation", "http_ts_streamable"]:
    for f in ["transcript.jsonl", "transcript.jsonl.gz"]:
        if os.path.exists(C(case, f)):
            put("jsonl", case, cfg() + read(C(case, f), 4096))

# Packet captures: the samples are 15-20 KB each.
for f in sorted(os.listdir(S("pcap"))):
    if f.endswith((".pcap", ".pcapng")):
        put("pcap", f, cfg() + read(S("pcap", f), 1 << 16))

# HTTP stream events: [tag][len u16 LE][bytes]; tag 0 = side A data, 1 = side B data.
def ev(tag, data=b""):
    return bytes([tag]) + struct.pack("<H", len(data)) + data
req = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
resp = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}'
post = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nmcp-session-id: abc\r\nContent-Length: %d\r\n\r\n" % len(req) + req
json_resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(resp) + resp
sse = b"event: message\r\nid: 1\r\ndata: " + resp + b"\r\n\r\n"
sse_resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(sse) + sse + b"\r\n0\r\n\r\n"
gz = gzip.compress(resp)
gz_resp = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(gz) + gz
legacy = b"GET /sse HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
legacy_resp = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages?sessionId=42\n\nevent: message\ndata: " + resp + b"\n\n"
put("http", "json", cfg(3, 2) + ev(0, post) + ev(1, json_resp) + ev(4) + ev(5))
put("http", "sse_chunked", cfg(3, 2) + ev(0, post) + ev(1, sse_resp[:40]) + ev(1, sse_resp[40:]))
put("http", "gzip", cfg(3, 2) + ev(0, post) + ev(1, gz_resp))
put("http", "legacy_sse", cfg(3, 2) + ev(0, legacy) + ev(1, legacy_resp[:70]) + ev(3, b"\x10\x00") + ev(1, legacy_resp[70:]))
put("http", "gap", cfg(0, 2) + ev(0, post[:50]) + ev(2, b"\x05\x00") + ev(0, post[55:]) + ev(1, json_resp))

# Bodies: [shape][sizes][content]; shape bits: encoding (0-1), type (2-3), chunked (4), raw (7).
put("body", "json_gzip", bytes([0x01, 0xc3]) + resp)
put("body", "sse_deflate_chunked", bytes([0x16, 0xc2]) + sse)
put("body", "json_identity_cap16", bytes([0x00, 0x05]) + resp)
put("body", "raw_gzip", bytes([0x81, 0xc3]) + gz)

# Messages: single lines of real traffic, and a schema/instance pair split by 0xff.
n = 0
for path in [S("stdio_py", "s2c.log"), S("stdio_py", "c2s.log"), S("stdio_ts", "c2s.log")]:
    for line in read(path, 1 << 20).splitlines():
        if 10 < len(line) < 4096 and n < 40:
            put("message", "line%02d" % n, line)
            put("skim", "line%02d" % n, line)
            n += 1
schema = json.dumps({"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"], "additionalProperties": False}).encode()
put("message", "schema_pair", schema + b"\xff" + b'{"total": 3, "extra": true}')
put("message", "deep", b'{"jsonrpc":"2.0","id":1,"result":{"structuredContent":' + b"[" * 200 + b"]" * 200 + b"}}")
# The skimmer's common shapes as the bench's small.log has them, and ones it leaves to serde.
put("skim", "call_meta", b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"x \\u00e9","timeout_ms":283},"_meta":{"progressToken":3}}}')
put("skim", "structured", b'{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"m\\n"}],"structuredContent":{"matches":4,"truncated":true},"isError":false}}')
put("skim", "batch_escaped_key", b'[{"jsonrpc":"2.0","\\u0069d":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"id":2,"error":{"code":-1,"message":"m"}}]')
print("seeds in", out)
