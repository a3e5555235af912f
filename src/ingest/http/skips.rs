//! Skipped bytes of one direction: consecutive bytes skipped for one reason reported as one
//! [`Skip`] with the reason's wording, and the reason a stream that never carried HTTP/1.x
//! is skipped for. Deciding what to skip is the caller's.

use crate::ingest::frame::{Skip, SkipReason};
use crate::ingest::http::env::HttpEnv;

/// Consecutive skipped bytes of one direction, reported as one [`Skip`].
#[derive(Debug, Default)]
pub(super) struct SkipTally {
    reason: Option<SkipReason>,
    offset: u64,
    bytes: u64,
}

impl SkipTally {
    pub(super) fn add(&mut self, reason: SkipReason, offset: u64, bytes: u64, env: &mut HttpEnv<'_>) {
        if bytes == 0 {
            return;
        }
        if self.reason != Some(reason) || self.offset + self.bytes != offset {
            self.flush(env, None);
            self.reason = Some(reason);
            self.offset = offset;
        }
        self.bytes += bytes;
    }

    /// Reports the tally; `relabel` replaces the provisional `http_resync` reason.
    pub(super) fn flush(&mut self, env: &mut HttpEnv<'_>, relabel: Option<SkipReason>) {
        if let Some(reason) = self.reason.take()
            && self.bytes > 0
        {
            let reason = if reason == SkipReason::HttpResync {
                relabel.unwrap_or(reason)
            } else {
                reason
            };
            let detail = match reason {
                SkipReason::NonHttpStream => "TCP stream bytes that never parsed as HTTP/1.x".to_string(),
                SkipReason::TlsStream => "TLS-encrypted connection: its messages cannot be read from the capture".to_string(),
                SkipReason::Http2Stream => "HTTP/2 connection (prior knowledge): not supported, only HTTP/1.x is parsed".to_string(),
                SkipReason::HttpMidstream => {
                    "bytes before the first message boundary (capture started mid-connection)".to_string()
                }
                SkipReason::HttpResync => "bytes skipped to find the next HTTP message after lost framing".to_string(),
                SkipReason::HttpUpgraded => "bytes after 101 Switching Protocols / CONNECT".to_string(),
                SkipReason::HttpIncompleteHead => "message head cut by the end of the stream".to_string(),
                other => other.as_str().to_string(),
            };
            env.sink.skip(Skip {
                offset: self.offset,
                bytes: self.bytes,
                reason,
                detail,
            });
        }
        self.bytes = 0;
    }
}

/// Why a stream that never carried HTTP/1.x is skipped, from its first bytes: a TLS record
/// (handshake, version 3.x), the HTTP/2 connection preface, or anything else.
pub(super) fn opaque_reason(first: &[u8]) -> SkipReason {
    if first.len() >= 2 && first[0] == 0x16 && first[1] == 0x03 {
        SkipReason::TlsStream
    } else if first.starts_with(b"PRI * HTTP/2.0") {
        SkipReason::Http2Stream
    } else {
        SkipReason::NonHttpStream
    }
}
