//! Fast property test, on by default: random byte flips, cuts and splices of every sample,
//! read as the format each is detected as, at a small and the default frame cap. Each input
//! must give frames, framing and skips that add up to its bytes (plus bytes lost in TCP gaps),
//! with no frame over the cap, and every frame must go through the message model. The fuzz
//! targets in `fuzz/` search the same invariants for hours; this keeps them in `cargo test`.

use std::path::{Path, PathBuf};

use mcpsift::ingest::detect::detect;
use mcpsift::ingest::formats::Format;
use mcpsift::model::message::parse_payload;

use crate::harness;
use crate::testkit::Xorshift;
use crate::util::samples;

fn sample_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).expect("samples").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "record" {
                sample_files(&p, out);
            }
        } else if name.ends_with(".log") || name.ends_with(".jsonl") || name.ends_with(".pcap") || name.ends_with(".pcapng") || name.ends_with(".log.gz") {
            out.push(p);
        }
    }
}

fn read_plain(p: &Path) -> Vec<u8> {
    let raw = std::fs::read(p).expect("sample");
    if p.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(raw.as_slice()), &mut out).expect("gunzip");
        out
    } else {
        raw
    }
}

/// Reads `bytes` as `format` and checks the invariants (`fuzz/harness.rs`, as the fuzz targets
/// do), then puts every frame through the message model; `what` names the case in failures.
fn check(bytes: &[u8], format: Format, cap: usize, what: &str) {
    let (sink, lost) = harness::read_as(bytes, format, cap);
    harness::assert_closes(&sink, bytes.len() as u64, lost, cap, what);
    for f in &sink.frames {
        let _ = parse_payload(&f.payload);
    }
}

#[test]
fn mutated_samples_keep_the_accounting_closed() {
    let mut files = Vec::new();
    sample_files(&samples(), &mut files);
    assert!(files.len() >= 10, "samples found: {files:?}");
    let originals: Vec<(String, Vec<u8>)> = files.iter().map(|p| (p.display().to_string(), read_plain(p))).collect();
    let mut rng = Xorshift::new(0x853c_49e6_748f_ea9b);
    let mut cases = 0;
    for (i, (name, original)) in originals.iter().enumerate() {
        let format = detect(&original[..original.len().min(64 << 10)], name);
        check(original, format, 256 << 20, name);
        // Mutations of the first 256 KiB (one sample is a 10 MiB frame): seconds, not minutes.
        let head = &original[..original.len().min(256 << 10)];
        for round in 0..40 {
            let mut bytes = head.to_vec();
            match round % 4 {
                // Flips: a few random bytes anywhere.
                0 | 1 => {
                    for _ in 0..1 + rng.next_u64() % 8 {
                        let at = rng.next_u64() as usize % bytes.len().max(1);
                        if let Some(b) = bytes.get_mut(at) {
                            *b = rng.next_u64() as u8;
                        }
                    }
                }
                // A cut anywhere.
                2 => bytes.truncate(rng.next_u64() as usize % bytes.len().max(1)),
                // A splice: a slice of another sample inserted anywhere.
                _ => {
                    let other = &originals[(i + 1 + rng.next_u64() as usize % (originals.len() - 1)) % originals.len()].1;
                    let from = rng.next_u64() as usize % other.len().max(1);
                    let len = (rng.next_u64() as usize % 2048).min(other.len() - from);
                    let at = rng.next_u64() as usize % bytes.len().max(1);
                    bytes.splice(at..at, other[from..from + len].iter().copied());
                }
            }
            let cap = if round % 5 == 0 { 64 } else { 256 << 20 };
            // What ingest would recognise the mutated bytes as (an empty sample grows bytes).
            let format = if format == Format::Empty { detect(&bytes[..bytes.len().min(64 << 10)], name) } else { format };
            check(&bytes, format, cap, &format!("{name} round {round} ({} bytes, cap {cap})", bytes.len()));
            cases += 1;
        }
    }
    assert!(cases >= 400, "{cases} cases");
}
