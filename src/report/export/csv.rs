//! CSV with a header row, for a result table.

use std::io::Write;

use polars::prelude::*;

use super::{ExportError, Exporter};

pub struct Csv;

impl Exporter<DataFrame> for Csv {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        CsvWriter::new(out).include_header(true).finish(&mut df.clone())?;
        Ok(())
    }
}
