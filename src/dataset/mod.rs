//! The Parquet dataset on disk, between the model and the queries: `DIR/TABLE/part-*.parquet`
//! (one or more parts per capture and table) and `DIR/manifest.json` (inputs with size, mtime
//! and blake3, their parts, their accounting, schema and mcpsift versions). [`write`] fills
//! and refreshes it incrementally; [`open`] reads it back as lazy scans for every reading
//! command. Layout and guarantees: docs/at-scale.md.

pub mod lock;
pub mod manifest;
pub mod open;
pub mod parts;
pub mod summary;
pub mod write;

use std::path::{Path, PathBuf};

pub use open::{Dataset, DatasetSource};
pub use write::{WriteOptions, WriteSummary, Writer};

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a manifest mcpsift can read: {reason}")]
    Manifest { path: PathBuf, reason: String },
    #[error("writing {table} parts: {reason}")]
    Write { table: &'static str, reason: String },
    #[error("{dir}: another mcpsift run is writing this dataset{}; if none is, remove {dir}/.mcpsift.lock", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Locked { dir: PathBuf, pid: Option<u32> },
    #[error("{dir}: not a dataset (no manifest.json); write one with `mcpsift tables INPUTS --out {dir}`")]
    NotADataset { dir: PathBuf },
    #[error("{dir}: written with schema {found} by mcpsift {version}, this mcpsift reads schema {expected}; rebuild it with `{rebuild}`")]
    Schema { dir: PathBuf, found: String, version: String, expected: String, rebuild: String },
    #[error("{dir}: part {file} of {capture} is {problem}; rebuild it with `{rebuild}`")]
    Part { dir: PathBuf, capture: String, file: String, problem: String, rebuild: String },
}

/// Whether `path` is a dataset folder (holds a manifest).
pub fn is_dataset(path: &Path) -> bool {
    path.is_dir() && manifest::Manifest::path(path).is_file()
}

/// The command that writes (or rewrites) `dir` from the inputs of `entries`: a file by its
/// path, a stdio pair as `--pair C2S:S2C`.
pub(crate) fn rebuild_command<'a>(entries: impl IntoIterator<Item = &'a manifest::InputEntry>, dir: &Path) -> String {
    let inputs: Vec<String> = entries
        .into_iter()
        .map(|e| match e.files.as_slice() {
            [c2s, s2c] => format!("--pair {}", shell_word(&format!("{}:{}", c2s.path, s2c.path))),
            files => files.iter().map(|f| shell_word(&f.path)).collect::<Vec<_>>().join(" "),
        })
        .collect();
    let shown: Vec<&str> = inputs.iter().take(3).map(String::as_str).collect();
    let more = if inputs.len() > 3 { format!(" … ({} inputs)", inputs.len()) } else { String::new() };
    format!("mcpsift tables {}{more} --out {}", shown.join(" "), shell_word(&dir.display().to_string()))
}

fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@,".contains(&b)) { s.to_string() } else { format!("'{}'", s.replace('\'', "'\\''")) }
}
