//! One HTTP body after de-chunking: content decoding (gzip, deflate), then the body's
//! meaning for ingest: a JSON assembly buffer, an SSE parser, or bytes merely counted.
//! It yields [`BodyOutput`]s without HTTP context; `http` attaches the exchange.
//!
//! Offsets are stream offsets of wire bytes. For compressed bodies there is no byte mapping:
//! an SSE event's offset is that of the compressed piece whose decoding produced its data.
//!
//! Decoding is bounded: compressed bytes go to the decoder [`DECODE_STEP_BYTES`] at a time, and
//! once a JSON body has decoded to `max_frame_bytes` (or an ignored body has filled its
//! preview) the rest is not decoded at all but counted as an `http_body_over_cap` skip: a
//! decompression bomb costs at most the cap plus one step's output, whatever it expands to.

use crate::ingest::frame::{Skip, SkipReason};
use crate::ingest::http::encoding::ContentDecoder;
use crate::ingest::http::framing::HttpFramingBytes;
use crate::ingest::http::sse::{SseEvent, SseParser, move_into_larger, room_wanted};

/// Body bytes quoted in an `http_status` event.
const ERROR_PREVIEW_BYTES: usize = 200;
/// Largest up-front allocation for a body, whatever Content-Length claims.
const MAX_BODY_PREALLOCATION: u64 = 16 << 20;

/// A decoded JSON body larger than this grows straight to `max_frame_bytes` (address space,
/// resident only as it fills) instead of doubling.
const GROW_TO_CAP_AFTER: usize = 4 << 20;
/// Compressed bytes handed to the decoder at once. Deflate expands at most about 1032:1, so one
/// step decodes to at most about 4 MiB.
pub const DECODE_STEP_BYTES: usize = 4096;

/// What kind of content a body carries, from its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    Json,
    EventStream,
    /// No content type: JSON if it starts like JSON.
    Sniff,
    Other,
}

pub fn content_kind(content_type: Option<&str>, is_request: bool) -> ContentKind {
    let Some(ct) = content_type else {
        return ContentKind::Sniff;
    };
    let media = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    if media == "text/event-stream" && !is_request {
        ContentKind::EventStream
    } else if media == "application/json" || media.ends_with("+json") || media.ends_with("/json") {
        ContentKind::Json
    } else {
        ContentKind::Other
    }
}

/// What a body produced, before exchange context is attached.
#[derive(Debug)]
pub enum BodyOutput {
    Json {
        payload: Vec<u8>,
        wire_bytes: u64,
        offset: u64,
        ts_us: Option<i64>,
        incomplete: Option<String>,
        note: Option<String>,
    },
    Sse(SseEvent),
    /// Bytes of the body that were counted, not read (see [`SkipReason::HttpBodyOverCap`]).
    Skip(Skip),
}

#[derive(Debug)]
pub enum ContentSink {
    /// Assembly buffer of a JSON (or sniffed) body.
    Json {
        buf: Vec<u8>,
        sniff: bool,
        /// The capacity Content-Length asks for (up to [`MAX_BODY_PREALLOCATION`]), taken when
        /// the first bytes come: in a used buffer the sink hands in, else allocated then.
        expected: usize,
    },
    Sse(Box<SseParser>),
    Other,
}

/// Decoding and interpretation of one body's bytes (after de-chunking).
#[derive(Debug)]
pub struct BodyContent {
    decoder: ContentDecoder,
    pub sink: ContentSink,
    max_frame_bytes: u64,
    first_offset: Option<u64>,
    /// Body bytes on the wire (after de-chunking, before decoding).
    wire_bytes: u64,
    /// Decoded bytes seen (uncapped).
    decoded_bytes: u64,
    /// Bytes lost in TCP gaps (wire bytes).
    lost_bytes: u64,
    incomplete: Option<String>,
    /// Compressed bytes not decoded because nothing more was needed from them, and where they start.
    undecoded: Option<(u64, u64)>,
    /// First bytes of the decoded body, kept for `http_status` events.
    pub preview: Option<Vec<u8>>,
    scratch: Vec<u8>,
    pub outputs: Vec<BodyOutput>,
    sse_scratch: Vec<SseEvent>,
}

