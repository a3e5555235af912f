#!/usr/bin/env python3
"""Deterministic generator of a classic pcap of MCP Streamable HTTP traffic for the benchmarks.

  gen_pcap.py OUT --size BYTES [--seed N] [--mss 32768] [--concurrency 8]

Ethernet / IPv4 / TCP to port 80 (loopback-style capture: zero MACs, 127.0.0.0/8 addresses).
Many sessions over many TCP connections, several connections interleaved packet by packet,
SYN / SYN-ACK / ACK and FIN handshakes, consistent seq/ack numbers, MSS-sized segments,
delayed ACKs. Per session: initialize (the response assigns Mcp-Session-Id),
notifications/initialized (202), tools/list, tools/call exchanges answered either as
application/json with Content-Length or as text/event-stream with Transfer-Encoding: chunked
(progress notifications, then the result), some multi-MiB results, some errors, DELETE at the end.

Streams to OUT.tmp in big writes, renames to OUT, writes OUT.meta.json (bytes, packets,
connections, sessions, messages, largest_frame = longest JSON-RPC message).
"""

import argparse
import base64
import json
import os
import random
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from textpool import Slicer, esc, make_pool  # noqa: E402

VERSION = 1
FLUSH = 8 << 20
SERVER_IP = bytes((127, 0, 0, 1))
SERVER_PORT = 80
ETH = b"\x00" * 12 + b"\x08\x00"
SYN, FIN, PSH, ACK = 0x02, 0x01, 0x08, 0x10
PROTO = b"2025-06-18"
T0 = 1767225600  # 2026-01-01T00:00:00Z

_pack_ip = struct.Struct("!BBHHHBBH4s4s").pack
_pack_tcp = struct.Struct("!HHIIBBHHH").pack
_pack_rec = struct.Struct("<IIII").pack
_unpack10 = struct.Struct("!10H").unpack


def ip_header(src, dst, ipid, payload_len):
    tot = 20 + payload_len
    h = _pack_ip(0x45, 0, tot, ipid, 0x4000, 64, 6, 0, src, dst)
    s = sum(_unpack10(h))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return h[:10] + struct.pack("!H", ~s & 0xFFFF) + h[12:]


class Stats:
    def __init__(self):
        self.messages = 0
        self.largest = 0
        self.sessions = 0
        self.connections = 0
        self.exchanges = 0
        self.sse_responses = 0
        self.big_results = 0
        self.over_1mib = 0

    def msg(self, b):
        self.messages += 1
        if len(b) > self.largest:
            self.largest = len(b)
        if len(b) >= 1 << 20:
            self.over_1mib += 1


