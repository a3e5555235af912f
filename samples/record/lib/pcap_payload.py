"""TCP payload of a little pcap (Ethernet/IPv4 on loopback), reassembled per direction by
sequence number; used only to check that every truth frame is on the wire verbatim."""
import struct
from collections import defaultdict


def tcp_streams(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic != 0xA1B2C3D4:
        raise SystemExit(f"{path}: not a little-endian microsecond pcap")
    link = struct.unpack("<I", data[20:24])[0]
    off, segs = 24, defaultdict(dict)
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = pkt[14:] if link == 1 else pkt[16:] if link == 113 else pkt[4:]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:tot]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            segs[(sport, dport)].setdefault(seq, payload)
    out = {}
    for k, by_seq in segs.items():
        buf, nxt = bytearray(), None
        for seq in sorted(by_seq):
            p = by_seq[seq]
            if nxt is not None and seq < nxt:
                p = p[nxt - seq:]
            buf += p
            nxt = seq + len(by_seq[seq]) if nxt is None or seq + len(by_seq[seq]) > nxt else nxt
        out[k] = bytes(buf)
    return out
