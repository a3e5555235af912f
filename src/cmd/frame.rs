//! `mcpsift frame`: one frame's bytes as on the wire (redacted by default), or pretty-printed,
//! cut with a marker at `--max-bytes`: what a user pastes into a bug report. The frame is found
//! in the tables, then its capture is read again up to it (the tables keep no payloads).

use std::io::Write as _;

use anyhow::{Context as _, bail};

use crate::cli::FrameArgs;
use mcpsift::ingest::discover::discover;
use mcpsift::ingest::frame::{Event, Frame, FramingCategory, Sink, Skip};
use mcpsift::ingest::run::ingest_capture;
use mcpsift::model::tables::string_values;
use mcpsift::query::{run_sql, sql_literal as lit};
use mcpsift::report::redact::redact;

/// Keeps the `want`-th frame a capture yields (frames are numbered as the model numbers them).
struct FrameAt {
    want: u64,
    next: u64,
    found: Option<Frame>,
}

impl Sink for FrameAt {
    fn frame(&mut self, frame: Frame) {
        if self.next == self.want {
            self.found = Some(frame);
        }
        self.next += 1;
    }
    fn event(&mut self, _event: Event) {}
    fn skip(&mut self, _skip: Skip) {}
    fn framing(&mut self, _category: FramingCategory, _bytes: u64) {}
}

pub fn run(args: &FrameArgs) -> anyhow::Result<u8> {
    let audit = super::inputs::open_inputs(&args.input)?;
    let mut filter: Vec<String> = Vec::new();
    if let Some(c) = &args.capture {
        filter.push(format!("capture = {}", lit(c)));
    }
    if let Some(s) = &args.session {
        filter.push(format!("session = {}", lit(s)));
    }
    match (args.seq, &args.rpc_id) {
        (Some(seq), _) => filter.push(format!("seq = {seq}")),
        (None, Some(id)) => {
            filter.push(format!("rpc_id = {}", lit(id)));
            let kinds = if args.request { "('request')" } else { "('response', 'error')" };
            filter.push(format!("CAST(kind AS STRING) IN {kinds}"));
        }
        (None, None) => bail!("give --seq or --rpc-id"),
    }
    let sql = format!("SELECT capture, session, seq, wire_bytes FROM frames WHERE {} ORDER BY capture, seq", filter.join(" AND "));
    let rows = run_sql(&audit.source, &sql)?;
    let col = |n: &str| -> anyhow::Result<Vec<String>> { Ok(string_values(&rows, n)?.into_iter().map(Option::unwrap_or_default).collect()) };
    let (captures, sessions, seqs, sizes) = (col("capture")?, col("session")?, col("seq")?, col("wire_bytes")?);
    match rows.height() {
        0 => bail!("no such frame in these inputs ({})", filter.join(", ")),
        1 => {}
        n => {
            let which: Vec<String> = (0..n.min(10)).map(|i| format!("{} session {} seq {}", captures[i], sessions[i], seqs[i])).collect();
            bail!("{n} frames match: name one with --capture, --session or --seq ({})", which.join("; "));
        }
    }
    let (capture, seq, wire): (&str, u64, u64) = (&captures[0], seqs[0].parse()?, sizes[0].parse()?);
    let inputs = discover(&args.input.paths, &args.input.pair)?.inputs;
    let input = inputs.iter().find(|c| c.name() == capture).with_context(|| format!("{capture}: the frame's bytes are in the raw capture; give its files (a dataset keeps no payloads)"))?;
    let opts = super::inputs::request(&args.input, None)?.ingest;
    let mut sink = FrameAt { want: seq, next: 0, found: None };
    ingest_capture(input, &opts, &mut sink);
    let frame = sink.found.with_context(|| format!("{capture}: frame {seq} not found on a second read (did the file change?)"))?;
    let mut bytes = frame.payload;
    let capped = (bytes.len() as u64) < wire;
    if args.pretty
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
    {
        bytes = serde_json::to_vec_pretty(&v)?;
    }
    if !args.no_redact {
        bytes = redact(&String::from_utf8_lossy(&bytes)).into_bytes();
    }
    let total = bytes.len() as u64;
    let mut cut_at = None;
    if let Some(max) = args.max_bytes.filter(|m| *m < total) {
        let mut end = usize::try_from(max).unwrap_or(usize::MAX);
        // Cut on a character boundary when the bytes are text.
        if let Ok(text) = std::str::from_utf8(&bytes) {
            while end > 0 && !text.is_char_boundary(end) {
                end -= 1;
            }
        }
        bytes.truncate(end);
        cut_at = Some(end);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(&bytes)?;
    if let Some(end) = cut_at {
        writeln!(out, "\n… [mcpsift: cut at {end} of {total} bytes; --max-bytes]")?;
    } else if args.pretty || (!args.no_redact && !bytes.ends_with(b"\n")) {
        // Byte for byte (--no-redact) adds nothing; otherwise the text ends its line.
        writeln!(out)?;
    }
    if capped {
        writeln!(out, "… [mcpsift: the frame is {wire} bytes on the wire; only the first {} were kept (--max-frame-bytes)]", total.min(wire))?;
    }
    out.flush()?;
    Ok(0)
}
