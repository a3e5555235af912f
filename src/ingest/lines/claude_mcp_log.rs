//! Claude Code's per-server MCP log files (`<cache>/claude-cli-nodejs/<project>/mcp-logs-<server>/<time>.txt`):
//! a JSON array of `{"debug"|"error": text, "timestamp", "sessionId", "cwd"}` entries, each an
//! event. Newer builds write the same objects one a line (`.jsonl`); both are read here.
//!
//! Read by a hand byte scanner over object boundaries rather than serde_json's
//! `StreamDeserializer`: the stream deserializer reads whitespace-separated values, not the
//! elements of one array, and on a file cut mid-entry (the process died: common) it gives
//! neither the byte where the cut entry starts nor a bound on what it buffers. The scanner
//! keeps one entry at a time (at most `max_frame_bytes`), parses each complete entry with
//! serde_json, and accounts every byte: brackets, commas and whitespace are
//! `log_array_punctuation`, entries `hostlog_event_lines`, a cut last entry `cut_log_entry`,
//! anything else `invalid_log_entry`. Entries hold no JSON-RPC frames: a body quoted inside an
//! entry's string is escaped, so its bytes are not the message's bytes.

use std::io::{self, Read};

use serde::Deserialize;

use super::client_text::classify;
use crate::ingest::frame::{Event, FramingCategory, Sink, Skip, SkipReason};
use crate::ingest::time::parse_rfc3339_us;

/// Bytes asked of the reader per call.
const READ_BLOCK_BYTES: usize = 1 << 16;

