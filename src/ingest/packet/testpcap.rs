//! Test helper: builds pcap/pcapng files by hand (link, IP, TCP headers) from scripted TCP
//! conversations, so reassembly and HTTP parsing can be tested on exact, mutated captures.
//! The unit tests use it as `crate::ingest::packet::testpcap`; the integration tests include
//! this file (`tests/tests.rs`), so it uses nothing but `std`.

use std::net::{IpAddr, SocketAddr};

/// Link layer to wrap packets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Ethernet,
    EthernetVlan,
    Sll,
    Sll2,
    Raw,
    /// BSD loopback, AF in little-endian host order.
    Null,
    /// OpenBSD loopback, AF in network order.
    Loop,
}

impl Link {
    pub fn linktype(self) -> u32 {
        match self {
            Link::Ethernet | Link::EthernetVlan => 1,
            Link::Sll => 113,
            Link::Sll2 => 276,
            Link::Raw => 101,
            Link::Null => 0,
            Link::Loop => 108,
        }
    }
}

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// One TCP segment of a scripted conversation.
#[derive(Debug, Clone)]
pub struct Segment {
    pub from_client: bool,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: Vec<u8>,
}

/// A client/server pair whose sequence numbers advance as data is scripted.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub client_seq: u32,
    pub server_seq: u32,
}

impl Conversation {
    pub fn new(client: &str, server: &str, client_isn: u32, server_isn: u32) -> Self {
        Conversation {
            client: client.parse().expect("test address"),
            server: server.parse().expect("test address"),
            client_seq: client_isn,
            server_seq: server_isn,
        }
    }

    pub fn handshake(&mut self) -> Vec<Segment> {
        let syn = Segment {
            from_client: true,
            seq: self.client_seq,
            ack: 0,
            flags: SYN,
            payload: vec![],
        };
        self.client_seq = self.client_seq.wrapping_add(1);
        let syn_ack = Segment {
            from_client: false,
            seq: self.server_seq,
            ack: self.client_seq,
            flags: SYN | ACK,
            payload: vec![],
        };
        self.server_seq = self.server_seq.wrapping_add(1);
        let ack = Segment {
            from_client: true,
            seq: self.client_seq,
            ack: self.server_seq,
            flags: ACK,
            payload: vec![],
        };
        vec![syn, syn_ack, ack]
    }

    /// Data from one side, cut into segments of at most `mss` bytes.
    pub fn send(&mut self, from_client: bool, data: &[u8], mss: usize) -> Vec<Segment> {
        let mut out = Vec::new();
        for piece in data.chunks(mss.max(1)) {
            let (seq, ack) = if from_client {
                (self.client_seq, self.server_seq)
            } else {
                (self.server_seq, self.client_seq)
            };
            out.push(Segment {
                from_client,
                seq,
                ack,
                flags: ACK | PSH,
                payload: piece.to_vec(),
            });
            let next = seq.wrapping_add(piece.len() as u32);
            if from_client {
                self.client_seq = next;
            } else {
                self.server_seq = next;
            }
        }
        out
    }

    pub fn client(&mut self, data: &[u8]) -> Vec<Segment> {
        self.send(true, data, 1400)
    }

    pub fn server(&mut self, data: &[u8]) -> Vec<Segment> {
        self.send(false, data, 1400)
    }

    pub fn fin(&mut self, from_client: bool) -> Segment {
        let (seq, ack) = if from_client {
            (self.client_seq, self.server_seq)
        } else {
            (self.server_seq, self.client_seq)
        };
        if from_client {
            self.client_seq = seq.wrapping_add(1);
        } else {
            self.server_seq = seq.wrapping_add(1);
        }
        Segment {
            from_client,
            seq,
            ack,
            flags: FIN | ACK,
            payload: vec![],
        }
    }

    pub fn close(&mut self) -> Vec<Segment> {
        vec![self.fin(true), self.fin(false)]
    }

