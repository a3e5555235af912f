//! Recognising an input's format from its first bytes; file names are only hints.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::formats::{FORMATS, Format};
use super::lines::log_message;
use super::lines::log_message::RpcKeys;
use super::time::starts_with_timestamp;

/// Extensions of program source: a client's code or a sample's generator quotes JSON-RPC text
/// that is not traffic.
const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "rs", "go", "java", "kt", "kts", "scala", "rb", "php", "pl", "lua",
    "c", "h", "cc", "cpp", "hpp", "cs", "swift", "sh", "bash", "zsh", "fish", "ps1",
];

/// Program source: by the file name's extension (`.gz` aside), or a `#!` first line.
fn is_source(head: &[u8], name_hint: &str) -> bool {
    let name = name_hint.strip_suffix(".gz").unwrap_or(name_hint);
    let ext = name.rsplit_once('.').map(|(stem, ext)| (stem, ext.to_ascii_lowercase()));
    head.starts_with(b"#!") || ext.is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext.as_str()))
}

/// Fields that make a JSON object a transcript record.
#[derive(Deserialize)]
struct TranscriptProbe<'a> {
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    raw: Option<&'a RawValue>,
    #[serde(borrow)]
    line: Option<&'a RawValue>,
    #[serde(borrow)]
    raw_b64: Option<&'a RawValue>,
    #[serde(borrow)]
    direction: Option<&'a RawValue>,
    #[serde(borrow)]
    dir: Option<&'a RawValue>,
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
}

#[derive(Default)]
struct Votes {
    lines: usize,
    jsonrpc: usize,
    transcript: usize,
    recorder: usize,
    hostlog: usize,
    timestamped: usize,
    client_log: usize,
    /// Lines carrying a JSON-RPC message after a non-JSON prefix (or in a log record's field).
    embedded: usize,
    /// Paste markup: fences, headings, `tail -f` headers, labels.
    markup: usize,
    /// Lines opening a JSON-RPC message that goes on over the next lines (wrapped or
    /// pretty-printed in a paste).
    opens: usize,
}

/// Recognises the format from the first [`super::input::HEAD_BYTES`] decompressed bytes.
pub fn detect(head: &[u8], name_hint: &str) -> Format {
    if head.is_empty() {
        return Format::Empty;
    }
    if is_source(head, name_hint) {
        return Format::Source;
    }
    // Formats a file says at its start (magic bytes, a JSON document's first key), in the
    // table's order; the line formats are voted on below.
    if let Some(f) = FORMATS.iter().find(|f| f.sniff.is_some_and(|sniff| sniff(head))) {
        return f.format;
    }
    let mut votes = Votes::default();
    let complete_lines = match memchr::memrchr(b'\n', head) {
        Some(i) => &head[..i],
        None => &[][..],
    };
    for line in complete_lines.split(|&b| b == b'\n').take(200) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) || super::lines::client_log::is_not_a_record(line) {
            continue;
        }
        votes.lines += 1;
        let at = line.as_ptr() as usize - complete_lines.as_ptr() as usize;
        vote_line(line, &complete_lines[at..], &mut votes);
    }
    if votes.recorder > 0 && votes.recorder * 2 >= votes.lines {
        return Format::Recorder;
    }
    if votes.transcript > 0 && votes.transcript * 2 >= votes.lines {
        return Format::Jsonl;
    }
    // A third of the lines in client-log shapes: a source file or README quoting one is not.
    if votes.client_log > 0 && votes.client_log * 3 >= votes.lines && votes.hostlog == 0 && votes.jsonrpc == 0 {
        return Format::ClientLog;
    }
    if votes.hostlog > 0 {
        return Format::HostLog;
    }
    // Prefixed messages outnumber bare ones, or bare messages come with paste markup: a log
    // or a pasted excerpt, not a stdio capture.
    if (votes.embedded > 0 && votes.embedded >= votes.jsonrpc) || (votes.markup > 0 && votes.jsonrpc + votes.embedded + votes.opens > 0) {
        return Format::EmbeddedLog;
    }
    if votes.timestamped > 0 && votes.timestamped * 2 > votes.lines && votes.jsonrpc == 0 {
        return Format::HostLog;
    }
    if votes.jsonrpc > 0 {
        return Format::Stdio;
    }
    // A first line longer than the head: a big message with no newline yet.
    let first_partial = votes.lines == 0;
    if first_partial && starts_like_jsonrpc(head) {
        return Format::Stdio;
    }
    if super::discover::direction_token(name_hint).is_some() && !looks_binary(head) {
        return Format::Stdio;
    }
    Format::Unrecognized
}

