//! A checking JSON scanner over a message's text: one pass that checks the text as serde_json
//! would (strings and their escapes, control characters, numbers, literals, nesting) and hands
//! out the spans of the fields asked for; `None` for anything it does not model, which the
//! caller then leaves to serde ([`read_view`]). No MCP here: the envelope's skimmer (`skim`)
//! and the small views read with [`read_view`] (`_meta`, paging arguments) build on it.
//!
//! Written by hand: the JSON crates build a value per field (serde_json's derive and visitors)
//! or a tape of the whole document (simd-json, sonic-rs); this needs only where fields start
//! and end.

use super::raw::Raw;

/// Deeper objects and arrays are left to serde (whose own limit is 128).
pub(super) const MAX_DEPTH: u32 = 64;

/// The fields `names` of the object `text` as a view of `Option<Raw>` fields reads them
/// (`null` is absent), or `None` for serde to read it: not one object, not JSON, an escaped
/// key, a field twice (serde's "duplicate field").
pub(super) fn skim_fields<'a, const N: usize>(text: &'a str, names: [&str; N]) -> Option<[Option<Raw<'a>>; N]> {
    let mut s = Scan::new(text);
    let out = s.fields(names, &[])?;
    s.ws();
    s.at_end().then_some(out)
}

/// A view of `Option<Raw>` fields `names` (in its order) read from the object `text`: skimmed
/// ([`skim_fields`]) and built by `build`, else read by serde, also when `build` declines (a
/// field the view reads as another type is present); `None` when the text is no such object.
pub(super) fn read_view<'a, T: serde::Deserialize<'a>, const N: usize>(text: &'a str, names: [&str; N], build: impl FnOnce([Option<Raw<'a>>; N]) -> Option<T>) -> Option<T> {
    skim_fields(text, names).and_then(build).or_else(|| serde_json::from_str(text).ok())
}

/// Which fields of one object were met: a second one is serde's "duplicate field" error.
#[derive(Default)]
pub(super) struct Seen(u32);

impl Seen {
    pub(super) fn once(&mut self, field: u32) -> Option<()> {
        let bit = 1 << field;
        if self.0 & bit != 0 {
            return None;
        }
        self.0 |= bit;
        Some(())
    }
}

pub(super) struct Scan<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Scan { text, b: text.as_bytes(), i: 0 }
    }

    pub(super) fn at_end(&self) -> bool {
        self.i == self.b.len()
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    pub(super) fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// The object at the cursor, each field handed to `field` with the cursor on its value
    /// (which `field` must read); keys with escapes are left to serde.
    pub(super) fn object(&mut self, mut field: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        self.i += 1;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.plain_string()?;
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            field(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The object at the cursor as a view of `Option<Raw>` fields `names` reads it; a key of
    /// `refused` (a field of another type in the view) leaves it to serde.
    pub(super) fn fields<const N: usize>(&mut self, names: [&str; N], refused: &[&str]) -> Option<[Option<Raw<'a>>; N]> {
        let mut out = [None; N];
        let mut seen = Seen::default();
        self.object(|s, key| match names.iter().position(|n| *n == key) {
            Some(at) => {
                seen.once(at as u32)?;
                out[at] = s.raw()?;
                Some(())
            }
            None if refused.contains(&key) => None,
            None => s.value(2).map(drop),
        })?;
        Some(out)
    }

    /// The array at the cursor, each item read by `item` with the cursor on it.
    pub(super) fn array(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if self.peek()? != b'[' {
            return None;
        }
        self.i += 1;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A view read from the object at the cursor, `None` inside for `null`; any other value
    /// is left to serde (which reads a view from an array too).
    pub(super) fn object_or_null<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.peek()? {
            b'{' => read(self).map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// A string without escapes at the cursor, its content.
    pub(super) fn plain_string(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return None;
        }
        match self.string()? {
            (text, false) => Some(text),
            (_, true) => None,
        }
    }

    /// A plain string, or `None` inside for `null` (a view's `borrowed_str` field).
    pub(super) fn plain_string_or_null(&mut self) -> Option<Option<&'a str>> {
        match self.peek()? {
            b'"' => self.plain_string().map(Some),
            b'n' => self.literal(b"null").map(|()| None),
            _ => None,
        }
    }

    /// The string whose opening quote is at the cursor: its content and whether it has escapes.
    pub(super) fn string(&mut self) -> Option<(&'a str, bool)> {
        let start = self.i + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            i = find_special(self.b, i)?;
            match self.b[i] {
                b'"' => {
                    self.i = i + 1;
                    // Both ends are ASCII quotes: character boundaries.
                    return self.text.get(start..i).map(|t| (t, escaped));
                }
                b'\\' => {
                    escaped = true;
                    match *self.b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' if self.b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => i += 6,
                        _ => return None,
                    }
                }
                _ => return None, // a control character: serde's error
            }
        }
    }

    pub(super) fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + word.len())? != word {
            return None;
        }
        self.i += word.len();
        Some(())
    }

    pub(super) fn number(&mut self) -> Option<()> {
        let digits = |b: &[u8], mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let b = self.b;
        let mut i = self.i;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        i = match *b.get(i)? {
            b'0' => i + 1,
            b'1'..=b'9' => digits(b, i + 1),
            _ => return None,
        };
        if b.get(i) == Some(&b'.') {
            if !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                return None;
            }
            i = digits(b, i + 1);
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return None;
            }
            i = digits(b, i);
        }
        self.i = i;
        Some(())
    }

    /// Any value at the cursor, checked; its text.
    pub(super) fn value(&mut self, depth: u32) -> Option<&'a str> {
        let first = self.peek()?;
        let start = self.i;
        match first {
            b'"' => {
                self.string()?;
            }
            b'{' if depth < MAX_DEPTH => self.object(|s, _| s.value(depth + 1).map(drop))?,
            b'[' if depth < MAX_DEPTH => self.array(|s| s.value(depth + 1).map(drop))?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        self.text.get(start..self.i)
    }

    /// A field's value as an `Option<Raw>` view field reads it: `null` is absent.
    pub(super) fn raw(&mut self) -> Option<Option<Raw<'a>>> {
        let v = self.value(2)?;
        Some((v != "null").then_some(Raw(v)))
    }
}

