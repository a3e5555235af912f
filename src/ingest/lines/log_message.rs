//! Finding a whole JSON-RPC message inside one log line, and reading the words around it
//! (direction, level, timestamp). It does not decide what the rest of the file is.
//!
//! A message is found as raw JSON after a prefix (`received message={...}`), as a JSON string
//! field of a structured log record holding the message escaped (`"message":"{\"jsonrpc\"...`),
//! or inside a Python bytes repr of an SSE chunk (`chunk: b'event: message\r\ndata: {...}'`).
//! JSON-RPC is known only by its keys (`jsonrpc`, `method`, `result`/`error` with `id`).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::ingest::frame::Direction;
use crate::ingest::time::parse_rfc3339_us;

/// JSON value starts tried per line: a line of many `{` costs at most this many parses.
const MAX_STARTS_TRIED: usize = 16;

/// A message found in a line.
#[derive(Debug, PartialEq)]
pub struct Found<'a> {
    /// Byte index in the line where the message's text starts (its quote for an escaped
    /// string, the `b'` of a bytes repr).
    pub start: usize,
    /// Byte index just past its text.
    pub end: usize,
    /// The message bytes (decoded when the line holds them escaped).
    pub payload: Cow<'a, [u8]>,
}

/// What a line holds after its prefix.
#[derive(Debug, PartialEq)]
pub enum LineContent<'a> {
    /// One or more whole messages (a bytes repr of an SSE chunk can hold several).
    Messages(Vec<Found<'a>>),
    /// A JSON value opens at this byte and does not close on the line (pretty-printed).
    Opens(usize),
    /// No message.
    None,
}

/// The keys that make a JSON object a JSON-RPC message (format detection probes with it too).
#[derive(Deserialize)]
pub(crate) struct RpcKeys<'a> {
    #[serde(borrow)]
    pub(crate) jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(crate) method: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(crate) result: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(crate) error: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

impl RpcKeys<'_> {
    fn is_rpc(&self) -> bool {
        self.jsonrpc.is_some() || self.method.is_some() || ((self.result.is_some() || self.error.is_some()) && self.id.is_some())
    }
}

/// Whether `bytes` is one JSON-RPC message or a batch of them.
pub fn is_jsonrpc(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii();
    match t.first() {
        Some(b'{') => serde_json::from_slice::<RpcKeys>(t).is_ok_and(|k| k.is_rpc()),
        Some(b'[') => serde_json::from_slice::<Vec<RpcKeys>>(t).is_ok_and(|v| !v.is_empty() && v.iter().all(RpcKeys::is_rpc)),
        _ => false,
    }
}

/// Where the JSON value at the start of `bytes` ends.
enum ValueEnd {
    Complete(usize),
    NeedMore,
    Invalid,
}

fn value_end(bytes: &[u8]) -> ValueEnd {
    let mut it = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
    match it.next() {
        Some(Ok(_)) => ValueEnd::Complete(it.byte_offset()),
        Some(Err(e)) if e.is_eof() => ValueEnd::NeedMore,
        _ => ValueEnd::Invalid,
    }
}

/// Strings inside strings read for a message: a record whose string field holds a log line
/// (`"message":"Received request: {\"jsonrpc\"...}"`) or a record escaped once more by a log
/// shipper (docker's json-file `{"log":"{\"msg\":\"{\\\"jsonrpc...`) is one or two levels deep.
const MAX_STRING_NESTING: u8 = 2;

/// What the line holds from byte `from` on.
pub fn find(line: &[u8], from: usize) -> LineContent<'_> {
    find_nested(line, from, 0)
}

