//! HTTP bodies through the body decoders: a response whose framing (Content-Length or
//! chunked), content encoding (identity, gzip, deflate, zlib-less deflate) and type (JSON,
//! SSE, other) come from the first byte, and whose content is the rest: compressed by the
//! target (so the fuzzer explores what decoders see after decoding) or, with bit 7, sent as
//! is (corrupt compressed data). Chunk and segment sizes come from the second byte.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::body(data));
