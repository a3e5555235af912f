//! The dataset's manifest (`DIR/manifest.json`): which inputs were read (path, size, mtime,
//! content hash), which part files hold their rows, the schema and mcpsift versions, and each
//! capture's byte accounting. Reads and writes it (write: temporary name, then rename); decides
//! nothing about what to ingest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::DatasetError;
use super::summary::CaptureSummary;
use crate::model::rows::{CallRow, EventRow, FrameRow, PageRow, SessionRow, ToolRow};
use crate::model::schema::Table;
use crate::model::tables::ReaderLimit;

/// The manifest's file name in a dataset folder.
pub const MANIFEST: &str = "manifest.json";
/// What `format` holds in every mcpsift manifest.
pub const FORMAT: &str = "mcpsift-dataset";

/// The tables whose rows come from inputs, with one folder of parts each, in table order.
pub const INPUT_TABLES: [&str; 6] = [FrameRow::NAME, CallRow::NAME, SessionRow::NAME, ToolRow::NAME, EventRow::NAME, PageRow::NAME];

/// A short hash of every table's columns and types: changes whenever a column does, so a
/// dataset written by a build with other columns is never read as this one.
pub fn schema_version() -> String {
    let mut text = String::new();
    let mut add = |name: &str, schema: polars::prelude::Schema| {
        text.push_str(name);
        for (column, dtype) in schema.iter() {
            text.push_str(&format!(" {column}:{dtype}"));
        }
        text.push('\n');
    };
    add(FrameRow::NAME, FrameRow::schema());
    add(CallRow::NAME, CallRow::schema());
    add(SessionRow::NAME, SessionRow::schema());
    add(ToolRow::NAME, ToolRow::schema());
    add(EventRow::NAME, EventRow::schema());
    add(PageRow::NAME, PageRow::schema());
    add(ReaderLimit::NAME, ReaderLimit::schema());
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

/// One input file as it was when read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    pub path: String,
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i128,
    /// blake3 of the file's bytes on disk.
    pub blake3: String,
}

/// One part file: its path under the dataset folder, rows and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    pub file: String,
    pub rows: u64,
    pub bytes: u64,
}

/// One capture: its files, its parts per table, its accounting.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InputEntry {
    pub capture: String,
    pub files: Vec<InputFile>,
    /// Parts by table name (tables with no rows have none).
    pub parts: BTreeMap<String, Vec<Part>>,
    pub summary: CaptureSummary,
}

impl InputEntry {
    pub fn all_parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.values().flatten()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub schema_version: String,
    pub mcpsift_version: String,
    /// The reading options the rows depend on (see [`options_fingerprint`]).
    pub options: String,
    /// The `limits` table as the last run wrote it (for other engines; mcpsift's own
    /// commands use the limits of their flags).
    pub limits: Option<Part>,
    /// The `tool_changes` table over the whole dataset (for other engines: mcpsift computes it
    /// when a query names it, with `check --baseline` too).
    #[serde(default)]
    pub tool_changes: Option<Part>,
    /// The inputs the stored `tool_changes` was computed over ([`Manifest::inputs_key`]; no
    /// part: it has no rows). mcpsift reads the stored table only when this names the inputs
    /// of this manifest: a manifest merged by another program (the Spark driver) or one of an
    /// older writer (without it) has the table computed when a query names it.
    #[serde(default)]
    pub tool_changes_over: Option<String>,
    /// Inputs in reading order (the order rows are scanned in).
    pub inputs: Vec<InputEntry>,
}

impl Manifest {
    pub fn new(options: String) -> Self {
        Manifest { format: FORMAT.into(), schema_version: schema_version(), mcpsift_version: env!("CARGO_PKG_VERSION").into(), options, limits: None, tool_changes: None, tool_changes_over: None, inputs: Vec::new() }
    }

    /// A hash of every input's part files, in reading order: what a table computed over all of
    /// them (`tool_changes`) is of.
    pub fn inputs_key(&self) -> String {
        let parts: Vec<Vec<&Part>> = self.inputs.iter().map(|e| e.all_parts().collect()).collect();
        blake3::hash(format!("{parts:?}").as_bytes()).to_hex()[..16].to_string()
    }

    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST)
    }

    /// The manifest of `dir`; `Ok(None)` when there is none (a new dataset).
    pub fn read(dir: &Path) -> Result<Option<Manifest>, DatasetError> {
        let path = Self::path(dir);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(DatasetError::Io { path, source }),
        };
        let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| DatasetError::Manifest { path: path.clone(), reason: e.to_string() })?;
        if manifest.format != FORMAT {
            return Err(DatasetError::Manifest { path, reason: format!("format is {:?}, not {FORMAT:?}", manifest.format) });
        }
        Ok(Some(manifest))
    }

    /// Whether its tables have this build's columns.
    pub fn same_schema(&self) -> bool {
        self.schema_version == schema_version()
    }

    /// Writes the manifest under a temporary name, then renames it into place: a reader sees
    /// the old manifest or the new one, never half of one.
    pub fn write(&self, dir: &Path) -> Result<(), DatasetError> {
        let path = Self::path(dir);
        let tmp = dir.join(format!(".{MANIFEST}.tmp"));
        let text = serde_json::to_vec_pretty(self).map_err(|e| DatasetError::Manifest { path: path.clone(), reason: e.to_string() })?;
        std::fs::write(&tmp, text).map_err(|source| DatasetError::Io { path: tmp.clone(), source })?;
        std::fs::rename(&tmp, &path).map_err(|source| DatasetError::Io { path, source })
    }
}

/// The reading options that change rows, as one string: inputs read with other options are
/// read again.
pub fn options_fingerprint(ingest: &crate::ingest::run::IngestOptions, model: &crate::model::capture::ModelOptions) -> String {
    let markers: Vec<&str> = model.truncation_markers.iter().map(|r| r.as_str()).collect();
    format!(
        "max_frame_bytes={} input_format={} ports={:?} truncation_markers={:?}",
        ingest.max_frame_bytes,
        ingest.forced_format.map_or("auto", |f| f.as_str()),
        ingest.ports,
        markers
    )
}
