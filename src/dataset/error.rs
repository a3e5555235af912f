//! What can go wrong with a dataset on disk, each error with the command that mends it.

use std::path::PathBuf;

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
