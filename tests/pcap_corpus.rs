//! The HTTP captures of the shared corpus: frames from both the pcap and the pcapng must be
//! exactly the messages of `transcript.jsonl.gz` (the recorder's ground truth).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use mcpsift::ingest::accounting::CollectSink;
use mcpsift::ingest::frame::{Direction, Transport};
use mcpsift::ingest::packet::pcap::{PcapOptions, read_capture};

use crate::harness;
use crate::testkit::Xorshift;

const CAPTURES: [&str; 3] = ["http_ts_streamable", "http_ts_legacy_sse", "http_py_streamable"];

fn corpus_dir() -> PathBuf {
    crate::util::corpus()
}

fn gunzip(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("gunzip {}: {e}", path.display()));
    out
}

/// One transcript record: (dir, len, session, raw bytes, carrier).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Message {
    dir: String,
    len: u64,
    session: Option<String>,
    raw: Vec<u8>,
}

/// Transcript timestamps (the recorder's clock) by message, in transcript order.
fn transcript_times(capture: &str) -> Vec<(Message, i64)> {
    let text = gunzip(&corpus_dir().join(capture).join("transcript.jsonl.gz"));
    let (messages, _) = transcript(capture);
    let times = text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| {
        serde_json::from_slice::<serde_json::Value>(l).expect("json")["ts_us"]
            .as_i64()
            .expect("ts_us")
    });
    messages.into_iter().zip(times).collect()
}

fn transcript(capture: &str) -> (Vec<Message>, Vec<String>) {
    let text = gunzip(&corpus_dir().join(capture).join("transcript.jsonl.gz"));
    let mut messages = Vec::new();
    let mut carriers = Vec::new();
    for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line).expect("transcript line is JSON");
        let raw = v["raw"]
            .as_str()
            .expect("raw is text in this corpus")
            .as_bytes()
            .to_vec();
        let len = v["len"].as_u64().expect("len");
        assert_eq!(len, raw.len() as u64, "transcript len is the byte length of raw");
        messages.push(Message {
            dir: v["dir"].as_str().expect("dir").to_string(),
            len,
            session: v["session"].as_str().map(str::to_string),
            raw,
        });
        carriers.push(v["carrier"].as_str().expect("carrier").to_string());
    }
    (messages, carriers)
}

fn counts<T: Ord + Clone>(items: impl Iterator<Item = T>) -> BTreeMap<T, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

fn check_capture(capture: &str, file: &str) {
    let (expected, carriers) = transcript(capture);
    let bytes = gunzip(&corpus_dir().join(capture).join(file));
    let mut sink = CollectSink::default();
    let summary = read_capture(bytes.as_slice(), &PcapOptions::default(), &mut sink)
        .unwrap_or_else(|e| panic!("{capture}/{file}: {e}"));
    let got: Vec<Message> = sink
        .frames
        .iter()
        .map(|f| Message {
            dir: f.direction.map(Direction::as_str).unwrap_or("?").to_string(),
            len: f.wire_bytes,
            session: f.session.as_deref().map(str::to_string),
            raw: f.payload.clone(),
        })
        .collect();
    let ctx = format!("{capture}/{file}");

    // Same count per direction.
    assert_eq!(
        counts(got.iter().map(|m| m.dir.clone())),
        counts(expected.iter().map(|m| m.dir.clone())),
        "{ctx}: frames per direction"
    );
    // Same multiset of (dir, len, session).
    assert_eq!(
        counts(got.iter().map(|m| (m.dir.clone(), m.len, m.session.clone()))),
        counts(expected.iter().map(|m| (m.dir.clone(), m.len, m.session.clone()))),
        "{ctx}: (dir, len, session) multiset"
    );
    // Same bytes (with dir and session).
    let got_set = counts(got.iter().cloned());
    let expected_set = counts(expected.iter().cloned());
    if got_set != expected_set {
        let missing: Vec<_> = expected_set
            .keys()
            .filter(|k| !got_set.contains_key(*k))
            .map(|m| (m.dir.clone(), m.len))
            .collect();
        panic!("{ctx}: frame bytes differ; expected but not produced: {missing:?}");
    }
    // Transport matches the carrier, nothing is incomplete, payload is whole.
    let expected_transports = counts(carriers.iter().map(|c| match c.as_str() {
        "http-request-body" | "http-json-response" => "http",
        _ => "sse",
    }));
    let got_transports = counts(sink.frames.iter().map(|f| match f.transport {
        Transport::Http => "http",
        Transport::Sse => "sse",
        _ => "other",
    }));
    assert_eq!(got_transports, expected_transports, "{ctx}: transports");
    for f in &sink.frames {
        assert_eq!(f.incomplete, None, "{ctx}: frame at offset {} incomplete", f.offset);
        assert_eq!(f.wire_bytes, f.payload.len() as u64);
        let http = f.http.as_ref().expect("pcap frames carry HTTP context");
        assert!(
            !http.method.is_empty() && !http.url.is_empty(),
            "{ctx}: frame without its request"
        );
        assert!(f.ts_us.is_some());
    }
    // Packet times agree with the recorder's clock (same host): each frame's time is within
    // 0.1 s of its message's transcript time.
    let mut times = transcript_times(capture);
    for (m, f) in got.iter().zip(&sink.frames) {
        let i = times.iter().position(|(t, _)| t == m).expect("matched above");
        let (_, ts) = times.remove(i);
        let delta = (f.ts_us.expect("timestamp") - ts).abs();
        assert!(delta < 100_000, "{ctx}: frame time {:?} vs transcript {ts}", f.ts_us);
        if std::env::var_os("CORPUS_VERBOSE").is_some() {
            eprintln!("{ctx}: delta {delta} us");
        }
    }
    assert!(!summary.truncated_file, "{ctx}: not truncated");
    assert_eq!(summary.tcp_gap_bytes, 0, "{ctx}: loopback capture has no gaps");
    assert_eq!(summary.frames as usize, expected.len());

    // Byte accounting: no compression in these captures, so everything adds up exactly.
    let framing: u64 = sink
        .framing
        .iter()
        .filter(|(k, _)| !k.starts_with("http_gzip"))
        .map(|(_, v)| *v)
        .sum();
    let skipped: u64 = sink.skips.iter().map(|s| s.bytes).sum();
    let frames: u64 = sink.frames.iter().map(|f| f.wire_bytes).sum();
    assert_eq!(
        framing + skipped + frames,
        bytes.len() as u64,
        "{ctx}: accounting {:?} skips {:?}",
        sink.framing,
        sink.skips
    );
    assert_eq!(summary.file_bytes, bytes.len() as u64);
}

