//! Ingest: files, pipes and packets → [`frame::Frame`]s. Knows bytes, not MCP.

pub mod accounting;
pub mod chunked;
pub mod detect;
pub mod discover;
pub mod encoding;
pub mod frame;
pub mod hostlog;
pub mod http;
pub mod http_body;
pub mod http_head;
pub mod input;
pub mod jsonl;
pub mod linktype;
pub mod pcap;
pub mod run;
pub mod split;
pub mod sse;
pub mod stdio;
pub mod tcp;
#[cfg(test)]
pub mod testpcap;
pub mod time;
