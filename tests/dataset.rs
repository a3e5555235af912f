//! The Parquet dataset `tables --out DIR` writes: manifest truth (sizes and blake3 computed
//! here from the files), incremental re-runs, changed, added and vanished inputs, `--prune`,
//! large captures split into parts, reading commands on a dataset giving the answers they give
//! on the raw inputs, and the bad datasets (missing or corrupt part, other schema, a lock).

use std::io::Write as _;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::util::{mcpsift, parquet_rows, read_json, samples, temp_dir};

/// `N` stdio tee pairs of `calls` tools/call round trips each: (folder, messages per capture).
fn fleet(name: &str, captures: usize, calls: usize) -> std::path::PathBuf {
    let dir = temp_dir(name);
    for c in 0..captures {
        write_capture(&dir.join(format!("capture{c}")), calls, 0);
    }
    dir
}

fn write_capture(folder: &Path, calls: usize, first_id: usize) {
    std::fs::create_dir_all(folder).unwrap();
    let mut c2s = Vec::new();
    let mut s2c = Vec::new();
    for i in first_id..first_id + calls {
        writeln!(c2s, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"t{}\"}}}}", i % 3).unwrap();
        writeln!(s2c, "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"r{i}\"}}]}}}}").unwrap();
    }
    std::fs::write(folder.join("c2s.log"), c2s).unwrap();
    std::fs::write(folder.join("s2c.log"), s2c).unwrap();
}

fn ok(out: &Output) -> (String, String) {
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string());
    assert!(out.status.success(), "exit {:?}\nstdout: {stdout}\nstderr: {stderr}", out.status.code());
    (stdout, stderr)
}

