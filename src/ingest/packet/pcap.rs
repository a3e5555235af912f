//! Packet captures (pcap µs/ns in either byte order, pcapng) → frames: streams the file with
//! pcap-parser, decodes each packet ([`linktype`](crate::ingest::packet::linktype)), reassembles TCP
//! ([`tcp`](crate::ingest::packet::tcp)) and parses HTTP/SSE ([`http`](crate::ingest::http::stream)).
//! It does not un-gzip files (the caller does) and never interprets JSON-RPC.
//!
//! # Byte accounting
//! Every byte of the file is reported once, as framing ([`Sink::framing`]), a skip, or frame
//! bytes:
//! * `pcap_headers`: file header, record headers, every pcapng block except packet data;
//! * `link_ip_tcp_headers`: captured packet bytes before the TCP payload (and link trailers);
//! * `tcp_retransmitted`: payload bytes already delivered (first copy wins);
//! * skips `non_tcp_packet`, `ip_fragment`, `undecodable_packet`, `unsupported_linktype`,
//!   `unknown_interface`, `port_filtered` (whole captured packets), `tcp_after_close`,
//!   `tcp_out_of_window` (payload), `truncated_capture` (the cut last record, or the first record
//!   the parser rejects and everything after it, read or not);
//! * the HTTP layer: `http_heads`, `http_chunking`, `sse_framing`, `sse_other_events`,
//!   `http_body_other`, skips `non_http_stream`, `http_midstream`, `http_resync`,
//!   `http_upgraded`, `http_incomplete_head`, `sse_resync`, and frame `wire_bytes`.
//!
//! Multi-line SSE data adds up too: the joining `\n` of the payload is one byte of the previous
//! line break, and only the rest of that break is counted as `sse_framing`.
//!
//! What does not add up exactly:
//! * compressed bodies (gzip, deflate): frames and the HTTP/SSE categories count *decoded*
//!   bytes; `http_gzip_encoded_bytes` has the wire bytes and `http_gzip_decoded_bytes` what
//!   they decoded to, so file bytes = frames + skips + every framing category except
//!   `http_gzip_decoded_bytes`, minus `http_gzip_decoded_bytes`;
//! * bytes lost in TCP gaps are in the `wire_bytes` of the frames they cut, not in the file
//!   (`PcapSummary::tcp_gap_bytes` has the total);
//! * a capped frame (`max_frame_bytes`) has `payload.len() < wire_bytes`; `wire_bytes` counts.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use pcap_parser::traits::PcapNGPacketBlock;
use pcap_parser::{Block, Linktype, PcapBlockOwned};

use crate::ingest::frame::{FramingCategory, Sink, Skip, SkipReason};
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::stream::HttpConnection;
use crate::ingest::input::drain;
use crate::ingest::packet::linktype::{DecodedPacket, decode_packet};
use crate::ingest::packet::tcp::{ConnectionId, ReassemblyLimits, StreamEvent, TcpReassembler};

/// Initial read buffer of the capture reader; it grows for larger blocks.
const READ_BUFFER_BYTES: usize = 1 << 20;
/// Largest block accepted (a bigger one means a corrupt file).
const MAX_BLOCK_BYTES: usize = 256 << 20;
/// Bytes read before sniffing the format (a pipe or decompressor may return short reads).
const SNIFF_BYTES: usize = 64 * 1024;

/// How to read a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapOptions {
    /// TCP ports of interest; empty = every TCP stream that parses as HTTP.
    pub ports: Vec<u16>,
    /// Larger bodies and SSE events become incomplete frames with their true `wire_bytes`.
    pub max_frame_bytes: u64,
}

impl Default for PcapOptions {
    fn default() -> Self {
        PcapOptions {
            ports: Vec::new(),
            max_frame_bytes: crate::ingest::frame::DEFAULT_MAX_FRAME_BYTES as u64,
        }
    }
}

/// The file's container format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureFormat {
    #[default]
    Pcap,
    PcapNanoseconds,
    PcapNg,
}

