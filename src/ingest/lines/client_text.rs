//! What one line of an MCP client's own log says (Claude Code, Cursor, Gemini CLI, MCP
//! Inspector): the event kind that names the failure and the numbers it quotes (tool, tokens,
//! token cap, timeout, JSON-RPC error code, HTTP status, server). Text in, facts out: it
//! reads no bytes and knows no file format (the readers beside it do).
//!
//! The phrases are the clients' own, quoted in their public issues (samples/README.md cites
//! them): Claude Code `MCP tool "X" response (N tokens) exceeds maximum allowed tokens (25000)`,
//! the TypeScript SDK's `McpError: MCP error -32001: Request timed out`,
//! `Streamable HTTP error: Error POSTing to endpoint: {...}` and `Structured content does not
//! match the tool's output schema`, the SDK's stdio reader failing on a non-JSON line
//! (`SyntaxError: Unexpected token ... is not valid JSON`), Gemini CLI's `MCP STDERR (name):`.

use std::sync::OnceLock;

use regex::Regex;

use crate::ingest::frame::EventFacts;

/// What a line says: its kind and the facts it names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Classified {
    pub kind: &'static str,
    /// The server the text names (`MCP server "X"`, `MCP STDERR (X)`, `server 'X'`).
    pub server: Option<String>,
    pub facts: EventFacts,
}

