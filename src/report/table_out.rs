//! Writing a result table to a stream or a file in the format the user asked for.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use polars::prelude::*;

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
}

/// Writes `df` to `out`.
pub fn write_table(df: &mut DataFrame, format: OutputFormat, out: &mut dyn Write) -> anyhow::Result<()> {
    match format {
        OutputFormat::Table => writeln!(out, "{df}")?,
        OutputFormat::Csv => CsvWriter::new(out).include_header(true).finish(df)?,
        OutputFormat::Json => {
            JsonWriter::new(&mut *out).with_json_format(JsonFormat::Json).finish(df)?;
            writeln!(out)?;
        }
        OutputFormat::Jsonl => JsonWriter::new(out).with_json_format(JsonFormat::JsonLines).finish(df)?,
    }
    Ok(())
}

/// Writes `df` as `dir/name.ext`.
pub fn write_table_file(df: &mut DataFrame, dir: &Path, name: &str, format: TableFileFormat) -> anyhow::Result<std::path::PathBuf> {
    let path = dir.join(format!("{name}.{}", format.extension()));
    let file = File::create(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    match format {
        TableFileFormat::Parquet => {
            ParquetWriter::new(file).finish(df)?;
        }
        TableFileFormat::Csv => CsvWriter::new(file).include_header(true).finish(df)?,
    }
    Ok(path)
}
