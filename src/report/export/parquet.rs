//! Parquet: a whole result table in one file (the dataset's parts are written by
//! `dataset/parts.rs`).

use std::io::Write;

use polars::prelude::*;

use super::{ExportError, Exporter};

pub struct Parquet;

impl Exporter<DataFrame> for Parquet {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        ParquetWriter::new(out).finish(&mut df.clone())?;
        Ok(())
    }
}
