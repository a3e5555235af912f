//! One exporter per output format (like hyperfine's `src/export/`): each file writes one format
//! behind the one [`Exporter`] trait; commands pick an exporter and hold no format code.
//! What is exported: a result table ([`DataFrame`](polars::prelude::DataFrame)), the report's
//! read model ([`Report`](super::document::Report)) or a check run ([`CheckRun`]): text, JSON,
//! SARIF or JUnit XML.

use std::io::Write;

use super::findings::Finding;
use crate::query::rules::Rule;

pub mod check_text;
pub mod csv;
pub mod diff_json;
pub mod diff_markdown;
pub mod diff_text;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod otlp;
pub mod parquet;
pub mod sarif;
pub mod table;
pub mod timeline;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("writing: {0}")]
    Io(#[from] std::io::Error),
    #[error("writing: {0}")]
    Polars(#[from] polars::prelude::PolarsError),
    #[error("serialising JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A streamed file failed; the message names the file.
    #[error("{0}")]
    Stream(String),
}

/// Writes `T` in one format.
pub trait Exporter<T: ?Sized> {
    fn export(&self, data: &T, out: &mut dyn Write) -> Result<(), ExportError>;
}

/// What `check` exports: the findings, the rules that ran (their words) and the capture count.
#[derive(Debug, Clone, Copy)]
pub struct CheckRun<'a> {
    pub findings: &'a [Finding],
    pub rules: &'a [Rule],
    /// Inputs that are captures (`LoadedCapture::is_capture`).
    pub captures: usize,
    /// Their names, in reading order.
    pub capture_names: &'a [String],
    /// tools/call latency per tool × client name × client version.
    pub latency: &'a [super::document::LatencyGroup],
}
