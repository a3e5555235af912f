//! Reader budgets and their readers: the default `limits` rows, which reader family each
//! belongs to, how a session's client and server are recognised as a family (clientInfo or
//! serverInfo name, User-Agent), and the typed `--limit NAME=BYTES[:RATIO]` override. The
//! `limits` table's columns are declared in `rows.rs`; clap is not known here. Each number's
//! source is in its row (`source`) and in docs/protocol.md "Reader limits".

use std::str::FromStr;

pub use super::rows::ReaderLimit;

/// A reader family: how its sessions are recognised.
pub struct Family {
    /// The token `limits.reader` and `sessions.client_family` / `server_family` use.
    pub token: &'static str,
    /// `sdk` or `product` (see `limits.reader_kind`).
    pub kind: &'static str,
    /// clientInfo / serverInfo name prefixes (lower case).
    pub names: &'static [&'static str],
    /// User-Agent prefixes of its HTTP requests (lower case).
    pub user_agents: &'static [&'static str],
}

/// The reader families mcpsift recognises, most specific first: a product's own name wins
/// over the HTTP library its requests carry. Names are exact (lower case) unless they end in
/// `*` (a prefix); User-Agents are prefixes. Defaults from each SDK's source (docs/protocol.md
/// "Reader limits"): the TypeScript and Go SDKs send no clientInfo name of their own.
pub const FAMILIES: &[Family] = &[
    Family { token: "codex", kind: "product", names: &["codex*"], user_agents: &["codex"] },
    Family { token: "claude_code", kind: "product", names: &["claude-code"], user_agents: &["claude-code/"] },
    Family { token: "cursor", kind: "product", names: &["cursor*"], user_agents: &["cursor/"] },
    // `mcp` 2.x sends `python-httpx2/...`; 1.x `python-httpx/...`; both name themselves `mcp`
    // unless the application says otherwise.
    Family { token: "python_sdk2", kind: "sdk", names: &[], user_agents: &["python-httpx2/"] },
    Family { token: "python_sdk", kind: "sdk", names: &["mcp"], user_agents: &["python-httpx/"] },
    // Node's fetch sends `node`; the TypeScript SDK sets no User-Agent of its own.
    Family { token: "ts_sdk", kind: "sdk", names: &[], user_agents: &["node"] },
    Family { token: "go_sdk", kind: "sdk", names: &[], user_agents: &["go-http-client/"] },
    Family { token: "rmcp", kind: "sdk", names: &["rmcp"], user_agents: &[] },
    Family { token: "java_sdk", kind: "sdk", names: &["java sdk mcp client"], user_agents: &["java-http-client/"] },
];

/// The family a peer is recognised as, from its clientInfo / serverInfo name and the
/// User-Agent of its HTTP requests.
pub fn family_of(name: Option<&str>, user_agent: Option<&str>) -> Option<&'static str> {
    let name = name.map(str::to_ascii_lowercase);
    let ua = user_agent.map(str::to_ascii_lowercase);
    let name_matches = |p: &str, n: &str| match p.strip_suffix('*') {
        Some(prefix) => n.starts_with(prefix),
        None => n == p,
    };
    FAMILIES
        .iter()
        .find(|f| {
            name.as_deref().is_some_and(|n| f.names.iter().any(|p| name_matches(p, n)))
                || ua.as_deref().is_some_and(|u| f.user_agents.iter().any(|p| u.starts_with(p)))
        })
        .map(|f| f.token)
}

/// One default row: name, bytes, tokens, scope, side, reader, enabled, applies_to, source.
type Row = (&'static str, u64, Option<u64>, &'static str, &'static str, &'static str, bool, &'static str, &'static str);