fn tables(input: &Path, out: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["tables", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok(&mcpsift(&args))
}

fn count(dir: &Path, sql: &str) -> i64 {
    let (stdout, _) = ok(&mcpsift(&["query", dir.to_str().unwrap(), "-q", "--sql", sql, "--format", "csv"]));
    stdout.lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap_or_else(|| panic!("{sql}: {stdout}"))
}

fn blake3_of(path: &str) -> String {
    blake3::hash(&std::fs::read(path).unwrap()).to_hex().to_string()
}

#[test]
fn the_manifest_names_every_input_with_its_size_and_hash_and_every_part() {
    let input = fleet("ds-manifest", 3, 50);
    let out = temp_dir("ds-manifest-out");
    tables(&input, &out, &["-q"]);
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["format"], "mcpsift-dataset");
    assert_eq!(manifest["mcpsift_version"], env!("CARGO_PKG_VERSION"));
    let inputs = manifest["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 3);
    let mut frames = 0;
    for entry in inputs {
        for f in entry["files"].as_array().unwrap() {
            let path = f["path"].as_str().unwrap();
            assert_eq!(f["size"].as_u64().unwrap(), std::fs::metadata(path).unwrap().len(), "{path}");
            assert_eq!(f["blake3"].as_str().unwrap(), blake3_of(path), "{path}");
        }
        for (table, parts) in entry["parts"].as_object().unwrap() {
            for p in parts.as_array().unwrap() {
                let file = out.join(p["file"].as_str().unwrap());
                assert!(file.starts_with(out.join(table)), "{}", file.display());
                assert_eq!(p["bytes"].as_u64().unwrap(), std::fs::metadata(&file).unwrap().len());
                if table == "frames" {
                    frames += p["rows"].as_u64().unwrap();
                }
            }
        }
    }
    // 50 requests and 50 responses per capture, one line each.
    assert_eq!(frames, 3 * 100);
    assert_eq!(parquet_rows(&out.join("frames")), 300);
    // No temporary file is left behind.
    for table in ["frames", "calls", "sessions", "tools", "events", "pages", "limits"] {
        for e in std::fs::read_dir(out.join(table)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            assert!(!name.ends_with(".tmp"), "{table}/{name}");
        }
    }
}

/// The manifest's hashes are taken as the inputs are read; every kind of file gets the hash of
/// its bytes on disk: gzip (compressed bytes), a gzip cut short (a read error), a packet
/// capture, a host log, and bytes that are no format.
#[test]
fn every_kind_of_input_gets_the_hash_of_its_bytes_on_disk() {
    let dir = temp_dir("ds-hash-kinds");
    let hostlog = std::fs::read(samples().join("hostlog/mcp.log")).unwrap();
    std::fs::write(dir.join("host.log"), &hostlog).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&hostlog).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(dir.join("host.log.gz"), &gz).unwrap();
    std::fs::write(dir.join("cut.log.gz"), &gz[..gz.len() / 2]).unwrap();
    std::fs::copy(samples().join("pcap/py_streamable.pcap"), dir.join("capture.pcap")).unwrap();
    std::fs::write(dir.join("noise.bin"), (0..70_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect::<Vec<_>>()).unwrap();
    let out = temp_dir("ds-hash-kinds-out");
    tables(&dir, &out, &["-q"]);
    let manifest = read_json(&out.join("manifest.json"));
    let mut hashed = 0;
    for entry in manifest["inputs"].as_array().unwrap() {
        for f in entry["files"].as_array().unwrap() {
            let path = f["path"].as_str().unwrap();
            assert_eq!(f["blake3"].as_str().unwrap(), blake3_of(path), "{path}");
            hashed += 1;
        }
    }
    assert_eq!(hashed, 5);
}

#[test]
fn a_rerun_reads_only_new_and_changed_inputs_and_keeps_vanished_ones_unless_pruned() {
    let input = fleet("ds-incremental", 3, 40);
    let out = temp_dir("ds-incremental-out");
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("3 input(s) read, 0 unchanged"), "{stderr}");
    let parts_before = std::fs::read_dir(out.join("frames")).unwrap().count();

    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("0 input(s) read, 3 unchanged"), "{stderr}");
    assert_eq!(std::fs::read_dir(out.join("frames")).unwrap().count(), parts_before);

    // Touched, not changed: the hash says so, nothing is read.
    let s2c = input.join("capture1").join("s2c.log");
    let text = std::fs::read(&s2c).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&s2c, &text).unwrap();
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("0 input(s) read, 3 unchanged"), "{stderr}");

    // Changed (10 more calls) and added (a fourth capture): only those two are read.
    write_capture(&input.join("capture1"), 50, 0);
    write_capture(&input.join("capture3"), 5, 0);
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("2 input(s) read, 2 unchanged"), "{stderr}");
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM frames"), 2 * (40 + 40 + 50 + 5));
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM calls"), 40 + 40 + 50 + 5);

    // Vanished: kept and said, then dropped with --prune.
    std::fs::remove_dir_all(input.join("capture0")).unwrap();
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("1 input(s) of the dataset not given or gone: kept"), "{stderr}");
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM calls"), 40 + 40 + 50 + 5);
    let (_, stderr) = tables(&input, &out, &["--prune"]);
    assert!(stderr.contains("dropped (--prune)"), "{stderr}");
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM calls"), 40 + 50 + 5);
    // The pruned and replaced inputs' parts are gone from disk too.
    assert_eq!(parquet_rows(&out.join("calls")), 40 + 50 + 5);
}

#[test]
fn a_large_capture_is_split_into_parts_and_reads_back_whole() {
    let input = fleet("ds-split", 1, 30_000);
    let out = temp_dir("ds-split-out");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_mcpsift"))
        .args(["tables", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"])
        .env("MCPSIFT_PART_ROWS", "10000")
        .output()
        .unwrap();
    ok(&run);
    let manifest = read_json(&out.join("manifest.json"));
    let frame_parts = manifest["inputs"][0]["parts"]["frames"].as_array().unwrap();
    assert!(frame_parts.len() >= 3, "{frame_parts:?}");
    assert_eq!(frame_parts.iter().map(|p| p["rows"].as_u64().unwrap()).sum::<u64>(), 60_000);
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM frames"), 60_000);
    // Row order is the reading order: ids 0.. in sequence across the parts.
    let (stdout, _) = ok(&mcpsift(&["query", out.to_str().unwrap(), "-q", "--sql", "SELECT rpc_id FROM frames WHERE direction = 'c2s'", "--format", "csv"]));
    let ids: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(ids.len(), 30_000);
    assert!(ids.iter().enumerate().all(|(i, id)| id.trim_matches('"') == i.to_string()), "ids out of order");
}

#[test]
fn check_and_report_on_a_dataset_say_what_they_say_on_the_raw_inputs() {
    let samples = samples();
    let out = temp_dir("ds-samples-out");
    tables(&samples, &out, &["-q"]);
    for args in [&["check", "--stats"][..], &["check", "--format", "json"], &["check", "--format", "sarif"]] {
        let raw = mcpsift(&[args, &[samples.to_str().unwrap()]].concat());
        let ds = mcpsift(&[args, &[out.to_str().unwrap()]].concat());
        assert_eq!(raw.status.code(), ds.status.code(), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&raw.stdout), String::from_utf8_lossy(&ds.stdout), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&raw.stderr), String::from_utf8_lossy(&ds.stderr), "{args:?}");
    }
    let report = |p: &Path| -> Value {
        let mut v: Value = serde_json::from_slice(&mcpsift(&["report", p.to_str().unwrap(), "-q", "--format", "json"]).stdout).unwrap();
        v["inputs"] = Value::Null;
        v
    };
    assert_eq!(report(&samples), report(&out));
}

