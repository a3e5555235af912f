//! Decoding the base64 text inputs carry (HAR bodies, transcripts' `raw_b64`, cursors that
//! encode offsets). Hand-written: it must take standard and URL-safe alphabets mixed, padding
//! or none and line breaks, and stop at the first `=`, as cursors in the wild are written; the
//! `base64` crate's engines reject such text instead of reading what it holds.

/// Standard or URL-safe base64, padding optional. `None` on any other character.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s.as_bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}