/// What a run saw. Bytes are file bytes unless they say otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PcapSummary {
    pub format: CaptureFormat,
    pub file_bytes: u64,
    pub packets: u64,
    pub tcp_packets: u64,
    pub non_tcp_packets: u64,
    pub port_filtered_packets: u64,
    pub undecodable_packets: u64,
    /// Packets whose captured length is below their length on the wire.
    pub snaplen_truncated_packets: u64,
    pub connections: u64,
    /// Connections whose SYN was not captured.
    pub connections_without_syn: u64,
    pub http_requests: u64,
    pub http_responses: u64,
    /// Request/response pairs numbered (requests plus responses without a captured request).
    pub http_exchanges: u64,
    pub frames: u64,
    pub incomplete_frames: u64,
    pub sse_events: u64,
    pub http_status_errors: u64,
    pub http_resyncs: u64,
    pub tcp_gaps: u64,
    /// TCP payload bytes sent but absent from the capture.
    pub tcp_gap_bytes: u64,
    /// Duplicate TCP payload (retransmissions, overlaps).
    pub tcp_retransmitted_bytes: u64,
    /// The file ended in the middle of a record.
    pub truncated_file: bool,
    pub first_ts_us: Option<i64>,
    pub last_ts_us: Option<i64>,
}

/// Fatal problems only: bad input inside a capture is reported through the sink.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("not a pcap or pcapng capture (starts with {head:02x?})")]
    NotACapture { head: Vec<u8> },
    #[error("capture file header unreadable: {reason}")]
    BadHeader { reason: String },
    #[error("reading the capture failed at byte {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: std::io::Error,
    },
}

/// True if `head` starts with a pcap (µs or ns, either byte order) or pcapng magic number.
pub fn looks_like_pcap(head: &[u8]) -> bool {
    let Some(magic) = head.get(..4) else { return false };
    matches!(
        magic,
        [0xa1, 0xb2, 0xc3, 0xd4]
            | [0xd4, 0xc3, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0x3c, 0x4d]
            | [0x4d, 0x3c, 0xb2, 0xa1]
            | [0x0a, 0x0d, 0x0d, 0x0a]
    )
}

/// A reader that keeps the `io::Error` pcap-parser would otherwise swallow. An input that
/// ends early (`UnexpectedEof`, e.g. a cut gzip stream) reads as a normal end of file and is
/// remembered, so it is reported like a cut capture instead of failing the run.
struct ErrorKeepingReader<R> {
    inner: R,
    error: Arc<Mutex<Option<std::io::Error>>>,
}

impl<R: Read> Read for ErrorKeepingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let kind = e.kind();
                    let copy = std::io::Error::new(kind, e.to_string());
                    if let Ok(mut slot) = self.error.lock() {
                        slot.get_or_insert(e);
                    }
                    return if kind == std::io::ErrorKind::UnexpectedEof {
                        Ok(0)
                    } else {
                        Err(copy)
                    };
                }
                ok => return ok,
            }
        }
    }
}

/// Per-interface facts of a pcapng section (or the single legacy "interface").
#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: Linktype,
    units_per_second: u64,
    offset_seconds: i64,
}

/// Packets skipped for one reason, reported as one [`Skip`] at the end.
#[derive(Debug, Default, Clone, Copy)]
struct SkippedPackets {
    first_offset: Option<u64>,
    packets: u64,
    bytes: u64,
}

/// Streams a pcap or pcapng (the caller already un-gzipped it if needed) and feeds `sink`.
pub fn read_capture(
    reader: impl Read + Send,
    opts: &PcapOptions,
    sink: &mut dyn Sink,
) -> Result<PcapSummary, PcapError> {
    let io_error = Arc::new(Mutex::new(None));
    let mut reader = ErrorKeepingReader {
        inner: reader,
        error: Arc::clone(&io_error),
    };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|source| PcapError::Io {
            offset: head.len() as u64,
            source,
        })?;
    if !looks_like_pcap(&head) {
        head.truncate(16);
        return Err(PcapError::NotACapture { head });
    }
    let format = match head.get(..4) {
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => CaptureFormat::PcapNg,
        Some([0xa1, 0xb2, 0x3c, 0x4d]) | Some([0x4d, 0x3c, 0xb2, 0xa1]) => CaptureFormat::PcapNanoseconds,
        _ => CaptureFormat::Pcap,
    };
    let mut chained = std::io::Cursor::new(head).chain(reader);
    let mut capture = pcap_parser::create_reader(READ_BUFFER_BYTES, &mut chained).map_err(|e| PcapError::BadHeader {
        reason: format!("{e:?}"),
    })?;

    let mut run = Run::new(opts, sink);
    run.summary.format = format;
    let result = read_blocks(capture.as_mut(), &io_error, &mut run);
    drop(capture);
    // A record the parser rejects stops the reading with only its buffer counted: the rest of
    // the input belongs to the same cut.
    if let Some(cut) = run.cut.as_mut() {
        let unread = drain(&mut chained);
        cut.bytes += unread;
        run.summary.file_bytes += unread;
    }
    if let Err(e) = result {
        run.finish();
        return Err(e);
    }
    let offset = run.summary.file_bytes;
    if !run.summary.truncated_file
        && let Some(e) = take_io_error(&io_error)
    {
        run.truncated(offset, 0, &format!("the input stream ended early: {e}"));
    }
    Ok(run.finish())
}

