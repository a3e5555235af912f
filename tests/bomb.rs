//! A decompression bomb in an HTTP body: a 10 MB gzip body that would inflate to 10 GiB. It must
//! stop at the cap as an incomplete frame plus a counted skip, in bounded memory and time.

use std::io::Write;

use crate::testpcap::Connection;
use crate::util::temp_dir;

const MIB: usize = 1 << 20;

/// A gzip member whose content is `prefix` then `mebibytes` MiB of spaces. Each MiB after the
/// first is the same sync-flushed deflate block (back-references into a window of spaces), so
/// building 10 GiB of content costs one MiB of compression. The trailer's CRC is not that of the
/// content: a reader that decodes it all finds out only at the very end.
fn gzip_bomb(prefix: &[u8], mebibytes: usize) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let mut deflate = Compress::new(Compression::best(), false);
    let mut block = |input: &[u8], flush: FlushCompress| {
        let mut out = Vec::with_capacity(input.len() / 100 + 1024);
        let mut consumed = 0;
        loop {
            let before = deflate.total_in();
            deflate.compress_vec(&input[consumed..], &mut out, flush).expect("deflate");
            consumed += (deflate.total_in() - before) as usize;
            if consumed == input.len() && out.len() < out.capacity() {
                return out;
            }
            out.reserve(out.capacity());
        }
    };
    let mut first = prefix.to_vec();
    first.resize(prefix.len() + MIB, b' ');
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend(block(&first, FlushCompress::Sync));
    let spaces = block(&vec![b' '; MIB], FlushCompress::Sync);
    for _ in 1..mebibytes {
        gz.extend_from_slice(&spaces);
    }
    gz.extend(block(&[], FlushCompress::Finish));
    gz.extend_from_slice(&0u32.to_le_bytes());
    gz.extend_from_slice(&((prefix.len() + mebibytes * MIB) as u32).to_le_bytes());
    gz
}

/// Runs mcpsift; returns its status, stdout and peak resident memory in bytes. The peak is the
/// kernel's high-water mark of the child's own memory (`VmHWM` in /proc/PID/status, which starts
/// afresh at exec), read every few milliseconds until it exits: wait4's `ru_maxrss` would count
/// the test process, whose pages the child shares until exec.
fn run_measured(args: &[&str]) -> (std::process::ExitStatus, String, u64) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcpsift"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run mcpsift");
    let status_file = format!("/proc/{}/status", child.id());
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).expect("stdout");
        out
    });
    let mut peak = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(kb) = text.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kb * 1024);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    (status, reader.join().expect("stdout reader"), peak)
}

#[test]
fn a_gzip_bomb_in_a_pcap_body_stops_at_the_cap_in_bounded_memory() {
    let dir = temp_dir("bomb");
    let request = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"dump","arguments":{}}}"#;
    let prefix = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":""#;
    let body = gzip_bomb(prefix, 10 << 10);
    assert!(body.len() > 9_000_000 && body.len() < 12_000_000, "about 10 MB on the wire: {}", body.len());
    let mut c = Connection::new();
    let mut head = Vec::new();
    write!(head, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.2:8000\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", request.len()).unwrap();
    c.send(true, &[head.as_slice(), request].concat());
    let mut head = Vec::new();
    write!(head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n", body.len()).unwrap();
    c.send(false, &head);
    c.send(false, &body);
    let pcap = c.finish();
    let path = dir.join("bomb.pcap");
    std::fs::write(&path, &pcap).unwrap();
    let p = path.to_str().unwrap();

    // A 64 MiB cap: memory is the cap plus the process (about 80 MiB for the debug binary); at
    // the default 256 MiB cap the same run peaks near 306 MiB.
    let cap = 64 << 20;
    let cap_arg = cap.to_string();
    let (status, out, peak) = run_measured(&["query", p, "--max-frame-bytes", &cap_arg, "--format", "jsonl", "--sql", "SELECT direction, kind, wire_bytes, note FROM frames ORDER BY seq"]);
    assert!(status.success(), "{status}: {out}");
    let frames: Vec<serde_json::Value> = out.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(frames.len(), 2, "{out}");
    let response = &frames[1];
    assert_eq!(response["direction"], "s2c");
    let wire = response["wire_bytes"].as_u64().unwrap();
    assert!(wire >= cap && wire < cap + 8 * MIB as u64, "decoded to the cap and one step past it: {wire}");
    assert!(response["note"].as_str().unwrap_or("").contains("not decoded"), "{response}");
    assert!(peak < 300_000_000, "peak RSS {} MiB", peak >> 20);

    // At the default cap (256 MiB) the body costs the cap and little more over what the same
    // command takes on a small capture: the decoded body grows once to the cap instead of
    // doubling (doubling copied it and the allocator kept the buffer it left: 1.35x the cap,
    // 409 MiB with the release binary on a 2 GiB bomb).
    let small = dir.join("small.pcap");
    let mut c = Connection::new();
    let mut head = Vec::new();
    write!(head, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.2:8000\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", request.len()).unwrap();
    c.send(true, &[head.as_slice(), request].concat());
    let answer = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
    let mut head = Vec::new();
    write!(head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", answer.len()).unwrap();
    c.send(false, &[head.as_slice(), answer].concat());
    std::fs::write(&small, c.finish()).unwrap();
    let (status, _, base) = run_measured(&["check", small.to_str().unwrap()]);
    assert!(status.success());
    let (status, _, peak) = run_measured(&["check", p]);
    assert!(status.success());
    let default_cap = 256u64 << 20;
    assert!(peak.saturating_sub(base) < default_cap + default_cap / 10, "the bomb took {} MiB over the {} MiB of a small capture", (peak - base) >> 20, base >> 20);

    let stats = String::from_utf8(crate::util::mcpsift(&["query", p, "--max-frame-bytes", &cap_arg, "--stats", "--sql", "SELECT 1 AS x"]).stderr).unwrap();
    assert!(stats.contains("http_body_over_cap"), "{stats}");
    assert!(!stats.contains("unaccounted"), "the accounting closes: {stats}");
}
