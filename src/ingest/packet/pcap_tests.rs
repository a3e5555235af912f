//! End-to-end tests of [`read_capture`] on captures written by hand (see `testpcap`).

use std::io::Write;

use super::*;
use crate::ingest::accounting::CollectSink;
use crate::ingest::frame::{Direction, Frame, Transport};
use crate::ingest::packet::testpcap::*;
use crate::testkit::Xorshift;

const SESSION: &str = "5e55-10n";

fn run_with(bytes: &[u8], opts: &PcapOptions) -> (CollectSink, PcapSummary) {
    let mut sink = CollectSink::default();
    let summary = read_capture(bytes, opts, &mut sink).expect("a capture");
    (sink, summary)
}

fn run(bytes: &[u8]) -> (CollectSink, PcapSummary) {
    run_with(bytes, &PcapOptions::default())
}

fn text(f: &Frame) -> &str {
    std::str::from_utf8(&f.payload).unwrap_or("<binary>")
}

fn texts(sink: &CollectSink, dir: Direction) -> Vec<&str> {
    sink.frames
        .iter()
        .filter(|f| f.direction == Some(dir))
        .map(text)
        .collect()
}

/// Framing + skips + frame bytes; with compression, decoded bytes are swapped for wire bytes.
fn accounted_bytes(sink: &CollectSink) -> u64 {
    u64::try_from(sink.accounted_bytes()).expect("accounted bytes are not negative")
}

fn post(path: &str, session: Option<&str>, body: &str) -> Vec<u8> {
    let mut h = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(s) = session {
        h.push_str(&format!("mcp-session-id: {s}\r\nmcp-protocol-version: 2025-11-25\r\n"));
    }
    h.push_str("\r\n");
    h.push_str(body);
    h.into_bytes()
}

fn json_response(status: &str, session: Option<&str>, body: &str) -> Vec<u8> {
    let mut h = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(s) = session {
        h.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
    }
    h.push_str("\r\n");
    h.push_str(body);
    h.into_bytes()
}