/// The block loop; `run.summary.file_bytes` is the offset reached.
fn read_blocks(
    capture: &mut (dyn pcap_parser::traits::PcapReaderIterator + Send),
    io_error: &Arc<Mutex<Option<std::io::Error>>>,
    run: &mut Run<'_, '_>,
) -> Result<(), PcapError> {
    let mut offset: u64 = 0;
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut legacy: Option<(Linktype, i64)> = None; // (linktype, ns per tick)
    loop {
        match capture.next() {
            Ok((consumed, block)) => {
                let consumed_bytes = consumed as u64;
                let packet_bytes = match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        legacy = Some((h.network, if h.is_nanosecond_precision() { 1 } else { 1_000 }));
                        0
                    }
                    PcapBlockOwned::Legacy(b) => match legacy {
                        Some((linktype, ns_per_tick)) => {
                            let ts_us = i64::from(b.ts_sec) * 1_000_000 + i64::from(b.ts_usec) * ns_per_tick / 1_000;
                            run.packet(offset, Some(ts_us), linktype, b.data, b.origlen);
                            b.data.len() as u64
                        }
                        None => 0,
                    },
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                        interfaces.clear();
                        0
                    }
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        interfaces.push(Interface {
                            linktype: idb.linktype,
                            units_per_second: idb.ts_resolution().filter(|&u| u > 0).unwrap_or(1_000_000),
                            offset_seconds: idb.ts_offset(),
                        });
                        0
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        let data = epb.packet_data();
                        match interfaces.get(epb.if_id as usize) {
                            Some(iface) => {
                                let raw = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                                let ts_us = ng_timestamp_us(raw, iface);
                                run.packet(offset, Some(ts_us), iface.linktype, data, epb.origlen);
                            }
                            None => run.skip_packet(SkipReason::UnknownInterface, offset, data.len() as u64),
                        }
                        data.len() as u64
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                        let data = spb.packet_data();
                        match interfaces.first() {
                            Some(iface) => run.packet(offset, None, iface.linktype, data, spb.origlen),
                            None => run.skip_packet(SkipReason::UnknownInterface, offset, data.len() as u64),
                        }
                        data.len() as u64
                    }
                    PcapBlockOwned::NG(_) => 0,
                };
                run.pcap_header_bytes += consumed_bytes.saturating_sub(packet_bytes);
                offset += consumed_bytes;
                capture.consume(consumed);
            }
            Err(pcap_parser::PcapError::Eof) => break,
            Err(pcap_parser::PcapError::Incomplete(_)) => {
                if capture.refill().is_err() {
                    if let Some(e) = take_io_error(io_error).filter(|e| e.kind() != std::io::ErrorKind::UnexpectedEof) {
                        run.summary.file_bytes = offset;
                        return Err(PcapError::Io { offset, source: e });
                    }
                    break;
                }
            }
            Err(pcap_parser::PcapError::UnexpectedEof) => {
                let rest = capture.data().len() as u64;
                run.truncated(offset, rest, "the file ends in the middle of a record");
                offset += rest;
                break;
            }
            Err(pcap_parser::PcapError::BufferTooSmall) => {
                let want = capture.data().len().max(READ_BUFFER_BYTES) * 2;
                if want > MAX_BLOCK_BYTES || !capture.grow(want) || capture.refill().is_err() {
                    let rest = capture.data().len() as u64;
                    run.truncated(
                        offset,
                        rest,
                        "a record larger than the reader accepts (corrupt length?)",
                    );
                    offset += rest;
                    break;
                }
            }
            Err(pcap_parser::PcapError::ReadError) => {
                if let Some(e) = take_io_error(io_error).filter(|e| e.kind() != std::io::ErrorKind::UnexpectedEof) {
                    run.summary.file_bytes = offset;
                    return Err(PcapError::Io { offset, source: e });
                }
                let rest = capture.data().len() as u64;
                run.truncated(offset, rest, "the input stream ended early");
                offset += rest;
                break;
            }
            Err(e) => {
                let why = format!("corrupt record: {e:?}");
                let rest = capture.data().len() as u64;
                run.truncated(offset, rest, &why);
                offset += rest;
                break;
            }
        }
    }
    run.summary.file_bytes = offset;
    Ok(())
}

