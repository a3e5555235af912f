//! HTTP/1.x on reassembled TCP streams: heads, bodies, chunked, content encoding, SSE, and the
//! per-connection stream driver. Knows HTTP and SSE, not JSON-RPC.

pub mod body;
pub mod chunked;
pub mod encoding;
pub mod env;
mod events;
mod exchange;
pub mod framing;
pub mod head;
mod message_body;
mod resync;
mod route;
mod skips;
pub mod sse;
pub mod stream;
