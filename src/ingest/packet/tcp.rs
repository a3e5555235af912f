//! TCP reassembly: segments in capture order → per-connection, per-direction ordered byte
//! streams with explicit gaps. Knows nothing about what the bytes mean (HTTP lives in `http`).
//!
//! Policy, in the order it is applied to each segment of one direction (`HalfStream`):
//! * sequence numbers become 64-bit stream offsets by their signed distance to the next
//!   expected number, so 32-bit wrap-around is invisible above this module;
//! * bytes already delivered are retransmissions: dropped and counted (first copy wins, also
//!   for overlaps between pending out-of-order segments);
//! * out-of-order data waits in a `BTreeMap` keyed by offset; a hole is declared lost (an
//!   explicit [`StreamEvent::Gap`]) when the peer acknowledged past it while later data is
//!   waiting, on FIN/RST/end of capture, or when pending bytes exceed
//!   [`ReassemblyLimits::max_pending_bytes_per_direction`];
//! * snaplen-cut payload is a known hole and becomes a gap as soon as it is reached;
//! * a direction whose SYN was not captured (connection already open when the capture
//!   started) buffers its first few segments and starts at the lowest sequence number seen,
//!   because the first captured segment may itself be out of order;
//! * RST ends both directions at once; FIN ends a direction once every byte before it is
//!   delivered (or declared lost);
//! * a new SYN on a 4-tuple whose connection was closed, or whose client ISN differs, is a new
//!   connection (port reuse).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

pub use crate::ingest::connection::{ConnectionId, Side, StreamEnd};
use crate::ingest::packet::linktype::TcpSegment;

/// What reassembly tells the layer above, in order.
#[derive(Debug)]
pub enum StreamEvent<'a> {
    Opened {
        connection: ConnectionId,
        a: SocketAddr,
        b: SocketAddr,
        /// The side that sent the SYN, when a SYN or SYN/ACK was the first packet seen.
        client: Option<Side>,
    },
    /// In-order bytes of `side`'s stream starting at stream `offset`.
    Data {
        connection: ConnectionId,
        side: Side,
        offset: u64,
        ts_us: Option<i64>,
        bytes: &'a [u8],
    },
    /// `len` bytes at `offset` that were sent but are not in the capture.
    Gap {
        connection: ConnectionId,
        side: Side,
        offset: u64,
        len: u64,
        ts_us: Option<i64>,
    },
    /// No more bytes will come for `side`.
    End {
        connection: ConnectionId,
        side: Side,
        how: StreamEnd,
        ts_us: Option<i64>,
    },
    /// Both directions ended; the connection's state can be dropped.
    Closed { connection: ConnectionId },
}

/// Memory bounds of the reassembler.
#[derive(Debug, Clone, Copy)]
pub struct ReassemblyLimits {
    /// Out-of-order bytes kept per direction before the first hole is declared lost. 16 MiB
    /// covers several seconds of reordering at loopback speed while bounding memory per flow.
    pub max_pending_bytes_per_direction: u64,
    /// Segments of a direction without SYN buffered to find its lowest sequence number.
    pub midstream_warmup_segments: usize,
    /// A segment further ahead than this is treated as unrelated (bogus or another flow).
    pub max_forward_jump_bytes: u64,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        ReassemblyLimits {
            max_pending_bytes_per_direction: 16 << 20,
            midstream_warmup_segments: 4,
            max_forward_jump_bytes: 1 << 30,
        }
    }
}

/// Counters of the reassembler (bytes are TCP payload bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub connections: u64,
    pub connections_without_syn: u64,
    pub retransmitted_bytes: u64,
    pub gaps: u64,
    pub gap_bytes: u64,
    /// Payload after RST, or beyond the FIN's sequence number.
    pub after_close_bytes: u64,
    /// Payload implausibly far ahead of the stream ([`ReassemblyLimits::max_forward_jump_bytes`]).
    pub out_of_window_bytes: u64,
    /// Packets of unknown flows without payload and without SYN (late ACKs, FINs): ignored.
    pub packets_without_connection: u64,
}