/// HTTP status events: one per response >= 400 (from the recorder's exchange log).
fn check_status_events(capture: &str, file: &str) {
    let log = gunzip(&corpus_dir().join(capture).join("http_exchanges.jsonl.gz"));
    let expected_errors = log
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|v| v["status"].as_u64().is_some_and(|s| s >= 400))
        .count();
    let bytes = gunzip(&corpus_dir().join(capture).join(file));
    let mut sink = CollectSink::default();
    read_capture(bytes.as_slice(), &PcapOptions::default(), &mut sink).expect("capture reads");
    let got = sink.events.iter().filter(|e| e.kind == "http_status").count();
    assert_eq!(
        got, expected_errors,
        "{capture}/{file}: http_status events {:?}",
        sink.events
    );
}

#[test]
fn corpus_pcap_frames_match_transcripts() {
    for capture in CAPTURES {
        check_capture(capture, "traffic.pcap.gz");
    }
}

#[test]
fn corpus_pcapng_frames_match_transcripts() {
    for capture in CAPTURES {
        check_capture(capture, "traffic.pcapng.gz");
    }
}

#[test]
fn corpus_error_statuses_become_events() {
    for capture in CAPTURES {
        for file in ["traffic.pcap.gz", "traffic.pcapng.gz"] {
            check_status_events(capture, file);
        }
    }
}

#[test]
fn corpus_port_filter_keeps_the_server_port_and_drops_the_rest() {
    let capture = "http_ts_streamable";
    let text = gunzip(&corpus_dir().join(capture).join("transcript.jsonl.gz"));
    let first: serde_json::Value =
        serde_json::from_slice(text.split(|b| *b == b'\n').next().expect("a line")).expect("json");
    let url = first["url"].as_str().expect("url");
    let authority = url.trim_start_matches("http://").split('/').next().expect("authority");
    let port: u16 = authority
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port in url");
    let (expected, _) = transcript(capture);
    let bytes = gunzip(&corpus_dir().join(capture).join("traffic.pcap.gz"));

    let mut kept = CollectSink::default();
    let opts = PcapOptions {
        ports: vec![port],
        ..PcapOptions::default()
    };
    read_capture(bytes.as_slice(), &opts, &mut kept).expect("reads");
    assert_eq!(kept.frames.len(), expected.len());

    let mut none = CollectSink::default();
    let opts = PcapOptions {
        ports: vec![port.wrapping_add(1)],
        ..PcapOptions::default()
    };
    let summary = read_capture(bytes.as_slice(), &opts, &mut none).expect("reads");
    assert!(none.frames.is_empty());
    assert_eq!(summary.port_filtered_packets, summary.tcp_packets);
    assert!(none.skips.iter().any(|s| s.reason == "port_filtered"));
}

