//! Push decoder for `Transfer-Encoding: chunked`: fed whatever bytes TCP delivers, it hands
//! out data pieces and counts framing bytes. It does not buffer data, only size/trailer lines.
//!
//! Why not a `Read`-based crate: SSE responses are long-lived chunked streams that often never
//! finish inside a capture, and we need to know exactly where each piece sits in the stream.

/// Longest chunk-size or trailer line accepted (extensions included).
const MAX_LINE_BYTES: usize = 8 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkedError {
    #[error("invalid chunk size line")]
    InvalidSize,
    #[error("chunk size or trailer line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong,
    #[error("chunk data not followed by CRLF")]
    MissingCrlf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk-size line.
    Size,
    /// Inside chunk data.
    Data {
        remaining: u64,
    },
    /// After chunk data: expecting CRLF (`seen_cr` once the CR went by).
    DataEnd {
        seen_cr: bool,
    },
    /// After the last chunk: trailer lines until an empty line.
    Trailer,
    Done,
    Failed,
}

/// Result of one [`ChunkedDecoder::feed`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedProgress {
    /// Bytes of the input that belong to this body (all of it unless `done` or `error`).
    pub consumed: usize,
    /// Framing bytes (size lines, CRLFs, trailers) among `consumed`.
    pub framing_bytes: u64,
    /// The terminating chunk and trailers were read: the body is complete.
    pub done: bool,
    /// The framing is broken at input index `consumed`; the decoder is dead.
    pub error: Option<ChunkedError>,
}

#[derive(Debug)]
pub struct ChunkedDecoder {
    state: State,
    line: Vec<u8>,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    pub fn new() -> Self {
        ChunkedDecoder {
            state: State::Size,
            line: Vec::new(),
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Bytes still expected in the current chunk's data, if inside one.
    pub fn remaining_in_chunk(&self) -> Option<u64> {
        match self.state {
            State::Data { remaining } => Some(remaining),
            _ => None,
        }
    }

    /// Skips `len` bytes lost in a TCP gap. Stays in sync only if they were all chunk data.
    pub fn skip_lost_data(&mut self, len: u64) -> bool {
        match self.state {
            State::Data { remaining } if len < remaining => {
                self.state = State::Data {
                    remaining: remaining - len,
                };
                true
            }
            State::Data { remaining } if len == remaining => {
                self.state = State::DataEnd { seen_cr: false };
                true
            }
            _ => false,
        }
    }

    /// Decodes as much of `input` as belongs to the body. `on_data(index, piece)` receives each
    /// data piece with its index in `input`.
    pub fn feed(&mut self, input: &[u8], on_data: &mut dyn FnMut(usize, &[u8])) -> ChunkedProgress {
        let mut pos = 0usize;
        let mut framing = 0u64;
        let error = self.feed_inner(input, &mut pos, &mut framing, on_data).err();
        if error.is_some() {
            self.state = State::Failed;
        }
        ChunkedProgress {
            consumed: pos,
            framing_bytes: framing,
            done: self.state == State::Done,
            error,
        }
    }

    fn feed_inner(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        framing: &mut u64,
        on_data: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<(), ChunkedError> {
        while *pos < input.len() {
            let at = *pos;
            match self.state {
                State::Done => break,
                State::Failed => return Err(ChunkedError::InvalidSize),
                State::Data { remaining } => {
                    let take = remaining.min((input.len() - at) as u64) as usize;
                    on_data(at, &input[at..at + take]);
                    *pos += take;
                    let left = remaining - take as u64;
                    self.state = if left == 0 {
                        State::DataEnd { seen_cr: false }
                    } else {
                        State::Data { remaining: left }
                    };
                }
                State::DataEnd { seen_cr } => {
                    match (seen_cr, input[at]) {
                        (false, b'\r') => self.state = State::DataEnd { seen_cr: true },
                        // A bare LF is tolerated, as most clients do.
                        (_, b'\n') => self.state = State::Size,
                        _ => return Err(ChunkedError::MissingCrlf),
                    }
                    *pos += 1;
                    *framing += 1;
                }
                State::Size | State::Trailer => {
                    let rest = &input[at..];
                    let (take, complete) = match memchr::memchr(b'\n', rest) {
                        Some(i) => (i + 1, true),
                        None => (rest.len(), false),
                    };
                    if self.line.len() + take > MAX_LINE_BYTES {
                        return Err(ChunkedError::LineTooLong);
                    }
                    self.line.extend_from_slice(&rest[..take]);
                    *pos += take;
                    *framing += take as u64;
                    if !complete {
                        break;
                    }
                    self.end_of_line()?;
                    self.line.clear();
                }
            }
        }
        Ok(())
    }

    fn end_of_line(&mut self) -> Result<(), ChunkedError> {
        match self.state {
            State::Size => {
                if !self.line.ends_with(b"\r\n") {
                    // Bare LF: make it CRLF for httparse.
                    self.line.pop();
                    self.line.extend_from_slice(b"\r\n");
                }
                let size = match httparse::parse_chunk_size(&self.line) {
                    Ok(httparse::Status::Complete((_, size))) => size,
                    _ => return Err(ChunkedError::InvalidSize),
                };
                self.state = if size == 0 {
                    State::Trailer
                } else {
                    State::Data { remaining: size }
                };
            }
            State::Trailer if self.line == b"\r\n" || self.line == b"\n" => self.state = State::Done,
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_split(wire: &[u8], split: usize) -> (Vec<u8>, u64, bool) {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let mut framing = 0;
        let mut done = false;
        for part in [&wire[..split], &wire[split..]] {
            let p = d.feed(part, &mut |_, piece| out.extend_from_slice(piece));
            assert_eq!(p.error, None);
            framing += p.framing_bytes;
            done = p.done;
        }
        (out, framing, done)
    }

    #[test]
    fn every_split_point_decodes_the_same() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\nb\r\nworld,again\r\n0\r\nX-T: 1\r\n\r\n";
        for split in 0..=wire.len() {
            let (out, framing, done) = decode_split(wire, split);
            assert_eq!(out, b"hello world,again", "split {split}");
            assert_eq!(framing + out.len() as u64, wire.len() as u64);
            assert!(done);
        }
    }

    #[test]
    fn stops_at_end_of_body() {
        let mut d = ChunkedDecoder::new();
        let p = d.feed(b"2\r\nab\r\n0\r\n\r\nHTTP/1.1", &mut |_, _| {});
        assert!(p.done);
        assert_eq!(p.consumed, 12);
    }

    #[test]
    fn bad_size_is_an_error() {
        let mut d = ChunkedDecoder::new();
        assert_eq!(d.feed(b"zz\r\n", &mut |_, _| {}).error, Some(ChunkedError::InvalidSize));
        let mut d = ChunkedDecoder::new();
        let p = d.feed(b"2\r\nabX", &mut |_, _| {});
        assert_eq!(p.error, Some(ChunkedError::MissingCrlf));
        assert_eq!(p.consumed, 5);
    }

    #[test]
    fn lost_bytes_inside_chunk_data_keep_sync() {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.feed(b"a\r\n012", &mut |_, p| out.extend_from_slice(p));
        assert!(d.skip_lost_data(4));
        let p = d.feed(b"789\r\n0\r\n\r\n", &mut |_, p| out.extend_from_slice(p));
        assert!(p.done);
        assert_eq!(out, b"012789");
        assert!(!ChunkedDecoder::new().skip_lost_data(1));
    }
}