/// The first byte from `i` on that ends a string's plain run: a quote, a backslash or a
/// control character. The first 32 bytes (a key, a name) are searched eight at a time
/// ([`find_special_words`]); a longer run (a text block) by memchr's vector search for the
/// quote and the backslash, then checked for control characters 32 bytes at a time.
fn find_special(b: &[u8], i: usize) -> Option<usize> {
    let near = &b[..b.len().min(i + 32)];
    if let Some(at) = find_special_words(near, i) {
        return Some(at);
    }
    let from = near.len();
    let rest = b.get(from..)?;
    let end = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
    if has_control(&rest[..end]) {
        return find_special_words(b, from);
    }
    (end < rest.len()).then_some(from + end)
}

/// Whether `run` has a byte below 0x20: whole 32-byte blocks without a branch per byte.
fn has_control(run: &[u8]) -> bool {
    let mut blocks = run.chunks_exact(32);
    for block in &mut blocks {
        if block.iter().fold(0u8, |seen, &c| seen | u8::from(c < 0x20)) != 0 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&c| c < 0x20)
}

/// [`find_special`] eight bytes at a time: in each word the lowest flagged byte is a true one
/// (a borrow only flags bytes above a true one).
fn find_special_words(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = b.get(i..i + 8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let v = u64::from_le_bytes(bytes);
        let quote = v ^ (ONES * u64::from(b'"'));
        let slash = v ^ (ONES * u64::from(b'\\'));
        let found = ((quote.wrapping_sub(ONES) & !quote) | (slash.wrapping_sub(ONES) & !slash) | (v.wrapping_sub(ONES * 0x20) & !v)) & HIGH;
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map(|p| i + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skim_fields_reads_an_object_as_a_view_of_raw_fields_or_leaves_it_to_serde() {
        let got = skim_fields(r#"{"b":[1,{"a":2}],"a":"x\"y","c":null,"d":-1.5e3}"#, ["a", "c", "d", "e"]);
        assert_eq!(got, Some([Some(Raw(r#""x\"y""#)), None, Some(Raw("-1.5e3")), None]));
        for serdes in [r#"{"a":1,"a":2}"#, r#"{"\u0061":1}"#, r#"[1,2]"#, r#"{"a":1} x"#, r#"{"a":01}"#, r#"{"a":1,}"#, r#""a""#] {
            assert_eq!(skim_fields(serdes, ["a"]), None, "{serdes}");
        }
    }

    #[test]
    fn find_special_finds_the_first_quote_backslash_or_control_byte_at_every_offset() {
        for len in 0..80 {
            for at in 0..len {
                for special in [b'"', b'\\', 0x01, 0x1f] {
                    let mut b = vec![b'a'; len];
                    b[at] = special;
                    if at + 3 < len {
                        b[at + 3] = b'"';
                    }
                    for from in 0..=at {
                        assert_eq!(find_special(&b, from), Some(at), "len {len} at {at} from {from}");
                        assert_eq!(find_special_words(&b, from), Some(at), "len {len} at {at} from {from}");
                    }
                }
                let mut b = "é漢".repeat(len).into_bytes();
                b.push(0x7f);
                assert_eq!(find_special(&b, 0), None, "non-ASCII and DEL are plain");
                assert_eq!(find_special_words(&b, 0), None, "non-ASCII and DEL are plain");
            }
        }
    }
}
