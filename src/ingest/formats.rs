//! The one table of input formats: each format's name and the other names `--input-format`
//! takes, what it is (the CLI's help and errors say it), how it is recognised when its start
//! says so, and the reader its bytes go to. Detection, dispatch and the CLI texts are derived
//! from [`FORMATS`]; a new format is a row here and its reader.

use std::io::Read;

use super::frame::{Direction, Sink};

/// What an input file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// pcap or pcapng (by magic bytes).
    Pcap,
    /// Raw newline-delimited JSON-RPC as written to a stdio pipe (one direction or both).
    Stdio,
    /// Host application log with `Message from client|server:` or `[Client Says]` lines.
    HostLog,
    /// JSONL transcript: one object per line holding a message and its direction.
    Jsonl,
    /// Zero bytes.
    Empty,
    /// None of the above.
    Unrecognized,
    /// Program source (`.py`, `.js`, `.rs`, a `#!` script, ...): the JSON-RPC text a client's
    /// source or a sample's generator quotes is not traffic. Read only when `--input-format`
    /// names a format.
    Source,
    /// A proxy recorder's JSONL: mcpsnoop envelopes, MCPSpy events, mcptrace-rs spans.
    Recorder,
    /// HAR 1.2 (HTTP Archive): a JSON object whose `log` has `version` and `entries`.
    Har,
    /// Claude Code's per-server MCP log (`mcp-logs-<server>/*.txt`): a JSON array of entries.
    ClaudeMcpLog,
    /// An MCP client's own line log: `claude --debug`, Claude Code's terminal errors, Cursor,
    /// Gemini CLI, MCP Inspector.
    ClientLog,
    /// Log lines that carry whole JSON-RPC messages after a prefix (docker compose, tracing,
    /// Go and Python logging, JSON-lines logs), or a pasted excerpt of messages and labels.
    EmbeddedLog,
}

/// What a reader is given besides the bytes: a stdio pair's side, the session or server name
/// (see [`super::run::ingest_reader`]), the frame cap and the ports of packet captures.
pub struct ReadContext<'a> {
    pub direction: Option<Direction>,
    pub session: &'a str,
    pub max_frame_bytes: usize,
    pub ports: &'a [u16],
}

/// Reads one input's bytes into a sink.
pub type Reader = fn(&mut (dyn Read + Send), &ReadContext, &mut dyn Sink);

/// One row of [`FORMATS`].
pub struct FormatInfo {
    pub format: Format,
    /// The name reports and `--input-format` use.
    pub name: &'static str,
    /// Other names `--input-format` takes.
    pub aliases: &'static [&'static str],
    /// What the format is, for `--help` and the message of an unrecognised file.
    pub what: &'static str,
    /// Recognises the format from the input's first bytes, for formats whose start says so;
    /// `None`: recognised by voting over lines ([`super::detect::detect`]).
    pub sniff: Option<fn(&[u8]) -> bool>,
    /// `None` for what is not a capture (empty, unrecognised, source files).
    pub read: Option<Reader>,
}