/// Default budgets (docs/protocol.md "Reader limits" says each source).
const DEFAULTS: &[Row] = &[
    ("ts_sdk_stdio", 10_485_760, None, "stdio", "client", "ts_sdk", true,
     "TypeScript SDK v1 >= 1.30.0 and 2.x stdio clients (and servers, on stdin), whatever clientInfo name the application sends; over it the client closes the pipe (`ReadBuffer exceeded maximum size of 10485760 bytes`, then -32000 Connection closed)",
     "typescript-sdk packages/core-internal/src/shared/stdio.ts@@modelcontextprotocol/client@2.0.0:4 STDIO_DEFAULT_MAX_BUFFER_SIZE; PR #2239 (v1), #2275 (v2)"),
    ("codex_stdio", 8_388_608, None, "stdio", "client", "codex", true,
     "Codex (clientInfo codex-mcp-client) running a stdio server through its executor (remote environments); local stdio has no cap",
     "openai/codex PR #31805 (Bound remote MCP stdio lines)"),
    ("java_stdio", 16_777_216, None, "stdio", "client", "java_sdk", true,
     "Java SDK v2 stdio clients (clientInfo `Java SDK MCP Client`) and servers: 16 Mi UTF-16 characters, here counted as bytes",
     "java-sdk mcp-core/.../client/transport/StdioClientTransport.java@v2.0.1:47 DEFAULT_INPUT_MAX_SIZE"),
    ("go_scanner", 65_536, None, "stdio", "client", "any", false,
     "Clients built on mark3labs/mcp-go v0.39.0-v0.41.x (bufio.Scanner default token; TBXark/mcp-proxy); the official Go SDK's stdio reader is unbounded",
     "mark3labs/mcp-go client/transport/stdio.go@v0.41.0:183; TBXark/mcp-proxy #46"),
    ("sdk_http_body", 4_194_304, None, "http_request", "server", "any", true,
     "Streamable HTTP servers of the TypeScript (sdk 1.32, server 2.x), Python (mcp >= 1.29), Go (go-sdk >= 1.7) and Rust (rmcp >= 3.0) SDKs: HTTP 413",
     "typescript-sdk DEFAULT_MAX_REQUEST_BODY_SIZE; python-sdk PR #3095; go-sdk mcp/streamable.go@v1.7.0:225 (PR #1055); rust-sdk streamable_http_server/tower.rs@rmcp-v3.1.4:55 (PR #970)"),
    ("ts_express_json", 102_400, None, "http_request", "server", "ts_sdk", true,
     "TypeScript servers built with createMcpExpressApp(): express.json()'s 100kb default (2.x: unless jsonLimit is set); a larger request gets HTTP 413 as an HTML page",
     "typescript-sdk packages/middleware/express/src/express.ts@@modelcontextprotocol/express@2.0.0:79; body-parser lib/utils.js 100kb default"),
    ("ts_legacy_sse_post", 4_194_304, None, "http_request", "server", "ts_sdk", true,
     "TypeScript legacy HTTP+SSE servers (SSEServerTransport POST /messages): '4mb'; over it HTTP 400 `PayloadTooLargeError: request entity too large` (a mislabelled 413)",
     "typescript-sdk src/server/sse.ts@v1.x:11 MAXIMUM_MESSAGE_SIZE; packages/server-legacy/src/sse/sse.ts@@modelcontextprotocol/server-legacy@2.0.0:10"),
    ("java_http_body", 16_777_216, None, "http_request", "server", "java_sdk", true,
     "Java SDK servlet servers (Streamable, stateless, SSE): HTTP 413",
     "java-sdk HttpServletStreamableServerTransportProvider.java@v2.0.1:65 DEFAULT_REQUEST_MAX_SIZE"),
    ("py_client_sse_event", 1_048_576, None, "sse_event", "client", "python_sdk2", true,
     "mcp (Python) 2.x clients over Streamable HTTP (User-Agent python-httpx2/...): one SSE event over 1 MiB fails the call (`SSE stream failed: Server-sent event exceeded the 1048576 byte limit.`); JSON bodies and stdio lines have no cap",
     "mcp 2.3.0 mcp/client/streamable_http.py:61 DEFAULT_MAX_SSE_EVENT_SIZE; httpx2 _sse.py"),
    ("java_http_response", 16_777_216, None, "sse_event", "client", "java_sdk", true,
     "Java SDK HTTP clients (User-Agent Java-http-client/...): one SSE line, event or JSON body over 16 MiB",
     "java-sdk HttpClientStreamableHttpTransport.java@v2.0.1:93 DEFAULT_MAX_RESPONSE_SIZE"),
    ("rmcp_client_sse_event", 16_777_216, None, "sse_event", "client", "rmcp", true,
     "rmcp >= 3.0 clients (clientInfo rmcp): an SSE event over 16 MiB ends the stream",
     "rust-sdk crates/rmcp/src/transport/common/client_side_sse.rs@rmcp-v3.1.4:18 DEFAULT_MAX_SSE_EVENT_SIZE"),
    ("go_client_sse_event", 16_777_216, None, "sse_event", "client", "go_sdk", true,
     "Go SDK clients (User-Agent Go-http-client/...) after go-sdk PR #1205: an SSE event over 16 MiB",
     "go-sdk PR #1205 (mcp: add an sse event size cap, merged 2026-08-28)"),
    ("claude_code_output_tokens", 100_000, Some(25_000), "result", "client", "claude_code", true,
     "Claude Code (clientInfo claude-code, User-Agent claude-code/...): MAX_MCP_OUTPUT_TOKENS, default 25,000 tokens of a result's text, estimated as text length / 4 (so 100,000 bytes of text here); 1.x refuses the result, 2.x cuts it",
     "Claude Code docs, MCP output limits (MAX_MCP_OUTPUT_TOKENS); @anthropic-ai/claude-code cli.js (Math.round(text.length/4))"),
    ("inline_result", 1_048_576, None, "result", "client", "any", false,
     "A safe inline result size (mcpsift's own threshold, off by default)",
     "mcpsift"),
    ("truncation_cap_64k", 65_536, None, "result", "client", "any", false,
     "A 64 KiB result cap some servers truncate at (off by default)",
     "mcpsift"),
    ("tools_list_payload", 204_800, None, "tools_list", "client", "cursor", true,
     "Cursor: tools/list payloads of ~220-290 KB showed 0 tools (schema_compat)",
     "iris-agentic-dev #113"),
];

