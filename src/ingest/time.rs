//! Parsing the timestamps logs and transcripts carry into microseconds since the Unix epoch.

/// Parses RFC 3339 / ISO 8601 (`2025-01-01T10:00:00.123Z`, `2025-01-01 10:00:00.123`,
/// `+02:00` offsets). A time without zone is taken as UTC. Returns `None` if malformed.
pub fn parse_rfc3339_us(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ' || b[10] == b't') {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut micros = 0i64;
    if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = &s[start..i];
        if frac.is_empty() {
            return None;
        }
        let mut digits: String = frac.chars().take(6).collect();
        while digits.len() < 6 {
            digits.push('0');
        }
        micros = digits.parse().ok()?;
    }
    let offset_s = match b.get(i) {
        None => 0,
        Some(b'Z') | Some(b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let h = num(i + 1..i + 3)?;
            let m = if b.get(i + 3) == Some(&b':') { num(i + 4..i + 6)? } else { num(i + 3..i + 5).unwrap_or(0) };
            let v = h * 3600 + m * 60;
            if sign == b'+' { v } else { -v }
        }
        Some(_) => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_s;
    Some(secs * 1_000_000 + micros)
}

/// `YYYY-MM-DD` followed by `T` or a space and `HH:MM`.
pub fn starts_with_timestamp(line: &[u8]) -> bool {
    let d = |i: usize| line.get(i).is_some_and(u8::is_ascii_digit);
    line.len() >= 16
        && (0..4).all(d)
        && line[4] == b'-'
        && d(5)
        && d(6)
        && line[7] == b'-'
        && d(8)
        && d(9)
        && (line[10] == b'T' || line[10] == b' ')
        && d(11)
        && d(12)
        && line[13] == b':'
}

/// An epoch number in seconds, milliseconds or microseconds (chosen by magnitude) → µs.
pub fn epoch_number_to_us(v: f64) -> Option<i64> {
    if !v.is_finite() || v < 0.0 {
        return None;
    }
    let us = if v >= 1e14 {
        v
    } else if v >= 1e11 {
        v * 1e3
    } else {
        v * 1e6
    };
    Some(us as i64)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_shapes() {
        assert_eq!(parse_rfc3339_us("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339_us("2026-12-02T10:59:14.123Z"), Some(1_796_209_154_123_000));
        assert_eq!(parse_rfc3339_us("2026-12-02 12:59:14.123456+02:00"), Some(1_796_209_154_123_456));
        assert_eq!(parse_rfc3339_us("2026-12-02T10:59:14"), Some(1_796_209_154_000_000));
        assert_eq!(parse_rfc3339_us("yesterday"), None);
        assert_eq!(parse_rfc3339_us("2026-13-02T10:59:14Z"), None);
    }

    #[test]
    fn epoch_units_by_magnitude() {
        assert_eq!(epoch_number_to_us(1_796_209_154.5), Some(1_796_209_154_500_000));
        assert_eq!(epoch_number_to_us(1_796_209_154_123.0), Some(1_796_209_154_123_000));
        assert_eq!(epoch_number_to_us(1_796_209_154_123_456.0), Some(1_796_209_154_123_456));
    }
}
