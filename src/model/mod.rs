//! Model: JSON-RPC messages → MCP facts → rows → polars tables. Knows MCP, not files.

pub mod capture;
mod chains;
mod routing;
mod chunks;
mod facts;
pub mod jsonstr;
pub mod limits;
pub mod message;
mod pairing;
pub mod pages;
pub mod rows;
pub mod schema;
mod sessions;
pub mod tables;
pub mod validate;