/// One entry as Claude Code writes it.
#[derive(Deserialize)]
struct Entry {
    debug: Option<String>,
    error: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

/// Whether `head` starts like a Claude Code MCP log: `[` (or nothing, one entry a line), then an
/// object whose first key is `debug` or `error`, and, when the head holds the whole first
/// object, that object carries `sessionId` and `cwd` too.
pub fn looks_like_claude_mcp_log(head: &[u8]) -> bool {
    let mut i = skip_ws(head, 0);
    if head.get(i) == Some(&b'[') {
        i = skip_ws(head, i + 1);
    }
    if head.get(i) != Some(&b'{') {
        return false;
    }
    let key_at = skip_ws(head, i + 1);
    let rest = &head[key_at..];
    if !(rest.starts_with(b"\"debug\"") || rest.starts_with(b"\"error\"")) {
        return false;
    }
    let mut it = serde_json::Deserializer::from_slice(&head[i..]).into_iter::<serde_json::Value>();
    match it.next() {
        Some(Ok(v)) => v.get("sessionId").is_some() && v.get("cwd").is_some() && v.get("timestamp").is_some(),
        // The first entry is longer than the head: its first key decides.
        Some(Err(e)) => e.is_eof(),
        None => false,
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Where the scanner is between bytes.
#[derive(Default)]
struct Scan {
    /// Inside an entry: its bracket depth (0: between entries).
    depth: u64,
    in_string: bool,
    escaped: bool,
    /// Offset of the current entry's `{`, or of the current run of invalid bytes.
    start: u64,
    /// The entry's bytes, at most the cap.
    entry: Vec<u8>,
    /// Bytes of the entry (the kept ones and beyond the cap).
    entry_bytes: u64,
    /// A run of bytes that are neither punctuation nor an entry.
    invalid_bytes: u64,
    punctuation: u64,
}

struct Reader<'s> {
    server_hint: Option<String>,
    max_frame_bytes: usize,
    sink: &'s mut dyn Sink,
    scan: Scan,
}

impl Reader<'_> {
    fn flush_punctuation(&mut self) {
        if self.scan.punctuation > 0 {
            self.sink.framing(FramingCategory::LogArrayPunctuation, std::mem::take(&mut self.scan.punctuation));
        }
    }

    fn flush_invalid(&mut self) {
        if self.scan.invalid_bytes > 0 {
            let bytes = std::mem::take(&mut self.scan.invalid_bytes);
            self.sink.skip(Skip { offset: self.scan.start, bytes, reason: SkipReason::InvalidLogEntry, detail: "bytes between log entries that are not an entry object".into() });
        }
    }

    /// Feeds `block`, which starts at absolute offset `at`.
    fn feed(&mut self, block: &[u8], at: u64) {
        for (k, &b) in block.iter().enumerate() {
            let offset = at + k as u64;
            if self.scan.depth > 0 {
                self.entry_byte(b);
                continue;
            }
            match b {
                b'{' => {
                    self.flush_punctuation();
                    self.flush_invalid();
                    self.scan.start = offset;
                    self.scan.depth = 1;
                    self.scan.entry.clear();
                    self.scan.entry.push(b);
                    self.scan.entry_bytes = 1;
                }
                b'[' | b']' | b',' | b' ' | b'\t' | b'\r' | b'\n' => {
                    self.flush_invalid();
                    self.scan.punctuation += 1;
                }
                _ => {
                    self.flush_punctuation();
                    if self.scan.invalid_bytes == 0 {
                        self.scan.start = offset;
                    }
                    self.scan.invalid_bytes += 1;
                }
            }
        }
    }

    fn entry_byte(&mut self, b: u8) {
        let s = &mut self.scan;
        s.entry_bytes += 1;
        if s.entry.len() < self.max_frame_bytes {
            s.entry.push(b);
        }
        if s.in_string {
            if s.escaped {
                s.escaped = false;
            } else if b == b'\\' {
                s.escaped = true;
            } else if b == b'"' {
                s.in_string = false;
            }
            return;
        }
        match b {
            b'"' => s.in_string = true,
            b'{' | b'[' => s.depth += 1,
            b'}' | b']' => {
                s.depth -= 1;
                if s.depth == 0 {
                    self.entry_done();
                }
            }
            _ => {}
        }
    }

    /// A complete entry: an event, or a skip when it is over the cap or not an entry.
    fn entry_done(&mut self) {
        let (offset, bytes) = (self.scan.start, self.scan.entry_bytes);
        let over_cap = bytes > self.scan.entry.len() as u64;
        let entry = if over_cap { None } else { serde_json::from_slice::<Entry>(&self.scan.entry).ok() };
        let Some(entry) = entry.filter(|e| e.debug.is_some() || e.error.is_some()) else {
            let (reason, detail) = if over_cap {
                (SkipReason::LineOverCap, format!("log entry of {bytes} bytes exceeds --max-frame-bytes"))
            } else {
                (SkipReason::InvalidLogEntry, "an object that is not a log entry (no `debug` or `error` text)".to_string())
            };
            self.sink.skip(Skip { offset, bytes, reason, detail });
            return;
        };
        let level = if entry.error.is_some() { "error" } else { "debug" };
        let text = entry.error.or(entry.debug).unwrap_or_default();
        let c = classify(&text, level);
        self.sink.event(Event {
            session: entry.session_id,
            ts_us: entry.timestamp.as_deref().and_then(parse_rfc3339_us),
            offset,
            level: level.into(),
            server: self.server_hint.clone().or(c.server),
            kind: c.kind.into(),
            text,
            facts: c.facts,
        });
        self.sink.framing(FramingCategory::HostlogEventLines, bytes);
    }

    fn finish(&mut self) {
        self.flush_punctuation();
        self.flush_invalid();
        if self.scan.depth > 0 {
            self.sink.skip(Skip {
                offset: self.scan.start,
                bytes: self.scan.entry_bytes,
                reason: SkipReason::CutLogEntry,
                detail: "the log ends inside an entry (Claude Code stopped while writing it)".into(),
            });
        }
    }
}

/// Reads a Claude Code MCP log; `server_hint` is the server its folder names (`mcp-logs-<server>`),
/// if any; without it the server comes from the text (`MCP server "X"`).
pub fn read_claude_mcp_log(mut reader: impl Read, server_hint: Option<&str>, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut r = Reader { server_hint: server_hint.map(str::to_string), max_frame_bytes: max_frame_bytes.max(1), sink, scan: Scan::default() };
    let mut buf = vec![0u8; READ_BLOCK_BYTES];
    let mut at = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                r.feed(&buf[..n], at);
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                r.finish();
                r.sink.skip(Skip { offset: at, bytes: 0, reason: SkipReason::ReadError, detail: format!("input ended early: {e}") });
                return;
            }
        }
    }
    r.finish();
}

