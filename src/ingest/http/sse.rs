//! Incremental `text/event-stream` parser (WHATWG "interpreting an event stream"), fed the
//! decoded body bytes as they arrive. It yields events with the stream offset of their first
//! data byte and the timestamp of the packet that completed them; it does not know HTTP or MCP.
//!
//! Rules: lines end in CRLF, LF or a lone CR (a CR at the end of one feed and an LF at the
//! start of the next are one line break); one UTF-8 BOM is dropped at stream start; `:` starts
//! a comment; one space after the colon is dropped; `data` lines are joined with `\n`; an event
//! is dispatched on an empty line only if it had a data field; the type defaults to `message`.
//! Unlike a browser we keep an event the stream cut off (marked incomplete), and after a TCP
//! gap we skip to the next empty line unless the bytes after the gap visibly start a field.

/// Longest `event:` / `id:` / `retry:` value kept (longer values are cut).
const MAX_SMALL_VALUE_BYTES: usize = 4096;
/// Longest field name recognised; longer names are unknown fields.
const MAX_FIELD_NAME_BYTES: usize = 8;
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One dispatched event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// `event:` value, `message` when absent or empty.
    pub event_type: String,
    /// `data:` values joined with `\n`, capped at the parser's `max_data_bytes`.
    pub data: Vec<u8>,
    /// True length of the joined data (larger than `data.len()` when capped).
    pub data_bytes: u64,
    /// The `id:` field of this event, if it had one.
    pub id: Option<String>,
    /// Stream offset of the first data byte (see [`SseParser::feed`]'s `base_offset`).
    pub data_offset: u64,
    /// Timestamp of the packet that completed the event.
    pub ts_us: Option<i64>,
    /// Why the event is not whole (cut by the stream end, a TCP gap, or the cap).
    pub incomplete: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Id,
    Retry,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineState {
    /// At the first byte of a line.
    Start,
    /// Reading a field name (bytes kept in `name`).
    Name,
    /// Just after the colon: one space may follow.
    ValueStart(Field),
    Value(Field),
    /// A comment line, or a line we ignore: skip to its end.
    SkipLine,
    /// After a TCP gap, before any byte: decide whether the next bytes start a field.
    AfterGap,
    /// After a TCP gap: skipping to the next empty line. `line_empty` = nothing on this line yet.
    SkipToEmptyLine {
        line_empty: bool,
    },
}

/// Push parser for one event stream.
#[derive(Debug)]
pub struct SseParser {
    max_data_bytes: u64,
    state: LineState,
    /// The previous byte was a CR: an LF now belongs to the same line break.
    pending_cr: bool,
    /// BOM bytes matched so far at stream start; `None` once past the start.
    bom_matched: Option<usize>,
    /// Stream offset of the first byte (where held BOM bytes sit).
    bom_offset: u64,
    name: [u8; MAX_FIELD_NAME_BYTES],
    name_len: usize,
    name_overflow: bool,
    small_value: Vec<u8>,
    // The event being built.
    event_type: String,
    event_id: Option<String>,
    data: Vec<u8>,
    data_lines: u64,
    data_bytes: u64,
    data_offset: Option<u64>,
    gap_note: Option<String>,
    /// Field names, colons, spaces, line breaks, comments, ignored fields, BOM.
    framing_bytes: u64,
    /// Bytes skipped while resynchronising after a gap.
    resync_bytes: u64,
}

impl SseParser {
    pub fn new(max_data_bytes: u64) -> Self {
        SseParser {
            max_data_bytes,
            state: LineState::Start,
            pending_cr: false,
            bom_matched: Some(0),
            bom_offset: 0,
            name: [0; MAX_FIELD_NAME_BYTES],
            name_len: 0,
            name_overflow: false,
            small_value: Vec::new(),
            event_type: String::new(),
            event_id: None,
            data: Vec::new(),
            data_lines: 0,
            data_bytes: 0,
            data_offset: None,
            gap_note: None,
            framing_bytes: 0,
            resync_bytes: 0,
        }
    }

    /// Framing bytes counted since the last call (see [`SseParser`] fields).
    pub fn take_framing_bytes(&mut self) -> u64 {
        // Inside an event with data, the last line break counted may still become the joining
        // `\n` of a next data line (taken back in `begin_value`): one byte stays here until the
        // event is dispatched.
        let keep = u64::from(self.data_lines > 0).min(self.framing_bytes);
        let n = self.framing_bytes - keep;
        self.framing_bytes = keep;
        n
    }

