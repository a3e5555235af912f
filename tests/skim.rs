//! The message skimmer against serde on real traffic: every frame of `samples/` and of the
//! shared corpus, as ingest cuts it from the recorded bytes, is read the same with the
//! skimmer as without it (`fuzz/harness.rs`'s `skim`, the differential fuzz target's body).

use std::path::{Path, PathBuf};

use mcpsift::ingest::detect::detect;
use mcpsift::ingest::formats::Format;

use crate::harness;
use crate::util::corpus;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn every_recorded_frame_reads_the_same_skimmed_or_by_serde() {
    let mut paths = Vec::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"), &mut paths);
    files(&corpus(), &mut paths);
    paths.sort();
    let (mut frames, mut objects) = (0usize, 0usize);
    for p in &paths {
        let Ok(bytes) = std::fs::read(p) else { continue };
        let format = detect(&bytes[..bytes.len().min(64 * 1024)], &p.to_string_lossy());
        if matches!(format, Format::Empty | Format::Unrecognized | Format::Source) {
            continue;
        }
        let (sink, _) = harness::read_as(&bytes, format, 1 << 26);
        for f in &sink.frames {
            harness::skim(&f.payload);
            frames += 1;
            objects += usize::from(f.payload.first() == Some(&b'{'));
        }
    }
    // 837 frames, 814 of them message objects, over stdio, HTTP and SSE when this was written.
    assert!(frames > 500 && objects > 500, "{frames} frames, {objects} message objects read from {} files", paths.len());
}