fn take_io_error(slot: &Arc<Mutex<Option<std::io::Error>>>) -> Option<std::io::Error> {
    slot.lock().ok().and_then(|mut s| s.take())
}

/// pcapng timestamp in µs (i128 arithmetic: resolutions up to 2^-63 and offsets in seconds).
fn ng_timestamp_us(raw: u64, iface: &Interface) -> i64 {
    let units = i128::from(iface.units_per_second.max(1));
    let raw = i128::from(raw);
    let us = (i128::from(iface.offset_seconds) + raw / units) * 1_000_000 + (raw % units) * 1_000_000 / units;
    us.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// One run over a capture: packet decoding, reassembly and HTTP state.
struct Run<'o, 's> {
    opts: &'o PcapOptions,
    tcp: TcpReassembler,
    http: HashMap<ConnectionId, HttpConnection>,
    env: HttpEnv<'s>,
    summary: PcapSummary,
    pcap_header_bytes: u64,
    link_ip_tcp_header_bytes: u64,
    skipped: Vec<(SkipReason, SkippedPackets)>,
    last_ts_us: Option<i64>,
    /// Where the capture stopped being readable, reported at the end as one skip up to the end
    /// of the input.
    cut: Option<Cut>,
}

/// The unreadable tail of a capture: from `offset`, `bytes` long, and why.
struct Cut {
    offset: u64,
    bytes: u64,
    why: String,
}

impl<'o, 's> Run<'o, 's> {
    fn new(opts: &'o PcapOptions, sink: &'s mut dyn Sink) -> Self {
        Run {
            opts,
            tcp: TcpReassembler::new(ReassemblyLimits::default()),
            http: HashMap::new(),
            env: HttpEnv::new(sink, opts.max_frame_bytes),
            summary: PcapSummary::default(),
            pcap_header_bytes: 0,
            link_ip_tcp_header_bytes: 0,
            skipped: Vec::new(),
            last_ts_us: None,
            cut: None,
        }
    }

    fn skip_packet(&mut self, reason: SkipReason, offset: u64, bytes: u64) {
        let entry = match self.skipped.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, e)) => e,
            None => {
                self.skipped.push((reason, SkippedPackets::default()));
                let last = self.skipped.len() - 1;
                &mut self.skipped[last].1
            }
        };
        entry.first_offset.get_or_insert(offset);
        entry.packets += 1;
        entry.bytes += bytes;
    }

    fn packet(&mut self, offset: u64, ts_us: Option<i64>, linktype: Linktype, data: &[u8], orig_len: u32) {
        self.summary.packets += 1;
        if let Some(ts) = ts_us {
            self.summary.first_ts_us.get_or_insert(ts);
            self.summary.last_ts_us = Some(self.summary.last_ts_us.map_or(ts, |t| t.max(ts)));
            self.last_ts_us = Some(ts);
        }
        if (data.len() as u64) < u64::from(orig_len) {
            self.summary.snaplen_truncated_packets += 1;
        }
        let bytes = data.len() as u64;
        let seg = match decode_packet(linktype, data, orig_len) {
            DecodedPacket::Tcp(seg) => seg,
            DecodedPacket::NotTcp => {
                self.summary.non_tcp_packets += 1;
                return self.skip_packet(SkipReason::NonTcpPacket, offset, bytes);
            }
            DecodedPacket::IpFragment => {
                self.summary.non_tcp_packets += 1;
                return self.skip_packet(SkipReason::IpFragment, offset, bytes);
            }
            DecodedPacket::Undecodable => {
                self.summary.undecodable_packets += 1;
                return self.skip_packet(SkipReason::UndecodablePacket, offset, bytes);
            }
            DecodedPacket::UnsupportedLinktype => {
                self.summary.undecodable_packets += 1;
                return self.skip_packet(SkipReason::UnsupportedLinktype, offset, bytes);
            }
        };
        self.summary.tcp_packets += 1;
        let ports = &self.opts.ports;
        if !ports.is_empty() && !ports.contains(&seg.src.port()) && !ports.contains(&seg.dst.port()) {
            self.summary.port_filtered_packets += 1;
            return self.skip_packet(SkipReason::PortFiltered, offset, bytes);
        }
        self.link_ip_tcp_header_bytes += bytes - seg.payload.len() as u64;
        let (http, env) = (&mut self.http, &mut self.env);
        self.tcp.segment(ts_us, &seg, &mut |ev| route(ev, ts_us, http, env));
    }

    fn truncated(&mut self, offset: u64, bytes: u64, why: &str) {
        self.summary.truncated_file = true;
        self.cut.get_or_insert(Cut {
            offset,
            bytes,
            why: why.to_string(),
        });
    }

    /// Flushes every connection and reports the counters.
    fn finish(mut self) -> PcapSummary {
        let ts = self.last_ts_us;
        let (http, env) = (&mut self.http, &mut self.env);
        self.tcp.finish(ts, &mut |ev| route(ev, ts, http, env));
        for (_, mut conn) in self.http.drain() {
            conn.close(ts, &mut self.env);
        }
        let stats = self.tcp.stats.clone();
        let sink = &mut *self.env.sink;
        sink.framing(FramingCategory::PcapHeaders, self.pcap_header_bytes);
        sink.framing(FramingCategory::LinkIpTcpHeaders, self.link_ip_tcp_header_bytes);
        if stats.retransmitted_bytes > 0 {
            sink.framing(FramingCategory::TcpRetransmitted, stats.retransmitted_bytes);
        }
        for (reason, bytes, detail) in [
            (
                SkipReason::TcpAfterClose,
                stats.after_close_bytes,
                "TCP payload after RST or beyond FIN",
            ),
            (
                SkipReason::TcpOutOfWindow,
                stats.out_of_window_bytes,
                "TCP payload far outside the stream's window",
            ),
        ] {
            if bytes > 0 {
                sink.skip(Skip {
                    offset: 0,
                    bytes,
                    reason,
                    detail: detail.to_string(),
                });
            }
        }
        if let Some(Cut { offset, bytes, why }) = self.cut.take() {
            sink.skip(Skip {
                offset,
                bytes,
                reason: SkipReason::TruncatedCapture,
                detail: format!("capture cut at file offset {offset}: {why}; {bytes} trailing bytes ignored"),
            });
        }
        for (reason, s) in &self.skipped {
            sink.skip(Skip {
                offset: s.first_offset.unwrap_or(0),
                bytes: s.bytes,
                reason: *reason,
                detail: format!(
                    "{} packets (first at file offset {})",
                    s.packets,
                    s.first_offset.unwrap_or(0)
                ),
            });
        }
        self.env.report_framing();
        let h = &self.env.stats;
        let mut summary = self.summary;
        summary.connections = stats.connections;
        summary.connections_without_syn = stats.connections_without_syn;
        summary.tcp_gaps = stats.gaps;
        summary.tcp_gap_bytes = stats.gap_bytes;
        summary.tcp_retransmitted_bytes = stats.retransmitted_bytes;
        summary.http_requests = h.requests;
        summary.http_responses = h.responses;
        summary.http_exchanges = self.env.next_exchange;
        summary.frames = h.frames;
        summary.incomplete_frames = h.incomplete_frames;
        summary.sse_events = h.sse_events;
        summary.http_status_errors = h.status_errors;
        summary.http_resyncs = h.resyncs;
        summary
    }
}

