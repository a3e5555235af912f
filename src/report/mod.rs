//! Report: rendering tables and run summaries (terminal, CSV, JSON, JSON Lines, Parquet).

pub mod stats;
pub mod table_out;
