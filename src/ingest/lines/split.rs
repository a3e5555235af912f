//! Newline framing over a streaming reader with memchr; counts bytes as on the wire.
//!
//! The splitter owns one growable buffer. It never reads a whole file: it reads fixed-size
//! blocks, hands out complete lines, and keeps only the unfinished tail. A line longer than
//! the buffer grows it (doubling, so copying stays linear) up to `max_frame_bytes`; past that
//! the rest of the line is scanned and counted but not kept, so memory stays bounded by the cap.
//! A reader whose frame is the whole line (stdio) takes each line as a buffer of its own
//! ([`LineSplitter::next_owned_line`]): a line longer than a read block is the splitter's buffer
//! itself, handed over, so a log of multi-MiB messages is copied once, by the kernel.
//! It knows nothing of JSON.

use std::io::{self, Read};

/// Bytes requested from the reader per read call. 1 MiB amortises syscalls and gzip state.
const READ_BLOCK_BYTES: usize = 1 << 20;
/// Bytes per read call while the pending line is already long: what follows its end in the
/// last block is copied when the line is handed over ([`LineSplitter::next_owned_line`]), so
/// that block is kept short.
const LONG_LINE_BLOCK_BYTES: usize = 128 << 10;

/// One line as on the wire.
#[derive(Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// Absolute byte offset of the line's first byte in the (decompressed) stream.
    pub offset: u64,
    /// The line's bytes without `\n` and without a final `\r`; at most `max_frame_bytes`.
    pub bytes: &'a [u8],
    /// Bytes the line occupies on the wire, without `\n` but counting a final `\r`.
    pub wire_bytes: u64,
    /// Whether a final `\r` was stripped.
    pub had_cr: bool,
    /// Whether the line ended with `\n` (false for a last line cut by end of input).
    pub terminated: bool,
    /// Whether `bytes` is shorter than the line (the line exceeded `max_frame_bytes`).
    pub capped: bool,
}

impl Line<'_> {
    /// Blank lines (nothing but an optional `\r`) are framing, not frames.
    pub fn is_blank(&self) -> bool {
        self.bytes.is_empty() && !self.capped
    }
}

/// A line as its own buffer, for readers whose frame is the whole line (stdio).
#[derive(Debug, PartialEq, Eq)]
pub struct OwnedLine {
    pub offset: u64,
    /// The line's bytes as in [`Line::bytes`]; the buffer may have spare capacity.
    pub bytes: Vec<u8>,
    pub wire_bytes: u64,
    pub had_cr: bool,
    pub terminated: bool,
    pub capped: bool,
}

impl OwnedLine {
    /// The same line, borrowed.
    pub fn line(&self) -> Line<'_> {
        Line { offset: self.offset, bytes: &self.bytes, wire_bytes: self.wire_bytes, had_cr: self.had_cr, terminated: self.terminated, capped: self.capped }
    }
}

/// Where [`LineSplitter::next_owned_line`] gets buffers: the caller's payload allocator.
pub trait LineBuffers {
    /// `bytes` in a buffer of the caller's.
    fn copy(&mut self, bytes: &[u8]) -> Vec<u8>;
    /// A used buffer to read on into when a long line takes the splitter's own, its old
    /// contents still in it (they are overwritten, never read: keeping its length spares
    /// zeroing it again); `None` when the caller has none (then the line is copied).
    fn spare(&mut self) -> Option<Vec<u8>>;
}

/// A line at least this long that fills the buffer from its start is handed over as the buffer
/// itself ([`LineSplitter::next_owned_line`]) when that copies less than copying the line.
const HAND_OVER_MIN_BYTES: usize = 64 << 10;

/// Where the line [`LineSplitter::advance`] consumed lies in `buf`, and what it was.
struct Span {
    offset: u64,
    start: usize,
    bytes_end: usize,
    wire_bytes: u64,
    had_cr: bool,
    terminated: bool,
    capped: bool,
}

