//! Integration tests: one binary (one link of polars), modules by behaviour.

mod util;
#[path = "../fuzz/harness.rs"]
mod harness;
mod fuzz_regressions;
#[path = "../src/testkit.rs"]
mod testkit;
// The unit tests' capture builder; this binary uses a part of it.
#[allow(dead_code)]
#[path = "../src/ingest/packet/testpcap.rs"]
mod testpcap;

mod bad_input;
mod claude_code;
mod bomb;
mod mutations;
mod check;
mod cli;
mod dataset;
mod junit;
mod corpus;
mod duckdb;
mod latency;
mod pcap_corpus;
mod readme;
mod samples;
mod sarif;
mod report;
mod rules;
mod tables;
mod latency_chains;
mod diff;
mod otlp;
mod recorder;
mod har;
mod embedded_log;
mod issue_logs;
mod ts2;
mod timeline;
mod tool_change;
mod skim;