/// The server a log file's folder names: `mcp-logs-<server>` gives `<server>`.
pub fn server_from_folder(path: &std::path::Path) -> Option<String> {
    let folder = path.parent()?.file_name()?.to_string_lossy().into_owned();
    folder.strip_prefix("mcp-logs-").filter(|s| !s.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    const ENTRIES: &str = concat!(
        "[\n  {\n    \"debug\": \"Starting connection attempt\",\n    \"timestamp\": \"2025-07-14T10:20:09.396Z\",\n    \"sessionId\": \"s1\",\n    \"cwd\": \"/w\"\n  },\n",
        "  {\n    \"debug\": \"Connection failed: McpError: MCP error -32000: Connection closed\",\n    \"timestamp\": \"2025-07-14T10:20:09.595Z\",\n    \"sessionId\": \"s1\",\n    \"cwd\": \"/w\"\n  },\n",
        "  {\n    \"error\": \"Error: MCP tool \\\"q\\\" response (30000 tokens) exceeds maximum allowed tokens (25000). {\\\"a\\\": [1]}\",\n    \"timestamp\": \"2025-07-14T10:20:10.000Z\",\n    \"sessionId\": \"s1\",\n    \"cwd\": \"/w\"\n  }"
    );

    fn read(text: &str, cap: usize) -> CollectSink {
        let mut sink = CollectSink::default();
        read_claude_mcp_log(text.as_bytes(), Some("docs"), cap, &mut sink);
        assert_eq!(sink.accounted_bytes(), text.len() as i128, "every byte accounted: {:?} {:?}", sink.framing, sink.skips);
        sink
    }

    #[test]
    fn a_complete_array_gives_one_event_per_entry() {
        let text = format!("{ENTRIES}\n]\n");
        assert!(looks_like_claude_mcp_log(text.as_bytes()));
        let sink = read(&text, 1 << 20);
        let kinds: Vec<_> = sink.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["connection_starting", "connection_failed", "result_over_client_cap"]);
        assert_eq!(sink.events[1].facts.error_code, Some(-32000));
        assert_eq!(sink.events[2].facts.tokens, Some(30000));
        assert_eq!(sink.events[2].level, "error");
        assert_eq!(sink.events[0].server.as_deref(), Some("docs"));
        assert_eq!(sink.events[0].session.as_deref(), Some("s1"));
        assert!(sink.skips.is_empty());
    }

    #[test]
    fn a_cut_array_keeps_every_complete_entry_and_counts_the_cut_one() {
        // Cut inside the third entry's string (braces inside the string must not close it).
        let cut_at = ENTRIES.find("{\\\"a\\\"").unwrap() + 3;
        let text = &ENTRIES[..cut_at];
        let sink = read(text, 1 << 20);
        assert_eq!(sink.events.len(), 2);
        assert_eq!(sink.skips.len(), 1);
        assert_eq!(sink.skips[0].reason, SkipReason::CutLogEntry);
        let third = ENTRIES.rfind("  {").unwrap() + 2;
        assert_eq!((sink.skips[0].offset, sink.skips[0].bytes), (third as u64, (cut_at - third) as u64));
    }

    #[test]
    fn an_entry_over_the_cap_and_garbage_are_counted_skips() {
        let text = format!("{ENTRIES}\n] trailing junk");
        let sink = read(&text, 180);
        assert_eq!(sink.events.len(), 2, "the long third entry is over the cap");
        let reasons: Vec<_> = sink.skips.iter().map(|s| s.reason).collect();
        assert_eq!(reasons, [SkipReason::LineOverCap, SkipReason::InvalidLogEntry, SkipReason::InvalidLogEntry]);
    }

    #[test]
    fn one_entry_a_line_is_read_too_and_other_json_is_not_taken() {
        let line = "{\"debug\":\"Starting connection attempt\",\"timestamp\":\"2025-07-14T10:20:09.396Z\",\"sessionId\":\"s1\",\"cwd\":\"/w\"}\n";
        assert!(looks_like_claude_mcp_log(line.as_bytes()));
        assert_eq!(read(&line.repeat(3), 1 << 20).events.len(), 3);
        assert!(!looks_like_claude_mcp_log(b"{\"error\":{\"code\":1},\"jsonrpc\":\"2.0\",\"id\":1}\n"));
        assert!(!looks_like_claude_mcp_log(b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}]\n"));
    }

    #[test]
    fn the_folder_names_the_server() {
        let p = std::path::Path::new("/c/claude-cli-nodejs/-home-u-proj/mcp-logs-docs-search/2025-07-14T10-20-09-396Z.txt");
        assert_eq!(server_from_folder(p).as_deref(), Some("docs-search"));
        assert_eq!(server_from_folder(std::path::Path::new("x/log.txt")), None);
    }
}