/// `body` in chunks of `chunk` bytes (plus the terminating chunk when `terminate`).
fn chunked(body: &[u8], chunk: usize, terminate: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in body.chunks(chunk.max(1)) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    if terminate {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

fn sse_head(session: Option<&str>) -> Vec<u8> {
    let mut h = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
        .to_string();
    if let Some(s) = session {
        h.push_str(&format!("mcp-session-id: {s}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
const INIT_RESULT: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
const PROGRESS: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
const CALL_RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}"#;

fn sse_events_crlf() -> Vec<u8> {
    format!("event: message\r\ndata: {PROGRESS}\r\n\r\nevent: message\r\nid: 7\r\ndata: {CALL_RESULT}\r\n\r\n")
        .into_bytes()
}

/// initialize (JSON response assigns the session), then a call answered over SSE.
fn streamable_exchange(conv: &mut Conversation, mss: usize, sse_chunk: usize) -> Vec<Segment> {
    let mut segs = conv.handshake();
    segs.extend(conv.send(true, &post("/mcp", None, INIT), mss));
    segs.extend(conv.send(false, &json_response("200 OK", Some(SESSION), INIT_RESULT), mss));
    segs.extend(conv.send(true, &post("/mcp", Some(SESSION), CALL), mss));
    let mut resp = sse_head(Some(SESSION));
    resp.extend(chunked(&sse_events_crlf(), sse_chunk, true));
    segs.extend(conv.send(false, &resp, mss));
    segs.extend(conv.close());
    segs
}

fn assert_streamable_frames(sink: &CollectSink) {
    assert_eq!(texts(sink, Direction::ClientToServer), vec![INIT, CALL]);
    assert_eq!(
        texts(sink, Direction::ServerToClient),
        vec![INIT_RESULT, PROGRESS, CALL_RESULT]
    );
    for f in &sink.frames {
        assert_eq!(f.session.as_deref(), Some(SESSION), "frame {:?}", text(f));
        assert_eq!(f.incomplete, None);
        assert_eq!(f.wire_bytes, f.payload.len() as u64);
    }
    let transports: Vec<Transport> = sink.frames.iter().map(|f| f.transport).collect();
    assert_eq!(
        transports,
        vec![
            Transport::Http,
            Transport::Http,
            Transport::Http,
            Transport::Sse,
            Transport::Sse
        ]
    );
}

fn conv_v4() -> Conversation {
    Conversation::new("127.0.0.1:40000", "127.0.0.1:8080", 1000, 500_000)
}

#[test]
fn clean_conversation_on_every_link_type_and_ip_version() {
    let links = [
        Link::Ethernet,
        Link::EthernetVlan,
        Link::Sll,
        Link::Sll2,
        Link::Raw,
        Link::Null,
        Link::Loop,
    ];
    for link in links {
        for v6 in [false, true] {
            let mut conv = if v6 {
                Conversation::new("[::1]:40000", "[::1]:8080", 1000, 500_000)
            } else {
                conv_v4()
            };
            let segs = streamable_exchange(&mut conv, 1400, 4096);
            let bytes = pcap_of(&conv, &segs, link);
            let (sink, summary) = run(&bytes);
            assert_streamable_frames(&sink);
            assert_eq!(summary.connections, 1, "{link:?}");
            assert_eq!(summary.http_exchanges, 2);
            assert_eq!(
                accounted_bytes(&sink),
                bytes.len() as u64,
                "{link:?} v6={v6}: {:?}",
                sink.framing
            );
            let init = &sink.frames[0];
            let http = init.http.as_ref().expect("http context");
            assert_eq!(
                (http.method.as_str(), http.url.as_str(), http.status),
                ("POST", "/mcp", Some(200))
            );
            // The request body starts right after its head, at the stream's beginning.
            assert_eq!(init.offset, (post("/mcp", None, INIT).len() - INIT.len()) as u64);
            let call_result = &sink.frames[4];
            assert_eq!(
                call_result.http.as_ref().and_then(|h| h.sse_event_id.as_deref()),
                Some("7")
            );
            assert_eq!(
                call_result.http.as_ref().and_then(|h| h.protocol_version.as_deref()),
                Some("2025-11-25")
            );
        }
    }
}

#[test]
fn frame_offsets_point_at_the_payload_in_the_reassembled_stream() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 100, 4096);
    let (sink, _) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    let client_stream = [post("/mcp", None, INIT), post("/mcp", Some(SESSION), CALL)].concat();
    let mut server_stream = json_response("200 OK", Some(SESSION), INIT_RESULT);
    server_stream.extend(sse_head(Some(SESSION)));
    server_stream.extend(chunked(&sse_events_crlf(), 4096, true));
    for f in &sink.frames {
        let stream = if f.direction == Some(Direction::ClientToServer) {
            &client_stream
        } else {
            &server_stream
        };
        let at = f.offset as usize;
        assert_eq!(
            &stream[at..at + f.payload.len()],
            f.payload.as_slice(),
            "offset of {}",
            text(f)
        );
    }
}

#[test]
fn out_of_order_duplicated_and_overlapping_segments_reassemble() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 7, 13);
    // Reverse neighbours of the same direction, duplicate every third data segment, and add a
    // retransmission that covers two earlier segments at once (re-packetised).
    let mut mutated: Vec<Segment> = Vec::new();
    let mut duplicated = 0u64;
    let mut i = 0;
    while i < segs.len() {
        let (a, b) = (&segs[i], segs.get(i + 1));
        match b {
            Some(b) if a.from_client == b.from_client && !a.payload.is_empty() && !b.payload.is_empty() => {
                mutated.push(b.clone());
                mutated.push(a.clone());
                if i % 3 == 0 {
                    mutated.push(a.clone());
                    duplicated += a.payload.len() as u64;
                }
                if i % 5 == 0 {
                    let mut both = a.clone();
                    both.payload.extend_from_slice(&b.payload);
                    duplicated += both.payload.len() as u64;
                    mutated.push(both);
                }
                i += 2;
            }
            _ => {
                mutated.push(a.clone());
                i += 1;
            }
        }
    }
    let bytes = pcap_of(&conv, &mutated, Link::Ethernet);
    let (sink, summary) = run(&bytes);
    assert_streamable_frames(&sink);
    assert_eq!(summary.tcp_retransmitted_bytes, duplicated);
    assert_eq!(summary.tcp_gap_bytes, 0);
    assert_eq!(sink.framing.get("tcp_retransmitted").copied(), Some(duplicated));
    assert_eq!(accounted_bytes(&sink), bytes.len() as u64);
}

#[test]
fn tcp_segment_boundary_at_every_offset_of_a_message() {
    let mut response = sse_head(Some(SESSION));
    response.extend(chunked(&sse_events_crlf(), 50, true));
    for split in 1..response.len() {
        let mut conv = conv_v4();
        let mut segs = conv.handshake();
        segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
        segs.extend(conv.send(false, &response[..split], 1 << 20));
        segs.extend(conv.send(false, &response[split..], 1 << 20));
        segs.extend(conv.close());
        let (sink, _) = run(&pcap_of(&conv, &segs, Link::Raw));
        assert_eq!(
            texts(&sink, Direction::ServerToClient),
            vec![PROGRESS, CALL_RESULT],
            "split at {split}"
        );
        assert_eq!(texts(&sink, Direction::ClientToServer), vec![CALL], "split at {split}");
    }
}

#[test]
fn chunk_boundary_at_every_offset_including_cr_lf_splits() {
    let events = sse_events_crlf();
    for split in 1..events.len() {
        let mut body = chunked(&events[..split], usize::MAX, false);
        body.extend(chunked(&events[split..], usize::MAX, true));
        let mut response = sse_head(Some(SESSION));
        response.extend(body);
        let mut conv = conv_v4();
        let mut segs = conv.handshake();
        segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
        segs.extend(conv.send(false, &response, 1 << 20));
        segs.extend(conv.close());
        let (sink, _) = run(&pcap_of(&conv, &segs, Link::Raw));
        assert_eq!(
            texts(&sink, Direction::ServerToClient),
            vec![PROGRESS, CALL_RESULT],
            "chunk split at {split}"
        );
    }
}

#[test]
fn missing_segment_becomes_a_gap_event_and_an_incomplete_frame() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "x".repeat(5000)
    );
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let response = conv.send(false, &json_response("200 OK", None, &big), 1000);
    let lost = response[2].payload.len() as u64;
    let lost_offset = 2 * 1000;
    segs.extend(
        response
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, s)| s.clone()),
    );
    // The connection goes on: a second exchange must still parse.
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    segs.extend(conv.server(&json_response("200 OK", None, CALL_RESULT)));
    segs.extend(conv.close());
    let bytes = pcap_of(&conv, &segs, Link::Ethernet);
    let (sink, summary) = run(&bytes);
    assert_eq!(summary.tcp_gap_bytes, lost);
    assert_eq!(summary.tcp_gaps, 1);
    let gap = sink
        .events
        .iter()
        .find(|e| e.kind == "tcp_gap")
        .expect("a tcp_gap event");
    assert!(
        gap.text
            .contains(&format!("tcp gap of {lost} bytes at stream offset {lost_offset}")),
        "{}",
        gap.text
    );
    assert_eq!(gap.session.as_deref(), Some(SESSION));
    let s2c: Vec<&Frame> = sink
        .frames
        .iter()
        .filter(|f| f.direction == Some(Direction::ServerToClient))
        .collect();
    assert_eq!(s2c.len(), 2);
    let cut = s2c[0];
    assert_eq!(cut.wire_bytes, big.len() as u64, "true length kept");
    let reason = cut.incomplete.as_deref().expect("incomplete");
    assert!(
        reason.contains(&format!("tcp gap of {lost} bytes at stream offset {lost_offset}")),
        "{reason}"
    );
    assert!(big.as_bytes().starts_with(&cut.payload));
    assert_eq!(text(s2c[1]), CALL_RESULT);
    assert_eq!(s2c[1].incomplete, None);
    // Lost bytes are in wire_bytes but not in the file.
    assert_eq!(accounted_bytes(&sink), bytes.len() as u64 + lost);
}