impl BodyContent {
    pub fn new(
        kind: ContentKind,
        decoder: ContentDecoder,
        max_frame_bytes: u64,
        size_hint: Option<u64>,
        want_preview: bool,
    ) -> Self {
        let sink = match kind {
            ContentKind::Json | ContentKind::Sniff => {
                let reserve = size_hint.unwrap_or(0).min(max_frame_bytes).min(MAX_BODY_PREALLOCATION) as usize;
                ContentSink::Json {
                    buf: Vec::new(),
                    sniff: kind == ContentKind::Sniff,
                    expected: reserve,
                }
            }
            ContentKind::EventStream => ContentSink::Sse(Box::new(SseParser::new(max_frame_bytes))),
            ContentKind::Other => ContentSink::Other,
        };
        BodyContent {
            decoder,
            sink,
            max_frame_bytes,
            first_offset: None,
            wire_bytes: 0,
            decoded_bytes: 0,
            lost_bytes: 0,
            incomplete: None,
            undecoded: None,
            preview: want_preview.then(Vec::new),
            scratch: Vec::new(),
            outputs: Vec::new(),
            sse_scratch: Vec::new(),
        }
    }

    /// The capacity the JSON buffer or the SSE event's data would want to take `incoming` more
    /// wire bytes without growing, when it would have to grow ([`Self::give_room`]).
    pub fn room_wanted(&self, incoming: usize) -> Option<usize> {
        match &self.sink {
            ContentSink::Json { buf, expected, .. } if self.lost_bytes == 0 => room_wanted(buf, buf.len().saturating_add(incoming).max(*expected), self.max_frame_bytes),
            ContentSink::Sse(parser) => parser.room_wanted(incoming),
            _ => None,
        }
    }

    /// A used buffer (recycled by the sink frames go to) to go on filling instead of growing
    /// into fresh pages: on `big.pcap` every large result was a new buffer doubled up to its
    /// size, and faulting it in was a third of the CPU time.
    pub fn give_room(&mut self, room: Vec<u8>) {
        match &mut self.sink {
            ContentSink::Json { buf, .. } => move_into_larger(buf, room),
            ContentSink::Sse(parser) => parser.give_room(room),
            _ => {}
        }
    }

