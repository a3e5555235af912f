//! Streaming a HAR file's `log.entries`: one entry's JSON text in memory at a time (never the
//! file), handed to [`super::exchange`]; the bytes around the entries (the `log` object, its
//! `creator` and `pages`, commas, indentation) are `har_envelope` framing. A file cut inside
//! the array keeps every complete entry; the bytes after the last one are one counted skip.

use std::cell::Cell;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::exchange::Exchanges;
use crate::ingest::frame::{FramingCategory, Sink, Skip, SkipReason};

/// Counts the bytes the JSON parser has pulled (it reads one byte at a time and looks ahead
/// at most one byte past a value, so after an entry the count is the entry's end).
struct Position<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Position<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// What the parse saw, shared by the visitors.
struct Walk<'a> {
    position: Rc<Cell<u64>>,
    exchanges: &'a mut Exchanges,
    sink: &'a mut dyn Sink,
    /// End offset of the last complete entry.
    last_entry_end: u64,
    /// Input bytes the entries' frames, framing and skips account for.
    entries_accounted: u64,
    /// `log.entries` was found (an empty array included).
    saw_entries: bool,
}

impl Walk<'_> {
    fn entry(&mut self, raw: &RawValue) {
        let end = self.position.get();
        let len = raw.get().len() as u64;
        let start = end.saturating_sub(len);
        self.entries_accounted += self.exchanges.entry(raw.get(), start, self.sink);
        self.last_entry_end = end;
    }
}

/// A HAR file: `{"log": {` (any whitespace, a UTF-8 BOM allowed) with `"version"` and
/// `"entries"` in the head. Pretty-printed files put `{` alone on the first line, compact ones
/// everything on one line longer than the head, so lines are no help here.
pub fn looks_like_har(head: &[u8]) -> bool {
    let t = <[u8]>::trim_ascii_start(head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head));
    let Some(t) = t.strip_prefix(b"{") else { return false };
    let Some(t) = <[u8]>::trim_ascii_start(t).strip_prefix(b"\"log\"") else { return false };
    let Some(t) = <[u8]>::trim_ascii_start(t).strip_prefix(b":") else { return false };
    <[u8]>::trim_ascii_start(t).starts_with(b"{") && memchr::memmem::find(t, b"\"version\"").is_some() && memchr::memmem::find(t, b"\"entries\"").is_some()
}

/// Reads a HAR file into `sink`.
pub fn read_har(reader: impl Read, max_frame_bytes: usize, sink: &mut dyn Sink) {
    let mut buffered = BufReader::with_capacity(1 << 16, reader);
    // HAR 1.2: readers must accept (and ignore) a UTF-8 BOM; it is envelope.
    let bom = match buffered.fill_buf() {
        Ok(head) if head.starts_with(b"\xef\xbb\xbf") => 3,
        _ => 0,
    };
    buffered.consume(bom);
    let position = Rc::new(Cell::new(bom as u64));
    let mut input = Position {
        inner: buffered,
        read: Rc::clone(&position),
    };
    let mut exchanges = Exchanges::new(max_frame_bytes as u64);
    let mut walk = Walk {
        position: Rc::clone(&position),
        exchanges: &mut exchanges,
        sink,
        last_entry_end: 0,
        entries_accounted: 0,
        saw_entries: false,
    };
    // serde_json's nesting limit (128) stays on: a deep entry is an error, not a stack overflow.
    let parsed = {
        let mut de = serde_json::Deserializer::from_reader(&mut input);
        Root { walk: &mut walk }.deserialize(&mut de).and_then(|()| de.end())
    };
    let drained = io::copy(&mut input, &mut io::sink());
    let total = position.get();
    let Walk {
        last_entry_end,
        entries_accounted,
        saw_entries,
        sink,
        exchanges,
        ..
    } = walk;
    exchanges.release(None, sink);
    let problem = match (&parsed, &drained, saw_entries) {
        (Err(e), _, _) => Some(format!("HAR cut or malformed after its last complete entry: {e}")),
        (_, Err(e), _) => Some(format!("read error: {e}")),
        (Ok(()), Ok(_), false) => Some("JSON without log.entries: not a HAR file".to_string()),
        (Ok(()), Ok(_), true) => None,
    };
    let envelope_end = if problem.is_some() { last_entry_end } else { total };
    let envelope = envelope_end.saturating_sub(entries_accounted);
    if envelope > 0 {
        sink.framing(FramingCategory::HarEnvelope, envelope);
    }
    if let Some(detail) = problem {
        let reason = if drained.is_err() { SkipReason::ReadError } else { SkipReason::HarTruncated };
        sink.skip(Skip {
            offset: envelope_end,
            bytes: total - envelope_end,
            reason,
            detail,
        });
    }
}

