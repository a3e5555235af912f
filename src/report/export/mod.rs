//! One exporter per output format (like hyperfine's `src/export/`): each file writes one format
//! behind the one [`Exporter`] trait, for every kind of result it can hold: a result table
//! ([`DataFrame`](polars::prelude::DataFrame)), the report's read model
//! ([`Report`](super::document::Report)), a check run ([`CheckRun`]), a diff or a timeline.
//! Which exporter a command's `--format` value means is decided here, in one place
//! ([`QueryFormat`], [`TableFileFormat`], [`CheckFormat`], [`ReportFormat`], [`DiffFormat`],
//! [`TimelineFormat`]); commands hold no format code.

use std::io::Write;

use super::findings::Finding;
use crate::query::rules::Rule;

pub mod csv;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod otlp;
pub mod parquet;
pub mod sarif;
pub mod table;
pub mod text;

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

/// `query`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QueryFormat {
    /// Aligned table for the terminal.
    Table,
    Csv,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line.
    Jsonl,
}

/// The files `tables` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFileFormat {
    Parquet,
    Csv,
}

/// `check`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    Sarif,
    Junit,
}

/// `report`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Md,
    Html,
    Json,
}

/// `diff`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Text,
    Md,
    Json,
}

/// `timeline`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimelineFormat {
    Text,
    Md,
    Json,
}

impl QueryFormat {
    pub fn exporter(self) -> &'static dyn Exporter<polars::prelude::DataFrame> {
        match self {
            QueryFormat::Table => &table::Table,
            QueryFormat::Csv => &csv::Csv,
            QueryFormat::Json => &json::Json,
            QueryFormat::Jsonl => &jsonl::JsonLines,
        }
    }
}

impl TableFileFormat {
    pub fn extension(self) -> &'static str {
        match self {
            TableFileFormat::Parquet => "parquet",
            TableFileFormat::Csv => "csv",
        }
    }

    pub fn exporter(self) -> &'static dyn Exporter<polars::prelude::DataFrame> {
        match self {
            TableFileFormat::Parquet => &parquet::Parquet,
            TableFileFormat::Csv => &csv::Csv,
        }
    }
}

impl CheckFormat {
    pub fn exporter(self) -> &'static dyn for<'a> Exporter<CheckRun<'a>> {
        match self {
            CheckFormat::Text => &text::Text { color: false },
            CheckFormat::Json => &json::Json,
            CheckFormat::Sarif => &sarif::Sarif,
            CheckFormat::Junit => &junit::Junit,
        }
    }
}

impl ReportFormat {
    /// The format a file name's extension asks for (`.md`, `.markdown`, `.html`, `.htm`, `.json`).
    pub fn of_extension(ext: &str) -> Option<ReportFormat> {
        match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(ReportFormat::Md),
            "html" | "htm" => Some(ReportFormat::Html),
            "json" => Some(ReportFormat::Json),
            _ => None,
        }
    }

    pub fn exporter(self) -> &'static dyn Exporter<super::document::Report> {
        match self {
            ReportFormat::Md => &markdown::Markdown,
            ReportFormat::Html => &html::Html,
            ReportFormat::Json => &json::Json,
        }
    }
}

impl DiffFormat {
    pub fn exporter(self) -> &'static dyn Exporter<super::diff::Diff> {
        match self {
            DiffFormat::Text => &text::Text { color: false },
            DiffFormat::Md => &markdown::Markdown,
            DiffFormat::Json => &json::Json,
        }
    }
}

impl TimelineFormat {
    /// `color`: ANSI colours in text.
    pub fn exporter(self, color: bool) -> &'static dyn Exporter<super::timeline::Timeline> {
        match (self, color) {
            (TimelineFormat::Text, true) => &text::Text { color: true },
            (TimelineFormat::Text, false) => &text::Text { color: false },
            (TimelineFormat::Md, _) => &markdown::Markdown,
            (TimelineFormat::Json, _) => &json::Json,
        }
    }
}
