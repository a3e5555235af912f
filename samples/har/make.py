#!/usr/bin/env python3
"""Builds the HAR 1.2 samples from the real MCP packet captures of samples/pcap/ and
samples/http_py2/ as an HTTP recorder (browser developer tools, mitmproxy's savehar/har_dump)
writes them, and truth.json from the same bytes. Independent of mcpsift: a tiny pcap reader,
TCP reassembly, HTTP/1.1 and SSE parsing of its own. Deterministic: rerun and diff.

Format: HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/,
https://github.com/ahmadnassri/har-spec/blob/master/versions/1.2.md) as mitmproxy writes it
(mitmproxy/addons/savehar.py: `content.text`, `"encoding": "base64"` for binary bodies,
`postData.text`, timings send/wait/receive in ms, `startedDateTime` isoformat) plus Chrome's
`connection` (the socket id: here the client port).

    python3 samples/har/make.py        # from the checkout root or anywhere
"""
import base64
import json
import struct
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent


def packets(path):
    """(ts_us, src, sport, dst, dport, seq, flags, payload) of each TCP/IPv4 packet of a
    little-endian microsecond Ethernet pcap."""
    data = path.read_bytes()
    if struct.unpack("<I", data[:4])[0] != 0xA1B2C3D4 or struct.unpack("<I", data[20:24])[0] != 1:
        raise SystemExit(f"{path}: not a little-endian microsecond Ethernet pcap")
    off = 24
    while off + 16 <= len(data):
        sec, usec, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = pkt[14:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:tot]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        flags = tcp[13]
        yield sec * 1_000_000 + usec, ip[12:16], sport, ip[16:20], dport, seq, flags, tcp[(tcp[12] >> 4) * 4:]


class Stream:
    """One direction of a connection: bytes by sequence number (first copy wins) and the
    capture time of each segment."""

    def __init__(self):
        self.isn = None
        self.segs = {}

    def add(self, ts, seq, flags, payload):
        if flags & 0x02:  # SYN
            self.isn = (seq + 1) & 0xFFFFFFFF
        if payload:
            self.segs.setdefault(seq, (ts, payload))

    def bytes_and_times(self):
        base = self.isn if self.isn is not None else min(self.segs, default=0)
        buf, times = bytearray(), []
        for seq in sorted(self.segs, key=lambda s: (s - base) & 0xFFFFFFFF):
            ts, p = self.segs[seq]
            rel = (seq - base) & 0xFFFFFFFF
            if rel < len(buf):
                p = p[len(buf) - rel:]
            if p:
                times.append((len(buf), ts))
                buf += p
        return bytes(buf), times


def time_at(times, offset):
    t = times[0][1]
    for o, ts in times:
        if o > offset:
            break
        t = ts
    return t


def connections(path):
    """Client stream, server stream and client port of each TCP connection, in order of
    first packet."""
    conns = OrderedDict()
    for ts, src, sport, dst, dport, seq, flags, payload in packets(path):
        key = tuple(sorted([(src, sport), (dst, dport)]))
        c = conns.setdefault(key, {"client": None, "streams": {}})
        if flags & 0x12 == 0x02:
            c["client"] = (src, sport)
        c["streams"].setdefault((src, sport), Stream()).add(ts, seq, flags, payload)
    for key, c in conns.items():
        client = c["client"] or key[0]
        server = key[1] if key[0] == client else key[0]
        cs = c["streams"].get(client, Stream()).bytes_and_times()
        ss = c["streams"].get(server, Stream()).bytes_and_times()
        yield cs, ss, client[1]