struct Root<'w, 'a> {
    walk: &'w mut Walk<'a>,
}

impl<'de> DeserializeSeed<'de> for Root<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Root<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a HAR object with `log`")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "log" {
                map.next_value_seed(Log { walk: &mut *self.walk })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Log<'w, 'a> {
    walk: &'w mut Walk<'a>,
}

impl<'de> DeserializeSeed<'de> for Log<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Log<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the HAR `log` object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "entries" {
                self.walk.saw_entries = true;
                map.next_value_seed(Entries { walk: &mut *self.walk })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct Entries<'w, 'a> {
    walk: &'w mut Walk<'a>,
}

impl<'de> DeserializeSeed<'de> for Entries<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the `log.entries` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            self.walk.entry(&raw);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;
    use crate::ingest::frame::{Direction, Transport};

    fn read(text: &[u8]) -> CollectSink {
        let mut sink = CollectSink::default();
        read_har(text, 1 << 20, &mut sink);
        assert_eq!(sink.accounted_bytes(), text.len() as i128, "accounting closes: {:?} {:?}", sink.framing, sink.skips);
        sink
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;

    /// One entry: a POST of `body` answered with `status`, `content` (the HAR `content` object).
    fn entry(started: &str, status: u16, response_headers: &str, content: &str) -> String {
        format!(
            r#"{{"startedDateTime":"{started}","time":12.5,"request":{{"method":"POST","url":"http://127.0.0.1:3000/mcp","httpVersion":"HTTP/1.1","headers":[{{"name":"Content-Type","value":"application/json"}},{{"name":":authority","value":"x"}},{{"name":"MCP-Protocol-Version","value":"2025-11-25"}}],"postData":{{"mimeType":"application/json","text":{}}},"bodySize":{}}},"response":{{"status":{status},"statusText":"OK","headers":[{response_headers}],"content":{content}}},"timings":{{"blocked":-1,"send":0.5,"wait":10,"receive":2}}}}"#,
            serde_json::to_string(INIT).unwrap_or_default(),
            INIT.len()
        )
    }

    fn har(entries: &[String]) -> String {
        format!("{{\n  \"log\": {{\n    \"version\": \"1.2\",\n    \"creator\": {{\"name\": \"t\", \"version\": \"1\"}},\n    \"entries\": [\n{}\n    ]\n  }}\n}}\n", entries.join(",\n"))
    }

    #[test]
    fn json_sse_and_base64_bodies_are_frames_with_headers_and_times() {
        let result = r#"{"jsonrpc":"2.0","id":0,"result":{}}"#;
        let sse = format!("event: message\ndata: {result}\n\n");
        let json_body = format!(r#"{{"size":{},"mimeType":"application/json","text":{}}}"#, result.len(), serde_json::to_string(result).unwrap_or_default());
        let sse_body = format!(r#"{{"size":{},"mimeType":"text/event-stream","text":{}}}"#, sse.len(), serde_json::to_string(&sse).unwrap_or_default());
        let b64 = "eyJqc29ucnBjIjoiMi4wIiwiaWQiOjAsInJlc3VsdCI6e319"; // the result above
        let b64_body = format!(r#"{{"size":{},"mimeType":"application/json","text":"{b64}","encoding":"base64"}}"#, result.len());
        let sid = r#"{"name":"Mcp-Session-Id","value":"S1"},{"name":"Transfer-Encoding","value":"chunked"}"#;
        let text = har(&[
            entry("2026-01-01T00:00:00.000Z", 200, sid, &json_body),
            entry("2026-01-01T00:00:01.000+00:00", 200, r#"{"name":"Content-Type","value":"text/event-stream"}"#, &sse_body),
            entry("2026-01-01T00:00:02Z", 200, "", &b64_body),
        ]);
        let sink = read(text.as_bytes());
        let payloads: Vec<&[u8]> = sink.frames.iter().map(|f| f.payload.as_slice()).collect();
        assert_eq!(payloads, vec![INIT.as_bytes(), result.as_bytes(), INIT.as_bytes(), result.as_bytes(), INIT.as_bytes(), result.as_bytes()]);
        let f = &sink.frames;
        assert_eq!(f[0].direction, Some(Direction::ClientToServer));
        assert_eq!(f[0].session.as_deref(), Some("S1"), "the initialize request takes the session its response assigns");
        assert_eq!(f[0].ts_us, Some(1_767_225_600_000_000));
        assert_eq!(f[1].ts_us, Some(1_767_225_600_010_500), "response at start + send + wait");
        assert_eq!(f[3].transport, Transport::Sse);
        assert_eq!(f[1].http.as_ref().and_then(|h| h.protocol_version.as_deref()), Some("2025-11-25"));
        assert_eq!(f[1].http.as_ref().map(|h| h.url.as_str()), Some("/mcp"));
        assert!(sink.framing.get("har_envelope").is_some_and(|n| *n > 0));
        assert!(!sink.framing.contains_key("http_heads"), "rebuilt heads are not input");
        assert!(sink.skips.is_empty(), "{:?}", sink.skips);
    }

    #[test]
    fn a_missing_body_is_an_event_and_an_error_status_too() {
        let text = har(&[
            entry("2026-01-01T00:00:00Z", 200, "", r#"{"size":5000,"mimeType":"application/json","comment":"too large"}"#),
            entry("2026-01-01T00:00:01Z", 404, "", r#"{"size":9,"mimeType":"text/plain","text":"not found"}"#),
        ]);
        let sink = read(text.as_bytes());
        assert_eq!(sink.frames.len(), 2, "the requests only: no response frame is invented");
        let kinds: Vec<&str> = sink.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, vec!["har_body_missing", "http_status"]);
        assert!(sink.events[0].text.contains("5000 bytes"), "{}", sink.events[0].text);
        assert!(sink.events[1].text.contains("404"), "{}", sink.events[1].text);
    }

    #[test]
    fn a_cut_file_keeps_its_complete_entries() {
        let body = r#"{"size":0,"mimeType":"application/json"}"#;
        let full = har(&[entry("2026-01-01T00:00:00Z", 202, "", body), entry("2026-01-01T00:00:01Z", 202, "", body), entry("2026-01-01T00:00:02Z", 202, "", body)]);
        let cut = &full.as_bytes()[..full.len() * 5 / 6];
        let sink = read(cut);
        assert_eq!(sink.frames.len(), 2);
        assert_eq!(sink.skips.len(), 1);
        assert_eq!(sink.skips[0].reason, SkipReason::HarTruncated);
    }

    #[test]
    fn entries_that_are_not_entries_and_files_that_are_not_hars_are_counted() {
        let ok = entry("2026-01-01T00:00:00Z", 202, "", r#"{"size":0}"#);
        let text = har(&[r#"{"request":{"method":"BAD METHOD","url":"/"}}"#.to_string(), "17".to_string(), ok]);
        let sink = read(text.as_bytes());
        assert_eq!(sink.frames.len(), 1);
        let reasons: Vec<_> = sink.skips.iter().map(|s| s.reason).collect();
        assert_eq!(reasons, vec![SkipReason::InvalidHarEntry, SkipReason::InvalidHarEntry]);
        for other in [&b"{\"log\":{\"version\":\"1.2\"}}"[..], b"[1,2,3]", b"\xef\xbb\xbf{\"log\": 3}", b""] {
            let sink = read(other);
            assert!(sink.frames.is_empty());
            assert_eq!(sink.skips.iter().map(|s| s.reason).collect::<Vec<_>>(), vec![SkipReason::HarTruncated], "{other:?}");
        }
        let sink = read(b"\xef\xbb\xbf{\"log\":{\"entries\":[]}}");
        assert!(sink.skips.is_empty() && sink.framing.get("har_envelope") == Some(&25));
    }
}
