//! Model: JSON-RPC messages → MCP facts → rows → polars tables. Knows MCP, not files.

pub mod capture;
pub mod jsonstr;
pub mod limits;
pub mod message;
pub mod pages;
pub mod rows;
pub mod schema;
pub mod tables;
pub mod validate;