fn fails_with(out: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for w in words {
        assert!(stderr.contains(w), "{w:?} not in: {stderr}");
    }
}

#[test]
fn a_missing_or_corrupt_part_or_another_schema_is_an_error_naming_the_rebuild() {
    let input = fleet("ds-bad", 2, 10);
    let out = temp_dir("ds-bad-out");
    tables(&input, &out, &["-q"]);
    let manifest = read_json(&out.join("manifest.json"));
    let part = manifest["inputs"][1]["parts"]["calls"][0]["file"].as_str().unwrap().to_string();
    let path = out.join(&part);
    let good = std::fs::read(&path).unwrap();
    let check = || mcpsift(&["check", out.to_str().unwrap(), "-q"]);

    std::fs::write(&path, &good[..good.len() - 10]).unwrap();
    fails_with(&check(), &[&part, "corrupt", "mcpsift tables", "capture1"]);
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n - 1] ^= 0xff;
    std::fs::write(&path, &flipped).unwrap();
    fails_with(&check(), &[&part, "corrupt"]);
    std::fs::remove_file(&path).unwrap();
    let failed = check();
    fails_with(&failed, &[&part, "missing", "mcpsift tables --pair"]);

    // The command the error names rebuilds the broken input's parts, and only those.
    let stderr = String::from_utf8_lossy(&failed.stderr).to_string();
    let command = stderr.split('`').nth(1).expect("a command in backquotes").to_string();
    let words: Vec<&str> = command.split(' ').skip(1).collect();
    assert_eq!(words[0], "tables");
    let (_, stderr) = ok(&mcpsift(&words.iter().map(|w| w.trim_matches('\'')).collect::<Vec<_>>()));
    assert!(stderr.contains("1 input(s) read, 0 unchanged") && stderr.contains("1 input(s) of the dataset not given or gone: kept"), "{stderr}");
    ok(&check());
    assert_eq!(count(&out, "SELECT COUNT(*) AS n FROM calls"), 20);
    let manifest = read_json(&out.join("manifest.json"));

    let text = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    let version = manifest["schema_version"].as_str().unwrap();
    std::fs::write(out.join("manifest.json"), text.replace(version, "0000000000000000")).unwrap();
    fails_with(&check(), &["schema 0000000000000000", "rebuild it with `mcpsift tables"]);
    // Writing into it reads every input again, with the current schema.
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("every input read again") && stderr.contains("2 input(s) read"), "{stderr}");
    ok(&check());

    std::fs::write(out.join("manifest.json"), "{\"format\": \"something else\"").unwrap();
    fails_with(&check(), &["manifest.json", "not a manifest"]);
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let input = fleet("ds-lock", 1, 5);
    let out = temp_dir("ds-lock-out");
    tables(&input, &out, &["-q"]);
    let manifest = std::fs::read(out.join("manifest.json")).unwrap();
    // This test process is alive: its pid in the lock is a running writer.
    std::fs::write(out.join(".mcpsift.lock"), format!("{}\n", std::process::id())).unwrap();
    write_capture(&input.join("capture1"), 5, 0);
    let run = mcpsift(&["tables", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    fails_with(&run, &["another mcpsift run is writing this dataset", &format!("pid {}", std::process::id())]);
    assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), manifest, "the refused run changed the manifest");
    // A lock left by a process that is gone is taken over.
    std::fs::write(out.join(".mcpsift.lock"), "4194304999\n").unwrap();
    let (_, stderr) = tables(&input, &out, &[]);
    assert!(stderr.contains("1 input(s) read, 1 unchanged"), "{stderr}");
    assert!(!out.join(".mcpsift.lock").exists());
}

