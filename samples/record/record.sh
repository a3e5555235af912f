#!/usr/bin/env bash
# Re-record every capture under samples/ (stdio_ts, stdio_py, hostlog, transcript, pcap).
# Needs: node >= 20 + npm, python3 >= 3.10, tcpdump, dumpcap (apt: tcpdump, tshark), root or
# CAP_NET_RAW for loopback capture. Dependencies are installed OUTSIDE the repository, in
# $MCPSIFT_RECORD_CACHE (default ~/.cache/mcpsift-record).
#   usage: samples/record/record.sh            # everything
#          samples/record/record.sh stdio_ts   # one or more of: stdio_ts stdio_py hostlog transcript pcap stdio_py2 http_py2 stdio_ts2 http_ts2 tool_change
set -euo pipefail
REC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SAMPLES="$(dirname "$REC")"
CACHE="${MCPSIFT_RECORD_CACHE:-$HOME/.cache/mcpsift-record}"
WORK="${MCPSIFT_RECORD_WORK:-$(mktemp -d /tmp/mcpsift-record.XXXXXX)}"; mkdir -p "$WORK"
STEPS=("$@"); [ ${#STEPS[@]} -eq 0 ] && STEPS=(stdio_ts stdio_py hostlog transcript pcap stdio_py2 http_py2 stdio_ts2 http_ts2 tool_change)
want() { local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
log() { printf '\n== %s\n' "$*" >&2; }

# ---- dependencies (outside the repo) ----
mkdir -p "$CACHE/node/ts"
NEED_NODE=0; for s in stdio_ts hostlog transcript pcap; do want "$s" && NEED_NODE=1; done
if [ $NEED_NODE = 1 ] && { ! cmp -s "$REC/package.json" "$CACHE/node/package.json" || [ ! -d "$CACHE/node/node_modules/@modelcontextprotocol/sdk" ]; }; then
  log "npm install -> $CACHE/node"
  cp "$REC/package.json" "$CACHE/node/package.json"
  (cd "$CACHE/node" && npm install --no-audit --no-fund --loglevel=error)
fi
cp "$REC"/ts/*.mjs "$CACHE/node/ts/"
# TS SDK 2.x (@modelcontextprotocol/client + server, 2026-07-28) in its own folder: the 1.x `sdk` stays in node/
NEED_TS2=0; for s in stdio_ts2 http_ts2; do want "$s" && NEED_TS2=1; done
if [ $NEED_TS2 = 1 ]; then
  mkdir -p "$CACHE/node-ts2/ts2"
  if ! cmp -s "$REC/ts2/package.json" "$CACHE/node-ts2/package.json" || [ ! -d "$CACHE/node-ts2/node_modules/@modelcontextprotocol/client" ]; then
    log "npm install (TS SDK 2.x) -> $CACHE/node-ts2"
    cp "$REC/ts2/package.json" "$CACHE/node-ts2/package.json"
    (cd "$CACHE/node-ts2" && npm install --no-audit --no-fund --loglevel=error)
  fi
  cp "$REC"/ts2/*.mjs "$CACHE/node-ts2/ts2/"
  if ! command -v tcpdump >/dev/null && want http_ts2; then
    log "apt-get install tcpdump"; apt-get update -qq && apt-get install -y -qq tcpdump
  fi
fi
if [ ! -x "$CACHE/venv/bin/python" ]; then
  log "python venv -> $CACHE/venv"
  python3 -m venv "$CACHE/venv"
fi
if ! cmp -s "$REC/requirements.txt" "$CACHE/venv/.requirements.txt"; then
  "$CACHE/venv/bin/pip" install -q -r "$REC/requirements.txt"
  cp "$REC/requirements.txt" "$CACHE/venv/.requirements.txt"
fi
PY="$CACHE/venv/bin/python"
# mcp 2.x (2026-07-28) in its own venv: the 1.x venv above runs the handshake-era servers
if [ ! -x "$CACHE/venv2/bin/python" ]; then
  log "python venv (mcp 2.x) -> $CACHE/venv2"
  python3 -m venv "$CACHE/venv2"
fi
if ! cmp -s "$REC/requirements-py2.txt" "$CACHE/venv2/.requirements.txt"; then
  "$CACHE/venv2/bin/pip" install -q -r "$REC/requirements-py2.txt"
  cp "$REC/requirements-py2.txt" "$CACHE/venv2/.requirements.txt"
fi
PY2="$CACHE/venv2/bin/python"
NODE="$(command -v node)"
SHIM="$REC/tee_shim.py"

export VERSIONS_JSON="$WORK/versions.json"
"$PY" - "$CACHE" "$SAMPLES/versions.json" "$NEED_NODE" > "$VERSIONS_JSON" <<'PYEOF'
import json, os, subprocess, sys, importlib.metadata as md
cache = sys.argv[1]
# steps that do not run Node keep the recorded Node-side versions of the existing samples
old = json.load(open(sys.argv[2])) if os.path.exists(sys.argv[2]) else {}
if sys.argv[3] != "1":
    print(json.dumps({**old, "python": sys.version.split()[0], **{p: md.version(p) for p in ("mcp", "pydantic", "anyio", "httpx", "uvicorn", "starlette", "sse-starlette")},
                      "tcpdump": (subprocess.run(["tcpdump", "--version"], capture_output=True, text=True).stdout.splitlines() or [None])[0]}, indent=1))
    sys.exit(0)
pk = lambda p: json.load(open(f"{cache}/node/node_modules/{p}/package.json"))["version"]
def cmd(*a):
    try: return subprocess.run(a, capture_output=True, text=True).stdout.splitlines()[0]
    except Exception: return None
print(json.dumps({
  "@modelcontextprotocol/sdk": pk("@modelcontextprotocol/sdk"), "zod": pk("zod"),
  "node": cmd("node", "--version"),
  "python": sys.version.split()[0],
  **{p: md.version(p) for p in ("mcp", "pydantic", "anyio", "httpx", "uvicorn", "starlette", "sse-starlette")},
  "tcpdump": cmd("tcpdump", "--version"), "dumpcap": cmd("dumpcap", "--version"),
}, indent=1))
PYEOF
echo "work dir: $WORK" >&2

# ---- stdio ----
if want stdio_ts; then
  log "stdio_ts: TS client <-> TS McpServer through the tee"
  rm -rf "$WORK/stdio_ts" "$SAMPLES/stdio_ts"; mkdir -p "$WORK/stdio_ts"
  (cd "$CACHE/node" && "$NODE" ts/stdio_client.mjs stdio_ts "$WORK/stdio_ts" "$SHIM")
  "$PY" "$REC/lib/build.py" stdio stdio_ts "$WORK/stdio_ts" "$SAMPLES/stdio_ts" stdio-ts
fi
if want stdio_py || want transcript; then
  log "stdio_py: Python client <-> FastMCP through the tee"
  rm -rf "$WORK/stdio_py"; mkdir -p "$WORK/stdio_py"
  (cd "$REC/py" && "$PY" stdio_client.py "$WORK/stdio_py" "$SHIM")
  if want stdio_py; then rm -rf "$SAMPLES/stdio_py"; "$PY" "$REC/lib/build.py" stdio stdio_py "$WORK/stdio_py" "$SAMPLES/stdio_py" stdio-py; fi
fi
if want hostlog || want transcript; then
  for sc in hostlog vscode; do
    log "session for host logs: $sc"
    rm -rf "$WORK/$sc"; mkdir -p "$WORK/$sc"
    (cd "$CACHE/node" && "$NODE" ts/stdio_client.mjs "$sc" "$WORK/$sc" "$SHIM")
  done
  if want hostlog; then rm -rf "$SAMPLES/hostlog"; "$PY" "$REC/lib/build.py" hostlog "$WORK/hostlog" "$WORK/vscode" "$SAMPLES/hostlog"; fi
fi
if want tool_change; then
  log "tool_change: Python client <-> low-level Server inventory-server 1.4.0, then 1.5.0 (two stdio sessions through the tee)"
  rm -rf "$WORK/tool_change"; mkdir -p "$WORK/tool_change"
  (cd "$REC/py" && "$PY" tool_change_client.py "$WORK/tool_change" "$SHIM")
  "$PY" "$REC/lib/tool_change.py" "$WORK/tool_change" "$SAMPLES/tool_change"   # replaces samples/tool_change only if the diff equals the plan
fi
if want transcript; then
  rm -rf "$SAMPLES/transcript"
  "$PY" "$REC/lib/build.py" transcript "$WORK/stdio_py" "$WORK/vscode" "$SAMPLES/transcript"
fi

# ---- packet captures ----
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 not up" >&2; return 1; }
wait_file_text() { for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; echo "capture not ready: $1" >&2; cat "$1" >&2; return 1; }
capture() { # capture <name> <file> <port> <pcap|pcapng> <server cmd...> -- <client cmd...>
  local name=$1 file=$2 port=$3 fmt=$4; shift 4
  local srv=() cli=(); while [ "$1" != "--" ]; do srv+=("$1"); shift; done; shift; cli=("$@")
  local w="$WORK/$name"; rm -rf "$w"; mkdir -p "$w"
  if [ "$fmt" = pcap ]; then
    tcpdump -i lo -s 0 -U -w "$w/$file" "tcp port $port" 2> "$w/capture.log" & CAP=$!
    wait_file_text "$w/capture.log" "listening on"
  else
    dumpcap -i lo -s 0 -f "tcp port $port" -w "$w/$file" 2> "$w/capture.log" & CAP=$!
    wait_file_text "$w/capture.log" "Capturing on"
  fi
  "${srv[@]}" 2> "$w/server.stderr.log" & SRV=$!
  wait_port "$port"
  "${cli[@]}"
  sleep 0.5
  kill -TERM "$SRV"; wait "$SRV" 2>/dev/null || true
  sleep 0.5
  kill -INT "$CAP"; wait "$CAP" 2>/dev/null || true
  cat "$w/capture.log" >&2
  cp "$w/$file" "$SAMPLES/pcap/$file"
}
if want pcap; then
  rm -rf "$SAMPLES/pcap"; mkdir -p "$SAMPLES/pcap"
  cd "$CACHE/node"
  log "pcap: TS Streamable HTTP, JSON responses"
  capture ts_streamable_json ts_streamable_json.pcap 28941 pcap "$NODE" ts/http_server.mjs json 28941 -- \
    "$NODE" ts/http_client.mjs json http://127.0.0.1:28941 "$WORK/ts_streamable_json"
  log "pcap: TS Streamable HTTP, SSE responses (pcapng via dumpcap)"
  capture ts_streamable_sse ts_streamable_sse.pcapng 28942 pcapng "$NODE" ts/http_server.mjs sse 28942 -- \
    "$NODE" ts/http_client.mjs sse http://127.0.0.1:28942 "$WORK/ts_streamable_sse"
  log "pcap: TS legacy HTTP+SSE"
  capture ts_legacy_sse ts_legacy_sse.pcap 28943 pcap "$NODE" ts/http_server.mjs legacy 28943 -- \
    "$NODE" ts/http_client.mjs legacy http://127.0.0.1:28943 "$WORK/ts_legacy_sse"
  log "pcap: Python FastMCP Streamable HTTP"
  cd "$REC/py"
  capture py_streamable py_streamable.pcap 28944 pcap "$PY" http_server.py 28944 -- \
    "$PY" http_client.py http://127.0.0.1:28944 "$WORK/py_streamable"
  "$PY" "$REC/lib/build.py" http "$SAMPLES/pcap" \
    "ts_streamable_json.pcap=$WORK/ts_streamable_json=ts-json=28941=streamable-http (TS, enableJsonResponse)" \
    "ts_streamable_sse.pcapng=$WORK/ts_streamable_sse=ts-sse=28942=streamable-http (TS, SSE responses)" \
    "ts_legacy_sse.pcap=$WORK/ts_legacy_sse=ts-legacy=28943=legacy http+sse (TS)" \
    "py_streamable.pcap=$WORK/py_streamable=py-streamable=28944=streamable-http (py, SSE responses)"
  for x in ts_streamable_json ts_streamable_sse ts_legacy_sse py_streamable; do
    gzip -9 -n -c "$WORK/$x/http_exchanges.json" > "$SAMPLES/pcap/$x.exchanges.json.gz"
  done
fi
# ---- 2026-07-28: mcp 2.x Client and MCPServer ----
if want stdio_py2; then
  log "stdio_py2: mcp 2.x Client <-> MCPServer (2026-07-28) through the tee"
  for x in stdio_py2 stdio_py2_fallback; do rm -rf "$WORK/$x" "$SAMPLES/$x"; mkdir -p "$WORK/$x"; done
  (cd "$REC/py2" && "$PY2" client.py stdio "$WORK/stdio_py2" "$SHIM" "$PY2" ledger_server.py stdio)
  "$PY2" "$REC/lib/build.py" stdio_py2 stdio_py2 "$WORK/stdio_py2" "$SAMPLES/stdio_py2" stdio-py2
  log "stdio_py2_fallback: mcp 2.x Client <-> mcp 1.x FastMCP: server/discover fails, initialize follows"
  (cd "$REC/py2" && "$PY2" client.py fallback "$WORK/stdio_py2_fallback" "$SHIM" "$PY" "$REC/py/legacy_server.py")
  "$PY2" "$REC/lib/build.py" stdio_py2 stdio_py2_fallback "$WORK/stdio_py2_fallback" "$SAMPLES/stdio_py2_fallback" stdio-py2-fallback
fi
if want http_py2; then
  log "http_py2: mcp 2.x Client <-> MCPServer over Streamable HTTP (2026-07-28), tcpdump on lo"
  w="$WORK/http_py2"; rm -rf "$w" "$SAMPLES/http_py2"; mkdir -p "$w"
  tcpdump -i lo -s 0 -B 65536 -U -w "$w/py2_streamable.pcap" "tcp port 28951" 2> "$w/capture.log" & CAP=$!
  wait_file_text "$w/capture.log" "listening on"
  (cd "$REC/py2" && exec "$PY2" ledger_server.py http 28951 "$w/server_exchanges.jsonl") 2> "$w/server.stderr.log" & SRV=$!
  wait_port 28951
  (cd "$REC/py2" && "$PY2" client.py http http://127.0.0.1:28951 "$w")
  sleep 0.5; kill -TERM "$SRV"; wait "$SRV" 2>/dev/null || true
  sleep 0.5; kill -INT "$CAP"; wait "$CAP" 2>/dev/null || true
  cat "$w/capture.log" >&2
  "$PY2" "$REC/lib/build.py" http_py2 py2_streamable.pcap "$w/py2_streamable.pcap" "$w" py2-http 28951 "$SAMPLES/http_py2"
fi
# ---- 2026-07-28: TS SDK 2.x (@modelcontextprotocol/client + server), two Clients on one pipe / one pool ----
if want stdio_ts2; then
  log "stdio_ts2: two TS 2.x Clients on one stdio pipe (multiplexed) <-> bistro-bookings through the tee"
  rm -rf "$WORK/stdio_ts2" "$SAMPLES/stdio_ts2"; mkdir -p "$WORK/stdio_ts2"
  (cd "$CACHE/node-ts2" && "$NODE" ts2/stdio_client.mjs "$WORK/stdio_ts2" "$SHIM")
  "$PY2" "$REC/ts2/build_ts2.py" stdio "$WORK/stdio_ts2" "$SAMPLES/stdio_ts2"
fi
if want http_ts2; then
  log "http_ts2: two TS 2.x Clients sharing Node fetch's pool <-> bistro-bookings (createMcpHandler), tcpdump on lo"
  w="$WORK/http_ts2"; rm -rf "$w" "$SAMPLES/http_ts2"; mkdir -p "$w"
  tcpdump -i lo -s 0 -B 65536 -U -w "$w/ts2_streamable.pcap" "tcp port 28961" 2> "$w/capture.log" & CAP=$!
  wait_file_text "$w/capture.log" "listening on"
  (cd "$CACHE/node-ts2" && exec "$NODE" ts2/http_server.mjs 28961 "$w/server_exchanges.jsonl") 2> "$w/server.stderr.log" & SRV=$!
  wait_port 28961
  (cd "$CACHE/node-ts2" && "$NODE" ts2/http_client.mjs http://127.0.0.1:28961 "$w")
  sleep 0.5; kill -TERM "$SRV"; wait "$SRV" 2>/dev/null || true
  sleep 0.5; kill -INT "$CAP"; wait "$CAP" 2>/dev/null || true
  cat "$w/capture.log" >&2
  "$PY2" "$REC/ts2/build_ts2.py" http ts2_streamable.pcap "$w/ts2_streamable.pcap" "$w" 28961 "$SAMPLES/http_ts2"
fi
NEED_PY2=0; for s in stdio_py2 http_py2; do want "$s" && NEED_PY2=1; done
"$PY2" - "$VERSIONS_JSON" "$CACHE" "$NEED_TS2" "$SAMPLES/versions.json" "$NEED_PY2" <<'PYEOF'
import json, os, subprocess, sys, importlib.metadata as md
p = sys.argv[1]; v = json.load(open(p))
v["py2"] = {"python": sys.version.split()[0], **{k: md.version(k) for k in ("mcp", "mcp-types", "pydantic", "anyio", "httpx2", "uvicorn", "starlette", "sse-starlette")}}
if sys.argv[5] != "1" and os.path.exists(sys.argv[4]) and "py2" in json.load(open(sys.argv[4])):
    v["py2"] = json.load(open(sys.argv[4]))["py2"]     # steps without the 2.x venv keep its recorded versions
ts2_dir = os.path.join(sys.argv[2], "node-ts2", "node_modules")
if sys.argv[3] == "1" and os.path.isdir(ts2_dir):
    pk = lambda n: json.load(open(os.path.join(ts2_dir, n, "package.json")))["version"]
    run = lambda *a: (subprocess.run(a, capture_output=True, text=True).stdout.splitlines() or [None])[0]
    v["ts2"] = {**{n: pk(n) for n in ("@modelcontextprotocol/client", "@modelcontextprotocol/server", "@modelcontextprotocol/node",
                                     "@modelcontextprotocol/core", "zod", "hono", "@hono/node-server")},
                "node": run("node", "--version"), "tcpdump": run("tcpdump", "--version")}
elif os.path.exists(sys.argv[4]) and "ts2" in json.load(open(sys.argv[4])):
    v["ts2"] = json.load(open(sys.argv[4]))["ts2"]     # steps without TS 2.x keep its recorded versions
open(p, "w").write(json.dumps(v, indent=1) + "\n")
PYEOF
cp "$VERSIONS_JSON" "$SAMPLES/versions.json"
log "done"; du -ab "$SAMPLES" --exclude=record | sort -k2 >&2
