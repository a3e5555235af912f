//! Writing a result table: to a stream (`query`) or as one file of a folder (`tables`), with the
//! exporter its format names (chosen in `export/`).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::DataFrame;

use super::export::{ExportError, QueryFormat, TableFileFormat};

/// Writes `df` to `out`.
pub fn write_table(df: &mut DataFrame, format: QueryFormat, out: &mut dyn Write) -> Result<(), ExportError> {
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
