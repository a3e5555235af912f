//! `mcpsift tables`: several large captures streamed to Parquet at once.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::temp_dir;

/// Issue 9: with several captures each bigger than one columnar chunk (16,384 frames), the
/// Parquet writer used to hold its lock while polars encoded on the rayon pool, and the pool
/// picked up another capture that waited on the same lock: `tables` never finished.
#[test]
fn tables_streams_several_large_captures_without_hanging() {
    const CAPTURES: usize = 4;
    const LINES: usize = 20_000;
    let dir = temp_dir("tables-several-large");
    for c in 0..CAPTURES {
        let capture = dir.join(format!("capture{c}"));
        std::fs::create_dir_all(&capture).unwrap();
        let mut c2s = std::io::BufWriter::new(std::fs::File::create(capture.join("c2s.log")).unwrap());
        let mut s2c = std::io::BufWriter::new(std::fs::File::create(capture.join("s2c.log")).unwrap());
        for i in 0..LINES {
            writeln!(c2s, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"t\"}}}}").unwrap();
            writeln!(s2c, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"content\":[]}}}}").unwrap();
        }
        c2s.flush().unwrap();
        s2c.flush().unwrap();
    }
    let out_dir = temp_dir("tables-several-large-out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpsift"))
        .args(["tables", dir.to_str().unwrap(), "-q", "--out", out_dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcpsift");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("tables did not finish within 120 s (writer deadlock?)");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().expect("output");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let frames = CAPTURES * LINES * 2;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(&format!("frames\t{frames} rows")), "{stdout}");
    assert_eq!(crate::util::parquet_rows(&out_dir.join("frames")), frames);
}