#[test]
fn lost_chunk_framing_resynchronises_at_the_next_response() {
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let mut resp = sse_head(Some(SESSION));
    resp.extend(chunked(&sse_events_crlf(), 16, true));
    let pieces = conv.send(false, &resp, 40);
    let dropped = pieces.len() / 2;
    segs.extend(
        pieces
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != dropped)
            .map(|(_, s)| s.clone()),
    );
    segs.extend(conv.client(&post("/mcp", Some(SESSION), INIT)));
    segs.extend(conv.server(&json_response("200 OK", None, INIT_RESULT)));
    segs.extend(conv.close());
    let (sink, summary) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_eq!(summary.tcp_gaps, 1);
    let s2c = texts(&sink, Direction::ServerToClient);
    assert_eq!(s2c.last().copied(), Some(INIT_RESULT), "resynced: {s2c:?}");
    assert_eq!(texts(&sink, Direction::ClientToServer), vec![CALL, INIT]);
}

#[test]
fn gzip_json_and_gzip_sse_bodies_are_decoded() {
    let gz = |data: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).expect("in memory");
        e.finish().expect("in memory")
    };
    let json = gz(INIT_RESULT.as_bytes());
    let mut resp1 = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        json.len()
    )
    .into_bytes();
    resp1.extend(&json);
    let mut resp2 =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    resp2.extend(chunked(&gz(&sse_events_crlf()), 9, true));
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), INIT)));
    segs.extend(conv.send(false, &resp1, 10));
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    segs.extend(conv.send(false, &resp2, 10));
    segs.extend(conv.close());
    let bytes = pcap_of(&conv, &segs, Link::Ethernet);
    let (sink, _) = run(&bytes);
    assert_eq!(
        texts(&sink, Direction::ServerToClient),
        vec![INIT_RESULT, PROGRESS, CALL_RESULT]
    );
    let first = sink.frames.iter().find(|f| text(f) == INIT_RESULT).expect("json frame");
    assert_eq!(first.wire_bytes, INIT_RESULT.len() as u64);
    assert!(first.note.as_deref().is_some_and(|n| n.contains("gzip")));
    let encoded = sink.framing.get("http_gzip_encoded_bytes").copied().unwrap_or(0);
    assert_eq!(encoded, (json.len() + gz(&sse_events_crlf()).len()) as u64);
    assert_eq!(accounted_bytes(&sink), bytes.len() as u64);
}

#[test]
fn file_cut_mid_record_keeps_everything_before_the_cut() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 1400, 4096);
    let full = pcap_of(&conv, &segs, Link::Ethernet);
    // Start of the last record = end of the previous ones.
    let last_frame_len = conv.frame(segs.last().expect("segments"), Link::Ethernet).len();
    let last_record = full.len() - 16 - last_frame_len;
    for cut in last_record + 1..full.len() {
        let (sink, summary) = run(&full[..cut]);
        assert!(summary.truncated_file, "cut at {cut}");
        let skip = sink
            .skips
            .iter()
            .find(|s| s.reason == "truncated_capture")
            .expect("a truncated_capture skip");
        assert_eq!(skip.offset, last_record as u64);
        assert_eq!(skip.bytes, (cut - last_record) as u64);
        assert_streamable_frames(&sink);
        assert_eq!(accounted_bytes(&sink), cut as u64);
    }
    // A capture cut inside an SSE event keeps the complete event and flags the partial one.
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let mut resp = sse_head(Some(SESSION));
    resp.extend(chunked(&sse_events_crlf(), 1 << 20, true));
    let split = resp
        .windows(CALL_RESULT.len())
        .position(|w| w == CALL_RESULT.as_bytes())
        .expect("result")
        + 10;
    segs.extend(conv.send(false, &resp[..split], 1 << 20));
    segs.extend(conv.send(false, &resp[split..], 1 << 20));
    let full = pcap_of(&conv, &segs, Link::Ethernet);
    let last_len = conv.frame(segs.last().expect("segments"), Link::Ethernet).len();
    let (sink, summary) = run(&full[..full.len() - last_len / 2]);
    assert!(summary.truncated_file);
    let s2c: Vec<&Frame> = sink
        .frames
        .iter()
        .filter(|f| f.direction == Some(Direction::ServerToClient))
        .collect();
    assert_eq!(s2c.len(), 2);
    assert_eq!((text(s2c[0]), s2c[0].incomplete.as_deref()), (PROGRESS, None));
    assert!(CALL_RESULT.as_bytes().starts_with(&s2c[1].payload));
    assert!(
        s2c[1]
            .incomplete
            .as_deref()
            .is_some_and(|r| r.contains("capture ended")),
        "{:?}",
        s2c[1].incomplete
    );
}