fn find_nested(line: &[u8], from: usize, nesting: u8) -> LineContent<'_> {
    let from = from.min(line.len());
    if let Some(found) = bytes_repr_messages(line, from)
        && !found.is_empty()
    {
        return LineContent::Messages(found);
    }
    let mut at = from;
    let mut tried = 0;
    let mut found = Vec::new();
    while tried < MAX_STARTS_TRIED
        && let Some(p) = memchr::memchr2(b'{', b'[', &line[at..])
    {
        let i = at + p;
        // A `[` only starts a batch (`[{`); `[INFO]` and `[1/3]` are prefix words.
        if line[i] == b'[' && line[i + 1..].trim_ascii_start().first().is_some_and(|&b| b != b'{') {
            at = i + 1;
            continue;
        }
        tried += 1;
        match value_end(&line[i..]) {
            ValueEnd::Complete(n) => {
                let value = &line[i..i + n];
                if is_jsonrpc(value) {
                    found.push(Found { start: i, end: i + n, payload: Cow::Borrowed(value) });
                } else if let Some(f) = escaped_field(line, value, nesting) {
                    found.push(f);
                }
                at = i + n;
            }
            ValueEnd::NeedMore if found.is_empty() && opens_message(&line[i..]) => return LineContent::Opens(i),
            _ => at = i + 1,
        }
        if !found.is_empty() {
            // One message per line after a prefix; what follows is suffix.
            break;
        }
    }
    if found.is_empty() { LineContent::None } else { LineContent::Messages(found) }
}

/// A value cut by the end of the line that is worth reading on: a lone `{` / `[`, or the
/// start of an object naming `jsonrpc`.
fn opens_message(rest: &[u8]) -> bool {
    let t = rest.trim_ascii_end();
    t == b"{" || t == b"[" || memchr::memmem::find(t, b"\"jsonrpc\"").is_some()
}