struct Patterns {
    over_cap: Regex,
    tool: Regex,
    timeout: Regex,
    mcp_error: Regex,
    json_code: Regex,
    http_status: Regex,
    server: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        over_cap: Regex::new(r#"MCP tool "([^"]+)" response \((\d+) tokens\) exceeds maximum allowed tokens \((\d+)\)"#).expect("valid regex"),
        tool: Regex::new(r#"(?:MCP tool "([^"]+)"|[Cc]alling (?:MCP )?tool[: ]+'?([A-Za-z0-9_.-]+)'?|[Tt]ool '([^']+)')"#).expect("valid regex"),
        timeout: Regex::new(r"(?:timed out after|timeout of|timeout:)\s*(\d+)\s*ms|\btimeout\b\W{0,3}(\d{3,})").expect("valid regex"),
        mcp_error: Regex::new(r"MCP error (-?\d+)").expect("valid regex"),
        json_code: Regex::new(r#""code"\s*:\s*(-?\d+)"#).expect("valid regex"),
        http_status: Regex::new(r"\(HTTP (\d{3})\)|\bHTTP (\d{3})\b|status(?: code)?[ :=]+(\d{3})\b").expect("valid regex"),
        server: Regex::new(r#"MCP server "([^"]+)"|MCP STDERR \(([^)]+)\)|(?:MCP )?server '([^']+)'"#).expect("valid regex"),
    })
}

/// The first capture group of `re` that matched in `text`.
fn first_group(re: &Regex, text: &str) -> Option<String> {
    re.captures(text).and_then(|c| c.iter().skip(1).flatten().next().map(|m| m.as_str().to_string()))
}

fn number<T: std::str::FromStr>(re: &Regex, text: &str) -> Option<T> {
    first_group(re, text).and_then(|s| s.parse().ok())
}

/// The failure (or happening) a client log text names; `level` is the line's level, lower case.
pub fn classify(text: &str, level: &str) -> Classified {
    let p = patterns();
    let mut c = Classified { server: first_group(&p.server, text), ..Classified::default() };
    c.facts.tool = first_group(&p.tool, text);
    c.facts.timeout_ms = number(&p.timeout, text);
    c.facts.error_code = number(&p.mcp_error, text).or_else(|| number(&p.json_code, text));
    c.facts.http_status = number(&p.http_status, text);
    if let Some(m) = p.over_cap.captures(text) {
        c.facts.tool = Some(m[1].to_string());
        c.facts.tokens = m[2].parse().ok();
        c.facts.token_limit = m[3].parse().ok();
        c.kind = "result_over_client_cap";
        return c;
    }
    let lower = text.to_ascii_lowercase();
    let has = |s: &str| lower.contains(s);
    c.kind = if has("does not match the tool's output schema") || has("has an output schema but did not return structured content") {
        "output_schema_rejected"
    } else if has("protocol version is not supported") || has("unsupported protocol version") {
        "protocol_version_rejected"
    } else if has("is not valid json") || has("unexpected end of json input") || (has("syntaxerror") && has("json")) {
        // The client's stdio reader could not parse a line the server wrote to stdout.
        "stdout_pollution"
    } else if has("mcp stderr") || has("server stderr") {
        "server_stderr"
    } else if has("connection failed")
        || has("failed to connect")
        || has("failed to reload client")
        || has("client error for command")
        || has("error during discovery")
        || has("failed to start")
        || (has("spawn") && has("enoent"))
    {
        "connection_failed"
    } else if has("streamable http error") || has("error posting to endpoint") {
        "http_error"
    } else if c.facts.error_code == Some(-32001) || has("request timed out") || has("timed out") {
        "request_timed_out"
    } else if c.facts.error_code == Some(-32000) || has("connection closed") || has("client closed") {
        "connection_closed"
    } else if has("starting connection") || has("starting new stdio process") || has("connecting to") {
        "connection_starting"
    } else if has("successfully connected") || has("connection established") || has("connected to") {
        "server_connected"
    } else if c.facts.tool.is_some() && (has("calling") || has("handling calltool")) {
        "tool_call"
    } else {
        super::hostlog::level_kind(level)
    };
    c
}

/// Where an embedded JSON-RPC body starts in `line`: after `Error POSTing to endpoint:`
/// (with or without `(HTTP N)`), else at the first `{"jsonrpc"`.
pub fn embedded_body_start(line: &[u8]) -> Option<usize> {
    const AFTER: &[u8] = b"Error POSTing to endpoint";
    if let Some(at) = memchr::memmem::find(line, AFTER) {
        let rest = &line[at + AFTER.len()..];
        if let Some(colon) = rest.iter().position(|&b| b == b':') {
            let from = at + AFTER.len() + colon + 1;
            if let Some(open) = line[from..].iter().position(|&b| !b.is_ascii_whitespace())
                && line[from + open] == b'{'
            {
                return Some(from + open);
            }
        }
    }
    memchr::memmem::find(line, b"{\"jsonrpc\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_failure_with_its_numbers() {
        let c = classify(
            r#"Error: MCP tool "search_docs" response (31245 tokens) exceeds maximum allowed tokens (25000). Please use pagination, filtering, or limit parameters to reduce the response size."#,
            "error",
        );
        assert_eq!((c.kind, c.facts.tool.as_deref(), c.facts.tokens, c.facts.token_limit), ("result_over_client_cap", Some("search_docs"), Some(31245), Some(25000)));
        let c = classify(r#"MCP server "asana": Connection failed: Connection to MCP server "asana" timed out after 5000ms"#, "error");
        assert_eq!((c.kind, c.server.as_deref(), c.facts.timeout_ms), ("connection_failed", Some("asana"), Some(5000)));
        let c = classify("McpError: MCP error -32001: Request timed out", "error");
        assert_eq!((c.kind, c.facts.error_code), ("request_timed_out", Some(-32001)));
        let c = classify("MCP error -32000: Connection closed", "error");
        assert_eq!((c.kind, c.facts.error_code), ("connection_closed", Some(-32000)));
        let c = classify("MCP error -32602: Structured content does not match the tool's output schema: data must have required property 'total'", "error");
        assert_eq!((c.kind, c.facts.error_code), ("output_schema_rejected", Some(-32602)));
        let c = classify(r#"Error from MCP server: SyntaxError: Unexpected token 'S', "Starting d"... is not valid JSON"#, "error");
        assert_eq!(c.kind, "stdout_pollution");
        let c = classify("MCP STDERR (weather): listening on stdio", "info");
        assert_eq!((c.kind, c.server.as_deref()), ("server_stderr", Some("weather")));
        let c = classify(r#"Streamable HTTP error: Error POSTing to endpoint (HTTP 404): {"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#, "error");
        assert_eq!((c.facts.http_status, c.facts.error_code), (Some(404), Some(-32001)));
    }

    #[test]
    fn finds_the_embedded_body() {
        let line = br#"Error: Streamable HTTP error: Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"},"id":null}"#;
        let at = embedded_body_start(line).unwrap();
        assert!(line[at..].starts_with(b"{\"jsonrpc\""));
        assert_eq!(embedded_body_start(b"no body here"), None);
    }
}