/// File offsets of the records (pcap) or blocks (pcapng) of a little-endian capture.
fn record_starts(bytes: &[u8]) -> Vec<usize> {
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    };
    let ng = bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]);
    let mut starts = Vec::new();
    let mut at = if ng { 0 } else { 24 };
    while at < bytes.len() {
        starts.push(at);
        let len = if ng {
            u32_at(at + 4)
        } else {
            u32_at(at + 8).map(|caplen| 16 + caplen)
        };
        match len {
            Some(n) if n > 0 => at += n,
            _ => break,
        }
    }
    starts
}

/// Random byte flips (past the file header) and cuts of a real capture: every file still reads
/// to its end, each of its bytes is a frame, framing or a skip (plus at most the bytes lost in
/// the TCP gaps the flips make), a file that ends inside a record says so with one
/// `truncated_capture` skip covering its tail, and no mutation invents packets. The capture
/// itself first gives the transcript's frames with every byte accounted for.
fn mutate_and_read(capture: &str, file: &str, rounds: usize) {
    let original = gunzip(&corpus_dir().join(capture).join(file));
    let opts = PcapOptions::default();
    let cap = opts.max_frame_bytes as usize;
    let mut sink = CollectSink::default();
    let whole = read_capture(original.as_slice(), &opts, &mut sink).unwrap_or_else(|e| panic!("{capture}/{file}: {e}"));
    assert_eq!(sink.frames.len(), transcript(capture).0.len(), "{capture}/{file}: frames");
    harness::assert_closes(&sink, original.len() as u64, 0, cap, &format!("{capture}/{file}"));

    let mut rng = Xorshift::new(0x2545_F491_4F6C_DD1D);
    let records = record_starts(&original);
    for round in 0..rounds {
        let mut bytes = original.clone();
        for _ in 0..1 + rng.next_u64() % 16 {
            // Half of the flips hit record/link/IP/TCP/HTTP headers, half anywhere.
            let at = if rng.next_u64().is_multiple_of(2) && !records.is_empty() {
                records[rng.next_u64() as usize % records.len()] + (rng.next_u64() % 160) as usize
            } else {
                24 + (rng.next_u64() as usize % (bytes.len() - 24))
            };
            if let Some(b) = bytes.get_mut(at) {
                *b = rng.next_u64() as u8;
            }
        }
        if round % 3 == 0 {
            bytes.truncate(rng.next_u64() as usize % bytes.len());
        }
        let what = format!("{capture}/{file} round {round} ({} bytes)", bytes.len());
        let mut sink = CollectSink::default();
        let summary = read_capture(bytes.as_slice(), &opts, &mut sink).unwrap_or_else(|e| panic!("{what}: the file header is intact, yet {e}"));
        if std::env::var_os("MUTATION_VERBOSE").is_some() {
            eprintln!("{what}: {} frames, {} packets, truncated {}", sink.frames.len(), summary.packets, summary.truncated_file);
        }
        let file_bytes = bytes.len() as u64;
        assert_eq!(summary.file_bytes, file_bytes, "{what}: read to the end");
        assert!(summary.packets <= whole.packets, "{what}: {} packets of {}", summary.packets, whole.packets);
        harness::assert_closes(&sink, file_bytes, summary.tcp_gap_bytes, cap, &what);
        let cut: Vec<_> = sink.skips.iter().filter(|s| s.reason == "truncated_capture").map(|s| (s.offset, s.bytes)).collect();
        if summary.truncated_file {
            assert!(matches!(cut[..], [(offset, bytes)] if offset + bytes == file_bytes), "{what}: one truncated_capture skip up to the end: {cut:?}");
        } else {
            assert!(cut.is_empty(), "{what}: {cut:?}");
        }
    }
}

#[test]
fn corpus_mutations_keep_the_accounting_closed() {
    mutate_and_read("http_py_streamable", "traffic.pcapng.gz", 12);
    mutate_and_read("http_ts_legacy_sse", "traffic.pcap.gz", 12);
}

#[test]
#[ignore = "slow: run with --ignored for a longer mutation run"]
fn corpus_mutations_keep_the_accounting_closed_long() {
    for capture in CAPTURES {
        for file in ["traffic.pcap.gz", "traffic.pcapng.gz"] {
            mutate_and_read(capture, file, 300);
        }
    }
}
