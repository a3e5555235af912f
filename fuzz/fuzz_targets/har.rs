//! HAR files: the streaming entry reader and each entry through the HTTP/SSE layer.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::har(data));
