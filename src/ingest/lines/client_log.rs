//! Line logs MCP clients print about their servers: `claude --debug` output, the error lines
//! Claude Code's terminal UI shows, Cursor's MCP output channel, Gemini CLI's `MCP STDERR` and
//! discovery errors, MCP Inspector's proxy log. Every line is an event (kinds from
//! [`classify`]); indented lines below one (`    at ...` stack lines, a wrapped message) belong
//! to it. A JSON-RPC body quoted on one line (`Streamable HTTP error: Error POSTing to
//! endpoint: {...}`) is also a frame, the text around it framing. Host logs with
//! `Message from client|server:` lines are `hostlog.rs`'s, not read here.
//!
//! Line shapes (each optionally after an ISO 8601 or `YYYY-MM-DD HH:MM:SS.mmm` timestamp):
//! `[DEBUG] MCP server "NAME": text` (Claude Code), `[DEBUG] [MCP STDERR (NAME)]: text` and
//! `MCP STDERR (NAME): text` (Gemini CLI), `[error] NAME: text` (Cursor),
//! `Error from MCP server: SyntaxError: ...` (MCP Inspector), `⎿  Error: text` and
//! `⏺ SERVER - TOOL (MCP)(args)` (Claude Code's terminal).

use std::io::Read;
use std::sync::Arc;

use super::client_text::{classify, embedded_body_start};
use super::line_loop::{LineReader, account_log_line_end, read_lines};
use super::split::Line;
use crate::ingest::frame::{Direction, Event, Frame, FramingCategory, Sink, Transport};
use crate::ingest::time::{parse_rfc3339_us, starts_with_timestamp};

/// Text kept of one event (its line and the lines that belong to it); the bytes beyond are
/// still accounted, only not kept.
const MAX_EVENT_TEXT_BYTES: usize = 64 * 1024;

/// Cursor's MCP channel phrases (after `[level] NAME: `).
const CURSOR_PHRASES: &[&[u8]] = &[
    b"Starting new stdio process with command",
    b"Client closed for command",
    b"Client error for command",
    b"Error in MCP:",
    b"Failed to reload client",
    b"Handling ListOfferings action",
    b"Handling CallTool action",
    b"Handling ReloadClient action",
    b"getOrCreateClient for",
];

/// Shapes only these clients write (format detection); Claude Code's `MCP server "NAME"`
/// counts only after a `[LEVEL]` (see [`is_client_log_line`]).
const CLIENT_PHRASES: &[&[u8]] = &[
    b"MCP STDERR (",
    b"Error during discovery for",
    b"Error from MCP server:",
    b"exceeds maximum allowed tokens",
    b"Streamable HTTP error:",
    "\u{23bf}".as_bytes(),
    b"New STDIO connection request",
    b"Received POST message for sessionId",
    b"(MCP)(",
    b"STDIO transport: command=",
    b"Created server transport",
    b"Created client transport",
    b"Spawned stdio transport",
    b"Set up MCP proxy",
    b"Proxy server listening",
    b"Structured content does not match the tool's output schema",
];

/// Whether a line only continues the record above it or decorates the terminal: Claude Code's
/// welcome box (`╭───╮`, `│ ✻ Welcome to Claude Code! │`, `╰───╯`) and its `※ Tip:` line, a
/// JS stack line (`    at ...`), the wrapped lines of the SDK's schema errors (`data must
/// ...`, `data/total must ...`). Format detection leaves such lines out of its count: a
/// `claude --debug` paste is mostly banner and stack.
pub fn is_not_a_record(line: &[u8]) -> bool {
    is_terminal_decoration(line) || {
        let t = line.trim_ascii_start();
        (t.len() < line.len() && t.starts_with(b"at ")) || is_schema_error_wrap(t)
    }
}

