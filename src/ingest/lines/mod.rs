//! Newline-framed sources: one splitter and one line loop, and readers that only interpret a line.

pub mod claude_mcp_log;
pub mod client_log;
pub mod client_text;
pub mod embedded;
pub mod hostlog;
pub mod jsonl;
pub mod line_loop;
pub mod log_message;
pub mod recorder;
pub mod split;
pub mod stdio;