/// A string field (at the top level of a structured log record, or one object below it) that
/// holds a JSON-RPC message as text.
fn escaped_field<'a>(line: &'a [u8], value: &'a [u8], nesting: u8) -> Option<Found<'a>> {
    if value.first() != Some(&b'{') || memchr::memmem::find(value, b"jsonrpc").is_none() {
        return None;
    }
    let base = line.as_ptr() as usize;
    let mut stack: Vec<(&RawValue, u8)> = vec![(serde_json::from_slice::<&RawValue>(value).ok()?, 0)];
    while let Some((raw, depth)) = stack.pop() {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') if memchr::memmem::find(text.as_bytes(), b"jsonrpc").is_some() => {
                let Ok(decoded) = serde_json::from_str::<String>(text) else { continue };
                let start = text.as_ptr() as usize - base;
                if is_jsonrpc(decoded.as_bytes()) {
                    let trimmed = decoded.trim_ascii();
                    return Some(Found { start, end: start + text.len(), payload: Cow::Owned(trimmed.as_bytes().to_vec()) });
                }
                // The string is itself a log line or record holding the message: the whole
                // string is the message's text on the line (its other words are framing).
                if nesting < MAX_STRING_NESTING
                    && let LineContent::Messages(inner) = find_nested(decoded.as_bytes(), 0, nesting + 1)
                    && let [one] = &inner[..]
                {
                    return Some(Found { start, end: start + text.len(), payload: Cow::Owned(one.payload.to_vec()) });
                }
            }
            Some(b'{') if depth < 2 => {
                let Ok(fields) = serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(text) else { continue };
                stack.extend(fields.into_values().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    None
}

/// Messages inside a Python bytes repr (`b'...'` / `b"..."`) on the line: the repr decoded,
/// then each SSE `data:` line (or the whole repr) that is a JSON-RPC message. `None` when the
/// line has no bytes repr holding `jsonrpc`.
fn bytes_repr_messages(line: &[u8], from: usize) -> Option<Vec<Found<'static>>> {
    let mut at = from;
    let mut out = Vec::new();
    let mut reprs = 0;
    while reprs < MAX_STARTS_TRIED
        && let Some(p) = memchr::memchr(b'b', &line[at..])
    {
        let i = at + p;
        let quote = line.get(i + 1).copied();
        let word_start = i == 0 || !line[i - 1].is_ascii_alphanumeric();
        if !(word_start && matches!(quote, Some(b'\'') | Some(b'"'))) {
            at = i + 1;
            continue;
        }
        reprs += 1;
        let Some((decoded, len)) = decode_bytes_repr(&line[i + 2..], quote.unwrap_or(b'\'')) else {
            at = i + 2;
            continue;
        };
        let end = i + 2 + len;
        if memchr::memmem::find(&decoded, b"jsonrpc").is_some() {
            let mut messages: Vec<Vec<u8>> = Vec::new();
            if is_jsonrpc(&decoded) {
                messages.push(decoded.trim_ascii().to_vec());
            } else {
                for l in decoded.split(|&b| b == b'\n') {
                    let l = l.strip_suffix(b"\r").unwrap_or(l);
                    if let Some(data) = l.strip_prefix(b"data:") {
                        let data = data.strip_prefix(b" ").unwrap_or(data);
                        if is_jsonrpc(data) {
                            messages.push(data.trim_ascii().to_vec());
                        }
                    }
                }
            }
            for m in messages {
                out.push(Found { start: i, end, payload: Cow::Owned(m) });
            }
        }
        at = end;
    }
    if out.is_empty() { None } else { Some(out) }
}

/// Decodes a Python bytes repr body up to its closing `quote`; returns the bytes and the
/// length of the body with the closing quote. `None` if the line ends first.
fn decode_bytes_repr(body: &[u8], quote: u8) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == quote {
            return Some((out, i + 1));
        }
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let e = *body.get(i + 1)?;
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0' => out.push(0),
            b'\\' | b'\'' | b'"' => out.push(e),
            b'x' => {
                let hex = body.get(i..i + 2)?;
                let v = std::str::from_utf8(hex).ok().and_then(|h| u8::from_str_radix(h, 16).ok())?;
                out.push(v);
                i += 2;
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    None
}

/// Direction the words of a prefix (or a label) say, if they say one.
///
/// Words naming both ends (`client message`, `from server`, `to server`, `c2s`) say it
/// outright. Send and receive words (`sending`, `sent`, `outgoing`, `->`, `>>>`; `received`,
/// `recv`, `incoming`, `<-`, `<<<`) say it only together with the side that logs (`client` or
/// `server` in the logger name): a client sends to the server, a server receives from the
/// client. Otherwise `None`, and model infers it as for a lone stdio file.
pub fn direction_words(prefix: &[u8]) -> Option<Direction> {
    use Direction::{ClientToServer as C2S, ServerToClient as S2C};
    let lower = prefix.to_ascii_lowercase();
    let has = |w: &[u8]| memchr::memmem::find(&lower, w).is_some();
    for (words, dir) in [
        (&[&b"client message"[..], b"from client", b"to server", b"c2s", b"client says", b"client->server", b"client -> server"][..], C2S),
        (&[&b"server message"[..], b"from server", b"to client", b"s2c", b"server says", b"server->client", b"server -> client"][..], S2C),
    ] {
        if words.iter().any(|w| has(w)) {
            return Some(dir);
        }
    }
    let send = ["send", "sent", "outgoing", "->", ">>>", "-->", "\u{2192}"].iter().any(|w| has(w.as_bytes()))
        || lower.trim_ascii().starts_with(b">");
    let recv = ["recv", "receiv", "incoming", "<-", "<<<", "<--", "\u{2190}"].iter().any(|w| has(w.as_bytes()))
        || lower.trim_ascii().starts_with(b"<");
    let client = has(b"client");
    let server = has(b"server");
    match (send, recv, client, server) {
        (true, false, true, false) => Some(C2S),
        (false, true, true, false) => Some(S2C),
        (true, false, false, true) => Some(S2C),
        (false, true, false, true) => Some(C2S),
        _ => None,
    }
}

const LEVELS: &[&str] = &["trace", "debug", "info", "notice", "warn", "warning", "error", "err", "fatal", "critical", "crit"];

/// The log level a prefix names, lowercase: a `level` field (`"level":"warn"`, `level=error`),
/// an upper-case level word (`DEBUG`, `WARNING:`) or a bracketed one (`[info]`). A lower-case
/// word in prose (`transport error: ...`) is not a level.
pub fn level_word(prefix: &[u8]) -> Option<String> {
    let head = &prefix[..prefix.len().min(256)];
    let is_level = |w: &[u8]| LEVELS.iter().any(|l| l.as_bytes().eq_ignore_ascii_case(w));
    for key in [&b"\"level\":\""[..], b"\"level\": \"", b"level="] {
        if let Some(at) = memchr::memmem::find(head, key) {
            let rest = &head[at + key.len()..];
            let word = &rest[..rest.iter().take_while(|b| b.is_ascii_alphabetic()).count()];
            if is_level(word) {
                return Some(String::from_utf8_lossy(word).to_ascii_lowercase());
            }
        }
    }
    let mut at = 0;
    for word in head.split(|b| !b.is_ascii_alphabetic()) {
        let start = at;
        at += word.len() + 1;
        let upper = word.iter().all(u8::is_ascii_uppercase);
        let bracketed = start > 0 && head.get(start - 1) == Some(&b'[') && head.get(start + word.len()) == Some(&b']');
        if !word.is_empty() && (upper || bracketed) && is_level(word) {
            return Some(String::from_utf8_lossy(word).to_ascii_lowercase());
        }
    }
    None
}

/// The first timestamp in a prefix (RFC 3339, `YYYY-MM-DD HH:MM:SS,mmm`, Go's
/// `YYYY/MM/DD HH:MM:SS`), in µs since the epoch.
pub fn timestamp_us(prefix: &[u8]) -> Option<i64> {
    let head = &prefix[..prefix.len().min(256)];
    let d = |b: &[u8], i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    for i in 0..head.len().saturating_sub(15) {
        let b = &head[i..];
        let date = (0..4).all(|k| d(b, k)) && matches!(b[4], b'-' | b'/') && d(b, 5) && d(b, 6) && b[7] == b[4] && d(b, 8) && d(b, 9);
        if !date || !matches!(b[10], b'T' | b't' | b' ') || !d(b, 11) || !d(b, 12) || b[13] != b':' {
            continue;
        }
        let len = 11 + b[11..].iter().take_while(|&&c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b',' | b'+' | b'-' | b'Z' | b'z')).count();
        let mut text = String::from_utf8_lossy(&b[..len]).into_owned();
        if b[4] == b'/' {
            text = text.replacen('/', "-", 2);
        }
        if let Some(us) = parse_rfc3339_us(text.trim_end_matches(['-', '+'])) {
            return Some(us);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(line: &str) -> Vec<(usize, String)> {
        match find(line.as_bytes(), 0) {
            LineContent::Messages(v) => v.into_iter().map(|f| (f.start, String::from_utf8(f.payload.into_owned()).unwrap())).collect(),
            other => panic!("no message in {line:?}: {other:?}"),
        }
    }

    #[test]
    fn a_message_after_words_in_a_string_or_escaped_twice() {
        let line = br#"{"level":"debug","message":"Received request: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}"}"#;
        let LineContent::Messages(f) = find(line, 0) else { panic!("no message") };
        assert_eq!(&f[0].payload[..], br#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#);
        let docker = br#"{"log":"{\"msg\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\"}\n","stream":"stderr"}"#;
        let LineContent::Messages(f) = find(docker, 0) else { panic!("no message in {}", String::from_utf8_lossy(docker)) };
        assert_eq!(&f[0].payload[..], br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    }

    #[test]
    fn raw_message_after_a_prefix_and_before_a_suffix() {
        let line = r#"2026-12-01T10:00:00.123456Z DEBUG serve_inner{peer=client}: rmcp::service: received message={"jsonrpc":"2.0","id":1,"method":"ping"} extra"#;
        let got = messages(line);
        assert_eq!(got, vec![(line.find("{\"jsonrpc").unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_string())]);
        assert_eq!(messages(r#"web-1  | {"result":{},"id":3}"#)[0].1, r#"{"result":{},"id":3}"#);
        assert_eq!(messages(r#"2026/12/01 10:00:00 -> [{"jsonrpc":"2.0","method":"a"}]"#)[0].1, r#"[{"jsonrpc":"2.0","method":"a"}]"#);
    }

    #[test]
    fn a_json_value_that_is_not_a_message_is_prefix() {
        assert_eq!(find(br#"INFO {"level":"info","msg":"listening"}"#, 0), LineContent::None);
        assert_eq!(find(b"[INFO] server started [1/3]", 0), LineContent::None);
    }

    #[test]
    fn escaped_string_field_of_a_structured_record() {
        let line = r#"{"time":"2026-12-01T10:00:00Z","level":"debug","msg":"recv","payload":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"text\":\"\\u00e9\"}}"}"#;
        let got = messages(line);
        assert_eq!(got[0].1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"text\":\"\\u00e9\"}}");
        assert_eq!(got[0].0, line.find("\"{\\\"jsonrpc").unwrap());
        let nested = r#"{"level":"debug","fields":{"message":"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":9}"}}"#;
        assert_eq!(messages(nested)[0].1, r#"{"jsonrpc":"2.0","method":"ping","id":9}"#);
    }

    #[test]
    fn python_bytes_repr_of_an_sse_chunk() {
        let line = r#"DEBUG:sse_starlette.sse:chunk: b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":{"text":"it\'s \xc3\xa9"}}\r\n\r\n'"#;
        let got = messages(line);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"it's \u{e9}\"}}");
        assert_eq!(got[0].0, line.find("b'").unwrap());
    }

    #[test]
    fn a_value_left_open_at_the_end_of_the_line() {
        assert_eq!(find(b"DEBUG - Received message: {", 0), LineContent::Opens(26));
        assert_eq!(find(br#"msg={"jsonrpc":"2.0","#, 0), LineContent::Opens(4));
        assert_eq!(find(b"config {a", 0), LineContent::None);
    }

    #[test]
    fn direction_from_words_and_side() {
        use Direction::*;
        assert_eq!(direction_words(b"DEBUG:mcp.client:Sending client message: "), Some(ClientToServer));
        assert_eq!(direction_words(b"DEBUG - mcp.server - Received message: "), Some(ClientToServer));
        assert_eq!(direction_words(b"DEBUG:mcp.client.streamable_http:Received message: "), Some(ServerToClient));
        assert_eq!(direction_words(b"DEBUG rmcp::service: sending message="), None, "no side named");
        assert_eq!(direction_words(b"2026/12/01 10:00:00 -> "), None);
        assert_eq!(direction_words(b"Response from server:"), Some(ServerToClient));
    }

    #[test]
    fn level_and_timestamp_of_a_prefix() {
        assert_eq!(level_word(b"2026-12-01 10:00:00,123 - mcp.server - DEBUG - "), Some("debug".into()));
        assert_eq!(level_word(br#"{"level":"warn","msg":"#), Some("warn".into()));
        assert_eq!(level_word(b"web-1  | "), None);
        assert_eq!(level_word(b"2026-12-01 [warn] x"), Some("warn".into()));
        assert_eq!(level_word(b"2026/12/01 10:00:00 transport error: connection closed"), None, "prose is not a level");
        let t = parse_rfc3339_us("2026-12-01T10:00:00.123Z");
        assert_eq!(timestamp_us(b"2026-12-01 10:00:00,123 - mcp - DEBUG - "), t);
        assert_eq!(timestamp_us(b"2026/12/01 10:00:00 -> "), parse_rfc3339_us("2026-12-01T10:00:00Z"));
        assert_eq!(timestamp_us(br#"{"time":"2026-12-01T10:00:00.123+00:00","#), t);
        assert_eq!(timestamp_us(b"web-1  | 2026-12-01T10:00:00.123Z INFO"), t);
        assert_eq!(timestamp_us(b"no time here"), None);
    }
}
