//! Writes classic pcap files of one TCP connection on loopback (Ethernet, IPv4, TCP built by
//! etherparse), for tests whose capture would be too large to commit.

use etherparse::PacketBuilder;

const CLIENT: [u8; 4] = [127, 0, 0, 1];
const SERVER: [u8; 4] = [127, 0, 0, 2];
const CLIENT_PORT: u16 = 50123;
const SERVER_PORT: u16 = 8000;
/// TCP payload per segment.
const SEGMENT_BYTES: usize = 32 << 10;

/// One TCP connection: a handshake, then `(from_client, bytes)` sends cut into segments, then FINs.
pub struct Connection {
    pub pcap: Vec<u8>,
    seq: [u32; 2],
    usec: u32,
}

impl Connection {
    pub fn new() -> Self {
        let mut c = Connection { pcap: Vec::new(), seq: [1000, 5000], usec: 0 };
        // pcap global header: magic, v2.4, thiszone, sigfigs, snaplen, Ethernet.
        for field in [0xa1b2_c3d4u32.to_le_bytes().as_slice(), &2u16.to_le_bytes(), &4u16.to_le_bytes(), &0i32.to_le_bytes(), &0u32.to_le_bytes(), &262_144u32.to_le_bytes(), &1u32.to_le_bytes()] {
            c.pcap.extend_from_slice(field);
        }
        c.segment(true, &[], true, false);
        c.segment(false, &[], true, false);
        c.segment(true, &[], false, false);
        c
    }

    /// `bytes` from the client (true) or the server, in segments.
    pub fn send(&mut self, from_client: bool, bytes: &[u8]) {
        for piece in bytes.chunks(SEGMENT_BYTES) {
            self.segment(from_client, piece, false, false);
        }
    }

    /// FIN from both sides; the finished file.
    pub fn finish(mut self) -> Vec<u8> {
        self.segment(true, &[], false, true);
        self.segment(false, &[], false, true);
        self.pcap
    }

    fn segment(&mut self, from_client: bool, payload: &[u8], syn: bool, fin: bool) {
        let (me, other) = if from_client { (0, 1) } else { (1, 0) };
        let (src, dst, sport, dport) = if from_client { (CLIENT, SERVER, CLIENT_PORT, SERVER_PORT) } else { (SERVER, CLIENT, SERVER_PORT, CLIENT_PORT) };
        let mut tcp = PacketBuilder::ethernet2([2, 0, 0, 0, 0, me as u8 + 1], [2, 0, 0, 0, 0, other as u8 + 1])
            .ipv4(src, dst, 64)
            .tcp(sport, dport, self.seq[me], 65_535);
        if syn {
            tcp = tcp.syn();
        }
        if fin {
            tcp = tcp.fin();
        }
        let syn_ack = syn && !from_client;
        if !syn || syn_ack {
            tcp = tcp.ack(self.seq[other]);
        }
        let mut packet = Vec::with_capacity(payload.len() + 64);
        tcp.write(&mut packet, payload).expect("packet fits");
        self.seq[me] = self.seq[me].wrapping_add(payload.len() as u32 + u32::from(syn) + u32::from(fin));
        self.usec += 100;
        let len = packet.len() as u32;
        for field in [self.usec / 1_000_000, self.usec % 1_000_000, len, len] {
            self.pcap.extend_from_slice(&field.to_le_bytes());
        }
        self.pcap.extend_from_slice(&packet);
    }
}
