//! Ingest: files, pipes and packets → [`frame::Frame`]s. Knows bytes, not MCP.

pub mod detect;
pub mod discover;
pub mod frame;
pub mod hostlog;
pub mod input;
pub mod jsonl;
pub mod run;
pub mod split;
pub mod stdio;
pub mod time;
