//! Reading one capture (a file or a stdio pair) into a sink, whatever its format.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::detect::detect;
use super::formats::{Format, ReadContext};
use super::discover::CaptureInput;
use super::frame::{DEFAULT_MAX_FRAME_BYTES, Direction, Sink, Skip, SkipReason};
use super::input::{Counting, drain, open};

/// Options that shape ingest.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Frames larger than this are kept truncated and marked incomplete (default 256 MiB).
    pub max_frame_bytes: usize,
    /// Skip content sniffing and read every file as this format.
    pub forced_format: Option<Format>,
    /// Restrict packet captures to these TCP ports (empty: any stream that parses as HTTP).
    pub ports: Vec<u16>,
    /// Hash every file's bytes as they are read ([`FileReport::blake3`]), for a dataset's
    /// manifest. Not an option of the output: `options_fingerprint` leaves it out.
    pub hash_files: bool,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions { max_frame_bytes: DEFAULT_MAX_FRAME_BYTES, forced_format: None, ports: Vec::new(), hash_files: false }
    }
}

/// What happened to one input file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    pub path: String,
    pub format: Format,
    /// Size on disk.
    pub file_bytes: u64,
    pub gzip: bool,
    /// Bytes read after decompression (what offsets refer to).
    pub bytes_read: u64,
    /// The file could not be opened or read at all.
    pub error: Option<String>,
    /// blake3 of the bytes on disk, when [`IngestOptions::hash_files`] asked and the whole file
    /// was read.
    pub blake3: Option<String>,
}

/// The one "not a capture" test: no file of the input was of a capture format (all
/// unrecognised or empty) and nothing came out of it (`frames_or_events` is what model saw).
/// Such an input is listed as skipped, not counted as a capture.
pub fn is_not_a_capture(files: &[FileReport], frames_or_events: bool) -> bool {
    !frames_or_events && files.iter().all(|f| !f.format.is_capture_format())
}

/// Reads every file of `input` into `sink`; returns one report per file.
pub fn ingest_capture(input: &CaptureInput, opts: &IngestOptions, sink: &mut dyn Sink) -> Vec<FileReport> {
    match input {
        CaptureInput::File { path, .. } => vec![ingest_file(path, None, opts, sink)],
        CaptureInput::StdioPair { name, c2s, s2c } => {
            let session = short_session_name(name);
            vec![
                ingest_file(c2s, Some((Direction::ClientToServer, session.as_str())), opts, sink),
                ingest_file(s2c, Some((Direction::ServerToClient, session.as_str())), opts, sink),
            ]
        }
    }
}

/// A stdio pair's session: the pair's folder name, or `stdio` at top level.
fn short_session_name(capture: &str) -> String {
    Path::new(capture)
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "stdio".into())
}

fn file_stem(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.split('.').next().unwrap_or(name).to_string()
}

fn ingest_file(path: &Path, pair: Option<(Direction, &str)>, opts: &IngestOptions, sink: &mut dyn Sink) -> FileReport {
    let display = path.display().to_string();
    sink.begin_file(&display);
    let mut report = FileReport { path: display.clone(), format: Format::Unrecognized, file_bytes: 0, gzip: false, bytes_read: 0, error: None, blake3: None };
    let opened = match open(path, opts.hash_files) {
        Ok(o) => o,
        Err(e) => {
            sink.skip(Skip { offset: 0, bytes: 0, reason: SkipReason::UnreadableFile, detail: e.to_string() });
            report.error = Some(e.to_string());
            return report;
        }
    };
    report.file_bytes = opened.file_bytes;
    report.gzip = opened.gzip;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let format = match (pair, opts.forced_format) {
        (_, Some(f)) => f,
        (Some(_), None) if !super::packet::pcap::looks_like_pcap(&opened.head) && !opened.head.is_empty() => Format::Stdio,
        _ => detect(&opened.head, &name),
    };
    report.format = format;
    let count = Arc::new(AtomicU64::new(0));
    let reader = Counting { inner: opened.reader, count: Arc::clone(&count) };
    let session = match (format, pair) {
        (Format::Jsonl | Format::Recorder, _) => name,
        (Format::ClaudeMcpLog, _) => super::lines::claude_mcp_log::server_from_folder(path).unwrap_or_default(),
        (Format::Stdio, Some((_, s))) => s.to_string(),
        _ => file_stem(path),
    };
    ingest_reader(reader, format, pair.map(|(d, _)| d), &session, opts, sink);
    report.bytes_read = count.load(Ordering::Relaxed);
    report.blake3 = opened.hash.and_then(|h| h.finish(opened.file_bytes));
    if let Some(e) = opened.head_error {
        report.error = Some(format!("read error near the start: {e}"));
    }
    report
}

/// Reads one input's bytes as `format` into `sink`: what reading a file does once it is opened
/// and its format known. `session` names the stdio session or host-log server (the file stem),
/// the JSONL transcript's default session (the file name), or a Claude Code MCP log's server
/// (its `mcp-logs-<server>` folder; empty: the text names it); `direction` is a stdio pair's side.
/// The fuzz targets call this on arbitrary bytes.
pub fn ingest_reader(
    reader: impl Read + Send,
    format: Format,
    direction: Option<Direction>,
    session: &str,
    opts: &IngestOptions,
    sink: &mut dyn Sink,
) {
    let mut reader = reader;
    match format.info().read {
        Some(read) => read(&mut reader, &ReadContext { direction, session, max_frame_bytes: opts.max_frame_bytes, ports: &opts.ports }, sink),
        None => {
            let bytes = drain(reader);
            let (reason, detail) = match format {
                Format::Source => (SkipReason::SourceFile, "program source, not traffic (read it with --input-format FORMAT)".to_string()),
                _ => (SkipReason::UnrecognizedFormat, super::formats::unrecognized_detail()),
            };
            if bytes > 0 {
                sink.skip(Skip { offset: 0, bytes, reason, detail });
            }
        }
    }
}

