//! The message model on arbitrary JSON: classification and measuring of one payload, and
//! outputSchema validation (schema and instance split at the first 0xff byte).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::message(data));