#[test]
fn snaplen_truncated_packets_become_gaps() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "y".repeat(3000)
    );
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    segs.extend(conv.send(false, &json_response("200 OK", None, &big), 1000));
    segs.extend(conv.close());
    let snaplen = 14 + 20 + 20 + 300;
    let mut w = PcapWriter::new(1, false, false, snaplen as u32);
    for (i, s) in segs.iter().enumerate() {
        w.packet(1_000_000 + i as i64, &conv.frame(s, Link::Ethernet));
    }
    let (sink, summary) = run(&w.bytes);
    assert!(summary.snaplen_truncated_packets >= 3);
    assert!(summary.tcp_gap_bytes > 0);
    let resp = sink
        .frames
        .iter()
        .find(|f| f.direction == Some(Direction::ServerToClient))
        .expect("response frame");
    assert!(resp.incomplete.as_deref().is_some_and(|r| r.contains("tcp gap")));
    assert_eq!(resp.wire_bytes, big.len() as u64);
    assert_eq!(accounted_bytes(&sink), w.bytes.len() as u64 + summary.tcp_gap_bytes);
}

#[test]
fn sequence_numbers_wrapping_past_2_pow_32() {
    let mut conv = Conversation::new("10.0.0.1:40000", "10.0.0.2:8080", u32::MAX - 40, u32::MAX - 300);
    let segs = streamable_exchange(&mut conv, 50, 30);
    let (sink, summary) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_streamable_frames(&sink);
    assert_eq!(summary.tcp_gap_bytes, 0);
    assert_eq!(summary.tcp_retransmitted_bytes, 0);
}

#[test]
fn legacy_sse_stream_without_fin_yields_frames_and_an_incomplete_tail() {
    let session = "c326b003-bcba-4b2e-a09a-c9bd76e35971";
    let mut get = Conversation::new("127.0.0.1:41000", "127.0.0.1:3000", 7, 9);
    let mut post_conv = Conversation::new("127.0.0.1:41001", "127.0.0.1:3000", 70, 90);
    let mut segs: Vec<(bool, Segment)> = Vec::new();
    let tag = |is_get: bool, v: Vec<Segment>| v.into_iter().map(move |s| (is_get, s));
    segs.extend(tag(true, get.handshake()));
    segs.extend(tag(
        true,
        get.client(b"GET /sse HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n"),
    ));
    let mut head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    head.extend(chunked(
        format!("event: endpoint\ndata: /messages?sessionId={session}\n\n").as_bytes(),
        1 << 20,
        false,
    ));
    segs.extend(tag(true, get.server(&head)));
    segs.extend(tag(false, post_conv.handshake()));
    let url = format!("/messages?sessionId={session}");
    segs.extend(tag(false, post_conv.client(&post(&url, None, INIT))));
    segs.extend(tag(
        false,
        post_conv.server(b"HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted"),
    ));
    let events = format!("event: message\ndata: {INIT_RESULT}\n\n: keepalive\n\nevent: message\ndata: {{\"partial\":");
    segs.extend(tag(true, get.server(&chunked(events.as_bytes(), 1 << 20, false))));
    let mut w = PcapWriter::new(1, false, false, 65535);
    for (i, (is_get, s)) in segs.iter().enumerate() {
        let conv = if *is_get { &get } else { &post_conv };
        w.packet(5_000_000 + i as i64 * 10, &conv.frame(s, Link::Ethernet));
    }
    let (sink, summary) = run(&w.bytes);
    assert_eq!(summary.connections, 2);
    assert_eq!(texts(&sink, Direction::ClientToServer), vec![INIT]);
    assert_eq!(
        texts(&sink, Direction::ServerToClient),
        vec![INIT_RESULT, "{\"partial\":"]
    );
    for f in &sink.frames {
        assert_eq!(f.session.as_deref(), Some(session));
    }
    let request = &sink.frames[0];
    assert_eq!(request.http.as_ref().and_then(|h| h.status), Some(202));
    let tail = sink.frames.last().expect("frames");
    assert!(
        tail.incomplete.as_deref().is_some_and(|r| r.contains("not terminated")),
        "{:?}",
        tail.incomplete
    );
    assert_eq!(sink.frames[1].incomplete, None);
    assert_eq!(sink.framing.get("http_body_other").copied(), Some(8));
    assert_eq!(accounted_bytes(&sink), w.bytes.len() as u64);
}

