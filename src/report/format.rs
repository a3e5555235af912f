//! Formatting helpers shared by the report's outline and charts: byte sizes, UTC times,
//! durations. Pure functions of numbers; no report structure.

/// `10,485,760 bytes (10.0 MiB)`; below 1 KiB only the bytes.
pub fn bytes_label(n: u64) -> String {
    let exact = super::stats::thousands(n);
    if n < 1024 { format!("{exact} B") } else { format!("{exact} B ({})", short_bytes(n)) }
}

/// `64 KiB`, `9.5 MiB`, `512 B`: binary units, at most one decimal.
pub fn short_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || (v - v.round()).abs() < 0.05 { format!("{} {}", v.round() as u64, UNITS[u]) } else { format!("{v:.1} {}", UNITS[u]) }
}

/// A latency in milliseconds with one decimal (`1,505.0 ms`), `-` when unknown.
pub fn ms_label(ms: Option<f64>) -> String {
    match ms {
        Some(v) if v.is_finite() => {
            let tenths = (v.abs() * 10.0).round() as u64;
            format!("{}{}.{} ms", if v < 0.0 { "-" } else { "" }, super::stats::thousands(tenths / 10), tenths % 10)
        }
        _ => "-".to_string(),
    }
}

/// Microseconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc(ts_us: i64) -> String {
    let secs = ts_us.div_euclid(1_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// A duration in microseconds as `1.234 s`, `12 min 3 s`.
pub fn duration(us: i64) -> String {
    let us = us.max(0);
    if us < 60_000_000 { format!("{:.3} s", us as f64 / 1e6) } else { format!("{} min {} s", us / 60_000_000, us % 60_000_000 / 1_000_000) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_read_well() {
        assert_eq!(short_bytes(10_485_760), "10 MiB");
        assert_eq!(short_bytes(9_961_474), "9.5 MiB");
        assert_eq!(short_bytes(512), "512 B");
        assert_eq!(bytes_label(65_536), "65,536 B (64 KiB)");
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_209_929_864_000), "2026-12-02 11:12:09 UTC");
    }
}