#[derive(Debug)]
enum Pending {
    Data(Vec<u8>),
    /// Bytes known to exist but not captured (snaplen).
    Missing(u64),
}

impl Pending {
    fn len(&self) -> u64 {
        match self {
            Pending::Data(d) => d.len() as u64,
            Pending::Missing(n) => *n,
        }
    }
}

/// A segment held while a SYN-less direction looks for its first byte.
#[derive(Debug)]
struct WarmupSegment {
    seq: u32,
    data: Vec<u8>,
    missing: u64,
    fin: bool,
}

/// Output of one direction before connection/side are attached.
enum HalfOut<'a> {
    Data { offset: u64, bytes: &'a [u8] },
    Gap { offset: u64, len: u64 },
}

/// One direction of a connection.
#[derive(Debug, Default)]
struct HalfStream {
    /// Absolute sequence number of the byte at `delivered`.
    next_seq: Option<u32>,
    delivered: u64,
    pending: BTreeMap<u64, Pending>,
    pending_data_bytes: u64,
    fin_at: Option<u64>,
    /// FIN reached, RST, or end of capture: no more bytes are accepted.
    ended: bool,
    /// The `End` event for this direction was emitted.
    end_reported: bool,
    /// `Some` while a SYN-less direction is still collecting its first segments.
    warmup: Option<Vec<WarmupSegment>>,
}

impl HalfStream {
    fn syn(&mut self, seq: u32) {
        if self.next_seq.is_none() && self.warmup.is_none() {
            self.next_seq = Some(seq.wrapping_add(1));
        }
    }

    /// Stream offset of absolute sequence number `seq` (may be negative: before the start).
    fn offset_of(&self, seq: u32) -> Option<i64> {
        let next = self.next_seq?;
        Some(self.delivered as i64 + i64::from(seq.wrapping_sub(next) as i32))
    }

