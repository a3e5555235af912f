//! Raw stdio tee logs: the line splitter and the stdio reader on any bytes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::stdio(data));