    /// The link-layer frame of `seg`.
    pub fn frame(&self, seg: &Segment, link: Link) -> Vec<u8> {
        let (src, dst) = if seg.from_client {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        link_frame(
            link,
            &ip_packet(src, dst, &tcp_header(src.port(), dst.port(), seg), &seg.payload),
        )
    }
}

fn tcp_header(sport: u16, dport: u16, seg: &Segment) -> Vec<u8> {
    let mut h = Vec::with_capacity(20);
    h.extend_from_slice(&sport.to_be_bytes());
    h.extend_from_slice(&dport.to_be_bytes());
    h.extend_from_slice(&seg.seq.to_be_bytes());
    h.extend_from_slice(&seg.ack.to_be_bytes());
    h.push(5 << 4);
    h.push(seg.flags);
    h.extend_from_slice(&65535u16.to_be_bytes());
    h.extend_from_slice(&[0, 0, 0, 0]);
    h
}

fn ip_packet(src: SocketAddr, dst: SocketAddr, tcp: &[u8], payload: &[u8]) -> Vec<u8> {
    let l4 = tcp.len() + payload.len();
    let mut p = Vec::with_capacity(40 + l4);
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (20 + l4) as u16;
            p.extend_from_slice(&[0x45, 0]);
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&[0, 1, 0x40, 0, 64, 6, 0, 0]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            p.extend_from_slice(&[0x60, 0, 0, 0]);
            p.extend_from_slice(&(l4 as u16).to_be_bytes());
            p.extend_from_slice(&[6, 64]);
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
        }
        _ => panic!("test conversation mixes IPv4 and IPv6"),
    }
    p.extend_from_slice(tcp);
    p.extend_from_slice(payload);
    p
}

fn link_frame(link: Link, ip: &[u8]) -> Vec<u8> {
    let v6 = ip.first().is_some_and(|b| b >> 4 == 6);
    let ethertype: [u8; 2] = if v6 { [0x86, 0xdd] } else { [0x08, 0x00] };
    let mut f = Vec::with_capacity(ip.len() + 24);
    match link {
        Link::Ethernet => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
            f.extend_from_slice(&ethertype);
        }
        Link::EthernetVlan => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0x00, 0x2a]);
            f.extend_from_slice(&ethertype);
        }
        Link::Sll => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&ethertype);
        }
        Link::Sll2 => {
            f.extend_from_slice(&ethertype);
            f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        Link::Raw => {}
        Link::Null => f.extend_from_slice(&(if v6 { 30u32 } else { 2u32 }).to_le_bytes()),
        Link::Loop => f.extend_from_slice(&(if v6 { 24u32 } else { 2u32 }).to_be_bytes()),
    }
    f.extend_from_slice(ip);
    f
}

/// Legacy pcap writer.
pub struct PcapWriter {
    pub bytes: Vec<u8>,
    nanos: bool,
    big_endian: bool,
    snaplen: u32,
}

impl PcapWriter {
    pub fn new(linktype: u32, nanos: bool, big_endian: bool, snaplen: u32) -> Self {
        let mut w = PcapWriter {
            bytes: Vec::new(),
            nanos,
            big_endian,
            snaplen,
        };
        w.u32(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 });
        w.u16(2);
        w.u16(4);
        w.u32(0);
        w.u32(0);
        w.u32(snaplen);
        w.u32(linktype);
        w
    }

    fn u16(&mut self, v: u16) {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }

    fn u32(&mut self, v: u32) {
        let b = if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }

    /// Writes `frame` cut to the snaplen.
    pub fn packet(&mut self, ts_us: i64, frame: &[u8]) {
        let cap = frame.len().min(self.snaplen as usize);
        self.u32((ts_us / 1_000_000) as u32);
        let frac = (ts_us % 1_000_000) as u32;
        self.u32(if self.nanos { frac * 1000 } else { frac });
        self.u32(cap as u32);
        self.u32(frame.len() as u32);
        self.bytes.extend_from_slice(&frame[..cap]);
    }
}

/// pcapng writer (little-endian) with any number of interfaces.
pub struct PcapNgWriter {
    pub bytes: Vec<u8>,
    /// Units per second of each interface.
    resolutions: Vec<u64>,
}