    /// Bytes skipped after gaps since the last call.
    pub fn take_resync_bytes(&mut self) -> u64 {
        std::mem::take(&mut self.resync_bytes)
    }

    /// Parses `input`, whose first byte sits at stream offset `base_offset`; completed events
    /// are pushed to `out`.
    pub fn feed(&mut self, input: &[u8], base_offset: u64, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        let mut pos = 0usize;
        if let Some(matched) = self.bom_matched {
            pos = self.skip_bom(matched, input, base_offset, ts_us, out);
        }
        while pos < input.len() {
            if self.pending_cr {
                self.pending_cr = false;
                if input[pos] == b'\n' {
                    self.framing_bytes += 1;
                    pos += 1;
                    continue;
                }
            }
            let b = input[pos];
            match self.state {
                LineState::Start => match b {
                    b'\r' | b'\n' => {
                        pos += self.line_break(b);
                        self.dispatch(ts_us, out);
                    }
                    b':' => {
                        self.framing_bytes += 1;
                        pos += 1;
                        self.state = LineState::SkipLine;
                    }
                    _ => {
                        self.name_len = 0;
                        self.name_overflow = false;
                        self.state = LineState::Name;
                    }
                },
                LineState::Name => match b {
                    b':' => {
                        self.framing_bytes += 1;
                        pos += 1;
                        let field = self.field();
                        self.state = LineState::ValueStart(field);
                    }
                    b'\r' | b'\n' => {
                        // A line without colon: the whole line is the name, the value is empty.
                        let field = self.field();
                        self.begin_value(field, base_offset + pos as u64);
                        self.end_value(field);
                        pos += self.line_break(b);
                    }
                    _ => {
                        if self.name_len < MAX_FIELD_NAME_BYTES {
                            self.name[self.name_len] = b;
                            self.name_len += 1;
                        } else {
                            self.name_overflow = true;
                        }
                        self.framing_bytes += 1;
                        pos += 1;
                    }
                },
                LineState::ValueStart(field) => {
                    if b == b' ' {
                        self.framing_bytes += 1;
                        pos += 1;
                    }
                    self.begin_value(field, base_offset + pos as u64);
                    self.state = LineState::Value(field);
                }
                LineState::Value(field) => {
                    let rest = &input[pos..];
                    let end = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
                    self.value_bytes(field, &rest[..end]);
                    pos += end;
                    if end < rest.len() {
                        self.end_value(field);
                        pos += self.line_break(rest[end]);
                    }
                }
                LineState::SkipLine => {
                    let rest = &input[pos..];
                    let end = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
                    self.framing_bytes += end as u64;
                    pos += end;
                    if end < rest.len() {
                        pos += self.line_break(rest[end]);
                    }
                }
                LineState::AfterGap => {
                    let rest = &input[pos..];
                    let starts_field = [&b"data:"[..], b"event:", b"id:", b"retry:", b":"]
                        .iter()
                        .any(|p| rest.starts_with(p));
                    self.state = if starts_field {
                        LineState::Start
                    } else {
                        LineState::SkipToEmptyLine { line_empty: false }
                    };
                }
                LineState::SkipToEmptyLine { line_empty } => {
                    if b == b'\r' || b == b'\n' {
                        self.resync_bytes += 1;
                        pos += 1;
                        self.pending_cr = b == b'\r';
                        if line_empty {
                            self.reset_event();
                            self.state = LineState::Start;
                        } else {
                            self.state = LineState::SkipToEmptyLine { line_empty: true };
                        }
                    } else {
                        let rest = &input[pos..];
                        let end = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
                        self.resync_bytes += end as u64;
                        pos += end;
                        self.state = LineState::SkipToEmptyLine { line_empty: false };
                    }
                }
            }
        }
    }

    /// `len` bytes of the stream were lost. An event in progress is emitted as incomplete,
    /// then parsing resumes at the next field start or empty line.
    pub fn gap(&mut self, offset: u64, len: u64, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        self.release_held_bom(ts_us, out);
        self.pending_cr = false;
        if self.data_lines > 0 {
            self.gap_note = Some(format!("tcp gap of {len} bytes at stream offset {offset}"));
            self.emit(ts_us, out);
        }
        self.reset_event();
        self.state = LineState::AfterGap;
    }