/// Every format, in the order `--help` lists them and start-of-file sniffing tries them.
pub const FORMATS: [FormatInfo; 12] = [
    FormatInfo { format: Format::Stdio, name: "stdio", aliases: &[], what: "newline-delimited JSON-RPC as a stdio pipe carries it (one direction or a tee of both)", sniff: None, read: Some(|r, c, s| super::lines::stdio::read_stdio(r, c.direction, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::HostLog, name: "hostlog", aliases: &[], what: "a host application's MCP log (`Message from client|server:`, `[Client Says]`)", sniff: None, read: Some(|r, c, s| super::lines::hostlog::read_hostlog(r, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::Jsonl, name: "jsonl", aliases: &["transcript"], what: "a JSONL transcript (one record per message with its direction)", sniff: None, read: Some(|r, c, s| super::lines::jsonl::read_jsonl(r, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::Recorder, name: "recorder", aliases: &["mcpsnoop", "mcpspy", "spans"], what: "a proxy recorder's JSONL (mcpsnoop, MCPSpy, mcptrace-rs spans)", sniff: None, read: Some(|r, c, s| super::lines::recorder::read_recorder(r, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::Pcap, name: "pcap", aliases: &["pcapng"], what: "a packet capture (pcap, pcapng: Streamable HTTP, HTTP+SSE)", sniff: Some(super::packet::pcap::looks_like_pcap), read: Some(|r, c, s| super::packet::accounted::read_pcap(r, c.ports, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::Har, name: "har", aliases: &[], what: "an HTTP Archive (HAR 1.2)", sniff: Some(super::har::reader::looks_like_har), read: Some(|r, c, s| super::har::reader::read_har(r, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::ClaudeMcpLog, name: "claude_mcp_log", aliases: &[], what: "Claude Code's per-server MCP log (a JSON array of entries)", sniff: Some(super::lines::claude_mcp_log::looks_like_claude_mcp_log), read: Some(|r, c, s| super::lines::claude_mcp_log::read_claude_mcp_log(r, Some(c.session).filter(|n| !n.is_empty()), c.max_frame_bytes, s)) },
    FormatInfo { format: Format::ClientLog, name: "client_log", aliases: &[], what: "an MCP client's line log (`claude --debug`, Claude Code's terminal, Cursor, Gemini CLI, MCP Inspector)", sniff: None, read: Some(|r, c, s| super::lines::client_log::read_client_log(r, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::EmbeddedLog, name: "embedded_log", aliases: &[], what: "log lines carrying JSON-RPC after a prefix or in a field (docker compose, tracing, Go and Python logging, JSON-lines logs, pasted excerpts)", sniff: None, read: Some(|r, c, s| super::lines::embedded::read_embedded(r, c.session, c.max_frame_bytes, s)) },
    FormatInfo { format: Format::Empty, name: "empty", aliases: &[], what: "zero bytes", sniff: None, read: None },
    FormatInfo { format: Format::Unrecognized, name: "unrecognized", aliases: &[], what: "none of the formats mcpsift reads", sniff: None, read: None },
    FormatInfo { format: Format::Source, name: "source", aliases: &[], what: "program source", sniff: None, read: None },
];

impl Format {
    /// This format's row of [`FORMATS`].
    pub fn info(self) -> &'static FormatInfo {
        // Every variant has a row (the `formats_table_has_every_variant_once` test).
        FORMATS.iter().find(|f| f.format == self).unwrap_or(&FORMATS[FORMATS.len() - 2])
    }

    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// Whether a file of this format can hold a capture (not for unrecognised, empty or
    /// source files).
    pub fn is_capture_format(self) -> bool {
        self.info().read.is_some()
    }

    /// Reads a name back: a format's name or alias (`--input-format`, a manifest).
    pub fn from_name(name: &str) -> Option<Format> {
        FORMATS.iter().find(|f| f.name == name || f.aliases.contains(&name)).map(|f| f.format)
    }

    /// A name `--input-format` takes: a format with a reader.
    pub fn from_input_format_name(name: &str) -> Option<Format> {
        Format::from_name(name).filter(|f| f.is_capture_format())
    }
}

/// The names `--input-format` takes, joined: `a, b or c`.
pub fn input_format_names() -> String {
    let names: Vec<&str> = FORMATS.iter().filter(|f| f.read.is_some()).map(|f| f.name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// `--input-format`'s help: every readable format, its other names and what it is.
pub fn input_format_help() -> String {
    let mut s = String::from("Read every input as this format instead of sniffing (program source files are then read too):");
    for f in FORMATS.iter().filter(|f| f.read.is_some()) {
        let aliases = if f.aliases.is_empty() { String::new() } else { format!(" (also {})", f.aliases.join(", ")) };
        s.push_str(&format!("\n  {}{aliases}: {}", f.name, f.what));
    }
    s
}

/// What a file that is none of the formats is told: every format it could have been.
pub fn unrecognized_detail() -> String {
    format!("not a format mcpsift reads ({}; see --help of --input-format)", input_format_names())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_table_has_every_variant_once() {
        for f in &FORMATS {
            assert_eq!(FORMATS.iter().filter(|g| g.format == f.format).count(), 1, "{}", f.name);
            assert_eq!(f.format.info().name, f.name);
            assert_eq!(Format::from_name(f.name), Some(f.format));
            for a in f.aliases {
                assert_eq!(Format::from_name(a), Some(f.format), "{a}");
            }
        }
        assert_eq!(Format::from_input_format_name("embedded_log"), Some(Format::EmbeddedLog));
        assert_eq!(Format::from_input_format_name("pcapng"), Some(Format::Pcap));
        assert_eq!(Format::from_input_format_name("unrecognized"), None);
        assert!(input_format_names().ends_with("client_log or embedded_log"), "{}", input_format_names());
        assert!(input_format_help().contains("\n  embedded_log: "));
    }
}
