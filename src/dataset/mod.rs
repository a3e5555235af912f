//! The Parquet dataset on disk, between the model and the queries: `DIR/TABLE/part-*.parquet`
//! (one or more parts per capture and table) and `DIR/manifest.json` (inputs with size, mtime
//! and blake3, their parts, their accounting, schema and mcpsift versions). [`write`] fills
//! and refreshes it incrementally; [`open`] reads it back as lazy scans for every reading
//! command. Layout and guarantees: docs/at-scale.md.

pub mod error;
pub mod lock;
pub mod manifest;
pub mod open;
pub mod parts;
pub mod summary;
pub mod write;

use std::path::Path;

pub use error::DatasetError;
pub use open::{Dataset, DatasetSource};
pub use write::{WriteOptions, WriteSummary, Writer};

/// Whether `path` is a dataset folder (holds a manifest).
pub fn is_dataset(path: &Path) -> bool {
    path.is_dir() && manifest::Manifest::path(path).is_file()
}
