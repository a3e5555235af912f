//! JSONL transcripts: one object a line holding a message and its direction.
//!
//! Schema (documented in docs/inputs.md): the message under `message` (a JSON value, taken byte for
//! byte as written) or `raw`/`line` (a string holding the exact message text) or `raw_b64`;
//! `direction` or `dir`: `c2s`/`s2c`, `send`/`recv`, `client`/`server`, `in`/`out`; optional
//! `ts` (RFC 3339 string or epoch s/ms/µs number) or `ts_us`; optional `session`; optional
//! `partial: true` for a message the stream cut before its newline; for HTTP traffic optional
//! `http_ex` (exchange number: pairs an `id: null` error with its request), `http_method`,
//! `url`, `http_status`.

use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ingest::base64::decode_base64;
use crate::ingest::frame::{Direction, Frame, FramingCategory, HttpContext, Sink, Skip, SkipReason, Transport};
use super::line_loop::{LineReader, account_plain_line, read_lines};
use super::split::Line;
use crate::ingest::time::{epoch_number_to_us, parse_rfc3339_us};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    raw: Option<Cow<'a, str>>,
    #[serde(borrow)]
    line: Option<Cow<'a, str>>,
    #[serde(borrow)]
    raw_b64: Option<Cow<'a, str>>,
    #[serde(borrow)]
    direction: Option<Cow<'a, str>>,
    #[serde(borrow)]
    dir: Option<Cow<'a, str>>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    ts_us: Option<i64>,
    #[serde(borrow)]
    session: Option<&'a RawValue>,
    partial: Option<bool>,
    /// HTTP context of transcripts recorded from HTTP traffic (optional).
    #[serde(alias = "exchange")]
    http_ex: Option<u64>,
    #[serde(borrow)]
    http_method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    url: Option<Cow<'a, str>>,
    http_status: Option<u16>,
}

/// Maps the accepted direction spellings.
pub fn parse_direction(s: &str) -> Option<Direction> {
    match s.to_ascii_lowercase().as_str() {
        "c2s" | "send" | "sent" | "client" | "in" | "request" | "outgoing" => Some(Direction::ClientToServer),
        "s2c" | "recv" | "received" | "server" | "out" | "response" | "incoming" => Some(Direction::ServerToClient),
        _ => None,
    }
}

fn parse_ts(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        parse_rfc3339_us(&s).or_else(|| s.parse::<f64>().ok().and_then(epoch_number_to_us))
    } else {
        text.parse::<f64>().ok().and_then(epoch_number_to_us)
    }
}

fn session_text(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    if text == "null" {
        return None;
    }
    match serde_json::from_str::<String>(text) {
        Ok(s) => Some(s),
        Err(_) => Some(text.to_string()),
    }
}

/// Reads a transcript; `default_session` (the file name) is used when records carry none.
pub fn read_jsonl(reader: impl Read, default_session: &str, max_frame_bytes: usize, sink: &mut dyn Sink) {
    read_lines(reader, max_frame_bytes, &mut JsonlLines { default_session }, sink);
}

/// Every non-blank line is one record.
struct JsonlLines<'a> {
    default_session: &'a str,
}

impl LineReader for JsonlLines<'_> {
    fn line(&mut self, line: &Line<'_>, sink: &mut dyn Sink) {
        let default_session = self.default_session;
        if account_plain_line(line, sink) {
            return;
        }
        let record = match serde_json::from_slice::<Record>(line.bytes) {
            Ok(r) => r,
            Err(e) => {
                let reason = if line.capped { SkipReason::TranscriptLineOverCap } else if line.terminated { SkipReason::InvalidTranscriptLine } else { SkipReason::IncompleteTranscriptLine };
                sink.skip(Skip { offset: line.offset, bytes: line.wire_bytes, reason, detail: format!("not a transcript record: {e}") });
                return;
            }
        };
        let direction = record.direction.as_deref().or(record.dir.as_deref()).and_then(parse_direction);
        let (payload, mut note) = if let Some(m) = record.message {
            (sink.copy_payload(m.get().as_bytes()), None)
        } else if let Some(s) = record.raw.or(record.line) {
            (s.into_owned().into_bytes(), None)
        } else if let Some(b) = record.raw_b64 {
            match decode_base64(&b) {
                Some(bytes) => (bytes, None),
                None => (Vec::new(), Some("raw_b64 is not valid base64".to_string())),
            }
        } else {
            sink.skip(Skip {
                offset: line.offset,
                bytes: line.wire_bytes,
                reason: SkipReason::TranscriptLineWithoutMessage,
                detail: "record has no message, raw, line or raw_b64".into(),
            });
            return;
        };
        let envelope = line.wire_bytes - payload.len() as u64;
        sink.framing(FramingCategory::TranscriptEnvelope, envelope.min(line.wire_bytes));
        let mut frame = Frame::new(Transport::Jsonl, direction, line.offset, payload);
        frame.ts_us = record.ts_us.or_else(|| record.ts.and_then(parse_ts));
        frame.session = Some(Arc::from(record.session.and_then(session_text).unwrap_or_else(|| default_session.to_string())));
        if record.partial == Some(true) {
            frame.incomplete = Some("transcript marks the message partial (stream ended before its newline)".into());
        }
        if direction.is_none() && (record.direction.is_some() || record.dir.is_some()) {
            note = Some("unknown direction value; inferred from the message".into());
        }
        frame.note = note;
        if let Some(exchange) = record.http_ex {
            frame.http = Some(HttpContext {
                exchange,
                method: record.http_method.map(Cow::into_owned).unwrap_or_default(),
                url: record.url.map(Cow::into_owned).unwrap_or_default(),
                status: record.http_status,
                ..HttpContext::default()
            });
        }
        sink.frame(frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::accounting::CollectSink;

    #[test]
    fn each_message_field_and_direction_spelling() {
        let input = concat!(
            "{\"direction\":\"send\",\"ts\":\"2026-11-30T10:00:00Z\",\"session\":\"a\",\"message\":{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}}\n",
            "{\"dir\":\"s2c\",\"ts\":1796209154123,\"raw\":\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\"}\n",
            "{\"direction\":\"recv\",\"raw_b64\":\"aGk=\"}\n",
            "not json\n",
            "{\"direction\":\"c2s\"}\n",
        );
        let mut sink = CollectSink::default();
        read_jsonl(input.as_bytes(), "file.jsonl", 1 << 20, &mut sink);
        assert_eq!(sink.frames.len(), 3);
        assert_eq!(sink.frames[0].payload, b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}");
        assert_eq!(sink.frames[0].direction, Some(Direction::ClientToServer));
        assert_eq!(sink.frames[0].session.as_deref(), Some("a"));
        assert_eq!(sink.frames[1].payload, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        assert_eq!(sink.frames[1].ts_us, Some(1_796_209_154_123_000));
        assert_eq!(sink.frames[1].session.as_deref(), Some("file.jsonl"));
        assert_eq!(sink.frames[2].payload, b"hi");
        let reasons: Vec<_> = sink.skips.iter().map(|s| s.reason).collect();
        assert_eq!(reasons, vec!["invalid_transcript_line", "transcript_line_without_message"]);
    }
}
