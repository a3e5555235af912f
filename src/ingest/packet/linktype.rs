//! One captured link-layer frame → its TCP segment (etherparse); knows nothing about streams.
//!
//! Link types: Ethernet (with VLAN tags), Linux SLL and SLL2 (headers done by hand: etherparse
//! has no lax SLL parser and no SLL2 at all), RAW / IPV4 / IPV6, NULL and LOOP (a 4-byte
//! address family, host order for NULL, network order for LOOP; we only accept IPv4/IPv6).
//! `LaxSlicedPacket` is used on purpose: it tolerates snaplen-cut packets, TSO super-packets
//! with IPv4 `total_len = 0` and Ethernet padding.

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, LenSource, TransportSlice};
use pcap_parser::Linktype;

/// The TCP part of one packet, borrowed from the capture buffer.
#[derive(Debug, Clone)]
pub struct TcpSegment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack_number: u32,
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
    /// Captured TCP payload.
    pub payload: &'a [u8],
    /// Payload bytes that were sent but not captured (snaplen), following `payload`.
    pub missing_payload_bytes: u64,
}

/// What a captured frame turned out to be.
#[derive(Debug)]
pub enum DecodedPacket<'a> {
    Tcp(TcpSegment<'a>),
    /// IP but not TCP (UDP, ICMP, ...), or not IP at all (ARP, LLDP, ...).
    NotTcp,
    /// A non-first (or first) IP fragment; TCP over fragments is not reassembled.
    IpFragment,
    /// Headers are cut or malformed below the TCP payload.
    Undecodable,
    /// A link type this reader does not know.
    UnsupportedLinktype,
}

/// BSD address families that mean IPv4 / IPv6 in NULL and LOOP headers (IPv6 differs per OS).
const AF_INET: u32 = 2;
const AF_INET6_VALUES: [u32; 3] = [24, 28, 30];

fn is_ip_family(family: u32) -> bool {
    family == AF_INET || AF_INET6_VALUES.contains(&family)
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]))
}

/// Decodes one frame. `orig_len` is the length on the wire (pcap `origlen`), used to size the
/// payload that snaplen cut off.
pub fn decode_packet(linktype: Linktype, data: &[u8], orig_len: u32) -> DecodedPacket<'_> {
    let sliced = match linktype {
        Linktype::ETHERNET => match LaxSlicedPacket::from_ethernet(data) {
            Ok(p) => p,
            Err(_) => return DecodedPacket::Undecodable,
        },
        // 12 and 14 are the DLT_RAW values some old BSD writers put in files.
        Linktype::RAW | Linktype::IPV4 | Linktype::IPV6 | Linktype(12) | Linktype(14) => {
            match LaxSlicedPacket::from_ip(data) {
                Ok(p) => p,
                Err(_) => return DecodedPacket::Undecodable,
            }
        }
        Linktype::NULL | Linktype::LOOP => {
            let Some(header) = data.get(..4) else {
                return DecodedPacket::Undecodable;
            };
            let raw = [header[0], header[1], header[2], header[3]];
            // NULL is in the writer's byte order, which we do not know: accept either.
            if !is_ip_family(u32::from_le_bytes(raw)) && !is_ip_family(u32::from_be_bytes(raw)) {
                return DecodedPacket::NotTcp;
            }
            match LaxSlicedPacket::from_ip(&data[4..]) {
                Ok(p) => p,
                Err(_) => return DecodedPacket::Undecodable,
            }
        }
        Linktype::LINUX_SLL => {
            let (Some(proto), Some(rest)) = (be16(data, 14), data.get(16..)) else {
                return DecodedPacket::Undecodable;
            };
            LaxSlicedPacket::from_ether_type(EtherType(proto), rest)
        }
        Linktype::LINUX_SLL2 => {
            let (Some(proto), Some(rest)) = (be16(data, 0), data.get(20..)) else {
                return DecodedPacket::Undecodable;
            };
            LaxSlicedPacket::from_ether_type(EtherType(proto), rest)
        }
        _ => return DecodedPacket::UnsupportedLinktype,
    };
    segment_of(&sliced, data.len(), orig_len)
}

