//! The body of every fuzz target, shared by `fuzz/fuzz_targets/*.rs` (libFuzzer) and by
//! `tests/fuzz_regressions.rs`, which replays each input in `fuzz/regressions/TARGET/` (every
//! crash found) in `cargo test`. Each function asserts the invariants, beyond "no panic": the
//! byte accounting closes (frames + framing + skips = bytes read, plus at most the bytes lost
//! in TCP gaps) and no frame holds more than the cap.
#![allow(dead_code)]
use mcpsift::ingest::connection::{Side, StreamEnd};
use mcpsift::ingest::formats::Format;
use mcpsift::ingest::accounting::CollectSink;
use mcpsift::ingest::frame::Direction;
use mcpsift::ingest::har::reader::read_har;
use mcpsift::ingest::http::env::HttpEnv;
use mcpsift::ingest::http::stream::HttpConnection;
use mcpsift::ingest::lines::claude_mcp_log::read_claude_mcp_log;
use mcpsift::ingest::lines::client_log::read_client_log;
use mcpsift::ingest::lines::embedded::read_embedded;
use mcpsift::ingest::lines::hostlog::read_hostlog;
use mcpsift::ingest::lines::jsonl::read_jsonl;
use mcpsift::ingest::lines::recorder::read_recorder;
use mcpsift::ingest::lines::stdio::read_stdio;
use mcpsift::ingest::packet::pcap::{PcapOptions, read_capture};
use mcpsift::ingest::run::{IngestOptions, ingest_reader};
use mcpsift::model::message::{Parsed, parse_payload};
use mcpsift::model::validate::{OutputSchemas, literal_may_disagree, text_disagreement, text_may_disagree};
use std::io::Write;


/// Frame caps the targets pick from (first input byte): tiny ones make the cap paths reachable.
pub const CAPS: [usize; 4] = [16, 300, 4096, 1 << 20];

/// Splits off the configuration byte: (cap, selector bits, rest).
fn config(data: &[u8]) -> Option<(usize, u8, &[u8])> {
    let (&first, rest) = data.split_first()?;
    Some((CAPS[usize::from(first & 3)], first >> 2, rest))
}

/// Asserts the invariants on what `input_bytes` (plus `lost` bytes never read, in TCP gaps) gave.
/// Asserts the invariants on what `input_bytes` (plus `lost` bytes never read, in TCP gaps) gave;
/// `what` names the input in a failure.
pub fn assert_closes(sink: &CollectSink, input_bytes: u64, lost: u64, cap: usize, what: &str) {
    // Bytes lost in TCP gaps count in the frames they cut, and nowhere when they fall between
    // messages: the accounted bytes are the bytes read plus at most the bytes lost.
    let accounted = sink.accounted_bytes();
    let read = i128::from(input_bytes);
    assert!(
        accounted >= read && accounted <= read + i128::from(lost),
        "{what}: accounting does not close: {input_bytes} bytes read, {lost} lost, {accounted} accounted\nframing {:?}\nskips {:?}\nframes {:?}",
        sink.framing,
        sink.skips.iter().map(|s| (s.reason, s.offset, s.bytes)).collect::<Vec<_>>(),
        sink.frames.iter().map(|f| (f.offset, f.wire_bytes, f.payload.len())).collect::<Vec<_>>()
    );
    for f in &sink.frames {
        assert!(f.payload.len() <= cap, "{what}: frame at {} holds {} bytes, over the cap {cap}", f.offset, f.payload.len());
    }
}

/// Raw stdio tee logs: the line splitter and the stdio reader on any bytes.
pub fn stdio(data: &[u8]) {
    let Some((cap, bits, input)) = config(data) else { return };
    let direction = match bits & 3 {
        0 => None,
        1 => Some(Direction::ClientToServer),
        _ => Some(Direction::ServerToClient),
    };
    let mut sink = CollectSink::default();
    read_stdio(input, direction, "fuzz", cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "stdio");
    for f in &sink.frames {
        assert!(f.payload.len() as u64 <= f.wire_bytes, "payload longer than its wire bytes at {}", f.offset);
    }
}

/// Host application logs (Claude Desktop, VS Code): the host-log reader on any bytes.
pub fn hostlog(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    read_hostlog(input, "fuzz-server", cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "hostlog");
}

