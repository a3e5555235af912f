//! Message boundaries in one direction of a connection: buffering a head until it parses,
//! giving up a false head, and resynchronising at the next line that can start a message
//! after garbage, with the skipped bytes tallied. Parsing a head is `head`'s; what a message
//! then does is the driver's.

use crate::ingest::frame::SkipReason;
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::head::{HeadParse, ParsedHead, Role, find_message_start, parse_head};
use crate::ingest::http::message_body::Body;
use crate::ingest::http::skips::{SkipTally, opaque_reason};

/// A head longer than this is not HTTP we want to parse (and bounds the head buffer).
const MAX_HEAD_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub(super) enum DirState {
    /// Expecting (or reading) a message head.
    Head,
    /// Looking for the next message start.
    Resync,
    Body(Box<Body>),
    /// Everything is skipped with this reason (`non_http_stream`, `http_upgraded`).
    Opaque(SkipReason),
}

/// The parser of one direction of a connection.
#[derive(Debug)]
pub(super) struct DirParser {
    pub(super) role: Option<Role>,
    pub(super) state: DirState,
    head_buf: Vec<u8>,
    head_start: u64,
    /// For resync: the next byte starts a line.
    pub(super) at_line_start: bool,
    /// A message head parsed at least once.
    synced_once: bool,
    /// The stream starts at a message boundary (the connection's SYN was seen).
    clean_start: bool,
    /// Exchange of the message in progress (for events).
    pub(super) current_exchange: Option<u64>,
    pub(super) skip: SkipTally,
    pub(super) ended: bool,
}

/// What reading head bytes came to.
pub(super) enum HeadStep {
    /// A complete head of `len` bytes at stream offset `start`; `used` bytes of the input
    /// ended it.
    Complete { head: Box<ParsedHead>, start: u64, len: usize, used: usize },
    /// This many bytes of the input were buffered; the head goes on.
    Buffered(usize),
    /// Not a head: give it up ([`DirParser::give_up_head`]), `consumed_now` bytes of the input
    /// consumed (already in the head buffer when it is non-empty).
    Invalid { consumed_now: usize },
}

/// What giving up a false head came to.
pub(super) enum GiveUp {
    /// This many bytes of the input were used.
    Consumed(usize),
    /// `consumed` bytes of the input were used, and the head buffer's bytes after the false
    /// start (`buffered[1..]`, at stream offset `at`) are to be scanned again.
    Rescan { at: u64, buffered: Vec<u8>, consumed: usize },
}

impl DirParser {
    pub(super) fn new(role: Option<Role>) -> Self {
        let clean_start = role.is_some();
        DirParser {
            role,
            state: if clean_start { DirState::Head } else { DirState::Resync },
            head_buf: Vec::new(),
            head_start: 0,
            at_line_start: true,
            synced_once: false,
            clean_start,
            current_exchange: None,
            skip: SkipTally::default(),
            ended: false,
        }
    }

    /// The verdict that names the whole connection (a TLS or HTTP/2 client hello), if this
    /// direction reached one.
    pub(super) fn connection_verdict(&self) -> Option<SkipReason> {
        match self.state {
            DirState::Opaque(r @ (SkipReason::TlsStream | SkipReason::Http2Stream)) => Some(r),
            _ => None,
        }
    }

    /// Resynchronising: skips `rest` (at stream offset `at`) up to the next message start;
    /// returns how many bytes were skipped.
    pub(super) fn seek_message_start(&mut self, at: u64, rest: &[u8], env: &mut HttpEnv<'_>) -> usize {
        match find_message_start(rest, self.at_line_start, self.role) {
            Some(i) => {
                self.skip.add(SkipReason::HttpResync, at, i as u64, env);
                self.state = DirState::Head;
                self.head_buf.clear();
                self.head_start = at + i as u64;
                i
            }
            None => {
                self.skip.add(SkipReason::HttpResync, at, rest.len() as u64, env);
                self.at_line_start = rest.last() == Some(&b'\n');
                rest.len()
            }
        }
    }

