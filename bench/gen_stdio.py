#!/usr/bin/env python3
"""Deterministic generator of MCP stdio logs (newline-delimited JSON-RPC) for the benchmarks.

  gen_stdio.py small OUT --size BYTES [--seed N]   many small messages (~350 B average)
  gen_stdio.py large OUT --size BYTES [--seed N]   multi-MiB results between small requests

Streams to OUT.tmp in big writes, renames to OUT, and writes OUT.meta.json with the byte
count, message count and largest frame (longest line, without its newline).
"""

import argparse
import base64
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from textpool import Slicer, esc, make_pool  # noqa: E402

VERSION = 1
FLUSH = 8 << 20

TOOLS = [
    (b"read_file", b'{"path":%s}'),
    (b"search_files", b'{"query":%s,"limit":%d}'),
    (b"run_query", b'{"sql":%s,"timeout_ms":%d}'),
    (b"fetch_issue", b'{"repo":%s,"number":%d}'),
    (b"list_directory", b'{"path":%s,"depth":%d}'),
]
ERRORS = [
    (-32601, "Method not found"),
    (-32602, "Invalid params: missing required argument"),
    (-32603, "Internal error: upstream returned 502"),
    (-32002, "Resource not found"),
    (-32000, "Tool execution timed out after 30000 ms"),
]


class Out:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.buf = []
        self.buflen = 0
        self.bytes = 0
        self.messages = 0
        self.largest = 0
        self.over_1mib = 0

    def msg(self, b: bytes):
        n = len(b)
        if n > self.largest:
            self.largest = n
        if n >= 1 << 20:
            self.over_1mib += 1
        self.buf.append(b)
        self.buf.append(b"\n")
        self.buflen += n + 1
        self.bytes += n + 1
        self.messages += 1
        if self.buflen >= FLUSH:
            self.flush()

    def flush(self):
        self.f.write(b"".join(self.buf))
        self.buf = []
        self.buflen = 0

    def close(self):
        self.flush()
        self.f.close()


def initialize(out: Out):
    out.msg(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{"roots":{"listChanged":true},"sampling":{}},'
            b'"clientInfo":{"name":"bench-client","version":"1.4.2"}}}')
    out.msg(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":'
            b'{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}},'
            b'"serverInfo":{"name":"bench-server","version":"0.9.0"},'
            b'"instructions":"Synthetic server for mcpsift benchmarks."}}')
    out.msg(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')


def tool_request(rng, sl, rid: bytes, token: int):
    name, tmpl = rng.choice(TOOLS)
    if b"%d" in tmpl:
        args = tmpl % (sl.take_json(rng.randint(8, 60)), rng.randint(1, 500))
    else:
        args = tmpl % (sl.take_json(rng.randint(8, 60)),)
    return (b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s,'
            b'"_meta":{"progressToken":%d}}}' % (rid, name, args, token))


def gen_small(out: Out, size: int, rng: random.Random):
    sl = Slicer(rng, make_pool(rng, 4 << 20))
    initialize(out)
    pending = []  # [rid, token, progress_sent, total]
    next_id = 1
    while out.bytes < size:
        r = rng.random()
        if not pending or (len(pending) < 6 and r < 0.30):
            rid = (b"%d" % next_id) if rng.random() < 0.7 else (b'"req-%06x"' % next_id)
            token = next_id
            next_id += 1
            out.msg(tool_request(rng, sl, rid, token))
            pending.append([rid, token, 0, rng.randint(2, 10)])
            continue
        if r < 0.36:
            # Other traffic: logging, ping, list calls, resource reads.
            k = rng.random()
            if k < 0.4:
                out.msg(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s",'
                        b'"logger":"bench","data":%s}}'
                        % (rng.choice((b"info", b"debug", b"warning")), sl.take_json(rng.randint(40, 200))))
            elif k < 0.6:
                pid = b'"ping-%d"' % next_id
                next_id += 1
                out.msg(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % pid)
                out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{}}' % pid)
            elif k < 0.8:
                rid = b"%d" % next_id
                next_id += 1
                out.msg(b'{"jsonrpc":"2.0","id":%s,"method":"resources/read","params":{"uri":"file:///srv/data/%d.txt"}}'
                        % (rid, rng.randrange(10000)))
                out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":"file:///srv/data/%d.txt",'
                        b'"mimeType":"text/plain","text":%s}]}}'
                        % (rid, rng.randrange(10000), sl.take_json(rng.randint(100, 600))))
            else:
                rid = b"%d" % next_id
                next_id += 1
                out.msg(b'{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{}}' % rid)
                tools = b",".join(b'{"name":"%s","description":%s,"inputSchema":{"type":"object",'
                                  b'"properties":{"path":{"type":"string"}},"required":["path"]}}'
                                  % (n, sl.take_json(rng.randint(30, 90))) for n, _ in TOOLS)
                out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}' % (rid, tools))
            continue
        p = pending[rng.randrange(len(pending))]
        if r < 0.50 and p[2] < p[3] - 1:
            p[2] += 1
            out.msg(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,'
                    b'"progress":%d,"total":%d,"message":%s}}'
                    % (p[1], p[2], p[3], sl.take_json(rng.randint(10, 50))))
            continue
        pending.remove(p)
        e = rng.random()
        if e < 0.04:
            code, text = rng.choice(ERRORS)
            out.msg(b'{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}' % (p[0], code, esc(text)))
        elif e < 0.08:
            out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"isError":true}}'
                    % (p[0], sl.take_json(rng.randint(100, 300))))
        elif e < 0.40:
            out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s},'
                    b'{"type":"text","text":%s}],"structuredContent":{"matches":%d,"truncated":%s}}}'
                    % (p[0], sl.take_json(rng.randint(100, 600)), sl.take_json(rng.randint(100, 600)),
                       rng.randrange(100), rng.choice((b"true", b"false"))))
        else:
            out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}'
                    % (p[0], sl.take_json(rng.randint(100, 600))))


