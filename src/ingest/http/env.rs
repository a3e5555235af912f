//! What all HTTP connections of one run share: the sink, the frame size cap, the capture-wide
//! exchange numbers, the framing byte counts (reported once, at the end) and the counters.
//! No parsing and no per-connection state.

use crate::ingest::frame::{Frame, FramingCategory, Sink, Skip, SkipReason};
use crate::ingest::http::framing::HttpFramingBytes;

/// Counters of the HTTP layer.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HttpStats {
    pub requests: u64,
    pub responses: u64,
    /// Responses that matched no request (request not captured).
    pub unmatched_responses: u64,
    pub frames: u64,
    pub incomplete_frames: u64,
    pub sse_events: u64,
    pub status_errors: u64,
    pub resyncs: u64,
    pub upgraded_connections: u64,
}

/// State shared by all connections of a run.
pub struct HttpEnv<'s> {
    pub sink: &'s mut dyn Sink,
    pub max_frame_bytes: u64,
    /// Next capture-wide exchange number.
    pub next_exchange: u64,
    pub framing: HttpFramingBytes,
    pub stats: HttpStats,
}

impl<'s> HttpEnv<'s> {
    pub fn new(sink: &'s mut dyn Sink, max_frame_bytes: u64) -> Self {
        HttpEnv {
            sink,
            max_frame_bytes,
            next_exchange: 0,
            framing: HttpFramingBytes::default(),
            stats: HttpStats::default(),
        }
    }

    /// Reports the accumulated framing counts to the sink (once, at the end).
    pub fn report_framing(&mut self) {
        let f = std::mem::take(&mut self.framing);
        for (category, bytes) in [
            (FramingCategory::HttpHeads, f.http_heads),
            (FramingCategory::HttpChunking, f.http_chunking),
            (FramingCategory::SseFraming, f.sse_framing),
            (FramingCategory::SseOtherEvents, f.sse_other_events),
            (FramingCategory::HttpBodyOther, f.http_body_other),
            (FramingCategory::HttpGzipEncodedBytes, f.http_gzip_encoded_bytes),
            (FramingCategory::HttpGzipDecodedBytes, f.http_gzip_decoded_bytes),
        ] {
            if bytes > 0 {
                self.sink.framing(category, bytes);
            }
        }
        if f.sse_resync > 0 {
            self.sink.skip(Skip {
                offset: 0,
                bytes: f.sse_resync,
                reason: SkipReason::SseResync,
                detail: "event-stream bytes skipped after TCP gaps, up to the next event boundary".to_string(),
            });
        }
    }

    /// The next capture-wide exchange number.
    pub(super) fn take_exchange_number(&mut self) -> u64 {
        let number = self.next_exchange;
        self.next_exchange += 1;
        number
    }

    /// Hands a frame to the sink, counted.
    pub(super) fn frame(&mut self, frame: Frame) {
        self.stats.frames += 1;
        if frame.incomplete.is_some() {
            self.stats.incomplete_frames += 1;
        }
        self.sink.frame(frame);
    }
}