/// `rest` is the head from this line on (a message opened here may close on the next lines).
fn vote_line(line: &[u8], rest: &[u8], votes: &mut Votes) {
    let trimmed = trim_ascii_start(line);
    if trimmed.first() == Some(&b'{') {
        if super::lines::recorder::recorder_line(trimmed).is_some() {
            votes.recorder += 1;
            return;
        }
        if let Ok(t) = serde_json::from_slice::<TranscriptProbe>(trimmed) {
            let has_msg = t.message.is_some() || t.raw.is_some() || t.line.is_some() || t.raw_b64.is_some();
            let has_dir = t.direction.is_some() || t.dir.is_some();
            if has_msg && has_dir && t.jsonrpc.is_none() {
                votes.transcript += 1;
                return;
            }
        }
        if let Ok(r) = serde_json::from_slice::<RpcKeys>(trimmed)
            && (r.jsonrpc.is_some() || r.method.is_some() || r.result.is_some() || r.error.is_some())
        {
            votes.jsonrpc += 1;
            return;
        }
    }
    if trimmed.first() == Some(&b'[') && serde_json::from_slice::<Vec<RpcKeys>>(trimmed).is_ok() {
        votes.jsonrpc += 1;
        return;
    }
    if super::lines::client_log::is_client_log_line(line) {
        votes.client_log += 1;
    }
    if starts_with_timestamp(line) {
        votes.timestamped += 1;
        if super::lines::hostlog::is_message_line(line) {
            votes.hostlog += 1;
            return;
        }
    }
    let content = if memchr::memmem::find(line, b"jsonrpc").is_some() { log_message::find(line, 0) } else { log_message::LineContent::None };
    if matches!(content, log_message::LineContent::Messages(_)) {
        votes.embedded += 1;
    } else if let log_message::LineContent::Opens(start) = content
        && super::lines::embedded::opens_wrapped_message(&rest[start..])
    {
        votes.opens += 1;
    } else if super::lines::embedded::is_markup(trimmed) {
        votes.markup += 1;
    }
}

fn starts_like_jsonrpc(head: &[u8]) -> bool {
    let t = trim_ascii_start(head);
    (t.starts_with(b"{") || t.starts_with(b"[")) && memchr::memmem::find(&t[..t.len().min(4096)], b"\"jsonrpc\"").is_some()
        || t.starts_with(b"{\"result\"")
        || t.starts_with(b"{\"method\"")
}

fn looks_binary(head: &[u8]) -> bool {
    let sample = &head[..head.len().min(4096)];
    sample.iter().filter(|&&b| b == 0).count() > sample.len() / 100 + 1
}