#[test]
fn pipelined_requests_pair_in_order_and_errors_become_events() {
    let mut requests = b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    requests.extend(post("/mcp", Some(SESSION), INIT));
    requests.extend(post("/nope", Some(SESSION), CALL));
    requests.extend(post("/mcp", None, CALL));
    let mut responses = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n".to_vec();
    responses.extend(json_response("200 OK", None, INIT_RESULT));
    responses.extend(
        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 22\r\n\r\n<h1>no such route</h1>",
    );
    let bad =
        r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
    responses.extend(json_response("400 Bad Request", None, bad));
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.send(true, &requests, 1 << 20));
    segs.extend(conv.send(false, &responses, 1 << 20));
    segs.extend(conv.close());
    let (sink, summary) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_eq!(summary.http_requests, 4);
    assert_eq!(summary.http_responses, 4);
    assert_eq!(texts(&sink, Direction::ClientToServer), vec![INIT, CALL, CALL]);
    assert_eq!(texts(&sink, Direction::ServerToClient), vec![INIT_RESULT, bad]);
    let statuses: Vec<(String, Option<u16>, Option<String>)> = sink
        .frames
        .iter()
        .filter(|f| f.direction == Some(Direction::ClientToServer))
        .map(|f| {
            (
                f.http.as_ref().map(|h| h.url.clone()).unwrap_or_default(),
                f.http.as_ref().and_then(|h| h.status),
                f.session.as_deref().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("/mcp".to_string(), Some(200), Some(SESSION.to_string())),
            ("/nope".to_string(), Some(404), Some(SESSION.to_string())),
            ("/mcp".to_string(), Some(400), None),
        ]
    );
    let errors: Vec<&str> = sink
        .events
        .iter()
        .filter(|e| e.kind == "http_status")
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with("POST /nope -> 404 Not Found: <h1>no such route</h1>"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].starts_with("POST /mcp -> 400 Bad Request: {\"jsonrpc\""),
        "{}",
        errors[1]
    );
    assert!(
        sink.events
            .iter()
            .filter(|e| e.kind == "http_status")
            .all(|e| e.level == "error")
    );
    // The exchange numbers pair the 400 error frame with its request.
    let ex = |t: &str, d: Direction| {
        sink.frames
            .iter()
            .rfind(|f| text(f) == t && f.direction == Some(d))
            .and_then(|f| f.http.as_ref())
            .map(|h| h.exchange)
    };
    assert_eq!(ex(bad, Direction::ServerToClient), ex(CALL, Direction::ClientToServer));
}

#[test]
fn pcapng_with_two_interfaces_resolutions_and_simple_packets() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 1400, 4096);
    let mut w = PcapNgWriter::new();
    let eth = w.interface(1, 6);
    let raw = w.interface(101, 9);
    let base = 1_796_201_793_091_059i64;
    let mut expected_ts = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let ts = base + i as i64 * 1234;
        if i == 1 {
            // A simple packet block (no timestamp) on interface 0.
            w.simple(&conv.frame(s, Link::Ethernet));
        } else if s.from_client {
            w.enhanced(eth, ts, &conv.frame(s, Link::Ethernet), 1 << 20);
        } else {
            w.enhanced(raw, ts, &conv.frame(s, Link::Raw), 1 << 20);
        }
        expected_ts.push(ts);
    }
    let (sink, summary) = run(&w.bytes);
    assert_eq!(summary.format, CaptureFormat::PcapNg);
    assert_streamable_frames(&sink);
    assert_eq!(summary.first_ts_us, Some(base));
    // Every frame is stamped with one of the packet times (ns interface rounds to µs exactly).
    for f in &sink.frames {
        assert!(expected_ts.contains(&f.ts_us.expect("timestamp")), "{:?}", f.ts_us);
    }
    assert_eq!(accounted_bytes(&sink), w.bytes.len() as u64);
}

#[test]
fn big_endian_and_nanosecond_pcaps() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 1400, 4096);
    for (nanos, big_endian) in [(false, true), (true, false), (true, true)] {
        let mut w = PcapWriter::new(1, nanos, big_endian, 65535);
        for (i, s) in segs.iter().enumerate() {
            w.packet(1_700_000_000_123_456 + i as i64, &conv.frame(s, Link::Ethernet));
        }
        assert!(looks_like_pcap(&w.bytes));
        let (sink, summary) = run(&w.bytes);
        assert_streamable_frames(&sink);
        assert_eq!(
            summary.first_ts_us,
            Some(1_700_000_000_123_456),
            "nanos={nanos} be={big_endian}"
        );
        let expected = if nanos {
            CaptureFormat::PcapNanoseconds
        } else {
            CaptureFormat::Pcap
        };
        assert_eq!(summary.format, expected);
    }
}