    /// The stream ended (`why`, e.g. "connection closed"). A started event with data is kept.
    pub fn finish(&mut self, why: &str, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        self.release_held_bom(ts_us, out);
        if self.data_lines > 0 {
            if self.gap_note.is_none() {
                self.gap_note = Some(format!("sse event not terminated: {why}"));
            }
            self.emit(ts_us, out);
        }
        self.reset_event();
        self.state = LineState::Start;
    }

    /// The stream stopped (ended or lost bytes) inside what could have been a BOM: the bytes
    /// held back are ordinary text after all.
    fn release_held_bom(&mut self, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        if let Some(held) = self.bom_matched.take()
            && held > 0
        {
            let offset = self.bom_offset;
            self.feed(&BOM[..held], offset, ts_us, out);
        }
    }

    fn skip_bom(
        &mut self,
        mut matched: usize,
        input: &[u8],
        base_offset: u64,
        ts_us: Option<i64>,
        out: &mut Vec<SseEvent>,
    ) -> usize {
        let mut pos = 0;
        if matched == 0 {
            self.bom_offset = base_offset;
        }
        while matched < BOM.len() && pos < input.len() && input[pos] == BOM[matched] {
            matched += 1;
            pos += 1;
        }
        if matched == BOM.len() {
            self.framing_bytes += BOM.len() as u64;
            self.bom_matched = None;
            return pos;
        }
        if pos == input.len() {
            self.bom_matched = Some(matched);
            return pos;
        }
        // Not a BOM after all: the bytes held back are ordinary text.
        self.bom_matched = None;
        let held = matched - pos;
        if held > 0 {
            self.feed(&BOM[..held], base_offset.saturating_sub(held as u64), ts_us, out);
        }
        0
    }

    fn field(&self) -> Field {
        if self.name_overflow {
            return Field::Unknown;
        }
        match &self.name[..self.name_len] {
            b"data" => Field::Data,
            b"event" => Field::Event,
            b"id" => Field::Id,
            b"retry" => Field::Retry,
            _ => Field::Unknown,
        }
    }

    /// Counts one line break starting with `b` and returns the bytes it took here (1).
    fn line_break(&mut self, b: u8) -> usize {
        self.framing_bytes += 1;
        self.pending_cr = b == b'\r';
        self.state = LineState::Start;
        1
    }

    fn begin_value(&mut self, field: Field, offset: u64) {
        match field {
            Field::Data => {
                if self.data_lines > 0 {
                    // One byte of the previous line break becomes the joining `\n`.
                    self.push_data(b"\n");
                    self.framing_bytes = self.framing_bytes.saturating_sub(1);
                } else {
                    self.data_offset = Some(offset);
                }
                self.data_lines += 1;
            }
            Field::Event | Field::Id | Field::Retry => self.small_value.clear(),
            Field::Unknown => {}
        }
    }

    fn value_bytes(&mut self, field: Field, bytes: &[u8]) {
        match field {
            Field::Data => self.push_data(bytes),
            Field::Event | Field::Id | Field::Retry => {
                let room = MAX_SMALL_VALUE_BYTES.saturating_sub(self.small_value.len());
                self.small_value.extend_from_slice(&bytes[..bytes.len().min(room)]);
                self.framing_bytes += bytes.len() as u64;
            }
            Field::Unknown => self.framing_bytes += bytes.len() as u64,
        }
    }

    fn end_value(&mut self, field: Field) {
        match field {
            Field::Event => self.event_type = String::from_utf8_lossy(&self.small_value).into_owned(),
            Field::Id => {
                if !self.small_value.contains(&0) {
                    self.event_id = Some(String::from_utf8_lossy(&self.small_value).into_owned());
                }
            }
            // `retry` only matters to reconnecting clients; nothing to record for analysis.
            Field::Retry | Field::Data | Field::Unknown => {}
        }
    }

    /// The capacity the event's data would want to take `incoming` more bytes without growing,
    /// when it would have to grow: a used buffer that large can be handed in ([`Self::give_room`]).
    pub fn room_wanted(&self, incoming: usize) -> Option<usize> {
        room_wanted(&self.data, self.data.len().saturating_add(incoming), self.max_data_bytes)
    }

    /// Moves the event's data so far into `room` when that holds more, and goes on filling it.
    pub fn give_room(&mut self, room: Vec<u8>) {
        move_into_larger(&mut self.data, room);
    }

