//! mcpsift: postmortems of Model Context Protocol traffic.
//!
//! The pipeline is the architecture (DESIGN.md): [`ingest`] turns captures and logs into
//! frames, [`model`] turns frames into MCP facts and polars tables, [`query`] runs SQL over
//! them, [`report`] renders results. [`pipeline`] runs the first two stages, once, for a run;
//! [`dataset`] keeps their tables on disk as Parquet parts for the queries to scan.

pub mod dataset;
pub mod ingest;
pub mod model;
pub mod pipeline;
pub mod query;
pub mod report;