/// Default budgets, each with its reader and source.
pub fn default_limits() -> Vec<ReaderLimit> {
    DEFAULTS
        .iter()
        .map(|&(name, bytes, tokens, scope, side, reader, enabled, applies_to, source)| ReaderLimit {
            name: name.to_string(),
            bytes,
            tokens,
            warn_ratio: DEFAULT_WARN_RATIO,
            scope: scope.to_string(),
            side: side.to_string(),
            reader: reader.to_string(),
            reader_kind: reader_kind(reader).to_string(),
            applies_to: applies_to.to_string(),
            enabled,
            source: source.to_string(),
        })
        .collect()
}

/// `sdk` for SDK families and `any`; `product` for products.
fn reader_kind(reader: &str) -> &'static str {
    FAMILIES.iter().find(|f| f.token == reader).map_or("sdk", |f| f.kind)
}

/// Frames at 90% of a budget are near it: close enough that a slightly larger result breaks.
const DEFAULT_WARN_RATIO: f64 = 0.9;

/// `NAME=BYTES[:RATIO]`: overrides a default budget (and enables it) or adds a `stdio` one.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitOverride {
    pub name: String,
    pub bytes: u64,
    /// `None` keeps the budget's ratio (0.9 for a new one).
    pub warn_ratio: Option<f64>,
}

/// A limit override that does not parse; the binary prefixes the flag and the spec.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitOverrideError {
    #[error("expected NAME=BYTES[:RATIO]")]
    Shape,
    #[error("BYTES must be a whole number")]
    Bytes,
    #[error("RATIO must be in (0, 1]")]
    Ratio,
}

impl FromStr for LimitOverride {
    type Err = LimitOverrideError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let (name, rest) = spec.split_once('=').ok_or(LimitOverrideError::Shape)?;
        let (bytes, ratio) = match rest.split_once(':') {
            Some((b, r)) => (b, Some(r)),
            None => (rest, None),
        };
        let bytes: u64 = bytes.replace('_', "").parse().map_err(|_| LimitOverrideError::Bytes)?;
        let warn_ratio = match ratio {
            Some(r) => Some(r.parse().ok().filter(|r: &f64| *r > 0.0 && *r <= 1.0).ok_or(LimitOverrideError::Ratio)?),
            None => None,
        };
        Ok(LimitOverride { name: name.to_string(), bytes, warn_ratio })
    }
}

impl LimitOverride {
    /// Overrides the budget of that name (enabling it) or adds a new `stdio` budget.
    pub fn apply(&self, limits: &mut Vec<ReaderLimit>) {
        match limits.iter_mut().find(|l| l.name == self.name) {
            Some(l) => {
                l.bytes = self.bytes;
                l.enabled = true;
                if let Some(r) = self.warn_ratio {
                    l.warn_ratio = r;
                }
            }
            None => limits.push(ReaderLimit {
                name: self.name.clone(),
                bytes: self.bytes,
                tokens: None,
                warn_ratio: self.warn_ratio.unwrap_or(DEFAULT_WARN_RATIO),
                scope: "stdio".into(),
                side: "client".into(),
                reader: "any".into(),
                reader_kind: "sdk".into(),
                applies_to: "every stdio client (--limit)".into(),
                enabled: true,
                source: "--limit".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_enables_a_default_and_keeps_its_ratio() {
        let mut limits = default_limits();
        "go_scanner=1_000".parse::<LimitOverride>().unwrap().apply(&mut limits);
        let l = limits.iter().find(|l| l.name == "go_scanner").unwrap();
        assert_eq!((l.bytes, l.warn_ratio, l.enabled), (1000, 0.9, true));
    }

    #[test]
    fn new_override_is_a_stdio_limit() {
        let mut limits = default_limits();
        "mine=64:0.5".parse::<LimitOverride>().unwrap().apply(&mut limits);
        let l = limits.last().unwrap();
        assert_eq!((l.name.as_str(), l.bytes, l.warn_ratio, l.scope.as_str(), l.enabled), ("mine", 64, 0.5, "stdio", true));
    }

    #[test]
    fn bad_overrides_name_the_problem() {
        assert_eq!("nolimit".parse::<LimitOverride>(), Err(LimitOverrideError::Shape));
        assert_eq!("a=lots".parse::<LimitOverride>(), Err(LimitOverrideError::Bytes));
        assert_eq!("a=10:1.5".parse::<LimitOverride>(), Err(LimitOverrideError::Ratio));
        assert_eq!("a=10:x".parse::<LimitOverride>().unwrap_err().to_string(), "RATIO must be in (0, 1]");
    }
}
