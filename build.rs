//! Embeds the built-in rules: every name listed in `queries/BUILTIN` (reporting order) becomes
//! `(name, include_str!("queries/NAME.sql"))` in `$OUT_DIR/builtin_rules.rs`, so adding a rule
//! is adding a file and a line, with no Rust change.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read at run time: a build script compiled in another checkout (a shared target dir)
    // must still read this one.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&manifest_dir).join("queries");
    let list = dir.join("BUILTIN");
    println!("cargo::rerun-if-changed={}", list.display());
    let text = std::fs::read_to_string(&list).expect("queries/BUILTIN lists the built-in rules");
    let mut out = String::from("&[\n");
    for name in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let path = dir.join(format!("{name}.sql"));
        assert!(path.is_file(), "queries/BUILTIN names {name}, but {} is missing", path.display());
        println!("cargo::rerun-if-changed={}", path.display());
        let _ = writeln!(out, "    ({name:?}, include_str!({:?})),", path.display().to_string());
    }
    out.push(']');
    let dest = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_rules.rs");
    std::fs::write(dest, out).expect("write builtin_rules.rs");
}
