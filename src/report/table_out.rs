//! Which exporter writes a result table: the formats `query` and `tables` offer, and the
//! choice of exporter for each. The formats themselves are in `export/`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use super::export::{self, ExportError, Exporter};

/// Output formats of `query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Aligned table for the terminal.
    Table,
    Csv,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line.
    Jsonl,
}

impl OutputFormat {
    pub fn exporter(self) -> &'static dyn Exporter<DataFrame> {
        match self {
            OutputFormat::Table => &export::table::Table,
            OutputFormat::Csv => &export::csv::Csv,
            OutputFormat::Json => &export::json::Json,
            OutputFormat::Jsonl => &export::jsonl::JsonLines,
        }
    }
}

/// Formats `tables` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFileFormat {
    Parquet,
    Csv,
}

impl TableFileFormat {
    pub fn extension(self) -> &'static str {
        match self {
            TableFileFormat::Parquet => "parquet",
            TableFileFormat::Csv => "csv",
        }
    }

    pub fn exporter(self) -> &'static dyn Exporter<DataFrame> {
        match self {
            TableFileFormat::Parquet => &export::parquet::Parquet,
            TableFileFormat::Csv => &export::csv::Csv,
        }
    }
}

/// Writes `df` to `out`.
pub fn write_table(df: &mut DataFrame, format: OutputFormat, out: &mut dyn Write) -> Result<(), ExportError> {
    format.exporter().export(df, out)
}

/// Writes `df` as `dir/name.ext`.
pub fn write_table_file(df: &DataFrame, dir: &Path, name: &str, format: TableFileFormat) -> Result<PathBuf, ExportError> {
    let path = dir.join(format!("{name}.{}", format.extension()));
    let file = File::create(&path).map_err(|e| ExportError::Stream(format!("{}: {e}", path.display())))?;
    let mut out = std::io::BufWriter::new(file);
    format.exporter().export(df, &mut out)?;
    out.flush()?;
    Ok(path)
}