impl Default for PcapNgWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapNgWriter {
    pub fn new() -> Self {
        let mut w = PcapNgWriter {
            bytes: Vec::new(),
            resolutions: Vec::new(),
        };
        let mut body = Vec::new();
        body.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(-1i64).to_le_bytes());
        w.block(0x0A0D_0D0A, &body);
        w
    }

    fn block(&mut self, kind: u32, body: &[u8]) {
        let padded = body.len().div_ceil(4) * 4;
        let total = (12 + padded) as u32;
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        self.bytes.extend_from_slice(&total.to_le_bytes());
        self.bytes.extend_from_slice(body);
        self.bytes.resize(self.bytes.len() + padded - body.len(), 0);
        self.bytes.extend_from_slice(&total.to_le_bytes());
    }

    /// Adds an interface; `tsresol_exponent` = n means 10^-n seconds.
    pub fn interface(&mut self, linktype: u16, tsresol_exponent: u8) -> u32 {
        let mut body = Vec::new();
        body.extend_from_slice(&linktype.to_le_bytes());
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&262_144u32.to_le_bytes());
        body.extend_from_slice(&9u16.to_le_bytes()); // if_tsresol
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&[tsresol_exponent, 0, 0, 0]);
        body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        self.block(1, &body);
        self.resolutions.push(10u64.pow(u32::from(tsresol_exponent)));
        (self.resolutions.len() - 1) as u32
    }

    pub fn enhanced(&mut self, interface: u32, ts_us: i64, frame: &[u8], snaplen: usize) {
        let units = self.resolutions.get(interface as usize).copied().unwrap_or(1_000_000);
        let ts = (ts_us as u128 * units as u128 / 1_000_000) as u64;
        let cap = frame.len().min(snaplen);
        let mut body = Vec::new();
        body.extend_from_slice(&interface.to_le_bytes());
        body.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        body.extend_from_slice(&(ts as u32).to_le_bytes());
        body.extend_from_slice(&(cap as u32).to_le_bytes());
        body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        body.extend_from_slice(&frame[..cap]);
        let padded = body.len().div_ceil(4) * 4;
        body.resize(padded, 0);
        self.block(6, &body);
    }

    pub fn simple(&mut self, frame: &[u8]) {
        let mut body = Vec::new();
        body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        body.extend_from_slice(frame);
        self.block(3, &body);
    }
}

/// A whole conversation as a little-endian µs pcap.
pub fn pcap_of(conv: &Conversation, segments: &[Segment], link: Link) -> Vec<u8> {
    let mut w = PcapWriter::new(link.linktype(), false, false, 262_144);
    for (i, seg) in segments.iter().enumerate() {
        w.packet(1_700_000_000_000_000 + i as i64 * 1000, &conv.frame(seg, link));
    }
    w.bytes
}

/// One loopback connection (127.0.0.1:50123 to 127.0.0.2:8000, Ethernet) written as a µs pcap
/// while it is scripted: a handshake, sends cut into 32 KiB segments 100 µs apart, FINs from
/// both sides. For tests whose capture would be too large to commit.
pub struct Connection {
    conv: Conversation,
    pcap: PcapWriter,
    packets: i64,
}

impl Default for Connection {
    fn default() -> Self {
        Self::new()
    }
}

impl Connection {
    /// TCP payload per segment.
    const SEGMENT_BYTES: usize = 32 << 10;

    pub fn new() -> Self {
        let mut c = Connection {
            conv: Conversation::new("127.0.0.1:50123", "127.0.0.2:8000", 1000, 5000),
            pcap: PcapWriter::new(Link::Ethernet.linktype(), false, false, 262_144),
            packets: 0,
        };
        let handshake = c.conv.handshake();
        c.write(&handshake);
        c
    }

    /// `bytes` from the client (true) or the server, in segments.
    pub fn send(&mut self, from_client: bool, bytes: &[u8]) {
        let segments = self.conv.send(from_client, bytes, Self::SEGMENT_BYTES);
        self.write(&segments);
    }

    /// FIN from both sides; the finished file.
    pub fn finish(mut self) -> Vec<u8> {
        let fins = self.conv.close();
        self.write(&fins);
        self.pcap.bytes
    }

    fn write(&mut self, segments: &[Segment]) {
        for seg in segments {
            self.packets += 1;
            self.pcap.packet(self.packets * 100, &self.conv.frame(seg, Link::Ethernet));
        }
    }
}
