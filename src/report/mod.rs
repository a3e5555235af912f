//! Report: what the commands show, from the tables and findings: the report's read model
//! (document), its gathering and outline, charts, findings, run statistics, and one exporter
//! per output format (export/).

pub mod chart;
pub mod diff;
pub mod document;
pub mod export;
pub mod findings;
pub mod format;
pub mod gather;
pub mod outline;
pub mod redact;
pub mod stats;
pub mod table_out;
pub mod telemetry;
pub mod timeline;