fn segment_of<'a>(packet: &LaxSlicedPacket<'a>, captured_len: usize, orig_len: u32) -> DecodedPacket<'a> {
    let (src, dst, ip_payload) = match packet.net.as_ref() {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let h = ip.header();
            (
                IpAddr::from(h.source_addr()),
                IpAddr::from(h.destination_addr()),
                ip.payload(),
            )
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let h = ip.header();
            (
                IpAddr::from(h.source_addr()),
                IpAddr::from(h.destination_addr()),
                ip.payload(),
            )
        }
        Some(LaxNetSlice::Arp(_)) => return DecodedPacket::NotTcp,
        None => {
            return if packet.stop_err.is_some() {
                DecodedPacket::Undecodable
            } else {
                DecodedPacket::NotTcp
            };
        }
    };
    if ip_payload.fragmented {
        return DecodedPacket::IpFragment;
    }
    if ip_payload.ip_number != etherparse::IpNumber::TCP {
        return DecodedPacket::NotTcp;
    }
    let Some(TransportSlice::Tcp(tcp)) = packet.transport.as_ref() else {
        return DecodedPacket::Undecodable;
    };
    let payload = tcp.payload();
    let cut_bytes = u64::from(orig_len).saturating_sub(captured_len as u64);
    // Missing payload only when the IP header promised more than was captured, or when the
    // IP length was unusable (TSO `total_len = 0`) and the record itself says it was cut.
    let missing_payload_bytes = if ip_payload.incomplete || ip_payload.len_source == LenSource::Slice {
        cut_bytes
    } else {
        0
    };
    DecodedPacket::Tcp(TcpSegment {
        src: SocketAddr::new(src, tcp.source_port()),
        dst: SocketAddr::new(dst, tcp.destination_port()),
        seq: tcp.sequence_number(),
        ack_number: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        ack: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        payload,
        missing_payload_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_tcp(payload: &[u8]) -> Vec<u8> {
        let total = 20 + 20 + payload.len();
        let mut p = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
            10,
            0,
            0,
            1,
            10,
            0,
            0,
            2,
        ];
        p.extend_from_slice(&[
            0x1f, 0x90, 0x00, 0x50, 0, 0, 0, 7, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
        ]);
        p.extend_from_slice(payload);
        p
    }

    #[test]
    fn null_header_in_either_byte_order_is_accepted() {
        for af in [[2u8, 0, 0, 0], [0, 0, 0, 2]] {
            let mut frame = af.to_vec();
            frame.extend(ipv4_tcp(b"hi"));
            let DecodedPacket::Tcp(seg) = decode_packet(Linktype::NULL, &frame, frame.len() as u32) else {
                panic!("expected tcp")
            };
            assert_eq!(seg.payload, b"hi");
            assert_eq!(seg.seq, 7);
            assert_eq!(seg.src.port(), 8080);
        }
    }

    #[test]
    fn snaplen_cut_payload_reports_missing_bytes() {
        let full = ipv4_tcp(b"0123456789");
        let cut = &full[..45];
        let DecodedPacket::Tcp(seg) = decode_packet(Linktype::RAW, cut, full.len() as u32) else {
            panic!("expected tcp")
        };
        assert_eq!(seg.payload, b"01234");
        assert_eq!(seg.missing_payload_bytes, 5);
    }

    /// Bytes of the link header on `lt`, below which a frame cannot be decoded (raw IP: the
    /// version nibble's byte).
    fn link_header_bytes(lt: i32) -> usize {
        match lt {
            0 | 108 => 4,
            1 => 14,
            113 => 16,
            276 => 20,
            _ => 1,
        }
    }

    /// Garbage frames of 0 to 63 bytes on every link type: none passes for a TCP segment,
    /// frames shorter than their link header are undecodable and an unknown link type is
    /// unsupported. Read from a pcap, each frame is one packet skipped whole with that reason,
    /// the first of each reason at its record's offset, and the file's bytes add up.
    #[test]
    fn garbage_frames_are_skipped_whole_and_the_bytes_add_up() {
        use std::collections::BTreeMap;

        use crate::ingest::accounting::CollectSink;
        use crate::ingest::frame::SkipReason;
        use crate::ingest::packet::pcap::{PcapOptions, read_capture};
        use crate::ingest::packet::testpcap::PcapWriter;

        for lt in [0, 1, 12, 101, 108, 113, 228, 229, 276, 9999] {
            let mut pcap = PcapWriter::new(lt as u32, false, false, 262_144);
            // Per reason: (offset of the first record, bytes).
            let mut expected: BTreeMap<SkipReason, (u64, u64)> = BTreeMap::new();
            for len in 0..64 {
                let data: Vec<u8> = (0..len).map(|i| (i * 37 + lt as usize) as u8).collect();
                let reason = match decode_packet(Linktype(lt), &data, len as u32 + 3) {
                    DecodedPacket::Tcp(seg) => panic!("link type {lt}: {len} bytes of garbage decoded as {seg:?}"),
                    DecodedPacket::NotTcp => SkipReason::NonTcpPacket,
                    DecodedPacket::IpFragment => SkipReason::IpFragment,
                    DecodedPacket::Undecodable => SkipReason::UndecodablePacket,
                    DecodedPacket::UnsupportedLinktype => SkipReason::UnsupportedLinktype,
                };
                if lt == 9999 {
                    assert_eq!(reason, SkipReason::UnsupportedLinktype, "{len} bytes");
                } else if len < link_header_bytes(lt) {
                    assert_eq!(reason, SkipReason::UndecodablePacket, "link type {lt}: {len} bytes");
                }
                let record_offset = pcap.bytes.len() as u64;
                let e = expected.entry(reason).or_insert((record_offset, 0));
                e.1 += len as u64;
                pcap.packet(len as i64, &data);
            }
            let mut sink = CollectSink::default();
            let summary = read_capture(pcap.bytes.as_slice(), &PcapOptions::default(), &mut sink)
                .unwrap_or_else(|e| panic!("link type {lt}: {e}"));
            assert_eq!(summary.packets, 64, "link type {lt}");
            assert!(sink.frames.is_empty(), "link type {lt}");
            let skipped: BTreeMap<SkipReason, (u64, u64)> =
                sink.skips.iter().map(|s| (s.reason, (s.offset, s.bytes))).collect();
            assert_eq!(skipped, expected, "link type {lt}: skips by reason (first offset, bytes)");
            assert_eq!(sink.framing.get("pcap_headers").copied(), Some(24 + 64 * 16), "link type {lt}");
            assert_eq!(sink.accounted_bytes(), pcap.bytes.len() as i128, "link type {lt}: {:?}", sink.framing);
        }
    }
}
