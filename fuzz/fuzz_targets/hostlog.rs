//! Host application logs (Claude Desktop, VS Code): the host-log reader on any bytes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::hostlog(data));