/// Client logs: the Claude Code MCP log reader (JSON array scanner) or the client line-log
/// reader (`claude --debug`, terminal errors, Cursor, Gemini CLI, Inspector), by selector bit.
pub fn client_logs(data: &[u8]) {
    let Some((cap, bits, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    if bits & 1 == 0 {
        read_claude_mcp_log(input, Some("fuzz-server"), cap, &mut sink);
    } else {
        read_client_log(input, "fuzz", cap, &mut sink);
    }
    assert_closes(&sink, input.len() as u64, 0, cap, "client_logs");
}

/// Log lines with JSON-RPC in them (prefixes, escaped fields, bytes reprs, pastes): the
/// embedded-log reader on any bytes.
pub fn embedded(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    read_embedded(input, "fuzz", cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "embedded");
    for f in &sink.frames {
        assert_eq!(f.payload.len() as u64, f.wire_bytes, "embedded frame at {}: payload and wire bytes differ", f.offset);
    }
}

/// JSONL transcripts: the transcript reader on any bytes (records, raw strings, base64).
pub fn jsonl(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    read_jsonl(input, "fuzz.jsonl", cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "jsonl");
}

/// Proxy recorders' JSONL (mcpsnoop, MCPSpy, mcptrace-rs spans): the recorder reader on any bytes.
pub fn recorder(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    read_recorder(input, "fuzz.jsonl", cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "recorder");
}

/// HAR files: the streaming `log.entries` reader, each entry rebuilt as HTTP and read by the
/// HTTP/SSE layer (base64 bodies, missing bodies, cut files).
pub fn har(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let mut sink = CollectSink::default();
    read_har(input, cap, &mut sink);
    assert_closes(&sink, input.len() as u64, 0, cap, "har");
}

/// Raw capture bytes through pcap/pcapng, link layers, IP, TCP reassembly, HTTP and SSE.
pub fn pcap(data: &[u8]) {
    let Some((cap, _, input)) = config(data) else { return };
    let (sink, lost) = read_as(input, Format::Pcap, cap);
    assert_closes(&sink, input.len() as u64, lost, cap, "pcap");
}

/// Reads `input` as `format` at frame cap `cap`, as ingest does; returns what it gave and the
/// bytes lost in TCP gaps. A packet capture is read directly (its summary has the gap bytes),
/// and again through `ingest_reader` when it cannot be read (ingest counts its bytes as a skip).
pub fn read_as(input: &[u8], format: Format, cap: usize) -> (CollectSink, u64) {
    let opts = IngestOptions { max_frame_bytes: cap, ..IngestOptions::default() };
    if format == Format::Pcap {
        let pcap_opts = PcapOptions { max_frame_bytes: cap as u64, ..PcapOptions::default() };
        let mut sink = CollectSink::default();
        if let Ok(summary) = read_capture(input, &pcap_opts, &mut sink) {
            return (sink, summary.tcp_gap_bytes);
        }
    }
    let mut sink = CollectSink::default();
    ingest_reader(input, format, None, "fuzz", &opts, &mut sink);
    (sink, 0)
}

/// One TCP connection's two reassembled streams through the HTTP layer: heads, bodies,
/// chunked, content encodings, SSE. The input is a list of stream events:
/// `[tag][len u16 LE][bytes...]`, where the low three bits of `tag` pick data on side A or B,
/// a gap on A or B (`len` bytes lost), the end of side A or B (FIN or RST by bit 3), or data
/// on a side picked by bit 3.
pub fn http(data: &[u8]) {
    let Some((cap, bits, mut rest)) = config(data) else { return };
    let client = match bits & 3 {
        0 => None,
        1 => Some(Side::B),
        _ => Some(Side::A),
    };
    let mut sink = CollectSink::default();
    let (mut fed, mut lost) = (0u64, 0u64);
    {
        let mut env = HttpEnv::new(&mut sink, cap as u64);
        let mut conn = HttpConnection::new(0, client);
        let mut offset = [0u64; 2];
        let mut ended = [false; 2];
        let mut ts = 0i64;
        while let [tag, a, b, tail @ ..] = rest {
            let len = usize::from(u16::from_le_bytes([*a, *b]));
            let side = |bit: bool| if bit { Side::B } else { Side::A };
            ts += 10;
            let (action, side) = match tag & 7 {
                0 | 1 => (0, side(tag & 1 == 1)),
                2 | 3 => (1, side(tag & 1 == 1)),
                4 | 5 => (2, side(tag & 1 == 1)),
                _ => (0, side(tag & 8 == 8)),
            };
            let i = side.index();
            match action {
                0 => {
                    let n = len.min(tail.len());
                    let (bytes, after) = tail.split_at(n);
                    rest = after;
                    if ended[i] {
                        continue;
                    }
                    conn.data(side, offset[i], Some(ts), bytes, &mut env);
                    offset[i] += n as u64;
                    fed += n as u64;
                }
                1 => {
                    rest = tail;
                    if ended[i] {
                        continue;
                    }
                    let n = (len % 4096 + 1) as u64;
                    conn.gap(side, offset[i], n, Some(ts), &mut env);
                    offset[i] += n;
                    lost += n;
                }
                _ => {
                    rest = tail;
                    if ended[i] {
                        continue;
                    }
                    ended[i] = true;
                    let how = if tag & 8 == 8 { StreamEnd::Rst } else { StreamEnd::Fin };
                    conn.end(side, how, Some(ts), &mut env);
                }
            }
        }
        for side in [Side::A, Side::B] {
            if !ended[side.index()] {
                conn.end(side, StreamEnd::CaptureEnd, Some(ts), &mut env);
            }
        }
        conn.close(Some(ts), &mut env);
        env.report_framing();
    }
    assert_closes(&sink, fed, lost, cap, "http");
}

/// HTTP bodies through the body decoders: a response whose framing (Content-Length or
/// chunked), content encoding (identity, gzip, deflate, zlib-less deflate) and type (JSON,
/// SSE, other) come from the first byte, and whose content is the rest: compressed by the
/// target (so the fuzzer explores what decoders see after decoding) or, with bit 7, sent as
/// is (corrupt compressed data). Chunk and segment sizes come from the second byte.
pub fn body(data: &[u8]) {
    let [shape, sizes, content @ ..] = data else { return };
    let cap = CAPS[usize::from(sizes >> 6)];
    let encoding = ["identity", "gzip", "deflate", "deflate"][usize::from(shape & 3)];
    let content_type = ["application/json", "text/event-stream", "text/plain", "application/json"][usize::from((shape >> 2) & 3)];
    let chunked = shape & 0x10 != 0;
    let raw = shape & 0x80 != 0;
    let body: Vec<u8> = if raw || encoding == "identity" {
        content.to_vec()
    } else {
        let level = flate2::Compression::fast();
        match shape & 3 {
            1 => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
                let _ = e.write_all(content);
                e.finish().unwrap_or_default()
            }
            2 => {
                let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
                let _ = e.write_all(content);
                e.finish().unwrap_or_default()
            }
            _ => {
                let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
                let _ = e.write_all(content);
                e.finish().unwrap_or_default()
            }
        }
    };
    let chunk = usize::from(sizes & 0x3f) * 7 + 1;
    let mut wire = format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Encoding: {encoding}\r\n").into_bytes();
    if chunked {
        wire.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for piece in body.chunks(chunk) {
            wire.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            wire.extend_from_slice(piece);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(b"0\r\n\r\n");
    } else {
        wire.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        wire.extend_from_slice(&body);
    }
    let request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    let mut sink = CollectSink::default();
    {
        let mut env = HttpEnv::new(&mut sink, cap as u64);
        let mut conn = HttpConnection::new(0, Some(Side::A));
        conn.data(Side::A, 0, Some(1), request, &mut env);
        let mut offset = 0u64;
        for segment in wire.chunks(chunk * 3 + 5) {
            conn.data(Side::B, offset, Some(2), segment, &mut env);
            offset += segment.len() as u64;
        }
        conn.end(Side::A, StreamEnd::Fin, Some(3), &mut env);
        conn.end(Side::B, StreamEnd::Fin, Some(3), &mut env);
        conn.close(Some(3), &mut env);
        env.report_framing();
    }
    assert_closes(&sink, (request.len() + wire.len()) as u64, 0, cap, "body");
}

/// The skimmer against serde: every payload is read the same with it as without it, HTTP
/// requests' scalar arguments asked for or not.
pub fn skim(data: &[u8]) {
    for scalar_args in [false, true] {
        let ours = mcpsift::model::message::parse_payload_for(data, scalar_args);
        let serdes = mcpsift::model::message::parse_payload_by_serde(data, scalar_args);
        assert_eq!(ours, serdes, "skimmed differently: {:?}", String::from_utf8_lossy(data));
    }
}

/// The message model on arbitrary JSON: classification and measuring of one payload, and
/// outputSchema validation (schema and instance split at the first 0xff byte).
pub fn message(data: &[u8]) {
    let check = |m: &mcpsift::model::message::Message| {
        assert!(m.structured_bytes <= data.len() as u64, "structuredContent larger than the payload");
    };
    match parse_payload(data) {
        Parsed::One(m) => check(&m),
        Parsed::Batch(ms) => ms.iter().for_each(check),
        Parsed::Other(..) => {}
    }
    // A first text the reader leaves undecoded (no `=`, no leading `{`) cannot disagree.
    if let Ok(literal) = std::str::from_utf8(data)
        && literal.starts_with('"')
        && let Ok(text) = serde_json::from_str::<String>(literal)
    {
        assert!(literal_may_disagree(literal) || !text_may_disagree(&text), "{literal:?} decodes to {text:?}");
    }
    let Some(at) = data.iter().position(|&b| b == 0xff) else { return };
    let (Ok(schema), Ok(instance)) = (std::str::from_utf8(&data[..at]), std::str::from_utf8(&data[at + 1..])) else { return };
    let mut schemas = OutputSchemas::default();
    schemas.insert("s", "t", schema.to_string());
    let _ = schemas.check("s", "t", instance);
    let _ = text_disagreement(schema, instance);
}