class Conn:
    """One TCP connection; yields Ethernet frames in order (seq/ack kept consistent)."""

    def __init__(self, rng, client_ip, client_port, mss):
        self.rng = rng
        self.cip = client_ip
        self.cport = client_port
        self.mss = mss
        self.cseq = rng.getrandbits(32)
        self.sseq = rng.getrandbits(32)
        self.cid = rng.randrange(1 << 16)
        self.sid = rng.randrange(1 << 16)

    def frame(self, from_client, flags, payload=b"", opts=b""):
        tcp_len = 20 + len(opts)
        if from_client:
            src, dst, sport, dport = self.cip, SERVER_IP, self.cport, SERVER_PORT
            seq, ack = self.cseq, self.sseq
            self.cid = (self.cid + 1) & 0xFFFF
            ipid = self.cid
        else:
            src, dst, sport, dport = SERVER_IP, self.cip, SERVER_PORT, self.cport
            seq, ack = self.sseq, self.cseq
            self.sid = (self.sid + 1) & 0xFFFF
            ipid = self.sid
        if not flags & ACK:
            ack = 0
        tcp = _pack_tcp(sport, dport, seq, ack, (tcp_len // 4) << 4, flags, 1024, 0, 0) + opts
        n = len(payload) + (1 if flags & (SYN | FIN) else 0)
        if from_client:
            self.cseq = (self.cseq + n) & 0xFFFFFFFF
        else:
            self.sseq = (self.sseq + n) & 0xFFFFFFFF
        return ETH + ip_header(src, dst, ipid, tcp_len + len(payload)) + tcp + payload

    def open(self):
        opts = struct.pack("!BBHBBBB", 2, 4, self.mss, 1, 3, 3, 7)  # MSS, NOP, wscale 7
        yield self.frame(True, SYN, opts=opts)
        yield self.frame(False, SYN | ACK, opts=opts)
        yield self.frame(True, ACK)

    def send(self, from_client, data):
        """One application write: MSS segments, PSH on the last, the peer ACKs every 2nd."""
        mss = self.mss
        n = len(data)
        mv = memoryview(data)
        i = 0
        k = 0
        while i < n:
            seg = mv[i:i + mss]
            i += mss
            k += 1
            last = i >= n
            yield self.frame(from_client, ACK | (PSH if last else 0), bytes(seg))
            if last or k % 2 == 0:
                yield self.frame(not from_client, ACK)

    def close(self):
        yield self.frame(True, FIN | ACK)
        yield self.frame(False, FIN | ACK)
        yield self.frame(True, ACK)


class Gen:
    def __init__(self, rng, stats, mss):
        self.rng = rng
        self.stats = stats
        self.mss = mss
        self.sl = Slicer(rng, make_pool(rng, 9 << 20, cjk_ratio=0.04))
        self.next_port = 0
        self.session_no = 0

    # ---- HTTP message builders -------------------------------------------------------------

    def post(self, body, session_id):
        self.stats.msg(body)
        h = [b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench-client/1.4.2\r\n"
             b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"]
        if session_id:
            h.append(b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n" % (session_id, PROTO))
        h.append(b"Content-Length: %d\r\n\r\n" % len(body))
        h.append(body)
        return b"".join(h)

    def json_response(self, body, session_id=None, status=b"200 OK"):
        self.stats.msg(body)
        extra = b"Mcp-Session-Id: %s\r\n" % session_id if session_id else b""
        return (b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n"
                b"Date: Thu, 01 Jan 2026 00:00:00 GMT\r\nConnection: keep-alive\r\n\r\n%s"
                % (status, extra, len(body), body))

    @staticmethod
    def empty_response(status=b"202 Accepted"):
        return (b"HTTP/1.1 %s\r\nContent-Length: 0\r\nDate: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
                b"Connection: keep-alive\r\n\r\n" % status)

    def sse_writes(self, events, split_big):
        """Chunked text/event-stream: header write, one write per event (big events optionally
        split over several chunks), terminating chunk. Returns the list of writes."""
        writes = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                  b"Transfer-Encoding: chunked\r\nDate: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
                  b"Connection: keep-alive\r\n\r\n"]
        for eid, body in events:
            self.stats.msg(body)
            ev = b"event: message\nid: %d\ndata: %s\n\n" % (eid, body) if eid is not None else b"data: %s\n\n" % body
            if split_big and len(ev) > 256 << 10:
                step = self.rng.choice((16 << 10, 64 << 10, 1 << 20))
                parts = [b"%x\r\n%s\r\n" % (len(ev[i:i + step]), ev[i:i + step]) for i in range(0, len(ev), step)]
                writes.append(b"".join(parts))
            else:
                writes.append(b"%x\r\n%s\r\n" % (len(ev), ev))
        writes[-1] += b"0\r\n\r\n"
        return writes

    # ---- JSON-RPC bodies -------------------------------------------------------------------

    def result_body(self, rid, big):
        rng, sl = self.rng, self.sl
        if big:
            self.stats.big_results += 1
            if rng.random() < 0.25:
                raw = rng.randbytes(rng.randint(1 << 20, 5 << 20))
                return (b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"image","mimeType":"image/png",'
                        b'"data":"%s"},{"type":"text","text":"rendered"}]}}' % (rid, base64.b64encode(raw)))
            return (b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}'
                    % (rid, sl.take_json(rng.randint(1 << 20, 8 << 20))))
        r = rng.random()
        if r < 0.04:
            return (b'{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"Internal error: %s"}}'
                    % (rid, rng.choice((b"upstream timeout", b"database locked", b"quota exceeded"))))
        if r < 0.08:
            return (b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],"isError":true}}'
                    % (rid, sl.take_json(rng.randint(80, 300))))
        if r < 0.095:
            n = rng.randint(40 << 10, 400 << 10)  # medium: spans several segments
        else:
            n = rng.randint(100, 1500)
        return (b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}'
                % (rid, sl.take_json(n)))

    def call_body(self, rid, token):
        rng, sl = self.rng, self.sl
        name = rng.choice((b"read_file", b"search_code", b"run_query", b"fetch_url", b"summarize"))
        return (b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":'
                b'{"input":%s,"limit":%d},"_meta":{"progressToken":"%s"}}}'
                % (rid, name, sl.take_json(rng.randint(10, 200)), rng.randint(1, 100), token))

    # ---- sessions and connections --------------------------------------------------------------

    def new_conn(self):
        p = self.next_port
        self.next_port += 1
        ip = bytes((127, 0, 1 + (p // 28000) % 250, 1))
        port = 32768 + p % 28000
        self.stats.connections += 1
        return Conn(self.rng, ip, port, self.mss)

    def exchanges_conn(self, conn, exchanges):
        """Packets of one connection: handshake, request/response exchanges, FIN."""
        yield from conn.open()
        for req, writes in exchanges:
            self.stats.exchanges += 1
            yield from conn.send(True, req)
            for w in writes:
                yield from conn.send(False, w)
        yield from conn.close()

    def session(self, p_big):
        """Yields lists of exchanges, one list per TCP connection of the session."""
        rng = self.rng
        self.session_no += 1
        self.stats.sessions += 1
        sid = b"%08x-%04x-4%03x-a%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                                 rng.getrandbits(12), rng.getrandbits(48))
        numeric = rng.random() < 0.6
        ex = []
        init = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"%s",'
                b'"capabilities":{"sampling":{}},"clientInfo":{"name":"bench-client","version":"1.4.2"}}}' % PROTO)
        init_res = (b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"%s","capabilities":{"tools":'
                    b'{"listChanged":true},"logging":{}},"serverInfo":{"name":"bench-http","version":"2.0.1"}}}' % PROTO)
        ex.append((self.post(init, None), [self.json_response(init_res, sid)]))
        ex.append((self.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', sid), [self.empty_response()]))
        lid = b"1" if numeric else b'"s%d-1"' % self.session_no
        tools = b",".join(b'{"name":"%s","description":%s,"inputSchema":{"type":"object"}}'
                          % (n, self.sl.take_json(rng.randint(30, 120)))
                          for n in (b"read_file", b"search_code", b"run_query", b"fetch_url", b"summarize"))
        ex.append((self.post(b'{"jsonrpc":"2.0","id":%s,"method":"tools/list"}' % lid, sid),
                   [self.json_response(b'{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}' % (lid, tools))]))
        ncalls = rng.randint(4, 50)
        conns = [ex]
        for i in range(ncalls):
            if rng.random() < 0.04:  # client reconnects: keep-alive timed out
                ex = []
                conns.append(ex)
            n = i + 2
            rid = b"%d" % n if numeric else b'"s%d-%d"' % (self.session_no, n)
            token = b"pt-%d-%d" % (self.session_no, n)
            req = self.post(self.call_body(rid, token), sid)
            big = rng.random() < p_big
            res = self.result_body(rid, big)
            if rng.random() < 0.45:
                self.stats.sse_responses += 1
                events = []
                eid = 1 if rng.random() < 0.7 else None
                total = rng.randint(1, 5)
                for k in range(rng.randint(0, total)):
                    events.append((eid, b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
                                        b'{"progressToken":"%s","progress":%d,"total":%d,"message":%s}}'
                                   % (token, k + 1, total, self.sl.take_json(rng.randint(10, 60)))))
                    if eid is not None:
                        eid += 1
                events.append((eid, res))
                ex.append((req, self.sse_writes(events, split_big=rng.random() < 0.5)))
            else:
                ex.append((req, [self.json_response(res)]))
            if rng.random() < 0.05:
                ex.append((self.post(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":'
                                     b'{"requestId":%s,"reason":"user"}}' % rid, sid), [self.empty_response()]))
        ex.append(((b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: %s\r\n"
                    b"MCP-Protocol-Version: %s\r\nContent-Length: 0\r\n\r\n" % (sid, PROTO)),
                   [self.empty_response(b"200 OK")]))
        return conns


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--size", type=int, required=True, help="target size in bytes (stops after crossing it)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mss", type=int, default=32768)
    ap.add_argument("--concurrency", type=int, default=8, help="connections interleaved at once")
    ap.add_argument("--p-big", type=float, default=0.0015, help="probability a tools/call result is 1-8 MiB")
    a = ap.parse_args()
    rng = random.Random(a.seed * 1000 + 3)
    t0 = time.time()
    stats = Stats()
    g = Gen(rng, stats, a.mss)
    tmp = a.out + ".tmp"
    f = open(tmp, "wb")
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    written = 24
    packets = 0
    buf = []
    buflen = 0
    ts = T0 * 1_000_000
    active = []  # one slot per session; a session's connections run one after another

    def session_packets():
        for ex in g.session(a.p_big):
            yield from g.exchanges_conn(g.new_conn(), ex)

    def refill():
        while len(active) < a.concurrency and written + buflen < a.size:
            active.append(session_packets())

    refill()
    while active:
        i = rng.randrange(len(active))
        try:
            fr = next(active[i])
        except StopIteration:
            active.pop(i)
            refill()
            continue
        ts += 1 + int(rng.expovariate(1 / 40.0))
        n = len(fr)
        buf.append(_pack_rec(ts // 1_000_000, ts % 1_000_000, n, n))
        buf.append(fr)
        buflen += n + 16
        packets += 1
        if buflen >= FLUSH:
            f.write(b"".join(buf))
            written += buflen
            buf = []
            buflen = 0
    f.write(b"".join(buf))
    written += buflen
    f.close()
    os.replace(tmp, a.out)
    meta = {"generator": "gen_pcap", "version": VERSION, "target_size": a.size, "seed": a.seed, "mss": a.mss,
            "bytes": written, "packets": packets, "connections": stats.connections, "sessions": stats.sessions,
            "exchanges": stats.exchanges, "sse_responses": stats.sse_responses, "big_results": stats.big_results, "messages": stats.messages,
            "largest_frame": stats.largest, "frames_over_1mib": stats.over_1mib, "seconds": round(time.time() - t0, 2)}
    with open(a.out + ".meta.json", "w") as fh:
        json.dump(meta, fh)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
