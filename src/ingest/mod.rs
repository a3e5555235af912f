//! Ingest: files, pipes and packets → [`frame::Frame`]s. Knows bytes, not MCP.
//!
//! Sub-folders by source family: [`lines`] (newline-framed text: stdio, host logs, JSONL),
//! [`packet`] (pcap/pcapng, link types, TCP), [`http`] (HTTP/1.x and SSE on TCP streams) and
//! [`har`] (HAR files, read through [`http`]).
//! At the top: what ingest hands on ([`frame`]), decoding base64 ([`base64`]), finding and opening inputs ([`discover`],
//! [`input`]), the names of a TCP connection's streams ([`connection`]), the table of input formats ([`formats`]), recognising them ([`detect`]), dispatch ([`run`]) and timestamps ([`time`]).

pub mod accounting;
pub mod base64;
pub mod connection;
pub mod detect;
pub mod discover;
pub mod formats;
pub mod frame;
pub mod har;
pub mod http;
pub mod input;
pub mod lines;
pub mod packet;
pub mod run;
pub mod time;