/// Streaming line splitter; see the module docs.
pub struct LineSplitter<R> {
    reader: R,
    /// `buf[..end]` is read data, the rest room to read into (zeroed once, when it grows).
    buf: Vec<u8>,
    /// Start of unconsumed data in `buf`.
    start: usize,
    /// End of valid data in `buf`.
    end: usize,
    /// Bytes of `buf[start..end]` already searched for `\n` without success.
    scanned: usize,
    /// Absolute offset of `buf[start]`.
    offset: u64,
    eof: bool,
    error: Option<io::Error>,
    max_frame_bytes: usize,
    /// For a capped line: wire bytes seen beyond the kept prefix.
    overflow_bytes: u64,
    overflow_last_cr: bool,
}

impl<R: Read> LineSplitter<R> {
    pub fn new(reader: R, max_frame_bytes: usize) -> Self {
        LineSplitter {
            reader,
            buf: Vec::new(),
            start: 0,
            end: 0,
            scanned: 0,
            offset: 0,
            eof: false,
            error: None,
            max_frame_bytes: max_frame_bytes.max(1),
            overflow_bytes: 0,
            overflow_last_cr: false,
        }
    }

    /// Bytes consumed so far (offset of the next line).
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// The read error that ended the stream early (e.g. a truncated gzip member), once.
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// The next line, or `None` at end of input. Read errors end the input: the partial tail
    /// is returned as an unterminated line and the error is kept for [`Self::take_error`].
    pub fn next_line(&mut self) -> Option<Line<'_>> {
        let s = self.advance()?;
        Some(Line { offset: s.offset, bytes: &self.buf[s.start..s.bytes_end], wire_bytes: s.wire_bytes, had_cr: s.had_cr, terminated: s.terminated, capped: s.capped })
    }

    /// The next line as [`Self::next_line`], in a buffer of its own. A long line that fills the
    /// buffer from its start (every line longer than one read block does) is handed over as the
    /// buffer itself, and only the rest of the last block is copied into a spare buffer from
    /// `buffers`, which the splitter reads on into; other lines are copied by `buffers`. A log
    /// of multi-MiB messages is then copied once (by the kernel), not twice.
    pub fn next_owned_line(&mut self, buffers: &mut dyn LineBuffers) -> Option<OwnedLine> {
        let s = self.advance()?;
        let len = s.bytes_end - s.start;
        let rest = self.end - self.start;
        let hand_over = s.start == 0 && len >= HAND_OVER_MIN_BYTES && len > rest;
        let bytes = match hand_over.then(|| buffers.spare()).flatten() {
            Some(mut spare) => {
                if spare.len() < rest {
                    spare.resize(rest, 0);
                }
                spare[..rest].copy_from_slice(&self.buf[self.start..self.end]);
                let mut line = std::mem::replace(&mut self.buf, spare);
                line.truncate(s.bytes_end);
                self.start = 0;
                self.end = rest;
                line
            }
            None => buffers.copy(&self.buf[s.start..s.bytes_end]),
        };
        Some(OwnedLine { offset: s.offset, bytes, wire_bytes: s.wire_bytes, had_cr: s.had_cr, terminated: s.terminated, capped: s.capped })
    }

    /// Finds and consumes the next line.
    fn advance(&mut self) -> Option<Span> {
        loop {
            let pending = &self.buf[self.start + self.scanned..self.end];
            if let Some(i) = memchr::memchr(b'\n', pending) {
                let line_end = self.start + self.scanned + i;
                return Some(self.emit(line_end, true));
            }
            self.scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end && self.overflow_bytes == 0 {
                    return None;
                }
                return Some(self.emit(self.end, false));
            }
            if self.end - self.start >= self.max_frame_bytes {
                self.discard_overflow();
                continue;
            }
            self.fill();
        }
    }

    /// Consume `buf[start..line_end]` (capped at `max_frame_bytes`, plus any overflow already
    /// dropped) and the `\n`, and say where the kept bytes are.
    fn emit(&mut self, line_end: usize, terminated: bool) -> Span {
        let start = self.start;
        let discarded = self.overflow_bytes;
        let in_buf = line_end - start;
        let kept = in_buf.min(self.max_frame_bytes);
        let wire_bytes = in_buf as u64 + discarded;
        let capped = wire_bytes > kept as u64;
        let last_is_cr = if discarded > 0 { self.overflow_last_cr } else { in_buf > 0 && self.buf[line_end - 1] == b'\r' };
        let had_cr = terminated && last_is_cr;
        let bytes_end = if had_cr && !capped { start + kept - 1 } else { start + kept };
        let offset = self.offset;
        let consumed = in_buf + usize::from(terminated);
        self.offset += consumed as u64 + discarded;
        self.start += consumed;
        self.scanned = 0;
        self.overflow_bytes = 0;
        self.overflow_last_cr = false;
        Span { offset, start, bytes_end, wire_bytes, had_cr, terminated, capped }
    }

    /// The pending line is already `max_frame_bytes` long: keep that prefix, and count (not
    /// keep) everything up to its `\n`, reading block by block into the space after it.
    fn discard_overflow(&mut self) {
        let keep_end = self.start + self.max_frame_bytes;
        let extra = self.end - keep_end;
        if extra > 0 {
            self.overflow_bytes += extra as u64;
            self.overflow_last_cr = self.buf[self.end - 1] == b'\r';
            self.end = keep_end;
            self.scanned = self.max_frame_bytes;
        }
        loop {
            if self.eof {
                return;
            }
            self.ensure_room(READ_BLOCK_BYTES);
            let n = self.read_block(READ_BLOCK_BYTES);
            if n == 0 {
                return;
            }
            let block = &self.buf[self.end..self.end + n];
            if let Some(i) = memchr::memchr(b'\n', block) {
                if i > 0 {
                    self.overflow_bytes += i as u64;
                    self.overflow_last_cr = block[i - 1] == b'\r';
                }
                // Move the rest of the block (from the `\n`) right behind the kept prefix.
                let from = self.end + i;
                self.buf.copy_within(from..self.end + n, self.end);
                self.end += n - i;
                return;
            }
            self.overflow_bytes += n as u64;
            self.overflow_last_cr = block[n - 1] == b'\r';
        }
    }

    fn fill(&mut self) {
        // Move the unfinished line to the front before growing, so the buffer only holds one
        // line plus one block.
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let block = if self.end >= HAND_OVER_MIN_BYTES { LONG_LINE_BLOCK_BYTES } else { READ_BLOCK_BYTES };
        self.ensure_room(block);
        let n = self.read_block(block);
        self.end += n;
    }

    fn ensure_room(&mut self, room: usize) {
        // Only the missing room is zeroed (the Vec's capacity grows by doubling by itself): a
        // spare buffer from `next_owned_line` already holds its old contents' length.
        let want = self.end + room;
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
    }

    /// One read of at most `block` bytes into `buf[end..]` (a spare buffer may have more room);
    /// returns bytes read (0 = end of input or error).
    fn read_block(&mut self, block: usize) -> usize {
        let room = (self.buf.len() - self.end).min(block);
        debug_assert!(room > 0, "ensure_room ran before every read");
        let target = &mut self.buf[self.end..self.end + room];
        loop {
            match self.reader.read(target) {
                Ok(0) => {
                    self.eof = true;
                    return 0;
                }
                Ok(n) => return n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    self.eof = true;
                    return 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(u64, Vec<u8>, u64, bool, bool)> {
        let mut s = LineSplitter::new(input, cap);
        let mut out = Vec::new();
        while let Some(l) = s.next_line() {
            out.push((l.offset, l.bytes.to_vec(), l.wire_bytes, l.terminated, l.capped));
        }
        out
    }

    /// A reader that returns at most `step` bytes per call, to force buffer boundaries.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn crlf_is_stripped_but_counted() {
        let got = lines(b"{\"a\":1}\r\n{}\n", 1 << 20);
        assert_eq!(got[0], (0, b"{\"a\":1}".to_vec(), 8, true, false));
        assert_eq!(got[1], (9, b"{}".to_vec(), 2, true, false));
    }

    #[test]
    fn last_line_without_newline_is_unterminated() {
        let got = lines(b"a\nbc", 1 << 20);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], (2, b"bc".to_vec(), 2, false, false));
    }

    #[test]
    fn blank_lines_are_reported_as_blank() {
        let mut s = LineSplitter::new(&b"\n\r\nx\n"[..], 64);
        let a = s.next_line().map(|l| (l.is_blank(), l.wire_bytes));
        assert_eq!(a, Some((true, 0)));
        let b = s.next_line().map(|l| (l.is_blank(), l.wire_bytes, l.offset));
        assert_eq!(b, Some((true, 1, 1)));
        let c = s.next_line().map(|l| (l.is_blank(), l.offset));
        assert_eq!(c, Some((false, 3)));
        assert!(s.next_line().is_none());
    }

    #[test]
    fn frames_across_read_boundaries_at_every_step() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1}\n\n{\"x\":\"\xff\x00\"}\r\ntail";
        let whole = lines(input, 1 << 20);
        for step in 1..input.len() {
            let mut s = LineSplitter::new(Trickle { data: input, step }, 1 << 20);
            let mut got = Vec::new();
            while let Some(l) = s.next_line() {
                got.push((l.offset, l.bytes.to_vec(), l.wire_bytes, l.terminated, l.capped));
            }
            assert_eq!(got, whole, "step {step}");
        }
        assert_eq!(whole.len(), 4);
        assert_eq!(whole[2].1, b"{\"x\":\"\xff\x00\"}".to_vec(), "invalid UTF-8 and NUL kept");
    }

    #[test]
    fn twelve_mib_frame_is_one_line() {
        let mut input = vec![b'a'; 12 << 20];
        input.push(b'\n');
        input.extend_from_slice(b"next\n");
        let mut s = LineSplitter::new(Trickle { data: &input, step: 65536 }, 256 << 20);
        let first = s.next_line().map(|l| (l.bytes.len(), l.wire_bytes, l.capped));
        assert_eq!(first, Some((12 << 20, 12 << 20, false)));
        let second = s.next_line().map(|l| (l.offset, l.bytes.to_vec()));
        assert_eq!(second, Some(((12 << 20) + 1, b"next".to_vec())));
    }

    #[test]
    fn line_over_cap_is_capped_with_true_length() {
        let mut input = vec![b'b'; 5000];
        input.extend_from_slice(b"\r\nok\n");
        for step in [7, 100, 4096, 1 << 20] {
            let mut s = LineSplitter::new(Trickle { data: &input, step }, 1000);
            let first = s.next_line().map(|l| (l.bytes.len(), l.wire_bytes, l.capped, l.had_cr));
            assert_eq!(first, Some((1000, 5001, true, true)), "step {step}");
            let second = s.next_line().map(|l| (l.offset, l.bytes.to_vec()));
            assert_eq!(second, Some((5002, b"ok".to_vec())), "step {step}");
            assert!(s.next_line().is_none());
        }
    }

    #[test]
    fn fifty_mib_line_without_newline_is_bounded() {
        let input = vec![b'{'; 50 << 20];
        let mut s = LineSplitter::new(&input[..], 1 << 20);
        let l = s.next_line().map(|l| (l.bytes.len(), l.wire_bytes, l.terminated, l.capped));
        assert_eq!(l, Some((1 << 20, 50 << 20, false, true)));
        assert!(s.next_line().is_none());
        assert!(s.buf.len() <= 3 << 20, "buffer stayed near the cap: {}", s.buf.len());
    }

    /// Buffers for owned lines: counts the bytes it copied and the spares taken.
    struct Pool {
        spares: Vec<Vec<u8>>,
        copied: usize,
        spares_taken: usize,
    }
    impl LineBuffers for Pool {
        fn copy(&mut self, bytes: &[u8]) -> Vec<u8> {
            self.copied += bytes.len();
            bytes.to_vec()
        }
        fn spare(&mut self) -> Option<Vec<u8>> {
            let spare = self.spares.pop();
            self.spares_taken += usize::from(spare.is_some());
            spare
        }
    }

    #[test]
    fn owned_lines_are_the_input_lines_and_long_ones_are_handed_over() {
        // Truth from the input itself: its lines split at `\n`, one CRLF, one unterminated.
        let shapes: [(usize, u8); 6] = [(10, b'a'), (3 << 20, b'b'), (200 << 10, b'c'), (70 << 10, b'd'), (1 << 20, b'e'), (5, b'f')];
        let mut input = Vec::new();
        for (i, (len, byte)) in shapes.iter().enumerate() {
            input.extend(std::iter::repeat_n(*byte, *len));
            if i == 1 {
                input.push(b'\r');
            }
            if i + 1 < shapes.len() {
                input.push(b'\n');
            }
        }
        // Uncapped, and capped at 100 KiB (a capped line keeps its first bytes, counts them all).
        for cap in [16 << 20, 100 << 10] {
            let mut offset = 0u64;
            let expected: Vec<(u64, usize, u64, u8, bool)> = shapes
                .iter()
                .enumerate()
                .map(|(i, (len, byte))| {
                    let at = offset;
                    let wire = *len as u64 + u64::from(i == 1);
                    offset += wire + 1;
                    (at, (*len).min(cap), wire, *byte, i + 1 < shapes.len())
                })
                .collect();
            for step in [4096, 65536, 1 << 20] {
                for spares in [0, 3] {
                    // Used spares, with stale contents longer and shorter than what is read into them.
                    let mut pool = Pool { spares: (0..spares).map(|i| vec![b'x'; (i + 1) << 19]).collect(), copied: 0, spares_taken: 0 };
                    let mut s = LineSplitter::new(Trickle { data: &input, step }, cap);
                    let mut got = Vec::new();
                    while let Some(l) = s.next_owned_line(&mut pool) {
                        let byte = l.bytes.first().copied().unwrap_or(0);
                        assert!(l.bytes.iter().all(|b| *b == byte), "step {step}: one byte repeated, nothing stale");
                        assert_eq!(l.had_cr, l.offset == expected[1].0);
                        got.push((l.offset, l.bytes.len(), l.wire_bytes, byte, l.terminated));
                    }
                    assert_eq!(got, expected, "cap {cap}, step {step}, {spares} spares");
                    let kept: usize = expected.iter().map(|e| e.1).sum();
                    if spares == 0 {
                        assert_eq!(pool.copied, kept, "without spares every line is copied");
                    } else if cap > 3 << 20 {
                        assert!(pool.spares_taken >= 1, "step {step}: the 3 MiB line is handed over");
                        assert!(pool.copied <= kept - (3 << 20), "step {step}: the handed-over line is not copied ({} copied)", pool.copied);
                    }
                }
            }
        }
    }

    #[test]
    fn read_error_ends_input_with_partial_line() {
        struct Failing(bool);
        impl Read for Failing {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.0 {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut"));
                }
                self.0 = true;
                out[..5].copy_from_slice(b"a\nbcd");
                Ok(5)
            }
        }
        let mut s = LineSplitter::new(Failing(false), 1024);
        assert_eq!(s.next_line().map(|l| l.bytes.to_vec()), Some(b"a".to_vec()));
        let l = s.next_line().map(|l| (l.bytes.to_vec(), l.terminated));
        assert_eq!(l, Some((b"bcd".to_vec(), false)));
        assert!(s.next_line().is_none());
        assert!(s.take_error().is_some());
    }
}
