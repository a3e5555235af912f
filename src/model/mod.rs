//! Model: JSON-RPC messages → MCP facts → rows → polars tables. Knows MCP, not files.

#[cfg(feature = "tables")]
pub mod capture;
#[cfg(feature = "tables")]
mod chains;
#[cfg(feature = "tables")]
mod chunks;
#[cfg(feature = "tables")]
mod routing;
#[cfg(feature = "tables")]
mod conversations;
#[cfg(feature = "tables")]
mod facts;
pub mod jsonstr;
#[cfg(feature = "tables")]
pub mod limits;
#[cfg(feature = "tables")]
pub mod loaded;
pub mod message;
#[cfg(feature = "tables")]
mod pairing;
#[cfg(feature = "tables")]
pub mod pages;
#[cfg(feature = "tables")]
pub mod rows;
#[cfg(feature = "tables")]
pub mod schema;
#[cfg(feature = "tables")]
mod sessions;
#[cfg(feature = "tables")]
pub mod tables;
#[cfg(feature = "tables")]
pub mod tool_changes;
pub mod validate;
