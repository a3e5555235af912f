//! Every input the fuzz targets ever failed on (`fuzz/regressions/TARGET/NAME`, the file named
//! by what it found), replayed through the same target body (`fuzz/harness.rs`) in `cargo test`.

use std::path::Path;

use crate::harness;

#[test]
fn every_fuzz_regression_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("regressions");
    type Target = (&'static str, fn(&[u8]));
    let targets: [Target; 12] = [
        ("stdio", harness::stdio),
        ("hostlog", harness::hostlog),
        ("jsonl", harness::jsonl),
        ("recorder", harness::recorder),
        ("pcap", harness::pcap),
        ("http", harness::http),
        ("body", harness::body),
        ("message", harness::message),
        ("har", harness::har),
        ("client_logs", harness::client_logs),
        ("embedded", harness::embedded),
        ("skim", harness::skim),
    ];
    let mut replayed = 0;
    for (name, run) in targets {
        let Ok(entries) = std::fs::read_dir(root.join(name)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).expect("regression input");
            let outcome = std::panic::catch_unwind(|| run(&bytes));
            assert!(outcome.is_ok(), "{name} target fails on {}", f.display());
            replayed += 1;
        }
    }
    assert!(replayed >= 1, "regressions found under {}", root.display());
}
