//! mcpsift: postmortems of Model Context Protocol traffic.
//!
//! The pipeline is the architecture (DESIGN.md): [`ingest`] turns captures and logs into
//! frames, [`model`] turns frames into MCP facts and polars tables, [`query`] runs SQL over
//! them, [`report`] renders results. [`pipeline`] runs the first two stages, once, for a run;
//! [`dataset`] keeps their tables on disk as Parquet parts for the queries to scan.
//!
//! Without the default feature `tables` (polars, SQL) only [`ingest`] and the message model
//! ([`model::message`], [`model::jsonstr`], [`model::validate`]) are built: the fuzz targets
//! in `fuzz/` link that much.

#[cfg(feature = "tables")]
pub mod dataset;
pub mod ingest;
pub mod model;
#[cfg(feature = "tables")]
pub mod pipeline;
#[cfg(feature = "tables")]
pub mod query;
#[cfg(feature = "tables")]
pub mod report;
#[cfg(test)]
pub mod testkit;
