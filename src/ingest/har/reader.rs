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