def messages(buf, times, is_request, request_methods=None):
    """HTTP/1.1 messages of one stream: (start line, headers, body, start ts, end ts)."""
    pos, out = 0, []
    while pos < len(buf):
        end = buf.find(b"\r\n\r\n", pos)
        if end < 0:
            break
        lines = buf[pos:end].decode("latin-1").split("\r\n")
        headers = [tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:]]
        h = {k.lower(): v for k, v in headers}
        start, body_at = pos, end + 4
        status = None if is_request else int(lines[0].split(" ")[1])
        if status is not None and 100 <= status < 200:
            pos = body_at
            continue
        body = b""
        method = lines[0].split(" ")[0] if is_request else (request_methods.pop(0) if request_methods else "")
        no_body = not is_request and (status in (204, 304) or method == "HEAD")
        if no_body:
            pos = body_at
        elif "chunked" in h.get("transfer-encoding", "").lower():
            p = body_at
            while True:
                le = buf.find(b"\r\n", p)
                if le < 0:
                    p = len(buf)
                    break
                n = int(buf[p:le].split(b";")[0], 16)
                if n == 0:
                    p = buf.find(b"\r\n\r\n", le) + 4 if buf[le + 2:le + 4] != b"\r\n" else le + 4
                    break
                body += buf[le + 2:le + 2 + n]
                p = le + 2 + n + 2
                if p > len(buf):
                    break
            pos = min(p, len(buf))
        elif "content-length" in h:
            n = int(h["content-length"])
            body = buf[body_at:body_at + n]
            pos = body_at + n
        elif is_request:
            pos = body_at
        else:
            body = buf[body_at:]
            pos = len(buf)
        out.append((lines[0], headers, body, time_at(times, start), time_at(times, max(pos - 1, start))))
        if is_request and request_methods is not None:
            request_methods.append(method)
    return out


def iso(ts_us):
    return datetime.fromtimestamp(ts_us / 1e6, timezone.utc).isoformat()


def sse_data(body):
    """Data of the message events of an event stream (WHATWG parsing)."""
    text = body.decode("utf-8", "replace")
    out, data, event = [], None, ""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data is not None and event in ("", "message") and data:
                out.append(data)
            data, event = None, ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data = value if data is None else data + "\n" + value
        elif name == "event":
            event = value
    return out


def body_frames(body, content_type, direction):
    if not body:
        return []
    if "text/event-stream" in content_type:
        payloads = [d.encode() for d in sse_data(body)]
    elif "json" in content_type or (not content_type and body.lstrip()[:1] in (b"{", b"[")):
        payloads = [body]
    else:
        payloads = []  # "Accepted", HTML error pages: not messages
    frames = []
    for p in payloads:
        try:
            m = json.loads(p)
        except ValueError:
            m = None
        m = m if isinstance(m, dict) else {}
        frames.append({"direction": direction, "method": m.get("method"), "id": m.get("id"), "bytes": len(p)})
    return frames


