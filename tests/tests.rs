//! Integration tests: one binary (one link of polars), modules by behaviour.

mod util;
#[path = "../fuzz/harness.rs"]
mod harness;
mod fuzz_regressions;
mod pcapgen;

mod bad_input;
mod bomb;
mod mutations;
mod check;
mod cli;
mod dataset;
mod corpus;
mod duckdb;
mod pcap_corpus;
mod readme;
mod samples;
mod report;
mod rules;
mod tables;
