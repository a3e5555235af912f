//! JSON Lines: one object per row of a result table.

use std::io::Write;

use polars::prelude::*;

use super::{ExportError, Exporter};

pub struct JsonLines;

impl Exporter<DataFrame> for JsonLines {
    fn export(&self, df: &DataFrame, out: &mut dyn Write) -> Result<(), ExportError> {
        JsonWriter::new(out).with_json_format(JsonFormat::JsonLines).finish(&mut df.clone())?;
        Ok(())
    }
}