def entries(pcap):
    """HAR entries of a capture and, per entry, the frames it holds."""
    out = []
    for (cbuf, ctimes), (sbuf, stimes), port in connections(pcap):
        if not cbuf:
            continue
        methods = []
        reqs = messages(cbuf, ctimes, True, methods)
        resps = messages(sbuf, stimes, False, list(methods)) if sbuf else []
        for i, (line, headers, body, t0, t1) in enumerate(reqs):
            method, target, _ = line.split(" ", 2)
            h = {k.lower(): v for k, v in headers}
            url = f"http://{h.get('host', '127.0.0.1')}{target}"
            query = target.partition("?")[2]
            request = {
                "method": method,
                "url": url,
                "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": [{"name": k, "value": v} for k, v in headers],
                "queryString": [{"name": q.partition("=")[0], "value": q.partition("=")[2]} for q in query.split("&") if q],
                "headersSize": -1,
                "bodySize": len(body),
            }
            frames = []
            if body:
                request["postData"] = {"mimeType": h.get("content-type", ""), "text": body.decode()}
                frames += body_frames(body, h.get("content-type", ""), "c2s")
            timings = {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": (t1 - t0) / 1000, "wait": 0, "receive": 0}
            if i < len(resps):
                rline, rheaders, rbody, r0, r1 = resps[i]
                parts = rline.split(" ", 2)
                rh = {k.lower(): v for k, v in rheaders}
                ctype = rh.get("content-type", "")
                content = {"size": len(rbody), "compression": 0, "mimeType": ctype}
                content["text"] = rbody.decode()
                frames += body_frames(rbody, ctype, "s2c")
                response = {
                    "status": int(parts[1]),
                    "statusText": parts[2] if len(parts) > 2 else "",
                    "httpVersion": "HTTP/1.1",
                    "cookies": [],
                    "headers": [{"name": k, "value": v} for k, v in rheaders],
                    "content": content,
                    "redirectURL": "",
                    "headersSize": -1,
                    "bodySize": len(rbody),
                }
                timings["wait"] = max(r0 - t1, 0) / 1000
                timings["receive"] = (r1 - r0) / 1000
            else:
                response = {"status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [], "content": {"size": 0, "mimeType": ""}, "redirectURL": "", "headersSize": -1, "bodySize": -1}
            entry = {
                "startedDateTime": iso(t0),
                "time": sum(v for v in timings.values() if v >= 0),
                "request": request,
                "response": response,
                "cache": {},
                "timings": timings,
                "serverIPAddress": "127.0.0.1",
                "connection": str(port),
            }
            out.append((t0, entry, frames))
    out.sort(key=lambda e: e[0])
    return [(e, f) for _, e, f in out]


def recode(entry, frames, how):
    """The response body as a recorder that base64s it (`b64`) or does not save it (`drop`)
    writes it; returns the frames still in the entry."""
    content = entry["response"]["content"]
    if how == "b64":
        content["text"] = base64.b64encode(content["text"].encode()).decode()
        content["encoding"] = "base64"
    elif how == "drop":
        del content["text"]
        content["comment"] = "body not saved (over the recorder's size limit)"
        return [f for f in frames if f["direction"] == "c2s"]
    return frames


def har(entry_list):
    return {"log": {"version": "1.2", "creator": {"name": "mitmproxy", "version": "11.0.0"}, "pages": [], "entries": entry_list}}


def main():
    truth = {
        "generated_by": "samples/har/make.py (own pcap/TCP/HTTP/SSE parsing of the source captures; not mcpsift)",
        "frame_definition": "one HTTP request body, one JSON response body, or one SSE `data:` payload of a message event; bytes are UTF-8 bytes",
        "files": {},
    }
    specs = [
        # (HAR file, source capture, pretty, base64 the response of this request method, drop the response body of this method, cut)
        ("py2_streamable.har", SAMPLES / "http_py2/py2_streamable.pcap", True, "tools/list", None, False),
        ("py2_streamable.cut.har", SAMPLES / "http_py2/py2_streamable.pcap", True, "tools/list", None, True),
        ("ts_legacy_sse.har", SAMPLES / "pcap/ts_legacy_sse.pcap", False, None, None, False),
        ("py_streamable.dropped.har", SAMPLES / "pcap/py_streamable.pcap", False, None, "tools/call", False),
    ]
    for name, pcap, pretty, b64_method, drop_method, cut in specs:
        # Base64 / drop the response body of the first entry whose request is of that method.
        raw, done = [], set()
        for e, frames in entries(pcap):
            m = next((f["method"] for f in frames if f["direction"] == "c2s" and f["method"]), None)
            how = {b64_method: "b64", drop_method: "drop"}.get(m) if m and e["response"]["content"].get("text") else None
            if how in done:
                how = None
            done.add(how)
            raw.append((e, recode(e, frames, how), how == "drop"))
        doc = har([e for e, _, _ in raw])
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n" if pretty else json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
        complete = len(raw)
        if cut:
            # Cut in the middle of the entry after two thirds of them, as a recorder killed
            # mid-write leaves the file.
            complete = len(raw) * 2 // 3
            at = text.index(json.dumps(raw[complete][0]["startedDateTime"]))
            entry_len = len(json.dumps(raw[complete][0], indent=2, ensure_ascii=False))
            text = text[: at + entry_len // 2]
        (HERE / name).write_text(text, encoding="utf-8")
        ent_truth = []
        for i, (e, frames, dropped) in enumerate(raw[:complete]):
            ent_truth.append({
                "entry": i,
                "http_method": e["request"]["method"],
                "status": e["response"]["status"],
                "response_base64": e["response"]["content"].get("encoding") == "base64",
                "response_body_missing": dropped,
                "frames": frames,
            })
        truth["files"][name] = {
            "source": str(pcap.relative_to(SAMPLES)),
            "pretty": pretty,
            "entries_total": len(raw),
            "entries_complete": complete,
            "cut": cut,
            "frames": sum(len(t["frames"]) for t in ent_truth),
            "entries": ent_truth,
        }
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
