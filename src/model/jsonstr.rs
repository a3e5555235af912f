//! Measuring JSON string literals without decoding them (bytes, base64 sizes, UTF-16 units).

/// UTF-8 byte length of the string a JSON string literal (with its quotes) decodes to.
/// Scans only for backslashes, so a multi-MiB text is measured without being copied.
pub fn decoded_len(literal: &str) -> u64 {
    let b = literal.as_bytes();
    let inner = match (b.first(), b.last()) {
        (Some(b'"'), Some(b'"')) if b.len() >= 2 => &b[1..b.len() - 1],
        _ => return b.len() as u64,
    };
    let mut len = inner.len() as u64;
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'\\', &inner[i..]) {
        let at = i + p;
        match inner.get(at + 1) {
            Some(b'u') => {
                let cp = hex4(inner, at + 2);
                // A high surrogate followed by `\uDC00..` is one 4-byte character.
                if let Some(hi @ 0xD800..=0xDBFF) = cp
                    && inner.get(at + 6) == Some(&b'\\')
                    && inner.get(at + 7) == Some(&b'u')
                    && let Some(0xDC00..=0xDFFF) = hex4(inner, at + 8)
                {
                    let _ = hi;
                    len -= 12 - 4;
                    i = at + 12;
                    continue;
                }
                let utf8 = match cp {
                    Some(0..=0x7F) => 1,
                    Some(0x80..=0x7FF) => 2,
                    _ => 3, // BMP, or a lone surrogate (decoded as U+FFFD, 3 bytes)
                };
                len -= 6 - utf8;
                i = at + 6;
            }
            Some(_) => {
                len -= 1;
                i = at + 2;
            }
            None => break,
        }
    }
    len
}

fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let s = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// (base64 characters, decoded bytes) of a JSON string literal holding base64.
pub fn base64_sizes(literal: &str) -> (u64, u64) {
    let chars = decoded_len(literal);
    let b = literal.as_bytes();
    let inner = if b.len() >= 2 { &b[1..b.len() - 1] } else { b };
    let pad = inner.iter().rev().take(2).take_while(|&&c| c == b'=').count() as u64;
    // Escaped slashes (`\/`) are still one base64 character each; `chars` counts them once.
    let decoded = (chars / 4) * 3 + match chars % 4 { 2 => 1, 3 => 2, _ => 0 } - pad.min(2);
    (chars, decoded)
}

/// UTF-16 code units of a decoded string (what clients count description limits in).
pub fn utf16_units(s: &str) -> u64 {
    s.chars().map(|c| c.len_utf16() as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) {
        let literal = serde_json::to_string(text).unwrap();
        assert_eq!(decoded_len(&literal), text.len() as u64, "{literal}");
    }

    #[test]
    fn decoded_length_matches_serde() {
        check("plain");
        check("line\nbreak \"quoted\" back\\slash\ttab");
        check("CJK 漢字 and emoji 👩‍💻");
        check("\u{1}\u{1f}");
        assert_eq!(decoded_len(r#""\u00e9\ud83d\ude00\u0041""#), 2 + 4 + 1);
        assert_eq!(decoded_len(r#""a\/b""#), 3);
    }

    #[test]
    fn base64_sizes_with_padding() {
        assert_eq!(base64_sizes("\"aGk=\""), (4, 2));
        assert_eq!(base64_sizes("\"aGVsbG8=\""), (8, 5));
        assert_eq!(base64_sizes("\"aGVsbG8h\""), (8, 6));
        assert_eq!(base64_sizes("\"\""), (0, 0));
    }

    #[test]
    fn utf16_counts_astral_as_two() {
        assert_eq!(utf16_units("a📎"), 3);
        assert_eq!(utf16_units("漢"), 1);
    }
}