    /// Head bytes at stream offset `at`.
    pub(super) fn read_head(&mut self, at: u64, rest: &[u8]) -> HeadStep {
        let (result, used_if_complete, appended) = if self.head_buf.is_empty() {
            self.head_start = at;
            let r = parse_head(rest, self.role);
            (r, 0, 0)
        } else {
            let old = self.head_buf.len();
            let take = rest.len().min(MAX_HEAD_BYTES.saturating_sub(old));
            self.head_buf.extend_from_slice(&rest[..take]);
            // A head can only end at a line feed: skip re-parsing until one arrives (this keeps
            // a head delivered in tiny segments linear instead of quadratic).
            let result = if memchr::memchr(b'\n', &rest[..take]).is_some() {
                parse_head(&self.head_buf, self.role)
            } else {
                HeadParse::Partial
            };
            (result, old, take)
        };
        match result {
            HeadParse::Complete(head) => {
                let len = match head.as_ref() {
                    ParsedHead::Request { len, .. } | ParsedHead::Response { len, .. } => *len,
                };
                let used = len.saturating_sub(used_if_complete);
                let start = self.head_start;
                self.head_buf.clear();
                HeadStep::Complete { head, start, len, used }
            }
            HeadParse::Partial => {
                if self.head_buf.is_empty() {
                    if rest.len() >= MAX_HEAD_BYTES {
                        return HeadStep::Invalid { consumed_now: rest.len().min(1) };
                    }
                    self.head_buf.extend_from_slice(rest);
                    HeadStep::Buffered(rest.len())
                } else if self.head_buf.len() >= MAX_HEAD_BYTES {
                    HeadStep::Invalid { consumed_now: appended }
                } else {
                    HeadStep::Buffered(appended)
                }
            }
            HeadParse::Invalid => HeadStep::Invalid { consumed_now: if self.head_buf.is_empty() { 1 } else { appended } },
        }
    }

    /// The bytes at the head start are not a message head. A stream that started clean and
    /// never carried a message is opaque from here (`peer_reason`, the other direction's
    /// [`connection_verdict`](Self::connection_verdict), names why); otherwise the direction
    /// resynchronises one byte after the false start. `first` holds the input at the head
    /// start when nothing is buffered yet.
    pub(super) fn give_up_head(&mut self, consumed_now: usize, first: &[u8], peer_reason: Option<SkipReason>, env: &mut HttpEnv<'_>) -> GiveUp {
        let buffered = std::mem::take(&mut self.head_buf);
        let start = self.head_start;
        if self.clean_start && !self.synced_once {
            let reason = peer_reason.unwrap_or_else(|| opaque_reason(if buffered.is_empty() { first } else { &buffered }));
            self.state = DirState::Opaque(reason);
            let n = if buffered.is_empty() { 0 } else { buffered.len() as u64 };
            self.skip.add(reason, start, n, env);
            return GiveUp::Consumed(if buffered.is_empty() { 0 } else { consumed_now });
        }
        env.stats.resyncs += 1;
        self.state = DirState::Resync;
        self.at_line_start = false;
        self.skip.add(SkipReason::HttpResync, start, 1, env);
        if buffered.is_empty() {
            return GiveUp::Consumed(1);
        }
        if buffered.len() > 1 {
            return GiveUp::Rescan { at: start + 1, buffered, consumed: consumed_now };
        }
        GiveUp::Consumed(consumed_now)
    }

    /// A message head was found: the skipped bytes before it are reported (as resync or
    /// mid-stream start) and the direction is in sync.
    pub(super) fn head_found(&mut self, env: &mut HttpEnv<'_>) {
        let label = if self.synced_once {
            SkipReason::HttpResync
        } else {
            SkipReason::HttpMidstream
        };
        self.skip.flush(env, Some(label));
        self.synced_once = true;
        self.state = DirState::Head;
    }

    /// Counts a head in progress as skipped for `reason` and forgets it.
    pub(super) fn drop_head(&mut self, reason: SkipReason, env: &mut HttpEnv<'_>) {
        if !self.head_buf.is_empty() {
            let n = self.head_buf.len() as u64;
            self.skip.add(reason, self.head_start, n, env);
            self.head_buf.clear();
        }
    }

    /// The stream ended: a head in progress is counted (cut, or bytes of a stream that never
    /// carried HTTP), the tally reported, and anything after is opaque.
    pub(super) fn close_stream(&mut self, env: &mut HttpEnv<'_>) {
        if !self.head_buf.is_empty() {
            let n = self.head_buf.len() as u64;
            self.skip.flush(env, None);
            // Bytes on a stream that never carried HTTP (a port probe's lone newline) are not
            // a cut head.
            let reason = if self.synced_once { SkipReason::HttpIncompleteHead } else { opaque_reason(&self.head_buf) };
            self.skip.add(reason, self.head_start, n, env);
            self.head_buf.clear();
        }
        let label = if self.synced_once {
            SkipReason::HttpResync
        } else {
            SkipReason::NonHttpStream
        };
        self.skip.flush(env, Some(label));
        self.state = DirState::Opaque(SkipReason::TcpAfterClose);
    }
}