#[test]
fn port_reuse_after_fin_is_a_new_connection() {
    let mut first = conv_v4();
    let mut segs = first.handshake();
    segs.extend(first.client(&post("/mcp", None, INIT)));
    segs.extend(first.server(&json_response("200 OK", Some("one"), INIT_RESULT)));
    segs.extend(first.close());
    let mut second = Conversation::new("127.0.0.1:40000", "127.0.0.1:8080", 9_000_000, 77);
    segs.extend(second.handshake());
    segs.extend(second.client(&post("/mcp", None, INIT)));
    segs.extend(second.server(&json_response("200 OK", Some("two"), INIT_RESULT)));
    segs.extend(second.close());
    let (sink, summary) = run(&pcap_of(&first, &segs, Link::Ethernet));
    assert_eq!(summary.connections, 2);
    let conns: Vec<(u64, Option<String>)> = sink
        .frames
        .iter()
        .map(|f| (f.http.as_ref().map_or(99, |h| h.connection), f.session.as_deref().map(str::to_string)))
        .collect();
    let one = Some("one".to_string());
    let two = Some("two".to_string());
    assert_eq!(conns, vec![(0, one.clone()), (0, one), (1, two.clone()), (1, two)]);
}

#[test]
fn capture_started_mid_connection_resynchronises() {
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.send(true, &post("/mcp", Some(SESSION), CALL), 30));
    segs.extend(conv.server(&json_response("200 OK", None, CALL_RESULT)));
    segs.extend(conv.client(&post("/mcp", Some(SESSION), INIT)));
    segs.extend(conv.server(&json_response("200 OK", None, INIT_RESULT)));
    segs.extend(conv.close());
    // Drop the handshake and the first two segments of the first request.
    let tail: Vec<Segment> = segs[5..].to_vec();
    let (sink, summary) = run(&pcap_of(&conv, &tail, Link::Ethernet));
    assert_eq!(summary.connections_without_syn, 1);
    assert_eq!(texts(&sink, Direction::ClientToServer), vec![INIT]);
    assert_eq!(texts(&sink, Direction::ServerToClient), vec![CALL_RESULT, INIT_RESULT]);
    let init = sink.frames.iter().find(|f| text(f) == INIT).expect("init");
    assert_eq!(init.session.as_deref(), Some(SESSION));
    assert_eq!(init.http.as_ref().and_then(|h| h.status), Some(200));
    assert!(
        sink.skips.iter().any(|s| s.reason == "http_midstream"),
        "{:?}",
        sink.skips
    );
}

#[test]
fn rst_ends_the_connection_and_cuts_the_body() {
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let mut resp = sse_head(Some(SESSION));
    resp.extend(chunked(
        format!("data: {PROGRESS}\n\ndata: {{\"cut").as_bytes(),
        1 << 20,
        false,
    ));
    segs.extend(conv.server(&resp));
    let (seq, ack) = (conv.client_seq, conv.server_seq);
    segs.push(Segment {
        from_client: true,
        seq,
        ack,
        flags: RST | ACK,
        payload: vec![],
    });
    segs.extend(conv.server(b"data: after reset\n\n"));
    let (sink, summary) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_eq!(texts(&sink, Direction::ServerToClient), vec![PROGRESS, "{\"cut"]);
    let tail = sink.frames.last().expect("frames");
    assert!(
        tail.incomplete.as_deref().is_some_and(|r| r.contains("RST")),
        "{:?}",
        tail.incomplete
    );
    assert!(
        sink.skips
            .iter()
            .any(|s| s.reason == "tcp_after_close" && s.bytes == 19)
    );
    assert_eq!(summary.connections, 1);
}

#[test]
fn max_frame_bytes_caps_payload_but_keeps_true_length() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "z".repeat(1000)
    );
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let mut resp = sse_head(None);
    resp.extend(chunked(format!("data: {big}\n\n").as_bytes(), 100, true));
    segs.extend(conv.server(&resp));
    segs.extend(conv.client(&post("/mcp", Some(SESSION), &big)));
    segs.extend(conv.server(&json_response("200 OK", None, &big)));
    segs.extend(conv.close());
    let opts = PcapOptions {
        max_frame_bytes: 64,
        ..PcapOptions::default()
    };
    let (sink, _) = run_with(&pcap_of(&conv, &segs, Link::Ethernet), &opts);
    let capped: Vec<&Frame> = sink
        .frames
        .iter()
        .filter(|f| f.wire_bytes == big.len() as u64)
        .collect();
    assert_eq!(capped.len(), 3);
    for f in capped {
        assert_eq!(f.payload.len(), 64);
        assert_eq!(f.payload.as_slice(), &big.as_bytes()[..64]);
        assert!(f.incomplete.as_deref().is_some_and(|r| r.contains("max_frame_bytes")));
    }
}

#[test]
fn non_http_and_non_tcp_traffic_is_skipped_with_reasons() {
    let mut conv = Conversation::new("127.0.0.1:40000", "127.0.0.1:6379", 1, 2);
    let mut segs = conv.handshake();
    segs.extend(conv.client(b"*1\r\n$4\r\nPING\r\n"));
    segs.extend(conv.server(b"+PONG\r\n"));
    segs.extend(conv.close());
    let mut w = PcapWriter::new(101, false, false, 65535);
    for s in &segs {
        w.packet(1, &conv.frame(s, Link::Raw));
    }
    let udp = [
        0x45, 0, 0, 30, 0, 0, 0, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1, 0, 53, 0, 53, 0, 10, 0, 0, b'h', b'i',
    ];
    w.packet(2, &udp);
    let (sink, summary) = run(&w.bytes);
    assert!(sink.frames.is_empty());
    assert_eq!(summary.non_tcp_packets, 1);
    let reason_bytes = |r: &str| {
        sink.skips
            .iter()
            .filter(|s| s.reason == r)
            .map(|s| s.bytes)
            .sum::<u64>()
    };
    assert_eq!(reason_bytes("non_http_stream"), 14 + 7);
    assert_eq!(reason_bytes("non_tcp_packet"), 30);
    assert_eq!(accounted_bytes(&sink), w.bytes.len() as u64);
}