/// Claude Code's welcome box (a line from one box corner or side to the other) and its tip
/// line: framing, not events. A tree line in a server's error (`╰─▶ Because ...`) is not.
fn is_terminal_decoration(line: &[u8]) -> bool {
    // Each of these characters is `E2 ..` in UTF-8: most lines are passed over at one byte.
    if line.trim_ascii_start().first() != Some(&0xe2) || line.len() > 1024 {
        return false;
    }
    let Ok(t) = std::str::from_utf8(line) else { return false };
    let t = t.trim();
    let boxed = |open: char, close: char| t.starts_with(open) && t.ends_with(close) && t.chars().count() > 2;
    boxed('\u{256d}', '\u{256e}') || boxed('\u{2502}', '\u{2502}') || boxed('\u{2570}', '\u{256f}') || t.starts_with('\u{203b}')
}

/// A line of Ajv's error list as the TypeScript SDK joins it (`data must have required
/// property 'x', data must NOT have additional properties`), wrapped onto its own line.
fn is_schema_error_wrap(t: &[u8]) -> bool {
    t.starts_with(b"data must ") || t.starts_with(b"data should ") || (t.starts_with(b"data/") && memchr::memmem::find(t, b" must ").is_some())
}

/// Whether a line is one of the shapes this reader knows (format detection wants a third of
/// the lines: a source file or README quoting a few is not a log).
pub fn is_client_log_line(line: &[u8]) -> bool {
    let has = |p: &[u8]| memchr::memmem::find(line, p).is_some();
    let claude_debug = has(b"MCP server \"") && (has(b"[DEBUG]") || has(b"[ERROR]") || has(b"[WARN]") || has(b"[INFO]"));
    // Cursor: its phrases, or its shape `YYYY-MM-DD HH:MM:SS.mmm [level] NAME: text`.
    let cursor = starts_with_timestamp(line) && (CURSOR_PHRASES.iter().any(|p| has(p)) || (line.get(10) == Some(&b' ') && parse_head(line).server.is_some()));
    claude_debug || cursor || CLIENT_PHRASES.iter().any(|p| has(p))
}

/// The parts of one line's head.
struct Head {
    ts_us: Option<i64>,
    level: Option<String>,
    server: Option<String>,
}

/// Reads the timestamp, `[level]`, Gemini's `[MCP STDERR (NAME)]:` and Cursor's `NAME:`.
fn parse_head(line: &[u8]) -> Head {
    let mut head = Head { ts_us: None, level: None, server: None };
    let mut i = 0;
    if starts_with_timestamp(line) {
        // `2025-04-08 11:16:16.790` has a space inside: the timestamp ends at the next one.
        let end = line[11..].iter().position(|&b| b == b' ').map_or(line.len(), |p| p + 11);
        head.ts_us = std::str::from_utf8(&line[..end]).ok().and_then(parse_rfc3339_us);
        i = end;
    }
    let skip_spaces = |mut i: usize| {
        while line.get(i) == Some(&b' ') {
            i += 1;
        }
        i
    };
    i = skip_spaces(i);
    if line.get(i) == Some(&b'[')
        && let Some(close) = line[i..].iter().take(12).position(|&b| b == b']')
    {
        let word = String::from_utf8_lossy(&line[i + 1..i + close]).to_ascii_lowercase();
        if ["debug", "info", "warn", "warning", "error", "trace", "fatal"].contains(&word.as_str()) {
            head.level = Some(if word == "warning" { "warn".into() } else { word });
            i = skip_spaces(i + close + 1);
            // Cursor: `[error] NAME: text`, NAME without spaces.
            if head.ts_us.is_some() {
                let rest = &line[i..];
                if let Some(colon) = rest.iter().take(80).position(|&b| b == b':')
                    && colon > 0
                    && rest.get(colon + 1) == Some(&b' ')
                    && !rest[..colon].iter().any(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'[')
                {
                    head.server = Some(String::from_utf8_lossy(&rest[..colon]).into_owned());
                }
            }
        }
    }
    head
}

