//! Raw capture bytes through pcap/pcapng, link layers, IP, TCP reassembly, HTTP and SSE.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::pcap(data));
