//! Proxy recorders' JSONL: the mcpsnoop / MCPSpy / mcptrace-rs reader on any bytes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::recorder(data));
