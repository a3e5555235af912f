//! One TCP connection's two reassembled streams through the HTTP layer: heads, bodies,
//! chunked, content encodings, SSE. The input is a list of stream events:
//! `[tag][len u16 LE][bytes...]`, where the low three bits of `tag` pick data on side A or B,
//! a gap on A or B (`len` bytes lost), the end of side A or B (FIN or RST by bit 3), or data
//! on a side picked by bit 3.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::http(data));
