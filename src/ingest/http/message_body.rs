//! One message body in progress: its framing chosen from the head (none, Content-Length,
//! chunked, until close), wire bytes and TCP gaps applied through that framing to its
//! content, and the words for a body the stream's end cuts. What the content means is
//! `body`'s; where its outputs go is `route`'s.

use crate::ingest::connection::StreamEnd;
use crate::ingest::frame::Direction;
use crate::ingest::http::body::{BodyContent, ContentSink, content_kind};
use crate::ingest::http::chunked::ChunkedDecoder;
use crate::ingest::http::encoding::ContentDecoder;
use crate::ingest::http::framing::HttpFramingBytes;
use crate::ingest::http::head::HeadFacts;

#[derive(Debug)]
pub(super) enum BodyFraming {
    Length { remaining: u64, declared: u64 },
    Chunked(ChunkedDecoder),
    UntilClose,
}

impl BodyFraming {
    /// A request's body framing; `None`: the request has no body.
    pub(super) fn of_request(facts: &HeadFacts) -> Option<BodyFraming> {
        if facts.chunked {
            Some(BodyFraming::Chunked(ChunkedDecoder::new()))
        } else if let Some(n) = facts.content_length.filter(|&n| n > 0) {
            Some(BodyFraming::Length {
                remaining: n,
                declared: n,
            })
        } else if facts.transfer_encoding {
            Some(BodyFraming::UntilClose)
        } else {
            None
        }
    }

    /// A response's body framing (`method` of its request); `None`: the response has no body.
    pub(super) fn of_response(method: &str, status: u16, facts: &HeadFacts) -> Option<BodyFraming> {
        let no_body = method.eq_ignore_ascii_case("HEAD") || status == 204 || status == 304;
        if no_body {
            None
        } else if facts.chunked {
            Some(BodyFraming::Chunked(ChunkedDecoder::new()))
        } else if let Some(n) = facts.content_length {
            (n > 0).then_some(BodyFraming::Length {
                remaining: n,
                declared: n,
            })
        } else {
            Some(BodyFraming::UntilClose)
        }
    }
}

#[derive(Debug)]
pub(super) struct Body {
    pub(super) exchange: u64,
    pub(super) direction: Direction,
    pub(super) framing: BodyFraming,
    pub(super) content: BodyContent,
}

/// What one delivery of body bytes came to.
pub(super) struct BodyRead {
    /// Bytes of the input that belong to the body.
    pub(super) consumed: usize,
    /// The body is complete.
    pub(super) done: bool,
    /// The chunked framing broke: why (the direction has lost its message boundaries).
    pub(super) broken: Option<String>,
}

impl Body {
    /// The body of exchange `exchange`'s message in `direction`, as its head describes it;
    /// `keep_error_preview`: the response failed, its first bytes are quoted in the event.
    pub(super) fn new(exchange: u64, direction: Direction, framing: BodyFraming, facts: &HeadFacts, keep_error_preview: bool, max_frame_bytes: u64) -> Body {
        let content = BodyContent::new(
            content_kind(facts.content_type.as_deref(), direction == Direction::ClientToServer),
            ContentDecoder::for_header(facts.content_encoding.as_deref()),
            max_frame_bytes,
            facts.content_length,
            keep_error_preview,
        );
        Body {
            exchange,
            direction,
            framing,
            content,
        }
    }

    /// Body bytes at stream offset `at`: as many of `rest` as the framing says belong to it.
    pub(super) fn read(&mut self, at: u64, rest: &[u8], ts_us: Option<i64>, framing_bytes: &mut HttpFramingBytes) -> BodyRead {
        let mut broken = None;
        let (consumed, done) = match &mut self.framing {
            BodyFraming::Length { remaining, .. } => {
                let take = (*remaining).min(rest.len() as u64) as usize;
                self.content.piece(&rest[..take], at, ts_us, framing_bytes);
                *remaining -= take as u64;
                (take, *remaining == 0)
            }
            BodyFraming::UntilClose => {
                self.content.piece(rest, at, ts_us, framing_bytes);
                (rest.len(), false)
            }
            BodyFraming::Chunked(decoder) => {
                let content = &mut self.content;
                let mut pieces_framing = HttpFramingBytes::default();
                let progress = decoder.feed(rest, &mut |i, piece| {
                    content.piece(piece, at + i as u64, ts_us, &mut pieces_framing)
                });
                framing_bytes.add(&pieces_framing);
                framing_bytes.http_chunking += progress.framing_bytes;
                if let Some(e) = progress.error {
                    broken = Some(format!(
                        "chunked framing broken at stream offset {}: {e}",
                        at + progress.consumed as u64
                    ));
                }
                (progress.consumed, progress.done)
            }
        };
        BodyRead { consumed, done, broken }
    }

    /// `len` bytes at `offset` are missing. `Some(in_sync)`: the message ended inside or right
    /// at the end of the gap, and whether the next byte is a message boundary; `None`: the
    /// body goes on.
    pub(super) fn lose(&mut self, offset: u64, len: u64, ts_us: Option<i64>) -> Option<bool> {
        match &mut self.framing {
            BodyFraming::Length { remaining, .. } => {
                let lost = len.min(*remaining);
                self.content.gap(offset, lost, ts_us);
                *remaining -= lost;
                if *remaining == 0 { Some(len == lost) } else { None }
            }
            BodyFraming::UntilClose => {
                self.content.gap(offset, len, ts_us);
                None
            }
            BodyFraming::Chunked(decoder) => {
                let kept = decoder.skip_lost_data(len);
                self.content.gap(offset, len, ts_us);
                if kept { None } else { Some(false) }
            }
        }
    }

    /// Why the stream's end (`how`, worded `why`) leaves this body incomplete; `None`: the
    /// end is the body's own (until close, by FIN).
    pub(super) fn cut_by_end(&self, how: StreamEnd, why: &str) -> Option<String> {
        // SSE streams keep their own wording: the parser only flags an unterminated event.
        if matches!(self.content.sink, ContentSink::Sse(_)) {
            return Some(why.to_string());
        }
        match &self.framing {
            BodyFraming::UntilClose if how == StreamEnd::Fin => None,
            BodyFraming::UntilClose => Some(format!("body until close cut: {why}")),
            BodyFraming::Length { remaining, declared } => {
                Some(format!("{why} after {} of {declared} body bytes", declared - remaining))
            }
            BodyFraming::Chunked(_) => Some(format!("chunked body not terminated: {why}")),
        }
    }
}