/// A `⏺ SERVER - TOOL (MCP)(...)` line of Claude Code's terminal: the server and tool it calls.
fn terminal_tool_call(text: &str) -> Option<(String, String)> {
    let t = text.trim_start().strip_prefix('\u{23fa}').or_else(|| text.trim_start().strip_prefix('\u{25cf}'))?;
    let (call, _) = t.split_once(" (MCP)")?;
    let (server, tool) = call.trim().split_once(" - ")?;
    Some((server.trim().to_string(), tool.trim().to_string()))
}

/// An event waiting for the lines that belong to it.
struct Pending {
    event: Event,
    /// The server the line named itself (before the terminal's tool-call context).
    named_server: Option<String>,
}

struct ClientLog {
    default_session: String,
    max_frame_bytes: usize,
    pending: Option<Pending>,
    /// Server and tool of the last `⏺ SERVER - TOOL (MCP)` line (Claude Code's terminal).
    terminal_call: Option<(String, String)>,
    /// The last line ended in a space: a terminal or issue paste wrapped it, the next line
    /// carries on its sentence.
    soft_wrapped: bool,
}

impl ClientLog {
    fn emit(&mut self, sink: &mut dyn Sink) {
        let Some(Pending { mut event, named_server }) = self.pending.take() else { return };
        let c = classify(&event.text, &event.level);
        let mut server = named_server.or(c.server);
        let mut facts = c.facts;
        let mut kind = c.kind;
        if let Some((s, t)) = terminal_tool_call(&event.text) {
            (kind, server, facts.tool) = ("tool_call", Some(s), Some(t));
        } else if let Some((s, t)) = &self.terminal_call
            && is_terminal_result(&event.text)
        {
            server = server.or_else(|| Some(s.clone()));
            facts.tool = facts.tool.or_else(|| Some(t.clone()));
        }
        event.kind = kind.into();
        event.session = Some(server.clone().unwrap_or_else(|| self.default_session.clone()));
        event.server = server;
        event.facts = facts;
        sink.event(event);
    }

    /// A line that starts an event (and may quote a JSON-RPC body).
    fn start(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        let bytes = line.bytes;
        let head = parse_head(bytes);
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_EVENT_TEXT_BYTES)]).into_owned();
        if let Some(call) = terminal_tool_call(&text) {
            self.terminal_call = Some(call);
        }
        let level = head.level.clone().unwrap_or_else(|| {
            let t = text.trim_start().trim_start_matches('\u{23bf}').trim_start();
            if t.starts_with("Error") || t.starts_with("\u{2718}") || t.starts_with("\u{2715}") { "error".into() } else { "info".into() }
        });
        let context = self.terminal_call.as_ref().filter(|_| is_terminal_result(&text)).map(|(s, _)| s.clone());
        let session = head.server.clone().or(context).unwrap_or_else(|| self.default_session.clone());
        let framed = self.embedded_frame(line, head.ts_us, &session, sink);
        if !framed {
            sink.framing(FramingCategory::HostlogEventLines, bytes.len() as u64);
        }
        self.pending = Some(Pending {
            event: Event { ts_us: head.ts_us, offset: line.offset, level, text, ..Event::default() },
            named_server: head.server,
        });
    }

    /// Emits the JSON-RPC body a line quotes as a frame, the rest of the line as framing.
    fn embedded_frame(&mut self, line: &Line<'_>, ts_us: Option<i64>, session: &str, sink: &mut dyn Sink) -> bool {
        let bytes = line.bytes;
        let Some(start) = embedded_body_start(bytes) else { return false };
        let mut it = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<serde::de::IgnoredAny>();
        let Some(Ok(_)) = it.next() else { return false };
        let end = start + it.byte_offset();
        if end - start > self.max_frame_bytes {
            return false;
        }
        let mut frame = Frame::new(Transport::Hostlog, Some(Direction::ServerToClient), line.offset + start as u64, bytes[start..end].to_vec());
        frame.ts_us = ts_us;
        frame.session = Some(Arc::from(session));
        frame.note = Some("JSON-RPC body quoted in a client's error line".into());
        sink.framing(FramingCategory::ClientLogText, (bytes.len() - (end - start)) as u64);
        sink.frame(frame);
        true
    }
}

