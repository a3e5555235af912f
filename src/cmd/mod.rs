//! One module per subcommand; each parses nothing, calls the stages, prints.

pub mod baseline;
pub mod check;
pub mod diff;
pub mod export;
pub mod frame;
pub mod inputs;
pub mod plan;
pub mod query;
pub mod report;
pub mod tables;
pub mod timeline;