/// Hands one reassembly event to the connection's HTTP parser.
fn route(
    ev: StreamEvent<'_>,
    ts_us: Option<i64>,
    http: &mut HashMap<ConnectionId, HttpConnection>,
    env: &mut HttpEnv<'_>,
) {
    match ev {
        StreamEvent::Opened { connection, client, a, b } => {
            http.insert(connection, HttpConnection::new(connection, client).with_addresses(a.ip(), b.ip()));
        }
        StreamEvent::Data {
            connection,
            side,
            offset,
            ts_us,
            bytes,
        } => {
            if let Some(c) = http.get_mut(&connection) {
                c.data(side, offset, ts_us, bytes, env);
            }
        }
        StreamEvent::Gap {
            connection,
            side,
            offset,
            len,
            ts_us,
        } => {
            if let Some(c) = http.get_mut(&connection) {
                c.gap(side, offset, len, ts_us, env);
            }
        }
        StreamEvent::End {
            connection,
            side,
            how,
            ts_us,
        } => {
            if let Some(c) = http.get_mut(&connection) {
                c.end(side, how, ts_us, env);
            }
        }
        StreamEvent::Closed { connection } => {
            if let Some(mut c) = http.remove(&connection) {
                c.close(ts_us, env);
            }
        }
    }
}

#[cfg(test)]
#[path = "pcap_tests.rs"]
mod tests;
