//! `mcpsift plan`: the captures some paths (or a listing of paths) form, one JSON line each,
//! without reading a byte of them: how a distributed job (contrib/spark) forms its tasks
//! exactly as the binary forms captures.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::Context as _;

use crate::cli::PlanArgs;
use mcpsift::ingest::discover::{CaptureInput, captures_of_listing, discover};

pub fn run(args: &PlanArgs) -> anyhow::Result<u8> {
    let mut sizes: HashMap<PathBuf, u64> = HashMap::new();
    let captures = match &args.from_list {
        Some(list) => {
            let text: Box<dyn BufRead> = if list.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(std::io::BufReader::new(std::fs::File::open(list).with_context(|| format!("{}: cannot read the listing", list.display()))?))
            };
            let mut files = Vec::new();
            for (n, line) in text.lines().enumerate() {
                let line = line.with_context(|| format!("{}: line {}", list.display(), n + 1))?;
                let line = line.trim_end_matches('\r');
                if line.trim().is_empty() {
                    continue;
                }
                let (path, bytes) = match line.rsplit_once('\t') {
                    Some((p, b)) => (p, Some(b.trim().parse::<u64>().with_context(|| format!("{}: line {}: BYTES must be a whole number", list.display(), n + 1))?)),
                    None => (line, None),
                };
                let path = PathBuf::from(path);
                if let Some(b) = bytes {
                    sizes.insert(path.clone(), b);
                }
                files.push(path);
            }
            captures_of_listing(files)
        }
        None => discover(&args.paths, &args.pair)?.inputs,
    };
    let size = |p: &PathBuf| sizes.get(p).copied().or_else(|| std::fs::metadata(p).ok().map(|m| m.len()));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for c in &captures {
        let (kind, files): (&str, Vec<&PathBuf>) = match c {
            CaptureInput::File { path, .. } => ("file", vec![path]),
            CaptureInput::StdioPair { c2s, s2c, .. } => ("stdio_pair", vec![c2s, s2c]),
        };
        let bytes: Option<u64> = files.iter().map(|f| size(f)).sum();
        let line = serde_json::json!({
            "capture": c.name(),
            "kind": kind,
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            "bytes": bytes,
        });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(0)
}
