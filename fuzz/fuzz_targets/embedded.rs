//! Log lines with JSON-RPC in them: the embedded-log reader on any bytes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::embedded(data));
