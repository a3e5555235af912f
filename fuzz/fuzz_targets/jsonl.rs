//! JSONL transcripts: the transcript reader on any bytes (records, raw strings, base64).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::jsonl(data));