/// A `⎿` line of Claude Code's terminal: the result of the tool call above it.
fn is_terminal_result(text: &str) -> bool {
    text.trim_start().starts_with('\u{23bf}')
}

/// Whether a line belongs to the event above it: indented (a stack line, a wrapped message)
/// or closing an inspected error object (`}`), and not a new `⎿` result line.
fn is_continuation(bytes: &[u8]) -> bool {
    let indented = bytes.first().is_some_and(|&b| b == b' ' || b == b'\t' || b == b'}');
    indented && !is_terminal_result(&String::from_utf8_lossy(&bytes[..bytes.len().min(16)]))
}

impl LineReader for ClientLog {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        if line.terminated {
            sink.framing(FramingCategory::LineTerminators, 1);
        }
        account_log_line_end(line, sink);
        if line.is_blank() {
            self.soft_wrapped = false;
            return;
        }
        if is_terminal_decoration(line.bytes) {
            self.emit(sink);
            sink.framing(FramingCategory::PasteMarkup, line.bytes.len() as u64);
            return;
        }
        let wrapped = std::mem::replace(&mut self.soft_wrapped, line.bytes.last().is_some_and(|&b| b == b' ' || b == b'\t'));
        let continues = is_continuation(line.bytes) || (wrapped && !starts_with_timestamp(line.bytes) && !line.bytes.starts_with(b"[") && !is_client_log_line(line.bytes)) || is_schema_error_wrap(line.bytes);
        if self.pending.is_some() && continues {
            sink.framing(FramingCategory::HostlogEventLines, line.bytes.len() as u64);
            if let Some(p) = self.pending.as_mut()
                && p.event.text.len() < MAX_EVENT_TEXT_BYTES
            {
                let room = MAX_EVENT_TEXT_BYTES - p.event.text.len();
                p.event.text.push('\n');
                p.event.text.push_str(&String::from_utf8_lossy(&line.bytes[..line.bytes.len().min(room)]));
            }
            return;
        }
        self.emit(sink);
        self.start(line, sink);
    }

    fn finish(&mut self, sink: &mut dyn Sink) {
        self.emit(sink);
    }
}