    fn push_data(&mut self, bytes: &[u8]) {
        let room = self.max_data_bytes.saturating_sub(self.data.len() as u64);
        let take = (bytes.len() as u64).min(room) as usize;
        self.data.extend_from_slice(&bytes[..take]);
        self.data_bytes += bytes.len() as u64;
    }

    fn dispatch(&mut self, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        if self.data_lines > 0 {
            self.emit(ts_us, out);
        }
        self.reset_event();
    }

    fn emit(&mut self, ts_us: Option<i64>, out: &mut Vec<SseEvent>) {
        let event_type = if self.event_type.is_empty() {
            "message".to_string()
        } else {
            std::mem::take(&mut self.event_type)
        };
        let mut incomplete = self.gap_note.take();
        if incomplete.is_none() && self.data_bytes > self.data.len() as u64 {
            incomplete = Some(format!(
                "sse data of {} bytes exceeds max_frame_bytes ({})",
                self.data_bytes, self.max_data_bytes
            ));
        }
        out.push(SseEvent {
            event_type,
            data: std::mem::take(&mut self.data),
            data_bytes: self.data_bytes,
            id: self.event_id.take(),
            data_offset: self.data_offset.unwrap_or(0),
            ts_us,
            incomplete,
        });
    }

    fn reset_event(&mut self) {
        self.event_type.clear();
        self.event_id = None;
        self.data.clear();
        self.data_lines = 0;
        self.data_bytes = 0;
        self.data_offset = None;
        self.gap_note = None;
    }
}

/// The capacity `buf` would want to hold `needed` bytes (at most `cap`), when it would have to
/// grow for them: what an SSE event's data or a JSON body asks the sink for.
pub(super) fn room_wanted(buf: &Vec<u8>, needed: usize, cap: u64) -> Option<usize> {
    (needed > buf.capacity()).then(|| needed.min(usize::try_from(cap).unwrap_or(usize::MAX)))
}

