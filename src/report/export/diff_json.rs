//! `mcpsift diff` as JSON: both sides, the thresholds, and per group each side's counts,
//! sizes and latencies (`null` where a side has no such calls) with the regressions.

use std::io::Write;

use super::{ExportError, Exporter};
use crate::report::diff::Diff;

pub struct DiffJson;

impl Exporter<Diff> for DiffJson {
    fn export(&self, diff: &Diff, out: &mut dyn Write) -> Result<(), ExportError> {
        let mut v = serde_json::to_value(diff)?;
        v["regressed"] = serde_json::json!(diff.regressed());
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        Ok(())
    }
}
