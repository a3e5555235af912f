//! Report: rendering tables and run summaries (terminal, CSV, JSON, JSON Lines, Parquet).

pub mod chart;
pub mod document;
pub mod findings;
pub mod html;
pub mod markdown;
pub mod redact;
pub mod stats;
pub mod table_out;
