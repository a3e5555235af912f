//! Client logs (Claude Code MCP logs, `claude --debug`, Cursor, Gemini CLI, Inspector): both readers on any bytes.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::client_logs(data));