fn trim_ascii_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_format() {
        assert_eq!(detect(b"", "x"), Format::Empty);
        let quoting = b"print('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}')\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        assert_eq!(detect(quoting, "make.py"), Format::Source);
        assert_eq!(detect(quoting, "make.PY.gz"), Format::Source);
        assert_eq!(detect(b"#!/bin/sh\necho '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'\n", "run"), Format::Source);
        assert_eq!(detect(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", ".py"), Format::Stdio);
        assert_eq!(detect(&[0xd4, 0xc3, 0xb2, 0xa1, 0, 0], "x"), Format::Pcap);
        assert_eq!(detect(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", "x"), Format::Stdio);
        assert_eq!(
            detect(b"{\"direction\":\"c2s\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}}\n", "x"),
            Format::Jsonl
        );
        assert_eq!(
            detect(b"2025-01-01T10:00:00.000Z [docs] [info] Message from client: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n", "x"),
            Format::HostLog
        );
        assert_eq!(detect(b"{\n  \"messages\": 3\n}\n", "expected.json"), Format::Unrecognized);
        assert_eq!(detect(b"Starting server\nstill no json\n", "s2c.log"), Format::Stdio);
        assert_eq!(detect(b"Starting server\n", "notes.txt"), Format::Unrecognized);
        assert_eq!(
            detect(b"{\"session_id\":\"s\",\"seq\":1,\"direction\":\"c2s\",\"raw\":{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}}\n", "x"),
            Format::Recorder
        );
        assert_eq!(detect(b"{\n  \"log\": {\n    \"version\": \"1.2\",\n    \"entries\": [\n", "x"), Format::Har);
        assert_eq!(detect(b"\xef\xbb\xbf{\"log\":{\"version\":\"1.2\",\"creator\":{},\"entries\":[{\"jsonrpc\"", "x"), Format::Har);
        assert_eq!(detect(b"{\"log\":{\"entries\":[]}}\n", "x"), Format::Unrecognized);
        assert_eq!(
            detect(b"[\n  {\n    \"debug\": \"Starting connection attempt\",\n    \"timestamp\": \"2025-07-14T10:20:09.396Z\",\n    \"sessionId\": \"a\",\n    \"cwd\": \"/w\"\n  },", "x.txt"),
            Format::ClaudeMcpLog
        );
        assert_eq!(detect(b"[DEBUG] MCP server \"docs\": Starting connection with timeout of 30000ms\n", "x"), Format::ClientLog);
        assert_eq!(detect(b"2025-04-08 11:16:16.790 [error] rmcp: Failed to reload client: MCP error -32000: Connection closed\n", "x"), Format::ClientLog);
        assert_eq!(detect(b"2025-11-18 11:50:12.457 [error] [core] Error connecting to MCP server: MCP error -32001: Request timed out\n", "x"), Format::HostLog);
    }

    #[test]
    fn prefixed_messages_and_pastes_are_embedded_logs() {
        let tracing = b"2026-12-01T10:00:00.1Z DEBUG rmcp::service: received message={\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n2026-12-01T10:00:00.2Z INFO ready\n";
        assert_eq!(detect(tracing, "x"), Format::EmbeddedLog);
        assert_eq!(detect(b"mcp-1  | {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n", "x"), Format::EmbeddedLog);
        let record = br#"{"level":"debug","msg":"recv","message":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}"#;
        assert_eq!(detect(&[&record[..], b"\n"].concat(), "x"), Format::EmbeddedLog);
        assert_eq!(detect(b"```\nRequest:\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n```\n", "x"), Format::EmbeddedLog);
        let wrapped = b"```\n$ echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\n    \"params\":{}}' | srv\n```\n";
        assert_eq!(detect(wrapped, "x"), Format::EmbeddedLog);
        let half = b"# quoted\nreq = ['{\"jsonrpc\":\"2.0\",\"id\":1,',\n    '\"params\":{}}']\n";
        // Source by its name; by its lines alone (no name), half a quoted message is no log.
        assert_eq!(detect(half, "x.py"), Format::Source);
        assert_eq!(detect(half, "x"), Format::Unrecognized);
        let banner = "\u{256d}\u{2500}\u{256e}\n\u{2502} \u{273b} Welcome to Claude Code! \u{2502}\n\u{2570}\u{2500}\u{256f}\n \u{203b} Tip: x\nclaude --debug\n[DEBUG] MCP server \"a\": Connection failed: MCP error -32000: Connection closed\n    at x (cli.js:1:1)\n    at y (cli.js:1:2)\n";
        assert_eq!(detect(banner.as_bytes(), "x"), Format::ClientLog);
        // Stdio with one polluted line, and a host log with a message line, stay what they are.
        let polluted = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\nlog: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n";
        assert_eq!(detect(polluted, "x"), Format::Stdio);
        let host = b"2025-01-01T10:00:00.000Z [docs] [info] Message from client: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n2025-01-01T10:00:00.1Z x {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        assert_eq!(detect(host, "x"), Format::HostLog);
    }
}
