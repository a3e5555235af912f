//! Report: rendering tables and run summaries (terminal, CSV, JSON, JSON Lines, Parquet).

pub mod findings;
pub mod redact;
pub mod stats;
pub mod table_out;
