//! mcpsift: postmortems of Model Context Protocol traffic.
//!
//! The pipeline is the architecture (DESIGN.md): [`ingest`] turns captures and logs into
//! frames, [`model`] turns frames into MCP facts and polars tables, [`query`] runs SQL over
//! them, [`report`] renders results. [`load`] runs the first two stages for a set of paths.

pub mod ingest;
pub mod load;
pub mod model;
pub mod progress;
pub mod query;
pub mod report;
