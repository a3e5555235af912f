//! The message skimmer against serde (differential): one payload read with the skimmer and
//! without it gives the same message, or the same reason it is not one.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::skim(data));