    #[allow(clippy::too_many_arguments)]
    fn segment(
        &mut self,
        seq: u32,
        data: &[u8],
        missing: u64,
        fin: bool,
        limits: &ReassemblyLimits,
        stats: &mut TcpStats,
        out: &mut dyn FnMut(HalfOut<'_>),
    ) {
        if self.ended {
            let already_delivered = self
                .offset_of(seq)
                .is_some_and(|off| off + data.len() as i64 <= self.delivered as i64);
            if already_delivered {
                stats.retransmitted_bytes += data.len() as u64;
            } else {
                stats.after_close_bytes += data.len() as u64;
            }
            return;
        }
        if self.next_seq.is_none() {
            let warm = self.warmup.get_or_insert_with(Vec::new);
            warm.push(WarmupSegment {
                seq,
                data: data.to_vec(),
                missing,
                fin,
            });
            let warm_bytes: usize = warm.iter().map(|s| s.data.len()).sum();
            if warm.len() >= limits.midstream_warmup_segments
                || warm_bytes as u64 >= limits.max_pending_bytes_per_direction
            {
                self.settle_warmup(limits, stats, out);
            }
            return;
        }
        self.place(seq, data, missing, fin, limits, stats, out);
    }

    /// Ends the warm-up: the lowest sequence number seen becomes stream offset 0.
    fn settle_warmup(&mut self, limits: &ReassemblyLimits, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) {
        let Some(segments) = self.warmup.take() else { return };
        let Some(first) = segments.first() else { return };
        let first_seq = first.seq;
        let start = segments
            .iter()
            .map(|s| s.seq)
            .min_by_key(|&s| s.wrapping_sub(first_seq) as i32)
            .unwrap_or(first_seq);
        self.next_seq = Some(start);
        for s in segments {
            self.place(s.seq, &s.data, s.missing, s.fin, limits, stats, out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        seq: u32,
        data: &[u8],
        missing: u64,
        fin: bool,
        limits: &ReassemblyLimits,
        stats: &mut TcpStats,
        out: &mut dyn FnMut(HalfOut<'_>),
    ) {
        let Some(off) = self.offset_of(seq) else { return };
        let seg_len = data.len() as u64 + missing;
        if off > self.delivered as i64 + limits.max_forward_jump_bytes as i64 {
            stats.out_of_window_bytes += data.len() as u64;
            return;
        }
        let end = off + seg_len as i64;
        if fin && self.fin_at.is_none() {
            self.fin_at = Some(end.max(self.delivered as i64) as u64);
        }
        // Never accept bytes past the FIN.
        let (data, missing, end) = match self.fin_at {
            Some(fin_at) if end > fin_at as i64 => {
                let keep = (fin_at as i64 - off).max(0) as u64;
                let keep_data = keep.min(data.len() as u64) as usize;
                stats.after_close_bytes += (data.len() - keep_data) as u64;
                let keep_missing = keep.saturating_sub(data.len() as u64).min(missing);
                (&data[..keep_data], keep_missing, fin_at as i64)
            }
            _ => (data, missing, end),
        };
        if end > self.delivered as i64 && (!data.is_empty() || missing > 0) {
            let delivered = self.delivered as i64;
            if off <= delivered {
                let skip = (delivered - off) as u64;
                let skip_data = skip.min(data.len() as u64) as usize;
                stats.retransmitted_bytes += skip_data as u64;
                let rest_missing = missing - skip.saturating_sub(data.len() as u64).min(missing);
                self.deliver(&data[skip_data..], out);
                if rest_missing > 0 {
                    self.gap(rest_missing, stats, out);
                }
                self.drain(stats, out);
            } else {
                self.insert_pending(off as u64, data, missing, stats);
                while self.pending_data_bytes > limits.max_pending_bytes_per_direction {
                    if !self.flush_first_hole(stats, out) {
                        break;
                    }
                }
            }
        } else {
            stats.retransmitted_bytes += data.len() as u64;
        }
        self.check_fin(stats);
    }

    fn check_fin(&mut self, stats: &mut TcpStats) {
        if let Some(fin_at) = self.fin_at
            && self.delivered >= fin_at
        {
            self.ended = true;
            // Data still pending lies past the FIN (it arrived before the FIN was seen): it is
            // never delivered, and is counted like any payload beyond a FIN.
            for (_, chunk) in std::mem::take(&mut self.pending) {
                if let Pending::Data(d) = chunk {
                    stats.after_close_bytes += d.len() as u64;
                }
            }
            self.pending_data_bytes = 0;
        }
    }

    fn deliver(&mut self, bytes: &[u8], out: &mut dyn FnMut(HalfOut<'_>)) {
        if bytes.is_empty() {
            return;
        }
        out(HalfOut::Data {
            offset: self.delivered,
            bytes,
        });
        self.advance(bytes.len() as u64);
    }

    fn advance(&mut self, n: u64) {
        self.delivered += n;
        self.next_seq = self.next_seq.map(|s| s.wrapping_add(n as u32));
    }

    fn gap(&mut self, len: u64, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) {
        if len == 0 {
            return;
        }
        stats.gaps += 1;
        stats.gap_bytes += len;
        out(HalfOut::Gap {
            offset: self.delivered,
            len,
        });
        self.advance(len);
    }

    /// First copy wins: only the parts of [off, off+len) not already pending are stored.
    fn insert_pending(&mut self, off: u64, data: &[u8], missing: u64, stats: &mut TcpStats) {
        let end = off + data.len() as u64 + missing;
        let mut cursor = off;
        if let Some((&k, v)) = self.pending.range(..=off).next_back() {
            cursor = cursor.max(k + v.len());
        }
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for (&k, v) in self.pending.range(off..end) {
            if k > cursor {
                pieces.push((cursor, k));
            }
            cursor = cursor.max(k + v.len());
        }
        if cursor < end {
            pieces.push((cursor, end));
        }
        let data_end = off + data.len() as u64;
        let mut stored_data = 0u64;
        for (from, to) in pieces {
            if from < data_end {
                let d_to = to.min(data_end);
                let piece = &data[(from - off) as usize..(d_to - off) as usize];
                stored_data += piece.len() as u64;
                self.pending_data_bytes += piece.len() as u64;
                self.pending.insert(from, Pending::Data(piece.to_vec()));
                if to > data_end {
                    self.pending.insert(data_end, Pending::Missing(to - data_end));
                }
            } else {
                self.pending.insert(from, Pending::Missing(to - from));
            }
        }
        stats.retransmitted_bytes += data.len() as u64 - stored_data;
    }

    /// Delivers pending chunks that are now contiguous.
    fn drain(&mut self, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) {
        while let Some(entry) = self.pending.first_entry() {
            let off = *entry.key();
            if off > self.delivered {
                break;
            }
            let chunk = entry.remove();
            let skip = self.delivered - off;
            match chunk {
                Pending::Data(d) => {
                    self.pending_data_bytes -= d.len() as u64;
                    let skip = skip.min(d.len() as u64) as usize;
                    stats.retransmitted_bytes += skip as u64;
                    self.deliver(&d[skip..], out);
                }
                Pending::Missing(n) => {
                    if n > skip {
                        self.gap(n - skip, stats, out);
                    }
                }
            }
        }
        self.check_fin(stats);
    }

    /// Declares the first hole lost. Returns false when nothing is pending.
    fn flush_first_hole(&mut self, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) -> bool {
        let Some((&off, _)) = self.pending.first_key_value() else {
            return false;
        };
        if off > self.delivered {
            self.gap(off - self.delivered, stats, out);
        }
        self.drain(stats, out);
        true
    }

    /// The peer acknowledged up to `ack`: holes before pending data it covers are lost.
    fn acknowledged(&mut self, ack: u32, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) {
        let Some(ack_off) = self.offset_of(ack) else { return };
        while let Some((&off, _)) = self.pending.first_key_value() {
            if (off as i64) >= ack_off || off <= self.delivered {
                break;
            }
            self.flush_first_hole(stats, out);
        }
    }

    /// End of capture / RST: everything pending is delivered with gaps for the holes.
    fn flush_all(&mut self, limits: &ReassemblyLimits, stats: &mut TcpStats, out: &mut dyn FnMut(HalfOut<'_>)) {
        self.settle_warmup(limits, stats, out);
        while self.flush_first_hole(stats, out) {}
        if let Some(fin_at) = self.fin_at
            && fin_at > self.delivered
        {
            let n = fin_at - self.delivered;
            self.gap(n, stats, out);
        }
        self.check_fin(stats);
    }
}

#[derive(Debug)]
struct Connection {
    id: ConnectionId,
    a: SocketAddr,
    halves: [HalfStream; 2],
    client_isn: Option<u32>,
    closed: bool,
}

impl Connection {
    fn side_of(&self, src: SocketAddr) -> Side {
        if src == self.a { Side::A } else { Side::B }
    }
}

type FlowKey = (SocketAddr, SocketAddr);

fn flow_key(x: SocketAddr, y: SocketAddr) -> FlowKey {
    if x <= y { (x, y) } else { (y, x) }
}

/// Closed connections kept to recognise late retransmissions before they are forgotten.
const MAX_CLOSED_CONNECTIONS_KEPT: usize = 4096;

/// All connections of a capture.
#[derive(Debug, Default)]
pub struct TcpReassembler {
    connections: HashMap<FlowKey, Connection>,
    closed_count: usize,
    next_id: ConnectionId,
    limits: ReassemblyLimits,
    pub stats: TcpStats,
}

impl TcpReassembler {
    pub fn new(limits: ReassemblyLimits) -> Self {
        TcpReassembler {
            limits,
            ..Default::default()
        }
    }

    /// Feeds one segment, in capture order.
    pub fn segment(&mut self, ts_us: Option<i64>, seg: &TcpSegment<'_>, out: &mut dyn FnMut(StreamEvent<'_>)) {
        let key = flow_key(seg.src, seg.dst);
        let has_payload = !seg.payload.is_empty() || seg.missing_payload_bytes > 0;
        let replace = match self.connections.get(&key) {
            None => {
                if !seg.syn && !has_payload {
                    self.stats.packets_without_connection += 1;
                    return;
                }
                true
            }
            Some(conn) => {
                let fresh_syn = seg.syn && !seg.ack;
                let isn_differs = match conn.client_isn {
                    Some(isn) => isn != seg.seq,
                    None => conn.halves.iter().any(|h| h.delivered > 0 || !h.pending.is_empty()),
                };
                (conn.closed && seg.syn) || (fresh_syn && isn_differs)
            }
        };
        if replace {
            if let Some(old) = self.connections.remove(&key) {
                if old.closed {
                    self.closed_count = self.closed_count.saturating_sub(1);
                } else {
                    let mut old = old;
                    Self::close(
                        &mut old,
                        StreamEnd::CaptureEnd,
                        ts_us,
                        &self.limits,
                        &mut self.stats,
                        out,
                    );
                }
            }
            let conn = self.open(seg, out);
            self.connections.insert(key, conn);
        }
        let Some(conn) = self.connections.get_mut(&key) else {
            return;
        };
        let side = conn.side_of(seg.src);
        let id = conn.id;
        let limits = self.limits;
        let stats = &mut self.stats;
        let was_closed = conn.closed;
        if seg.syn && !was_closed {
            conn.halves[side.index()].syn(seg.seq);
            if !seg.ack && conn.client_isn.is_none() {
                conn.client_isn = Some(seg.seq);
            }
        }
        let data_seq = if seg.syn { seg.seq.wrapping_add(1) } else { seg.seq };
        if !was_closed {
            // A packet from the peer means the peer has seen what this side sent so far:
            // start that side's SYN-less stream now, so both directions keep their order.
            let other = side.other();
            let mut emit = |o: HalfOut<'_>| emit_half(o, id, other, ts_us, out);
            conn.halves[other.index()].settle_warmup(&limits, stats, &mut emit);
        }
        {
            let mut emit = |o: HalfOut<'_>| emit_half(o, id, side, ts_us, out);
            let half = &mut conn.halves[side.index()];
            if seg.rst {
                stats.after_close_bytes += seg.payload.len() as u64;
            } else if has_payload || seg.fin {
                half.segment(
                    data_seq,
                    seg.payload,
                    seg.missing_payload_bytes,
                    seg.fin,
                    &limits,
                    stats,
                    &mut emit,
                );
            }
        }
        if seg.ack && !seg.rst && !was_closed {
            let other = side.other();
            let mut emit = |o: HalfOut<'_>| emit_half(o, id, other, ts_us, out);
            conn.halves[other.index()].acknowledged(seg.ack_number, stats, &mut emit);
        }
        if seg.rst {
            Self::close(conn, StreamEnd::Rst, ts_us, &limits, stats, out);
        } else {
            Self::end_finished(conn, ts_us, out);
        }
        if conn.closed && !was_closed {
            self.closed_count += 1;
        }
        if self.closed_count > MAX_CLOSED_CONNECTIONS_KEPT {
            self.connections.retain(|_, c| !c.closed);
            self.closed_count = 0;
        }
    }

    fn open(&mut self, seg: &TcpSegment<'_>, out: &mut dyn FnMut(StreamEvent<'_>)) -> Connection {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.connections += 1;
        let client = match (seg.syn, seg.ack) {
            (true, false) => Some(Side::A),
            (true, true) => Some(Side::B),
            _ => {
                self.stats.connections_without_syn += 1;
                None
            }
        };
        out(StreamEvent::Opened {
            connection: id,
            a: seg.src,
            b: seg.dst,
            client,
        });
        Connection {
            id,
            a: seg.src,
            halves: [HalfStream::default(), HalfStream::default()],
            client_isn: None,
            closed: false,
        }
    }

    /// Emits `End` for directions whose FIN was reached, and `Closed` when both are done.
    fn end_finished(conn: &mut Connection, ts_us: Option<i64>, out: &mut dyn FnMut(StreamEvent<'_>)) {
        for side in [Side::A, Side::B] {
            let half = &mut conn.halves[side.index()];
            if half.ended && !half.end_reported {
                half.end_reported = true;
                out(StreamEvent::End {
                    connection: conn.id,
                    side,
                    how: StreamEnd::Fin,
                    ts_us,
                });
            }
        }
        if conn.halves.iter().all(|h| h.ended) && !conn.closed {
            conn.closed = true;
            out(StreamEvent::Closed { connection: conn.id });
        }
    }

    fn close(
        conn: &mut Connection,
        how: StreamEnd,
        ts_us: Option<i64>,
        limits: &ReassemblyLimits,
        stats: &mut TcpStats,
        out: &mut dyn FnMut(StreamEvent<'_>),
    ) {
        if conn.closed {
            return;
        }
        for side in [Side::A, Side::B] {
            let id = conn.id;
            let half = &mut conn.halves[side.index()];
            if half.end_reported {
                continue;
            }
            let mut emit = |o: HalfOut<'_>| emit_half(o, id, side, ts_us, out);
            half.flush_all(limits, stats, &mut emit);
            let end = if half.ended && half.fin_at.is_some() {
                StreamEnd::Fin
            } else {
                how
            };
            half.ended = true;
            half.end_reported = true;
            out(StreamEvent::End {
                connection: id,
                side,
                how: end,
                ts_us,
            });
        }
        conn.closed = true;
        out(StreamEvent::Closed { connection: conn.id });
    }

    /// End of capture: flushes every open connection (in connection order).
    pub fn finish(&mut self, ts_us: Option<i64>, out: &mut dyn FnMut(StreamEvent<'_>)) {
        let mut open: Vec<FlowKey> = self
            .connections
            .iter()
            .filter(|(_, c)| !c.closed)
            .map(|(k, _)| *k)
            .collect();
        open.sort_by_key(|k| self.connections.get(k).map(|c| c.id));
        for key in open {
            if let Some(conn) = self.connections.get_mut(&key) {
                Self::close(conn, StreamEnd::CaptureEnd, ts_us, &self.limits, &mut self.stats, out);
            }
        }
        self.connections.clear();
        self.closed_count = 0;
    }
}

fn emit_half(
    o: HalfOut<'_>,
    connection: ConnectionId,
    side: Side,
    ts_us: Option<i64>,
    out: &mut dyn FnMut(StreamEvent<'_>),
) {
    match o {
        HalfOut::Data { offset, bytes } => out(StreamEvent::Data {
            connection,
            side,
            offset,
            ts_us,
            bytes,
        }),
        HalfOut::Gap { offset, len } => out(StreamEvent::Gap {
            connection,
            side,
            offset,
            len,
            ts_us,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Xorshift;

    /// What the layer above would see for one direction.
    #[derive(Debug, Default)]
    struct Collected {
        data: Vec<u8>,
        gaps: Vec<(u64, u64)>,
        ends: Vec<(Side, StreamEnd)>,
        opened: Vec<Option<Side>>,
        closed: usize,
        /// Where the current connection's data starts in `data`.
        base: usize,
        base_gaps: usize,
    }

    fn collect(c: &mut Collected) -> impl FnMut(StreamEvent<'_>) + '_ {
        move |ev| match ev {
            StreamEvent::Opened { client, .. } => {
                c.opened.push(client);
                (c.base, c.base_gaps) = (c.data.len(), c.gaps.len());
            }
            StreamEvent::Data {
                side: Side::A,
                offset,
                bytes,
                ..
            } => {
                let gap_bytes: u64 = c.gaps[c.base_gaps..].iter().map(|g| g.1).sum();
                assert_eq!(offset, (c.data.len() - c.base) as u64 + gap_bytes);
                c.data.extend_from_slice(bytes);
            }
            StreamEvent::Data { .. } => {}
            StreamEvent::Gap {
                side: Side::A,
                offset,
                len,
                ..
            } => c.gaps.push((offset, len)),
            StreamEvent::Gap { .. } => {}
            StreamEvent::End { side, how, .. } => c.ends.push((side, how)),
            StreamEvent::Closed { .. } => c.closed += 1,
        }
    }

    fn seg(seq: u32, flags: (bool, bool, bool, bool), payload: &[u8]) -> TcpSegment<'_> {
        let (syn, ack, fin, rst) = flags;
        TcpSegment {
            src: "10.0.0.1:1000".parse().expect("addr"),
            dst: "10.0.0.2:80".parse().expect("addr"),
            seq,
            ack_number: 0,
            syn,
            ack,
            fin,
            rst,
            payload,
            missing_payload_bytes: 0,
        }
    }

    const DATA: (bool, bool, bool, bool) = (false, false, false, false);

    #[test]
    fn any_permutation_with_duplicates_reassembles_the_stream() {
        let stream: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut rng = Xorshift::new(0x1234_5678_9abc_def1);
        for round in 0..200 {
            let isn = if round % 2 == 0 {
                u32::MAX - 1000
            } else {
                rng.next_u64() as u32
            };
            // Random segmentation.
            let mut pieces: Vec<(usize, usize)> = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let len = 1 + (rng.next_u64() % 300) as usize;
                let end = (at + len).min(stream.len());
                pieces.push((at, end));
                at = end;
            }
            // Local shuffles and duplicates (including re-packetised overlaps).
            let mut order: Vec<(usize, usize)> = Vec::new();
            let mut dup_bytes = 0u64;
            for (i, p) in pieces.iter().enumerate() {
                order.push(*p);
                if rng.next_u64().is_multiple_of(5) {
                    let back = i.saturating_sub((rng.next_u64() % 3) as usize);
                    let q = (pieces[back].0, p.1);
                    dup_bytes += (q.1 - q.0) as u64;
                    order.push(q);
                }
            }
            for i in 0..order.len() {
                let j = (i + (rng.next_u64() % 4) as usize).min(order.len() - 1);
                order.swap(i, j);
            }
            let mut r = TcpReassembler::default();
            let mut c = Collected::default();
            {
                let mut out = collect(&mut c);
                r.segment(None, &seg(isn, (true, false, false, false), b""), &mut out);
                for (from, to) in &order {
                    let s = seg(
                        isn.wrapping_add(1).wrapping_add(*from as u32),
                        DATA,
                        &stream[*from..*to],
                    );
                    r.segment(None, &s, &mut out);
                }
                r.finish(None, &mut out);
            }
            assert_eq!(c.data, stream, "round {round}");
            assert!(c.gaps.is_empty());
            // Every byte beyond the first copy is counted once.
            let sent: u64 = order.iter().map(|(a, b)| (b - a) as u64).sum();
            assert_eq!(r.stats.retransmitted_bytes, sent - stream.len() as u64, "round {round}");
            assert!(dup_bytes <= sent);
        }
    }

    #[test]
    fn missing_segment_is_one_gap_at_the_right_offset() {
        let mut r = TcpReassembler::default();
        let mut c = Collected::default();
        {
            let mut out = collect(&mut c);
            r.segment(None, &seg(100, (true, false, false, false), b""), &mut out);
            r.segment(None, &seg(101, DATA, b"aaaa"), &mut out);
            r.segment(None, &seg(109, DATA, b"cccc"), &mut out);
            r.segment(None, &seg(113, (false, false, true, false), b"dd"), &mut out);
            r.finish(None, &mut out);
        }
        assert_eq!(c.data, b"aaaaccccdd");
        assert_eq!(c.gaps, vec![(4, 4)]);
        assert_eq!(
            c.ends,
            vec![(Side::A, StreamEnd::Fin), (Side::B, StreamEnd::CaptureEnd)]
        );
        assert_eq!(r.stats.gap_bytes, 4);
    }

    #[test]
    fn peer_ack_past_a_hole_declares_it_lost_without_waiting() {
        let mut r = TcpReassembler::default();
        let mut c = Collected::default();
        let mut out = collect(&mut c);
        r.segment(None, &seg(0, (true, false, false, false), b""), &mut out);
        r.segment(None, &seg(1, DATA, b"ab"), &mut out);
        r.segment(None, &seg(5, DATA, b"ef"), &mut out);
        let mut ack = seg(9000, (false, true, false, false), b"");
        std::mem::swap(&mut ack.src, &mut ack.dst);
        ack.ack_number = 7;
        r.segment(None, &ack, &mut out);
        drop(out);
        assert_eq!(c.data, b"abef");
        assert_eq!(c.gaps, vec![(2, 2)]);
    }

    #[test]
    fn pending_bytes_are_bounded() {
        let limits = ReassemblyLimits {
            max_pending_bytes_per_direction: 10,
            ..ReassemblyLimits::default()
        };
        let mut r = TcpReassembler::new(limits);
        let mut c = Collected::default();
        let mut out = collect(&mut c);
        r.segment(None, &seg(0, (true, false, false, false), b""), &mut out);
        r.segment(None, &seg(11, DATA, b"0123456789"), &mut out);
        r.segment(None, &seg(21, DATA, b"x"), &mut out);
        drop(out);
        assert_eq!(c.gaps, vec![(0, 10)]);
        assert_eq!(c.data, b"0123456789x");
    }

    #[test]
    fn midstream_direction_starts_at_the_lowest_sequence_seen() {
        let mut r = TcpReassembler::default();
        let mut c = Collected::default();
        {
            let mut out = collect(&mut c);
            r.segment(None, &seg(5000, DATA, b"world"), &mut out);
            r.segment(None, &seg(4995, DATA, b"hello"), &mut out);
            r.finish(None, &mut out);
        }
        assert_eq!(c.opened, vec![None]);
        assert_eq!(c.data, b"helloworld");
        assert_eq!(r.stats.connections_without_syn, 1);
    }

    #[test]
    fn new_syn_after_close_or_with_another_isn_is_a_new_connection() {
        let mut r = TcpReassembler::default();
        let mut c = Collected::default();
        {
            let mut out = collect(&mut c);
            r.segment(None, &seg(10, (true, false, false, false), b""), &mut out);
            r.segment(None, &seg(10, (true, false, false, false), b""), &mut out); // retransmitted SYN
            r.segment(None, &seg(11, DATA, b"one"), &mut out);
            r.segment(None, &seg(14, (false, false, false, true), b""), &mut out);
            r.segment(None, &seg(14, DATA, b"late"), &mut out); // after RST
            r.segment(None, &seg(900, (true, false, false, false), b""), &mut out);
            r.segment(None, &seg(901, DATA, b"two"), &mut out);
            r.segment(None, &seg(5000, (true, false, false, false), b""), &mut out); // no close seen
            r.finish(None, &mut out);
        }
        assert_eq!(r.stats.connections, 3);
        assert_eq!(c.closed, 3);
        assert_eq!(c.data, b"onetwo");
        assert_eq!(r.stats.after_close_bytes, 4);
    }
}