#[test]
fn not_a_capture_is_an_error_and_an_empty_capture_is_not() {
    let mut sink = CollectSink::default();
    let err = read_capture(&b"{\"jsonrpc\":\"2.0\"}\n"[..], &PcapOptions::default(), &mut sink);
    assert!(matches!(err, Err(PcapError::NotACapture { .. })));
    assert!(matches!(
        read_capture(&b""[..], &PcapOptions::default(), &mut sink),
        Err(PcapError::NotACapture { .. })
    ));
    let header_only = PcapWriter::new(1, false, false, 65535).bytes;
    let (sink, summary) = run(&header_only);
    assert_eq!(summary.packets, 0);
    assert!(!summary.truncated_file);
    assert_eq!(sink.framing.get("pcap_headers").copied(), Some(24));
}

/// A corrupt record early in a capture larger than the reader's buffer (a pcapng block whose
/// trailing length disagrees with its head): everything from that record to the end of the
/// input, read or not, is one `truncated_capture` skip, so the file's bytes still add up.
#[test]
fn a_corrupt_record_cuts_the_capture_up_to_the_end_of_the_input() {
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", None, INIT)));
    let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"pad\":\"{}\"}}}}", "x".repeat(3 << 20));
    segs.extend(conv.server(&json_response("200 OK", None, &body)));
    let mut ng = PcapNgWriter::new();
    let iface = ng.interface(1, 6);
    let mut corrupt = 0;
    for (i, seg) in segs.iter().enumerate() {
        let start = ng.bytes.len();
        ng.enhanced(iface, i as i64, &conv.frame(seg, Link::Ethernet), 1 << 20);
        if i == 4 {
            corrupt = start;
            let trailer = ng.bytes.len() - 4;
            ng.bytes[trailer] ^= 0x04;
        }
    }
    let len = ng.bytes.len();
    assert!(len > 3 << 20, "larger than the 1 MiB read buffer: {len}");
    let (sink, summary) = run(&ng.bytes);
    assert!(summary.truncated_file);
    assert_eq!(summary.packets, 4, "the records before the corrupt one");
    assert_eq!(summary.file_bytes, len as u64);
    let cut: Vec<(u64, u64)> = sink.skips.iter().filter(|s| s.reason == SkipReason::TruncatedCapture).map(|s| (s.offset, s.bytes)).collect();
    assert_eq!(cut, vec![(corrupt as u64, (len - corrupt) as u64)]);
    assert_eq!(accounted_bytes(&sink), len as u64);
}

/// Random flips (past the pcap file header) and cuts of a pcap and a pcapng: every file
/// still reads, each of its bytes is a frame, framing or a skip (plus at most the bytes lost in
/// the TCP gaps the flips make), and a file that ends inside a record says so with one
/// `truncated_capture` skip covering its tail.
#[test]
fn mutated_captures_keep_the_accounting_closed() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 61, 17);
    let mut captures = vec![pcap_of(&conv, &segs, Link::Ethernet)];
    let mut ng = PcapNgWriter::new();
    let iface = ng.interface(276, 9);
    for (i, s) in segs.iter().enumerate() {
        ng.enhanced(iface, i as i64, &conv.frame(s, Link::Sll2), 1 << 20);
    }
    captures.push(ng.bytes);
    let opts = PcapOptions {
        max_frame_bytes: 1 << 16,
        ..PcapOptions::default()
    };
    for original in &captures {
        let (sink, summary) = run_with(original, &opts);
        assert_streamable_frames(&sink);
        assert_eq!(summary.packets, segs.len() as u64);
        assert_eq!(accounted_bytes(&sink), original.len() as u64);
    }
    let mut rng = Xorshift::new(0x9E37_79B9_7F4A_7C15);
    for (capture, original) in captures.iter().enumerate() {
        for round in 0..300 {
            let mut bytes = original.clone();
            let flips = 1 + (rng.next_u64() % 8) as usize;
            for _ in 0..flips {
                let at = 24 + (rng.next_u64() as usize % (bytes.len() - 24));
                bytes[at] = rng.next_u64() as u8;
            }
            if round % 7 == 0 {
                bytes.truncate(rng.next_u64() as usize % bytes.len());
            }
            let what = format!("capture {capture} round {round} ({} bytes)", bytes.len());
            let mut sink = CollectSink::default();
            let summary = read_capture(bytes.as_slice(), &opts, &mut sink)
                .unwrap_or_else(|e| panic!("{what}: the file header is intact, yet {e}"));
            let file_bytes = bytes.len() as u64;
            assert_eq!(summary.file_bytes, file_bytes, "{what}: read to the end");
            assert!(summary.packets <= segs.len() as u64, "{what}: {} packets", summary.packets);
            let accounted = accounted_bytes(&sink);
            assert!(
                (file_bytes..=file_bytes + summary.tcp_gap_bytes).contains(&accounted),
                "{what}: {accounted} bytes accounted, {} lost in gaps\nframing {:?}\nskips {:?}",
                summary.tcp_gap_bytes,
                sink.framing,
                sink.skips
            );
            let cut: Vec<&Skip> = sink.skips.iter().filter(|s| s.reason == SkipReason::TruncatedCapture).collect();
            if summary.truncated_file {
                assert!(
                    matches!(cut[..], [s] if s.offset + s.bytes == file_bytes),
                    "{what}: one truncated_capture skip up to the end: {cut:?}"
                );
            } else {
                assert!(cut.is_empty(), "{what}: {cut:?}");
            }
        }
    }
}

