//! The `--stats` byte accounting: where every input byte went, per capture.

use std::fmt::Write as _;

use crate::ingest::frame::FramingCategory;
use crate::ingest::run::FileReport;
use crate::model::capture::CaptureRows;
use crate::model::loaded::LoadedCapture;

/// Groups digits: 52345678 → `52,345,678`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes read that are neither in frames, framing nor skips (0 when the accounting closes).
pub fn unaccounted(files: &[FileReport], rows: &CaptureRows) -> i128 {
    let read: u64 = files.iter().map(|f| f.bytes_read).sum();
    i128::from(read) - rows.accounting.accounted_bytes()
}

/// Renders the accounting of one capture.
pub fn render_capture(capture: &LoadedCapture) -> String {
    let (name, files, rows) = (&capture.name, &capture.files, &capture.rows);
    let mut s = String::new();
    if !capture.is_capture() {
        let bytes: u64 = files.iter().map(|f| f.bytes_read).sum();
        let what = files.first().map_or("empty", |f| f.format.as_str());
        let _ = writeln!(s, "{name}: skipped ({what}, {} bytes)", thousands(bytes));
        return s;
    }
    let _ = writeln!(s, "{name}");
    for f in files {
        let gz = if f.gzip { format!(", gzip {} on disk", thousands(f.file_bytes)) } else { String::new() };
        let _ = writeln!(s, "  file          {} ({}, {} bytes{gz})", f.path, f.format.as_str(), thousands(f.bytes_read));
    }
    let read: u64 = files.iter().map(|f| f.bytes_read).sum();
    let _ = writeln!(s, "  bytes read    {}", thousands(read));
    let kinds: Vec<String> = rows.accounting.frames_by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let nframes: u64 = rows.accounting.frames_by_kind.values().sum();
    let _ = writeln!(s, "  in frames     {} ({} frames: {})", thousands(rows.accounting.frame_bytes), nframes, if kinds.is_empty() { "none".into() } else { kinds.join(", ") });
    // What compressed bodies decoded to and sizes a recorder reported are not bytes read:
    // each gets its own line, subtracted.
    let decoded_category = FramingCategory::HttpGzipDecodedBytes.as_str();
    let framing_parts = rows.accounting.framing.iter().filter(|(k, _)| !FramingCategory::name_is_not_read(k));
    let framing: u64 = framing_parts.clone().map(|(_, n)| n).sum();
    let parts: Vec<String> = framing_parts.map(|(k, n)| format!("{k} {}", thousands(*n))).collect();
    let _ = writeln!(s, "  framing       {}{}", thousands(framing), if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) });
    if let Some(decoded) = rows.accounting.framing.get(decoded_category) {
        let _ = writeln!(s, "  decoded       {} (what compressed HTTP bodies decoded to, counted in frames and framing; not bytes read)", thousands(*decoded));
    }
    if let Some(recorded) = rows.accounting.framing.get(FramingCategory::RecordedSizes.as_str()) {
        let _ = writeln!(s, "  recorded      {} (sizes a recorder reported for messages it did not keep, counted in frames; not bytes read)", thousands(*recorded));
    }
    let skipped: u64 = rows.accounting.skipped_bytes.values().sum();
    let parts: Vec<String> = rows.accounting.skipped_bytes.iter().map(|(k, n)| format!("{k} {}", thousands(*n))).collect();
    let _ = writeln!(s, "  skipped       {}{}", thousands(skipped), if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) });
    let gap = unaccounted(files, rows);
    if gap != 0 {
        let _ = writeln!(s, "  unaccounted   {gap} (frame sizes differ from bytes read: decoded transcript strings, or bytes lost in TCP gaps)");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(1234), "1,234");
        assert_eq!(super::thousands(10_485_760), "10,485,760");
    }
}