/// Reads a client log; `default_session` names events whose line names no server (the file stem).
pub fn read_client_log(reader: impl Read, default_session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut state = ClientLog { default_session: default_session.to_string(), max_frame_bytes, pending: None, terminal_call: None, soft_wrapped: false };
    read_lines(reader, max_frame_bytes, &mut state, sink);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;
    use crate::ingest::frame::SkipReason;

    fn read(text: &str) -> CollectSink {
        let mut sink = CollectSink::default();
        read_client_log(text.as_bytes(), "log", 1 << 20, &mut sink);
        assert_eq!(sink.accounted_bytes(), text.len() as i128, "every byte accounted: {:?}", sink.framing);
        sink
    }

    #[test]
    fn stack_lines_belong_to_the_line_above() {
        let text = concat!(
            "[DEBUG] MCP server \"docs\": Starting connection with timeout of 30000ms\n",
            "[ERROR] MCP server \"docs\" Connection failed: McpError: MCP error -32000: Connection closed\n",
            "    at Client._onclose (file:///cli.js:1336:15216)\n",
            "    at _transport.onclose (file:///cli.js:1336:14535)\n",
            "\n",
            "[DEBUG] MCP server \"docs\": Connection closed\n",
        );
        let sink = read(text);
        let kinds: Vec<_> = sink.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["connection_starting", "connection_failed", "connection_closed"]);
        assert_eq!(sink.events[1].text.lines().count(), 3);
        assert_eq!(sink.events[1].level, "error");
        assert_eq!(sink.events[0].facts.timeout_ms, Some(30000));
        assert!(sink.events.iter().all(|e| e.server.as_deref() == Some("docs")));
    }

    #[test]
    fn a_quoted_body_is_a_frame_and_the_text_around_it_framing() {
        let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
        let text = format!("  \u{23bf}  Error: Streamable HTTP error: Error POSTing to endpoint: {body}\n");
        let sink = read(&text);
        assert_eq!(sink.frames.len(), 1);
        assert_eq!(sink.frames[0].payload, body.as_bytes());
        assert_eq!(sink.events[0].facts.error_code, Some(-32000));
        assert_eq!(sink.framing["client_log_text"], (text.len() - 1 - body.len()) as u64);
    }

    #[test]
    fn the_terminal_names_the_tool_of_the_error_below_it() {
        let text = concat!(
            "\u{23fa} docs - search_docs (MCP)(query: \"x\")\n",
            "  \u{23bf}  Error: MCP tool \"search_docs\" response (31245 tokens) exceeds maximum allowed tokens (25000). Please use\n",
            "     pagination, filtering, or limit parameters to reduce the response size.\n",
        );
        let sink = read(text);
        let e = &sink.events[1];
        assert_eq!((e.kind.as_str(), e.server.as_deref(), e.facts.tokens), ("result_over_client_cap", Some("docs"), Some(31245)));
        assert!(e.text.contains("reduce the response size"));
    }

    #[test]
    fn cursor_and_gemini_lines_name_their_server() {
        let text = concat!(
            "2025-04-08 11:16:16.790 [error] rmcp: Failed to reload client: MCP error -32000: Connection closed\n",
            "MCP STDERR (weather): Weather MCP server running on stdio\n",
        );
        let sink = read(text);
        assert_eq!(sink.events[0].server.as_deref(), Some("rmcp"));
        assert_eq!(sink.events[0].kind, "connection_failed");
        assert!(sink.events[0].ts_us.is_some());
        assert_eq!((sink.events[1].kind.as_str(), sink.events[1].server.as_deref()), ("server_stderr", Some("weather")));
        assert!(text.lines().all(|l| is_client_log_line(l.as_bytes())));
        assert!(!is_client_log_line(b"2025-11-18 11:15:39.891 [info] [docs] Connected to server"));
    }

    #[test]
    fn the_welcome_box_is_framing_and_a_soft_wrapped_error_one_event() {
        let text = concat!(
            "\u{256d}\u{2500}\u{2500}\u{256e}\n",
            "\u{2502} \u{273b} Welcome to Claude Code! \u{2502}\n",
            "\u{2570}\u{2500}\u{2500}\u{256f}\n",
            " \u{203b} Tip: x\n",
            "[DEBUG] MCP server \"docs\": Error stack: McpError: MCP error -32000: Connection closed\n",
            "    at Client._onclose (file:///cli.js:1:1)\n",
            "list_invoices:\n",
            "MCP error -32602: Structured content does not match the tool's output schema: \n",
            "data must have required property 'items', \n",
            "data must NOT have additional properties\n",
            "  \u{2570}\u{2500}\u{25b6} Because x was not found\n",
        );
        let sink = read(text);
        let kinds: Vec<_> = sink.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["connection_closed", "log", "output_schema_rejected"]);
        assert_eq!(sink.events[2].text.lines().count(), 4, "wrapped lines and the indented tree line belong to it");
        let boxed: usize = text.lines().take(4).map(str::len).sum();
        assert_eq!(sink.framing["paste_markup"], boxed as u64);
        assert!(text.lines().filter(|l| is_not_a_record(l.as_bytes())).count() == 7);
    }

    #[test]
    fn a_line_over_the_cap_keeps_its_head_as_the_event_and_skips_the_rest() {
        let text = format!("Error from MCP server: SyntaxError: Unexpected token 'x', \"{}\"... is not valid JSON\n", "x".repeat(500));
        let mut sink = CollectSink::default();
        read_client_log(text.as_bytes(), "log", 64, &mut sink);
        assert_eq!(sink.accounted_bytes(), text.len() as i128);
        assert_eq!(sink.events.len(), 1);
        assert_eq!(sink.skips.len(), 1);
        assert_eq!(sink.skips[0].reason, SkipReason::LineOverCap);
    }
}