    /// Wire body bytes at stream `offset`.
    pub fn piece(&mut self, bytes: &[u8], offset: u64, ts_us: Option<i64>, framing: &mut HttpFramingBytes) {
        if bytes.is_empty() {
            return;
        }
        self.first_offset.get_or_insert(offset);
        self.wire_bytes += bytes.len() as u64;
        if self.decoder.is_identity() {
            self.decoded(bytes, offset, ts_us, framing);
            return;
        }
        if self.decoder.failure().is_some() {
            // Undecodable bytes: counted as "other" body bytes, nothing more to learn.
            framing.http_body_other += bytes.len() as u64;
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let (mut rest, mut at) = (bytes, offset);
        while !rest.is_empty() {
            if let Some((_, n)) = self.undecoded.as_mut() {
                *n += rest.len() as u64;
                break;
            }
            if !self.wants_decoded_bytes() {
                if matches!(self.sink, ContentSink::Other) {
                    // An ignored body: its compressed bytes are body bytes like any other.
                    framing.http_body_other += rest.len() as u64;
                    break;
                }
                self.undecoded = Some((at, 0));
                continue;
            }
            if self.decoder.failure().is_some() {
                framing.http_body_other += rest.len() as u64;
                break;
            }
            let (step, tail) = rest.split_at(rest.len().min(DECODE_STEP_BYTES));
            framing.http_gzip_encoded_bytes += step.len() as u64;
            scratch.clear();
            self.decoder.decode(step, &mut scratch);
            framing.http_gzip_decoded_bytes += scratch.len() as u64;
            self.decoded(&scratch, at, ts_us, framing);
            (rest, at) = (tail, at + step.len() as u64);
        }
        scratch.clear();
        self.scratch = scratch;
        if let Some(why) = self.decoder.failure() {
            self.incomplete.get_or_insert(why);
        }
    }

    /// Whether decoding more of a compressed body can still change a frame or a preview: a JSON
    /// body under the cap, an event stream (its events are capped one by one), an ignored
    /// body whose preview is still filling.
    fn wants_decoded_bytes(&self) -> bool {
        let preview_filling = self.preview.as_ref().is_some_and(|p| p.len() < ERROR_PREVIEW_BYTES);
        match &self.sink {
            ContentSink::Json { .. } => self.decoded_bytes < self.max_frame_bytes || preview_filling,
            ContentSink::Sse(_) => true,
            ContentSink::Other => preview_filling,
        }
    }

    fn decoded(&mut self, bytes: &[u8], offset: u64, ts_us: Option<i64>, framing: &mut HttpFramingBytes) {
        if bytes.is_empty() {
            return;
        }
        self.decoded_bytes += bytes.len() as u64;
        if let Some(p) = self.preview.as_mut() {
            let room = ERROR_PREVIEW_BYTES.saturating_sub(p.len());
            p.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        match &mut self.sink {
            ContentSink::Json { buf, expected, .. } => {
                // After a gap the payload stops: what follows is not contiguous with it.
                if self.lost_bytes == 0 {
                    let room = self.max_frame_bytes.saturating_sub(buf.len() as u64);
                    let take = (bytes.len() as u64).min(room) as usize;
                    if buf.capacity() < *expected {
                        buf.reserve_exact(*expected - buf.len());
                    }
                    // Past GROW_TO_CAP_AFTER the buffer grows once, to the cap: doubling copies
                    // the body at each step, and the allocator keeps the buffer it left
                    // resident for a while (a 2 GiB gzip bomb peaked at 1.35x the cap).
                    if buf.capacity() - buf.len() < take && buf.len() + take > GROW_TO_CAP_AFTER {
                        buf.reserve_exact(usize::try_from(self.max_frame_bytes).unwrap_or(usize::MAX).saturating_sub(buf.len()).max(take));
                    }
                    buf.extend_from_slice(&bytes[..take]);
                }
            }
            ContentSink::Sse(parser) => {
                parser.feed(bytes, offset, ts_us, &mut self.sse_scratch);
                framing.sse_framing += parser.take_framing_bytes();
                framing.sse_resync += parser.take_resync_bytes();
                self.outputs.extend(self.sse_scratch.drain(..).map(BodyOutput::Sse));
            }
            ContentSink::Other => framing.http_body_other += bytes.len() as u64,
        }
    }

    /// `len` wire bytes at `offset` were lost.
    pub fn gap(&mut self, offset: u64, len: u64, ts_us: Option<i64>) {
        self.first_offset.get_or_insert(offset);
        self.lost_bytes += len;
        let note = format!("tcp gap of {len} bytes at stream offset {offset}");
        if !self.decoder.is_identity() {
            self.decoder
                .fail(format!("{} stream broken by a {note}", self.decoder.name()));
        }
        if let ContentSink::Sse(parser) = &mut self.sink {
            if self.decoder.is_identity() {
                parser.gap(offset, len, ts_us, &mut self.sse_scratch);
                self.outputs.extend(self.sse_scratch.drain(..).map(BodyOutput::Sse));
            }
            return;
        }
        self.incomplete.get_or_insert(note);
    }

    /// The body ended (`cut`: why it is incomplete, if it is).
    pub fn finish(&mut self, cut: Option<String>, ts_us: Option<i64>, framing: &mut HttpFramingBytes) {
        let mut tail = std::mem::take(&mut self.scratch);
        tail.clear();
        if self.decoder.failure().is_none()
            && !self.decoder.is_identity()
            && self.undecoded.is_none()
            && let Some(why) = self.decoder.finish(&mut tail)
            && cut.is_none()
        {
            self.incomplete.get_or_insert(why);
        }
        if !tail.is_empty() {
            framing.http_gzip_decoded_bytes += tail.len() as u64;
            let offset = self.first_offset.unwrap_or(0) + self.wire_bytes;
            self.decoded(&tail, offset, ts_us, framing);
        }
        if let Some(c) = cut.as_ref() {
            self.incomplete.get_or_insert(c.clone());
        }
        if let Some((offset, bytes)) = self.undecoded.take() {
            self.outputs.push(BodyOutput::Skip(Skip {
                offset,
                bytes,
                reason: SkipReason::HttpBodyOverCap,
                detail: format!(
                    "{} body decoded past max_frame_bytes ({}) after {} bytes on the wire: the rest is not decoded",
                    self.decoder.name(),
                    self.max_frame_bytes,
                    self.wire_bytes - bytes
                ),
            }));
            if matches!(self.sink, ContentSink::Json { .. }) {
                self.incomplete.get_or_insert(format!(
                    "body decoded past max_frame_bytes ({}); {bytes} compressed bytes not decoded",
                    self.max_frame_bytes
                ));
            }
        }
        let note = (!self.decoder.is_identity()).then(|| {
            format!(
                "content-encoding {}: {} bytes on the wire",
                self.decoder.name(),
                self.wire_bytes
            )
        });
        match &mut self.sink {
            ContentSink::Json { buf, sniff, .. } => {
                let payload = std::mem::take(buf);
                let looks_json = payload
                    .iter()
                    .find(|b| !b.is_ascii_whitespace())
                    .is_some_and(|b| *b == b'{' || *b == b'[');
                if *sniff && !looks_json || (self.decoded_bytes == 0 && self.lost_bytes == 0) {
                    framing.http_body_other += self.decoded_bytes;
                    return;
                }
                let mut incomplete = self.incomplete.take();
                if incomplete.is_none() && self.decoded_bytes > payload.len() as u64 {
                    incomplete = Some(format!(
                        "body of {} bytes exceeds max_frame_bytes ({})",
                        self.decoded_bytes, self.max_frame_bytes
                    ));
                }
                // Lost bytes count only when they were plain body bytes (identity).
                let lost = if self.decoder.is_identity() || matches!(self.decoder, ContentDecoder::Failed(_)) {
                    self.lost_bytes
                } else {
                    0
                };
                self.outputs.push(BodyOutput::Json {
                    payload,
                    wire_bytes: self.decoded_bytes + lost,
                    offset: self.first_offset.unwrap_or(0),
                    ts_us,
                    incomplete,
                    note,
                });
            }
            ContentSink::Sse(parser) => {
                let why = cut.unwrap_or_else(|| "response body ended".to_string());
                parser.finish(&why, ts_us, &mut self.sse_scratch);
                framing.sse_framing += parser.take_framing_bytes();
                framing.sse_resync += parser.take_resync_bytes();
                self.outputs.extend(self.sse_scratch.drain(..).map(BodyOutput::Sse));
            }
            ContentSink::Other => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON body of `pieces` with `room` handed in before the first (as `http` does when
    /// the sink has a used buffer), and whether its payload is that buffer.
    fn body_with_room(size_hint: Option<u64>, mut room: Option<Vec<u8>>, pieces: &[&[u8]]) -> (Vec<u8>, bool) {
        let given_at = room.as_ref().map(|r| r.as_ptr());
        let mut content = BodyContent::new(ContentKind::Json, ContentDecoder::for_header(None), 1 << 20, size_hint, false);
        let mut framing = HttpFramingBytes::default();
        let mut at = 0;
        for piece in pieces {
            if content.room_wanted(piece.len()).is_some()
                && let Some(room) = room.take()
            {
                content.give_room(room);
            }
            content.piece(piece, at, None, &mut framing);
            at += piece.len() as u64;
        }
        content.finish(None, None, &mut framing);
        match content.outputs.pop() {
            Some(BodyOutput::Json { payload, .. }) => {
                let reused = given_at == Some(payload.as_ptr());
                (payload, reused)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_body_fills_a_buffer_handed_in_as_its_length_asks_and_its_bytes_stay_whole() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        let (half, rest) = body.split_at(20);
        // Content-Length known: the room asked for is the body's length before any byte comes.
        let content = BodyContent::new(ContentKind::Json, ContentDecoder::for_header(None), 1 << 20, Some(body.len() as u64), false);
        assert_eq!(content.room_wanted(0), Some(body.len()));
        for hint in [Some(body.len() as u64), None] {
            let (alone, _) = body_with_room(hint, None, &[half, rest]);
            let (handed, reused) = body_with_room(hint, Some(Vec::with_capacity(4096)), &[half, rest]);
            assert_eq!((alone.as_slice(), handed.as_slice()), (&body[..], &body[..]), "hint {hint:?}");
            assert!(reused, "hint {hint:?}: the payload is the buffer handed in");
        }
        // Capped at max_frame_bytes, whatever Content-Length says.
        let huge = BodyContent::new(ContentKind::Json, ContentDecoder::for_header(None), 1 << 20, Some(1 << 30), false);
        assert_eq!(huge.room_wanted(10), Some(1 << 20));
    }
}
