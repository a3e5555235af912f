//! The terminal table: polars' aligned rendering of a result table.

use std::io::Write;

use polars::prelude::DataFrame;

use super::{ExportError, Exporter};

pub struct Table;

impl Exporter<DataFrame> for Table {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "{df}")?;
        Ok(())
    }
}