#[test]
fn check_and_query_finish_on_several_large_captures_at_once() {
    // Each capture is bigger than one columnar chunk (16,384 frames).
    let input = fleet("ds-large-many", 4, 10_000);
    for args in [vec!["check", input.to_str().unwrap(), "-q"], vec!["query", input.to_str().unwrap(), "-q", "--sql", "SELECT COUNT(*) AS n FROM frames", "--format", "csv"]] {
        let (stdout, _) = ok(&mcpsift(&args));
        if args[0] == "query" {
            assert_eq!(stdout.lines().nth(1).map(str::trim), Some("80000"), "{stdout}");
        }
    }
}

/// A data frame's rows as text, sorted: the rows as a multiset, whatever their order.
fn row_texts(df: &polars::prelude::DataFrame) -> Vec<String> {
    let mut rows: Vec<String> = (0..df.height())
        .map(|i| df.columns().iter().map(|c| c.get(i).expect("row in range").to_string()).collect::<Vec<_>>().join(" | "))
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_query_planned_once_finds_on_each_piece_what_planning_it_anew_finds() {
    // `check` and the report run each per-capture query piece by piece over a dataset, planning
    // it on the first piece and pointing that plan's scans at each later piece's part files; on
    // a piece of one capture, its group-bys take `capture` as an aggregate instead of a key.
    // With every capture of samples/ and of the corpus a piece of its own, every built-in rule
    // and the report's per-piece queries must give each piece the rows that planning the query
    // anew (as written) on that piece gives, and the plan must have been reused on most pieces.
    use mcpsift::query::plan::run_sql_each_counting;
    use mcpsift::query::source::each_capture;
    let report_sql = ["latency_groups", "truncation_groups"].map(|n| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("queries/report/{n}.sql"));
        (n.to_string(), std::fs::read_to_string(path).expect("report query"))
    });
    let queries: Vec<(String, String)> = mcpsift::query::rules::builtin_rules().into_iter().map(|r| (r.name, r.sql)).chain(report_sql).collect();
    for (name, input) in [("samples", samples()), ("corpus", crate::util::corpus())] {
        let out = temp_dir(&format!("ds-plan-once-{name}"));
        tables(&input, &out, &["-q"]);
        let dataset = mcpsift::dataset::Dataset::open(&out).expect("dataset");
        let source = dataset.source(&mcpsift::model::tables::default_limits()).expect("source").with_piece_frames(1);
        let (mut pieces, mut planned, mut rows, mut per_query) = (0, 0, 0, Vec::new());
        for (query, sql) in &queries {
            let (once, times) = run_sql_each_counting(&source, sql).unwrap_or_else(|e| panic!("{name} {query}: {e}"));
            let anew = each_capture(&source, |piece| mcpsift::query::run_sql(piece, sql)).unwrap_or_else(|e| panic!("{name} {query}: {e}"));
            assert_eq!(once.len(), anew.len(), "{name} {query}: pieces");
            for (k, (a, b)) in once.iter().zip(&anew).enumerate() {
                assert_eq!(a.schema(), b.schema(), "{name} {query}: piece {k}'s columns");
                assert_eq!(row_texts(a), row_texts(b), "{name} {query}: piece {k}'s rows");
                rows += b.height();
            }
            per_query.push(format!("{query} {times}"));
            // A query naming a table computed when it runs (tool_changes) is planned anew on
            // every piece by design; the others count.
            if !mcpsift::query::sql::computes_tables(sql) {
                pieces += anew.len();
                planned += times;
            }
        }
        assert!(pieces >= 10 * queries.len(), "{name}: {pieces} pieces over {} queries", queries.len());
        assert!(planned * 4 < pieces, "{name}: {planned} of {pieces} pieces planned anew ({})", per_query.join(", "));
        assert!(rows > 100, "{name}: {rows} rows");
        let _ = std::fs::remove_dir_all(&out);
    }
}