#[test]
fn a_cut_gzip_stream_reads_like_a_cut_capture() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 200, 4096);
    let plain = pcap_of(&conv, &segs, Link::Ethernet);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&plain).expect("in memory");
    let gz = e.finish().expect("in memory");
    let cut = &gz[..gz.len() * 2 / 3];
    let mut sink = CollectSink::default();
    let summary =
        read_capture(flate2::read::GzDecoder::new(cut), &PcapOptions::default(), &mut sink).expect("not fatal");
    assert!(summary.truncated_file);
    assert!(summary.packets > 3);
    assert!(sink.skips.iter().any(|s| s.reason == "truncated_capture"));
}

#[test]
fn upgrade_stops_http_parsing() {
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"));
    segs.extend(conv.server(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"));
    let (frames_c, frames_s) = (b"\x81\x05hello POST / HTTP/1.1\r\n\r\n", b"\x81\x02ok");
    segs.extend(conv.client(frames_c));
    segs.extend(conv.server(frames_s));
    segs.extend(conv.close());
    let bytes = pcap_of(&conv, &segs, Link::Ethernet);
    let (sink, _) = run(&bytes);
    assert!(sink.frames.is_empty());
    let upgraded: u64 = sink
        .skips
        .iter()
        .filter(|s| s.reason == "http_upgraded")
        .map(|s| s.bytes)
        .sum();
    assert_eq!(upgraded, (frames_c.len() + frames_s.len()) as u64);
    assert_eq!(accounted_bytes(&sink), bytes.len() as u64);
}

#[test]
fn ipv4_and_ipv6_link_types_without_link_header() {
    for (linktype, v6) in [(228u32, false), (229, true)] {
        let mut conv = if v6 {
            Conversation::new("[::1]:40000", "[::1]:8080", 1, 2)
        } else {
            conv_v4()
        };
        let segs = streamable_exchange(&mut conv, 1400, 4096);
        let mut w = PcapWriter::new(linktype, false, false, 65535);
        for (i, s) in segs.iter().enumerate() {
            w.packet(i as i64, &conv.frame(s, Link::Raw));
        }
        let (sink, _) = run(&w.bytes);
        assert_streamable_frames(&sink);
    }
}

#[test]
fn a_batch_request_is_one_frame() {
    let batch = format!("[{INIT},{CALL}]");
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), &batch)));
    segs.extend(conv.server(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"));
    segs.extend(conv.close());
    let (sink, _) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_eq!(texts(&sink, Direction::ClientToServer), vec![batch.as_str()]);
    assert_eq!(sink.frames[0].http.as_ref().and_then(|h| h.status), Some(202));
}

#[test]
fn one_byte_segments_reassemble() {
    let mut conv = conv_v4();
    let segs = streamable_exchange(&mut conv, 1, 5);
    let (sink, _) = run(&pcap_of(&conv, &segs, Link::Sll2));
    assert_streamable_frames(&sink);
}

#[test]
fn gap_inside_a_large_sse_event_spares_the_next_events() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"text":"{}"}}}}"#,
        "q".repeat(5000)
    );
    let mut events = format!("event: message\ndata: {big}\n\n").into_bytes();
    events.extend(format!("event: message\ndata: {CALL_RESULT}\n\n").as_bytes());
    let mut resp = sse_head(Some(SESSION));
    resp.extend(chunked(&events, 6000, true));
    let mut conv = conv_v4();
    let mut segs = conv.handshake();
    segs.extend(conv.client(&post("/mcp", Some(SESSION), CALL)));
    let pieces = conv.send(false, &resp, 1000);
    segs.extend(
        pieces
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 3)
            .map(|(_, s)| s.clone()),
    );
    segs.extend(conv.close());
    let (sink, summary) = run(&pcap_of(&conv, &segs, Link::Ethernet));
    assert_eq!(summary.tcp_gaps, 1);
    let s2c: Vec<&Frame> = sink
        .frames
        .iter()
        .filter(|f| f.direction == Some(Direction::ServerToClient))
        .collect();
    assert_eq!(
        s2c.len(),
        2,
        "{:?}",
        s2c.iter().map(|f| f.incomplete.clone()).collect::<Vec<_>>()
    );
    assert!(s2c[0].incomplete.as_deref().is_some_and(|r| r.contains("tcp gap")));
    assert!(big.as_bytes().starts_with(&s2c[0].payload));
    assert_eq!((text(s2c[1]), s2c[1].incomplete.as_deref()), (CALL_RESULT, None));
    assert!(sink.skips.iter().any(|s| s.reason == "sse_resync"));
}