def gen_large(out: Out, size: int, rng: random.Random):
    # 9 Mi characters: enough for an 8 MiB block of mostly-ASCII text.
    sl = Slicer(rng, make_pool(rng, 9 << 20, cjk_ratio=0.05))
    cjk_sl = Slicer(rng, make_pool(rng, 4 << 20, cjk_ratio=0.6))
    initialize(out)
    next_id = 1
    while out.bytes < size:
        # A few small requests and notifications between the big results.
        for _ in range(rng.randint(1, 6)):
            rid = b"%d" % next_id if rng.random() < 0.5 else b'"r%d"' % next_id
            next_id += 1
            out.msg(tool_request(rng, sl, rid, next_id))
            out.msg(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,'
                    b'"progress":1,"total":2}}' % next_id)
            out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}'
                    % (rid, sl.take_json(rng.randint(100, 600))))
        rid = b"%d" % next_id if rng.random() < 0.5 else b'"r%d"' % next_id
        next_id += 1
        out.msg(tool_request(rng, sl, rid, next_id))
        k = rng.random()
        if k < 0.2:
            # Image(s): base64 of incompressible bytes, 0.5-4 MiB decoded.
            blocks = []
            for _ in range(rng.randint(1, 2)):
                raw = rng.randbytes(rng.randint(512 << 10, 4 << 20))
                blocks.append(b'{"type":"image","mimeType":"image/png","data":"%s"}' % base64.b64encode(raw))
            blocks.append(b'{"type":"text","text":%s}' % sl.take_json(rng.randint(100, 400)))
            body = b",".join(blocks)
        elif k < 0.35:
            # Mostly CJK text (3 bytes a character in UTF-8): 1-8 MiB.
            body = b'{"type":"text","text":%s}' % cjk_sl.take_json(rng.randint(1 << 20, 8 << 20) // 2)
        elif k < 0.45:
            # An embedded resource plus a text block.
            body = (b'{"type":"resource","resource":{"uri":"file:///srv/dump/%d.log","mimeType":"text/plain",'
                    b'"text":%s}},{"type":"text","text":"done"}'
                    % (next_id, sl.take_json(rng.randint(1 << 20, 8 << 20))))
        else:
            body = b'{"type":"text","text":%s}' % sl.take_json(rng.randint(1 << 20, 8 << 20))
        out.msg(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[%s]}}' % (rid, body))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=("small", "large"))
    ap.add_argument("out")
    ap.add_argument("--size", type=int, required=True, help="target size in bytes (stops after crossing it)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed * 1000 + (1 if a.kind == "small" else 2))
    t0 = time.time()
    tmp = a.out + ".tmp"
    out = Out(tmp)
    (gen_small if a.kind == "small" else gen_large)(out, a.size, rng)
    out.close()
    os.replace(tmp, a.out)
    meta = {"generator": "gen_stdio", "version": VERSION, "kind": a.kind, "target_size": a.size,
            "seed": a.seed, "bytes": out.bytes, "messages": out.messages, "largest_frame": out.largest, "frames_over_1mib": out.over_1mib,
            "seconds": round(time.time() - t0, 2)}
    with open(a.out + ".meta.json", "w") as f:
        json.dump(meta, f)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
