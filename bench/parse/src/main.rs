//! Times the message model's parse of one file's lines, with the skimmer and with serde alone
//! (`parse_payload_by_serde`), alternating in blocks in one process, so that a change to
//! parsing is measured apart from the pipeline's threads, writers and the machine's drift.
//!
//! `bench/parse/run.sh FILE [LINES] [ROUNDS]`: the first LINES lines (default 400,000), every
//! line parsed ROUNDS times (default 3) each way.

use std::time::{Duration, Instant};

use mcpsift::model::message::{Parsed, parse_payload_by_serde, parse_payload_for};

/// Lines parsed each way before switching to the other.
const BLOCK: usize = 10_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: mcpsift-bench-parse FILE [LINES] [ROUNDS]")?;
    let lines: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(400_000);
    let rounds: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(3);
    let data = std::fs::read(&path)?;
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').filter(|l| !l.is_empty()).take(lines).collect();
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    let (mut skimmed, mut serde) = (Duration::ZERO, Duration::ZERO);
    let mut parsed: Vec<Parsed> = Vec::with_capacity(BLOCK);
    for round in 0..rounds {
        for block in lines.chunks(BLOCK) {
            // Which way goes first alternates by round: neither always meets a warm cache.
            for skim in [round % 2 == 0, round % 2 == 1] {
                let start = Instant::now();
                for line in block {
                    parsed.push(if skim { parse_payload_for(line, false) } else { parse_payload_by_serde(line, false) });
                }
                parsed.clear();
                *if skim { &mut skimmed } else { &mut serde } += start.elapsed();
            }
        }
    }
    let n = (lines.len() * rounds) as f64;
    let per = |d: Duration| d.as_secs_f64() / n * 1e6;
    println!(
        "{} lines ({:.1} MB), {rounds} rounds: skimmer {:.3} µs/msg, serde alone {:.3} µs/msg, skimmer {:.2}x serde (the times include dropping each message)",
        lines.len(),
        bytes as f64 / 1e6,
        per(skimmed),
        per(serde),
        serde.as_secs_f64() / skimmed.as_secs_f64()
    );
    Ok(())
}