/// Moves `buf`'s bytes into `room` and keeps that instead, when `room` holds more: a used
/// buffer goes on filling where `buf` would have grown into fresh pages.
pub(super) fn move_into_larger(buf: &mut Vec<u8>, mut room: Vec<u8>) {
    if room.capacity() > buf.capacity() {
        room.clear();
        room.extend_from_slice(buf);
        *buf = room;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_parts(parts: &[&[u8]]) -> (Vec<SseEvent>, u64) {
        let mut p = SseParser::new(1 << 20);
        let mut out = Vec::new();
        let mut off = 0;
        let mut framing = 0;
        for part in parts {
            p.feed(part, off, Some(off as i64), &mut out);
            off += part.len() as u64;
            framing += p.take_framing_bytes();
        }
        (out, framing)
    }

    fn datas(events: &[SseEvent]) -> Vec<(&str, &str)> {
        events
            .iter()
            .map(|e| (e.event_type.as_str(), std::str::from_utf8(&e.data).unwrap_or("<bin>")))
            .collect()
    }

    #[test]
    fn line_endings_bom_comments_and_multiline_data() {
        let wire =
            b"\xEF\xBB\xBF: hi\r\nevent: endpoint\r\ndata: /m?x=1\r\n\r\nid: 7\rdata:a\rdata: b\r\rdata: {\"k\":1}\n\n";
        for split in 0..=wire.len() {
            let (events, framing) = parse_in_parts(&[&wire[..split], &wire[split..]]);
            assert_eq!(
                datas(&events),
                vec![("endpoint", "/m?x=1"), ("message", "a\nb"), ("message", "{\"k\":1}")],
                "split {split}"
            );
            assert_eq!(events[1].id.as_deref(), Some("7"));
            let data_total: u64 = events.iter().map(|e| e.data_bytes).sum();
            assert_eq!(framing + data_total, wire.len() as u64, "accounting at split {split}");
        }
    }

    #[test]
    fn a_stream_ending_inside_a_bom_counts_the_bytes_held_back() {
        // The first one or two bytes of a BOM, then the end of the stream or a gap: they were
        // text (a cut field name), not a BOM, and every byte is still counted.
        for wire in [&b"\xEF"[..], b"\xEF\xBB", b"\xEFx"] {
            for end_by_gap in [false, true] {
                let mut p = SseParser::new(1 << 20);
                let mut out = Vec::new();
                p.feed(wire, 0, None, &mut out);
                if end_by_gap {
                    p.gap(wire.len() as u64, 10, None, &mut out);
                }
                p.finish("connection closed", None, &mut out);
                let counted = p.take_framing_bytes() + p.take_resync_bytes();
                assert_eq!(counted, wire.len() as u64, "{wire:?} gap {end_by_gap}");
            }
        }
    }

    #[test]
    fn an_event_goes_on_in_a_buffer_handed_in_and_its_data_stays_whole() {
        // Every split of a two-line event before its end, with room handed in before the second
        // part: the data is the same, and it is the buffer handed in that the event carries.
        let wire = b"event: x\ndata: {\"a\":\ndata: \"bc\"}\n\n";
        for split in 0..wire.len() {
            let mut p = SseParser::new(1 << 20);
            let mut out = Vec::new();
            p.feed(&wire[..split], 0, None, &mut out);
            let room = p.room_wanted(4096).expect("the data would have to grow for 4 KiB more");
            assert!(room >= 4096, "split {split}");
            let given = Vec::with_capacity(64 << 10);
            let given_at = given.as_ptr();
            p.give_room(given);
            assert!(p.room_wanted(4096).is_none(), "split {split}: room enough now");
            p.feed(&wire[split..], split as u64, None, &mut out);
            assert_eq!(datas(&out), vec![("x", "{\"a\":\n\"bc\"}")], "split {split}");
            assert_eq!(out[0].data.as_ptr(), given_at, "split {split}: the event's data is the buffer handed in");
        }
        // A buffer smaller than the data's own is not taken; the cap bounds what is asked.
        let mut p = SseParser::new(100);
        let mut out = Vec::new();
        p.feed(b"data: abc", 0, None, &mut out);
        assert_eq!(p.room_wanted(1 << 20), Some(100));
        p.give_room(Vec::new());
        p.feed(b"\n\n", 9, None, &mut out);
        assert_eq!(datas(&out), vec![("message", "abc")]);
    }

    #[test]
    fn cr_at_chunk_end_and_lf_at_next_start_is_one_line_break() {
        let (events, _) = parse_in_parts(&[b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n"]);
        assert_eq!(datas(&events), vec![("message", "x\ny")]);
    }

    #[test]
    fn priming_and_data_less_events_are_not_dispatched_as_data() {
        let (events, _) = parse_in_parts(&[b"id: 1\nretry: 500\n\nid: 2\ndata: \n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, b"");
        assert_eq!(events[0].id.as_deref(), Some("2"));
    }

    #[test]
    fn unterminated_event_is_kept_as_incomplete() {
        let mut p = SseParser::new(1 << 20);
        let mut out = Vec::new();
        p.feed(b"data: {\"a\":1}\n\ndata: {\"b\"", 100, None, &mut out);
        p.finish("connection closed", None, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].data_offset, 106);
        assert_eq!(out[0].incomplete, None);
        assert_eq!(out[1].data, b"{\"b\"");
        assert!(
            out[1]
                .incomplete
                .as_deref()
                .is_some_and(|s| s.contains("not terminated"))
        );
    }

    #[test]
    fn gap_marks_event_incomplete_and_resyncs() {
        let mut p = SseParser::new(1 << 20);
        let mut out = Vec::new();
        p.feed(b"data: {\"a\":", 0, None, &mut out);
        p.gap(11, 50, None, &mut out);
        p.feed(b"tail of lost event\n\ndata: ok\n\n", 61, None, &mut out);
        assert_eq!(datas(&out), vec![("message", "{\"a\":"), ("message", "ok")]);
        assert!(
            out[0]
                .incomplete
                .as_deref()
                .is_some_and(|s| s.contains("tcp gap of 50"))
        );
        // A gap at an event boundary followed by a field keeps the next event.
        p.gap(200, 10, None, &mut out);
        p.feed(b"event: message\ndata: next\n\n", 210, None, &mut out);
        assert_eq!(out.last().map(|e| e.data.clone()), Some(b"next".to_vec()));
    }

    #[test]
    fn data_over_the_cap_is_cut_and_flagged() {
        let mut p = SseParser::new(4);
        let mut out = Vec::new();
        p.feed(b"data: 0123456789\n\n", 0, None, &mut out);
        assert_eq!(out[0].data, b"0123");
        assert_eq!(out[0].data_bytes, 10);
        assert!(out[0].incomplete.is_some());
    }
}
