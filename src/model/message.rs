//! One JSON-RPC message's MCP facts, read without materialising big strings.
//!
//! The message is deserialised once into borrowed views (`RawValue` for anything large);
//! text and base64 sizes are measured on the raw literals. A message whose shape does not
//! fit the typed view is classified again with a loose envelope, so valid JSON-RPC is never
//! called invalid because one MCP field has an unexpected type.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::ingest::frame::{RecordedFacts, RecordedKind};

use super::jsonstr::{base64_sizes, decoded_len, utf16_units};

/// Frame classification (the `kind` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Request,
    Notification,
    Response,
    Error,
    Batch,
    /// Not JSON at all (a log line on stdout).
    NonJson,
    /// Looks like JSON (starts with `{` or `[`) but does not parse (e.g. cut by a host).
    InvalidJson,
    /// Valid JSON that is not a JSON-RPC message.
    NotJsonRpc,
    /// The transport cut the frame (no newline at the end, TCP gap, over the cap).
    Incomplete,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::Response => "response",
            Kind::Error => "error",
            Kind::Batch => "batch",
            Kind::NonJson => "non_json",
            Kind::InvalidJson => "invalid_json",
            Kind::NotJsonRpc => "not_jsonrpc",
            Kind::Incomplete => "incomplete",
        }
    }
}

/// `clientInfo` / `serverInfo`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Implementation {
    #[serde(default, deserialize_with = "lenient_string")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    pub version: Option<String>,
}

/// A tool definition from a `tools/list` result, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub title: Option<String>,
    pub description_utf16: Option<u64>,
    /// Root `type` of inputSchema (`object`, `array`, ... or `missing`).
    pub input_root_type: String,
    pub input_dialect: Option<String>,
    pub output_dialect: Option<String>,
    pub has_output_schema: bool,
    pub schema_bytes: u64,
    /// The outputSchema text, kept for validation of later results.
    pub output_schema: Option<String>,
    /// `type: array` nodes without `items`/`prefixItems` in inputSchema, and the first one's path.
    pub arrays_without_items: u64,
    pub first_array_without_items: Option<String>,
    /// inputSchema uses draft-07 tuple-form `items: [...]`.
    pub tuple_items: bool,
    /// Top-level inputSchema properties with `x-mcp-header`: (argument, header Name).
    pub header_params: Vec<(String, String)>,
    /// The definition as JSON (title, description, inputSchema, outputSchema, annotations; keys
    /// in the order the server sent them, compared as maps): what a tool's change is measured on.
    pub definition: String,
}

/// Everything model needs from one JSON-RPC message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    pub kind: Option<Kind>,
    pub method: Option<String>,
    /// The id as JSON text: `1` and `"1"` stay different.
    pub rpc_id: Option<String>,
    pub tool: Option<String>,
    pub is_error: Option<bool>,
    pub error_code: Option<i64>,
    pub error_message: Option<String>,
    /// Content block types in order, comma-separated (`text,image`).
    pub content_types: Option<String>,
    pub content_blocks: u32,
    pub text_bytes: u64,
    pub blob_bytes_b64: u64,
    pub blob_bytes_decoded: u64,
    pub has_structured: bool,
    pub structured_bytes: u64,
    /// structuredContent, when small enough to keep for later checks, read once as JSON (or
    /// the parser's message): the page's items here, its schema and its text later.
    pub structured: Option<Result<serde_json::Value, String>>,
    /// First text block when small enough to compare with structuredContent.
    pub first_text: Option<String>,
    pub truncation_marker: Option<String>,
    pub client_info: Option<Implementation>,
    pub server_info: Option<Implementation>,
    pub protocol_version: Option<String>,
    /// `params.cursor` of a list request, or a cursor in `tools/call` arguments.
    pub cursor_in: Option<String>,
    /// `nextCursor` of a list result, or `nextCursor`/`next_cursor` in structuredContent.
    pub cursor_out: Option<String>,
    pub items_returned: Option<u64>,
    /// Keys of the first and last item of the page's main array ([`Message::item_keys`]).
    pub first_item_key: Option<String>,
    pub last_item_key: Option<String>,
    /// Every item's identity, in page order: `name` of tools and prompts, `uri` of resources,
    /// `uriTemplate` of resource templates; in structuredContent `id`, `name`, `uri`, else the
    /// first scalar field. Items without one are counted, not keyed.
    pub item_keys: Vec<String>,
    /// The field the keys came from (`mixed` when items differ).
    pub item_key_field: Option<String>,
    /// Items of the page without any key.
    pub items_without_key: u64,
    /// A list result's `ttlMs` and `cacheScope` (2026-07-28 `CacheableResult`).
    pub ttl_ms: Option<i64>,
    pub cache_scope: Option<String>,
    /// A 2026-07-28 request's identity without its id and `_meta`: method, name or uri,
    /// arguments and cursor hashed, to link a request re-issued after a broken stream.
    pub fingerprint: Option<u64>,
    pub page_size_arg: Option<i64>,
    /// `notifications/cancelled`: the id it cancels (JSON text) and the reason.
    pub cancels_id: Option<String>,
    pub cancel_reason: Option<String>,
    pub tools: Vec<ToolDef>,
    pub note: Option<String>,
    /// The result's `resultType` (2026-07-28: `complete`, `input_required`).
    pub result_type: Option<String>,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read): what `Mcp-Name` must say.
    pub target_name: Option<String>,
    /// `_meta` protocolVersion of a request (what `MCP-Protocol-Version` must say).
    pub meta_protocol_version: Option<String>,
    /// tools/call: top-level scalar arguments rendered as a header would carry them (read
    /// only when asked, [`parse_payload_for`]: the model asks for HTTP frames).
    pub scalar_args: Vec<(String, String)>,
    /// `requestState`: what an `input_required` result issued, or what a retry echoes.
    pub request_state: Option<String>,
    /// A request's `params._meta.traceparent` (W3C Trace Context, as the OpenTelemetry MCP
    /// conventions propagate it).
    pub traceparent: Option<String>,
}

/// Keep texts up to this size for comparisons; larger ones are only measured.
const KEEP_TEXT_BYTES: usize = 64 * 1024;
/// Keep structuredContent up to this size for schema validation.
const KEEP_STRUCTURED_BYTES: usize = 1 << 20;

fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = <Option<&RawValue>>::deserialize(d)?;
    Ok(v.map(raw_to_string))
}

/// A JSON string value decoded; any other JSON kept as its text.
fn raw_to_string(r: &RawValue) -> String {
    let t = r.get();
    if t.starts_with('"') {
        serde_json::from_str::<String>(t).unwrap_or_else(|_| t.to_string())
    } else {
        t.to_string()
    }
}

fn raw_str(r: Option<&RawValue>) -> Option<String> {
    r.filter(|r| r.get() != "null").map(raw_to_string)
}

#[derive(Deserialize)]
struct Loose<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// Keeps `null` as a present raw value (an error with `"id": null` has an id field).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Typed<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    // Boxed: a params or result view is several hundred bytes, and the typed view is moved a
    // few times on its way out of serde (those copies were a seventh of parsing on small.log).
    #[serde(borrow)]
    params: Option<Box<Params<'a>>>,
    #[serde(borrow)]
    result: Option<Box<ResultView<'a>>>,
    #[serde(borrow)]
    error: Option<ErrorView<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    cursor: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "clientInfo")]
    client_info: Option<Implementation>,
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Option<&'a RawValue>,
    #[serde(rename = "requestId", borrow)]
    request_id: Option<&'a RawValue>,
    #[serde(borrow)]
    reason: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow)]
    request_state: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    client_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    truncated: Option<&'a RawValue>,
    #[serde(borrow)]
    traceparent: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResultView<'a> {
    #[serde(borrow)]
    content: Option<Vec<Block<'a>>>,
    #[serde(rename = "structuredContent", borrow)]
    structured: Option<&'a RawValue>,
    #[serde(rename = "isError", borrow)]
    is_error: Option<&'a RawValue>,
    #[serde(rename = "serverInfo")]
    server_info: Option<Implementation>,
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    tools: Option<Vec<ToolView<'a>>>,
    #[serde(borrow)]
    resources: Option<Vec<&'a RawValue>>,
    #[serde(rename = "resourceTemplates", borrow)]
    resource_templates: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    prompts: Option<Vec<&'a RawValue>>,
    #[serde(rename = "nextCursor", borrow)]
    next_cursor: Option<&'a RawValue>,
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    truncated: Option<&'a RawValue>,
    #[serde(rename = "resultType", borrow)]
    result_type: Option<&'a RawValue>,
    #[serde(rename = "ttlMs", borrow)]
    ttl_ms: Option<&'a RawValue>,
    #[serde(rename = "cacheScope", borrow)]
    cache_scope: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow)]
    request_state: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    resource: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct EmbeddedResource<'a> {
    #[serde(borrow)]
    text: Option<&'a RawValue>,
    #[serde(borrow)]
    blob: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ToolView<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    title: Option<&'a RawValue>,
    #[serde(borrow)]
    description: Option<&'a RawValue>,
    #[serde(rename = "inputSchema", borrow)]
    input_schema: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", borrow)]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow)]
    annotations: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(rename = "$schema", borrow)]
    dialect: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorView<'a> {
    #[serde(borrow)]
    code: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
}

/// Tool-level pagination arguments in `tools/call`.
#[derive(Deserialize)]
struct PageArgs<'a> {
    #[serde(borrow)]
    cursor: Option<&'a RawValue>,
    #[serde(borrow)]
    page_size: Option<&'a RawValue>,
    #[serde(rename = "pageSize", borrow)]
    page_size_camel: Option<&'a RawValue>,
    #[serde(borrow)]
    limit: Option<&'a RawValue>,
}

/// Tool-level pagination facts in structuredContent.
#[derive(Deserialize)]
struct PageResult<'a> {
    #[serde(rename = "nextCursor", borrow)]
    next_cursor_camel: Option<&'a RawValue>,
    #[serde(borrow)]
    next_cursor: Option<&'a RawValue>,
    #[serde(borrow)]
    truncated: Option<&'a RawValue>,
}

/// What a frame's payload holds: one message, a batch, or something that is not JSON-RPC.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    One(Box<Message>),
    Batch(Vec<Message>),
    /// Not a message; the kind says why.
    Other(Kind, Option<String>),
}

/// Text endings that mean a server or client cut the result (field-notes.md). A host log's own
/// `...[N chars truncated]...` is not one: the host cut its log line, not the result (ingest
/// notes it on the frame).
pub const TRUNCATION_MARKERS: &[&str] = &[
    "[Response truncated due to size limit]",
    "[output truncated]",
    "... [truncated]",
    "[truncated]",
    "Tool Call Result Truncated",
    "Content truncated. Call the fetch tool with a start_index",
    "exceeds maximum allowed tokens",
];

/// The message a recorder described without keeping its bytes (a span file): its facts as
/// recorded, every other field unknown.
pub fn recorded_message(r: &RecordedFacts) -> Parsed {
    let kind = match r.kind {
        RecordedKind::Request if r.rpc_id.is_some() => Kind::Request,
        RecordedKind::Request => Kind::Notification,
        RecordedKind::Response => Kind::Response,
        RecordedKind::Error => Kind::Error,
    };
    Parsed::One(Box::new(Message {
        kind: Some(kind),
        method: r.method.clone(),
        rpc_id: r.rpc_id.clone(),
        tool: r.tool.clone(),
        error_code: r.error_code,
        note: Some("recorded without its bytes: facts and size from the recorder".into()),
        ..Message::default()
    }))
}

/// Classifies and measures one payload, every fact included.
pub fn parse_payload(payload: &[u8]) -> Parsed {
    parse_payload_for(payload, true)
}

/// [`parse_payload`]; `scalar_args` says whether to read a tools/call's top-level scalar
/// arguments ([`Message::scalar_args`]): only HTTP requests are routed by them (`Mcp-Param-*`
/// headers), and reading them builds a JSON tree of the arguments, a tenth of the parse.
pub fn parse_payload_for(payload: &[u8], scalar_args: bool) -> Parsed {
    let first = payload.iter().find(|b| !b.is_ascii_whitespace()).copied();
    match first {
        Some(b'{') => match parse_object(payload, scalar_args) {
            Ok(m) => Parsed::One(Box::new(m)),
            Err(other) => *other,
        },
        Some(b'[') => match serde_json::from_slice::<Vec<&RawValue>>(payload) {
            Ok(items) => {
                let msgs: Vec<Message> = items
                    .iter()
                    .map(|r| match parse_object(r.get().as_bytes(), scalar_args) {
                        Ok(m) => m,
                        Err(_) => Message { note: Some("batch element is not a JSON-RPC message".into()), ..Message::default() },
                    })
                    .collect();
                if msgs.iter().all(|m| m.kind.is_none()) {
                    Parsed::Other(Kind::NotJsonRpc, Some("JSON array without JSON-RPC messages".into()))
                } else {
                    Parsed::Batch(msgs)
                }
            }
            Err(e) => Parsed::Other(Kind::InvalidJson, Some(format!("invalid JSON: {e}"))),
        },
        _ => {
            let note = embedded_jsonrpc_note(payload);
            if serde_json::from_slice::<serde::de::IgnoredAny>(payload).is_ok() {
                Parsed::Other(Kind::NotJsonRpc, Some("JSON value that is not an object".into()))
            } else {
                Parsed::Other(Kind::NonJson, note)
            }
        }
    }
}

/// A non-JSON line that contains a JSON-RPC message later on (stdout pollution glued to a
/// message): say where, since the client lost that message.
fn embedded_jsonrpc_note(payload: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(payload, b"\"jsonrpc\"")?;
    let (start, m) = memchr::memchr_iter(b'{', &payload[..at])
        .take(16)
        .find_map(|start| parse_object(&payload[start..], false).ok().map(|m| (start, m)))?;
    Some(format!(
        "JSON-RPC {} embedded at byte {start} (id {})",
        m.kind.map(Kind::as_str).unwrap_or("message"),
        m.rpc_id.as_deref().unwrap_or("none")
    ))
}

fn parse_object(payload: &[u8], scalar_args: bool) -> Result<Message, Box<Parsed>> {
    // Nearly every payload is valid UTF-8: checked once here (simdutf8, several times the speed
    // of the standard check on large texts), serde reads it as text and does not check each
    // string and raw value again (4% of the CPU of `tables` on small messages).
    let typed = match simdutf8::basic::from_utf8(payload) {
        Ok(text) => serde_json::from_str::<Typed>(text),
        Err(_) => serde_json::from_slice::<Typed>(payload),
    };
    match typed {
        Ok(t) => {
            let m = from_typed(t, scalar_args);
            if m.kind.is_none() {
                return Err(Box::new(Parsed::Other(Kind::NotJsonRpc, Some("JSON object without method, result or error".into()))));
            }
            Ok(m)
        }
        Err(typed_err) => match serde_json::from_slice::<Loose>(payload) {
            Ok(l) => {
                let mut m = from_loose(&l).ok_or_else(|| Box::new(Parsed::Other(Kind::NotJsonRpc, Some("JSON object without method, result or error".into()))))?;
                m.note = Some(format!("unexpected MCP shape: {typed_err}"));
                Ok(m)
            }
            Err(e) => Err(Box::new(Parsed::Other(Kind::InvalidJson, Some(format!("invalid JSON: {e}"))))),
        },
    }
}

fn from_loose(l: &Loose) -> Option<Message> {
    let mut m = Message { rpc_id: l.id.map(|r| r.get().to_string()), ..Message::default() };
    m.method = raw_str(l.method);
    m.kind = Some(if l.error.is_some() {
        Kind::Error
    } else if l.result.is_some() {
        Kind::Response
    } else if l.method.is_some() {
        if l.id.is_some() { Kind::Request } else { Kind::Notification }
    } else {
        return None;
    });
    let _ = l.jsonrpc;
    Some(m)
}

fn from_typed(t: Typed, scalar_args: bool) -> Message {
    let mut m = Message { rpc_id: t.id.filter(|r| r.get() != "null").map(|r| r.get().to_string()), ..Message::default() };
    if t.id.is_some_and(|r| r.get() == "null") {
        m.rpc_id = Some("null".into());
    }
    if let Some(e) = t.error {
        m.kind = Some(Kind::Error);
        m.error_code = e.code.and_then(|c| c.get().parse::<i64>().ok());
        m.error_message = raw_str(e.message);
        return m;
    }
    if let Some(r) = t.result {
        m.kind = Some(Kind::Response);
        read_result(*r, &mut m);
        return m;
    }
    let Some(method) = t.method else {
        return m; // kind None → not JSON-RPC
    };
    m.kind = Some(if t.id.is_some() { Kind::Request } else { Kind::Notification });
    if let Some(p) = t.params {
        read_params(&method, *p, &mut m, scalar_args);
    }
    m.method = Some(method.into_owned());
    m
}

fn read_params(method: &str, mut p: Params, m: &mut Message, scalar_args: bool) {
    m.target_name = match method {
        "tools/call" | "prompts/get" => raw_str(p.name),
        "resources/read" => raw_str(p.uri),
        _ => None,
    };
    if method == "tools/call" {
        m.tool = m.target_name.clone();
        if scalar_args && let Some(args) = p.arguments.filter(|a| a.get().len() <= KEEP_TEXT_BYTES) {
            m.scalar_args = read_scalar_args(args.get());
        }
        if let Some(args) = p.arguments.filter(|a| a.get().len() <= KEEP_TEXT_BYTES)
            && let Ok(pa) = serde_json::from_str::<PageArgs>(args.get())
        {
            m.cursor_in = raw_str(pa.cursor);
            m.page_size_arg = [pa.page_size, pa.page_size_camel, pa.limit].into_iter().flatten().find_map(|r| r.get().parse::<i64>().ok());
        }
    } else {
        m.cursor_in = raw_str(p.cursor);
    }
    if let Some(ci) = p.client_info.take() {
        m.client_info = Some(ci);
    }
    m.protocol_version = raw_str(p.protocol_version);
    m.request_state = raw_str(p.request_state);
    if method == "notifications/cancelled" {
        m.cancels_id = p.request_id.map(|r| r.get().to_string());
        m.cancel_reason = raw_str(p.reason);
    }
    if let Some(meta) = p.meta
        && let Ok(meta) = serde_json::from_str::<Meta>(meta.get())
    {
        if m.client_info.is_none() {
            m.client_info = meta.client_info;
        }
        m.meta_protocol_version = raw_str(meta.protocol_version);
        m.traceparent = raw_str(meta.traceparent);
        if m.meta_protocol_version.is_some() {
            m.fingerprint = Some(fingerprint(method, &p));
        }
        if m.protocol_version.is_none() {
            m.protocol_version = m.meta_protocol_version.clone();
        }
    }
}

/// A request's identity without its id and `_meta`: what a re-issued request repeats.
fn fingerprint(method: &str, p: &Params) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    method.hash(&mut h);
    for part in [p.name, p.uri, p.arguments, p.cursor, p.request_state] {
        part.map(RawValue::get).hash(&mut h);
    }
    h.finish()
}

/// Top-level scalar arguments as an `Mcp-Param-*` header renders them: strings as they are,
/// numbers and booleans as JSON text; null, objects and arrays are not rendered.
fn read_scalar_args(args: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(args) else { return Vec::new() };
    o.into_iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::String(s) => Some((k, s)),
            serde_json::Value::Number(n) => Some((k, n.to_string())),
            serde_json::Value::Bool(b) => Some((k, b.to_string())),
            _ => None,
        })
        .collect()
}

fn is_true(r: Option<&RawValue>) -> bool {
    r.is_some_and(|r| r.get() == "true")
}

fn read_result(r: ResultView, m: &mut Message) {
    m.is_error = r.is_error.and_then(|v| match v.get() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    m.server_info = r.server_info;
    m.protocol_version = raw_str(r.protocol_version);
    m.result_type = raw_str(r.result_type);
    m.request_state = raw_str(r.request_state);
    let mut marker: Option<String> = None;
    // The first text block is decoded only when needed: to compare with structuredContent, or
    // to read an error result's message.
    let mut first_text: Option<&RawValue> = None;
    let has_structured = r.structured.is_some_and(|s| s.get() != "null");
    if let Some(blocks) = &r.content {
        let mut types = String::new();
        m.content_blocks = blocks.len() as u32;
        for b in blocks {
            if !types.is_empty() {
                types.push(',');
            }
            types.push_str(b.kind.as_deref().unwrap_or("?"));
            if let Some(text) = b.text {
                m.text_bytes += decoded_len(text.get());
                if first_text.is_none() {
                    first_text = Some(text);
                }
                if marker.is_none() {
                    marker = text_marker(text.get());
                }
            }
            if let Some(data) = b.data {
                let (b64, decoded) = base64_sizes(data.get());
                m.blob_bytes_b64 += b64;
                m.blob_bytes_decoded += decoded;
            }
            if let Some(res) = b.resource
                && let Ok(er) = serde_json::from_str::<EmbeddedResource>(res.get())
            {
                if let Some(text) = er.text {
                    m.text_bytes += decoded_len(text.get());
                }
                if let Some(blob) = er.blob {
                    let (b64, decoded) = base64_sizes(blob.get());
                    m.blob_bytes_b64 += b64;
                    m.blob_bytes_decoded += decoded;
                }
            }
        }
        m.content_types = Some(types);
    }
    if (has_structured || m.is_error == Some(true)) && let Some(text) = first_text.filter(|t| t.get().len() <= KEEP_TEXT_BYTES) {
        m.first_text = serde_json::from_str::<String>(text.get()).ok();
    }
    if let Some(sc) = r.structured.filter(|s| s.get() != "null") {
        m.has_structured = true;
        m.structured_bytes = sc.get().len() as u64;
        if sc.get().len() <= KEEP_STRUCTURED_BYTES {
            let parsed = serde_json::from_str::<serde_json::Value>(sc.get()).map_err(|e| e.to_string());
            if let Ok(v) = &parsed
                && let Some(items) = main_array(v)
            {
                // Only the first and last keys here: every key is read for pages alone
                // ([`page_item_keys`]), not for every result with an array.
                m.items_returned = Some(items.len() as u64);
                m.first_item_key = items.first().and_then(item_key).map(|k| k.0);
                m.last_item_key = items.last().and_then(item_key).map(|k| k.0);
            }
            m.structured = Some(parsed);
        }
        if let Ok(pr) = serde_json::from_str::<PageResult>(sc.get()) {
            m.cursor_out = raw_str(pr.next_cursor_camel).or_else(|| raw_str(pr.next_cursor));
            if marker.is_none() && is_true(pr.truncated) {
                marker = Some("structuredContent.truncated".into());
            }
        }
    }
    if marker.is_none() && is_true(r.truncated) {
        marker = Some("result.truncated".into());
    }
    if let Some(meta) = r.meta
        && let Ok(meta) = serde_json::from_str::<Meta>(meta.get())
    {
        if m.server_info.is_none() {
            m.server_info = meta.server_info;
        }
        if marker.is_none() && is_true(meta.truncated) {
            marker = Some("_meta.truncated".into());
        }
    }
    m.truncation_marker = marker;
    if let Some(nc) = r.next_cursor {
        m.cursor_out = raw_str(Some(nc));
    }
    m.ttl_ms = r.ttl_ms.and_then(|t| t.get().parse::<i64>().ok());
    m.cache_scope = raw_str(r.cache_scope);
    let lists = [(r.resources, "uri"), (r.resource_templates, "uriTemplate"), (r.prompts, "name")];
    if let Some(tools) = r.tools {
        m.items_returned = Some(tools.len() as u64);
        let names: Vec<Option<bool>> = tools.iter().map(|t| t.name.map(|n| n.get().starts_with('"'))).collect();
        m.tools = tools.into_iter().map(tool_def).collect();
        // A tool without a name (or with a name that is not a string) has no identity.
        let keys: Vec<Option<(String, &'static str)>> =
            m.tools.iter().zip(names).map(|(t, named)| (named == Some(true)).then(|| (t.name.clone(), "name"))).collect();
        set_item_keys(m, keys.into_iter());
    } else if let Some((items, field)) = lists.into_iter().find_map(|(v, f)| v.map(|v| (v, f))) {
        m.items_returned = Some(items.len() as u64);
        let keys: Vec<Option<(String, &'static str)>> = items.iter().map(|i| list_item_key(i, field)).collect();
        set_item_keys(m, keys.into_iter());
    }
}

/// A protocol list item's key: the string `field` of the object.
fn list_item_key(item: &RawValue, field: &'static str) -> Option<(String, &'static str)> {
    let o = serde_json::from_str::<ListItem>(item.get()).ok()?;
    let v = match field {
        "uri" => o.uri,
        "uriTemplate" => o.uri_template,
        _ => o.name,
    }?;
    v.get().starts_with('"').then(|| (raw_to_string(v), field))
}

/// The identity fields of a resource, template or prompt.
#[derive(Deserialize)]
struct ListItem<'a> {
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(rename = "uriTemplate", borrow)]
    uri_template: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
}

/// A page's item keys, the field they came from and the items without one: a protocol list's
/// (read with the result), else the main array's of structuredContent.
pub fn page_item_keys(m: &Message) -> (Vec<String>, Option<String>, u64) {
    if !m.item_keys.is_empty() || m.items_without_key > 0 {
        return (m.item_keys.clone(), m.item_key_field.clone(), m.items_without_key);
    }
    let Some(items) = m.structured.as_ref().and_then(|s| s.as_ref().ok()).and_then(main_array) else {
        return (Vec::new(), None, 0);
    };
    let mut page = Message::default();
    set_item_keys(&mut page, items.iter().map(item_key));
    (page.item_keys, page.item_key_field, page.items_without_key)
}

/// Records a page's item keys, the field they came from, and the items without one.
fn set_item_keys<F: AsRef<str>>(m: &mut Message, keys: impl Iterator<Item = Option<(String, F)>>) {
    let mut field: Option<String> = None;
    for k in keys {
        match k {
            Some((key, f)) => {
                match &field {
                    None => field = Some(f.as_ref().to_string()),
                    Some(seen) if seen != f.as_ref() => field = Some("mixed".into()),
                    _ => {}
                }
                m.item_keys.push(key);
            }
            None => m.items_without_key += 1,
        }
    }
    m.item_key_field = field;
    m.first_item_key = m.item_keys.first().cloned();
    m.last_item_key = m.item_keys.last().cloned();
}

/// The page's items: the first top-level array of objects in structuredContent (or the value
/// itself when it is such an array).
fn main_array(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    let is_items = |a: &Vec<serde_json::Value>| a.first().is_none_or(serde_json::Value::is_object);
    match v {
        serde_json::Value::Array(a) if is_items(a) => Some(a),
        serde_json::Value::Object(o) => o.values().find_map(|x| x.as_array().filter(|a| is_items(a) && !a.is_empty())),
        _ => None,
    }
}

/// An item's identity and the field it came from: `id`, `name`, `uri`, else the first
/// scalar field (string or number) of the object.
fn item_key(item: &serde_json::Value) -> Option<(String, String)> {
    let o = item.as_object()?;
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    ["id", "name", "uri"]
        .iter()
        .find_map(|k| o.get(*k).and_then(text).map(|t| (t, (*k).to_string())))
        .or_else(|| o.iter().find_map(|(k, v)| text(v).map(|t| (t, k.clone()))))
}

/// The marker a text block ends with (looked for in its last 256 raw bytes).
fn text_marker(literal: &str) -> Option<String> {
    let mut start = literal.len().saturating_sub(256);
    while !literal.is_char_boundary(start) {
        start += 1;
    }
    let tail = &literal[start..];
    // Every built-in marker contains one of these: skip the per-marker search for most texts.
    let bytes = tail.as_bytes();
    // Searchers built once: building one per text block was 1% of `tables` on small messages.
    static RUNCAT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"runcat"));
    static EXCEEDS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"exceeds"));
    if RUNCAT.find(bytes).is_none() && EXCEEDS.find(bytes).is_none() {
        return None;
    }
    TRUNCATION_MARKERS.iter().find(|mk| tail.contains(*mk)).map(|mk| mk.to_string())
}

fn schema_head(schema: &RawValue) -> (String, Option<String>) {
    match serde_json::from_str::<SchemaHead>(schema.get()) {
        Ok(h) => (raw_str(h.kind).unwrap_or_else(|| "missing".into()), raw_str(h.dialect)),
        Err(_) => ("not_an_object".into(), None),
    }
}

/// Walks a JSON Schema for array nodes without `items` and tuple-form `items`.
#[derive(Default)]
struct SchemaWalk {
    arrays_without_items: u64,
    first_path: Option<String>,
    tuple_items: bool,
}

impl SchemaWalk {
    /// `path` is the JSON Pointer of `v`; children append to it and take their part off again
    /// (one buffer for the walk, a copy only for the first array without items).
    fn visit(&mut self, v: &serde_json::Value, path: &mut String) {
        let at = path.len();
        let Some(o) = v.as_object() else {
            if let Some(a) = v.as_array() {
                for (i, x) in a.iter().enumerate() {
                    let _ = write!(path, "/{i}");
                    self.visit(x, path);
                    path.truncate(at);
                }
            }
            return;
        };
        let is_array = match o.get("type") {
            Some(serde_json::Value::String(t)) => t == "array",
            Some(serde_json::Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !o.contains_key("items") && !o.contains_key("prefixItems") {
            self.arrays_without_items += 1;
            self.first_path.get_or_insert_with(|| path.clone());
        }
        if o.get("items").is_some_and(serde_json::Value::is_array) {
            self.tuple_items = true;
        }
        for (k, child) in o {
            if matches!(k.as_str(), "enum" | "const" | "default" | "examples" | "required") {
                continue;
            }
            path.push('/');
            path.push_str(k);
            self.visit(child, path);
            path.truncate(at);
        }
    }
}

fn tool_def(t: ToolView) -> ToolDef {
    let (input_root_type, input_dialect) = match t.input_schema {
        Some(s) => schema_head(s),
        None => ("missing".into(), None),
    };
    let output_dialect = t.output_schema.and_then(|s| schema_head(s).1);
    let mut walk = SchemaWalk::default();
    let mut header_params = Vec::new();
    if let Some(schema) = t.input_schema
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(schema.get())
    {
        walk.visit(&v, &mut String::from("#"));
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            header_params = props
                .iter()
                .filter_map(|(arg, s)| s.get("x-mcp-header").and_then(|h| h.as_str()).map(|h| (arg.clone(), h.to_string())))
                .collect();
        }
    }
    ToolDef {
        header_params,
        arrays_without_items: walk.arrays_without_items,
        first_array_without_items: walk.first_path,
        tuple_items: walk.tuple_items,
        name: raw_str(t.name).unwrap_or_default(),
        title: raw_str(t.title),
        description_utf16: raw_str(t.description).map(|d| utf16_units(&d)),
        input_root_type,
        input_dialect,
        output_dialect,
        has_output_schema: t.output_schema.is_some_and(|s| s.get() != "null"),
        schema_bytes: t.input_schema.map_or(0, |s| s.get().len() as u64) + t.output_schema.map_or(0, |s| s.get().len() as u64),
        output_schema: t.output_schema.filter(|s| s.get() != "null").map(|s| s.get().to_string()),
        definition: definition(&t),
    }
}

/// A tool's definition without its name, as JSON: title, description, inputSchema,
/// outputSchema and annotations, each as the server sent it.
fn definition(t: &ToolView) -> String {
    let mut o = serde_json::Map::new();
    for (key, raw) in [("title", t.title), ("description", t.description), ("inputSchema", t.input_schema), ("outputSchema", t.output_schema), ("annotations", t.annotations)] {
        if let Some(v) = raw.and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok()).filter(|v| !v.is_null()) {
            o.insert(key.to_string(), v);
        }
    }
    serde_json::Value::Object(o).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Message {
        match parse_payload(s.as_bytes()) {
            Parsed::One(m) => *m,
            other => panic!("not one message: {other:?}"),
        }
    }

    #[test]
    fn classifies_requests_notifications_responses_errors() {
        let m = one(r#"{"method":"tools/call","params":{"name":"fetch","arguments":{"cursor":"abc","page_size":50}},"jsonrpc":"2.0","id":3}"#);
        assert_eq!((m.kind, m.tool.as_deref(), m.rpc_id.as_deref()), (Some(Kind::Request), Some("fetch"), Some("3")));
        assert_eq!((m.cursor_in.as_deref(), m.page_size_arg), (Some("abc"), Some(50)));
        let m = one(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7","reason":"timeout"}}"#);
        assert_eq!((m.kind, m.cancels_id.as_deref()), (Some(Kind::Notification), Some("\"7\"")));
        let m = one(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#);
        assert_eq!((m.kind, m.error_code, m.rpc_id.as_deref()), (Some(Kind::Error), Some(-32000), Some("null")));
    }

    #[test]
    fn measures_content_blocks() {
        let m = one(r#"{"result":{"content":[{"type":"text","text":"漢字\n... [truncated]"},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}],"structuredContent":{"total":1},"isError":false},"jsonrpc":"2.0","id":1}"#);
        assert_eq!(m.content_types.as_deref(), Some("text,image"));
        assert_eq!(m.text_bytes, "漢字\n... [truncated]".len() as u64);
        assert_eq!((m.blob_bytes_b64, m.blob_bytes_decoded), (8, 5));
        assert_eq!((m.has_structured, m.structured_bytes), (true, 11));
        assert_eq!(m.truncation_marker.as_deref(), Some("... [truncated]"));
        assert_eq!(m.is_error, Some(false));
    }

    #[test]
    fn initialize_and_modern_meta_client_info() {
        let m = one(r#"{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli","version":"0.1.0"}},"jsonrpc":"2.0","id":0}"#);
        assert_eq!(m.client_info, Some(Implementation { name: Some("cli".into()), version: Some("0.1.0".into()) }));
        assert_eq!(m.protocol_version.as_deref(), Some("2025-11-25"));
        let m = one(r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"}},"name":"get_weather"}}"#);
        assert_eq!(m.client_info.and_then(|c| c.name).as_deref(), Some("ExampleClient"));
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
    }

    #[test]
    fn tools_list_definitions() {
        let m = one(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"x📎","inputSchema":{"type":"array"},"outputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}},{"name":"b","inputSchema":{}}],"nextCursor":"n1"}}"#);
        assert_eq!(m.items_returned, Some(2));
        assert_eq!(m.cursor_out.as_deref(), Some("n1"));
        assert_eq!(m.tools[0].input_root_type, "array");
        assert_eq!(m.tools[0].description_utf16, Some(3));
        assert_eq!(m.tools[0].output_dialect.as_deref(), Some("http://json-schema.org/draft-07/schema#"));
        assert_eq!(m.tools[1].input_root_type, "missing");
    }

    #[test]
    fn other_kinds() {
        assert!(matches!(parse_payload(b"Starting server"), Parsed::Other(Kind::NonJson, None)));
        assert!(matches!(parse_payload(br#"{"level":"info"}"#), Parsed::Other(Kind::NotJsonRpc, _)));
        assert!(matches!(parse_payload(br#"{"jsonrpc":"2.0","result":{"text":"abc...[12 chars"#), Parsed::Other(Kind::InvalidJson, _)));
        assert!(matches!(parse_payload(br#"[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"}]"#), Parsed::Batch(v) if v.len() == 2));
        match parse_payload(br#"warming cache... {"result":{"content":[]},"jsonrpc":"2.0","id":5}"#) {
            Parsed::Other(Kind::NonJson, Some(note)) => assert_eq!(note, "JSON-RPC response embedded at byte 17 (id 5)"),
            other => panic!("{other:?}"),
        }
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"content":"not a list"}}"#);
        assert_eq!(m.kind, Some(Kind::Response));
        assert!(m.note.unwrap().starts_with("unexpected MCP shape"));
    }

    #[test]
    fn item_keys_by_list_kind_and_items_without_keys_are_counted() {
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"title":"no name"},{"name":7}],"nextCursor":""}}"#);
        assert_eq!((m.item_keys.clone(), m.items_without_key, m.item_key_field.as_deref()), (vec!["a".to_string()], 2, Some("name")));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"A"},{"name":"B"}]}}"#);
        assert_eq!((m.item_keys.clone(), m.items_without_key, m.item_key_field.as_deref()), (vec!["file:///a".to_string()], 1, Some("uri")));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[{"uriTemplate":"x://{id}","name":"X"}]}}"#);
        assert_eq!((m.item_keys.clone(), m.item_key_field.as_deref()), (vec!["x://{id}".to_string()], Some("uriTemplate")));
        // Tool-level lists: id, name, uri, else the first scalar field; `mixed` when items differ.
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"rows":[{"id":3},{"name":"n"},{"flag":true,"code":"c"},{"nested":{}}]}}}"#);
        assert_eq!(page_item_keys(&m), (vec!["3".to_string(), "n".to_string(), "c".to_string()], Some("mixed".to_string()), 1));
        assert_eq!((m.first_item_key.as_deref(), m.last_item_key.as_deref()), (Some("3"), None));
        // A page without items has no keys and nothing to count.
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}"#);
        assert_eq!((m.items_returned, m.item_keys.len(), m.items_without_key, m.item_key_field.clone()), (Some(0), 0, 0, None));
    }

    #[test]
    fn cursors_that_are_numbers_or_empty_strings_are_kept_as_sent() {
        let m = one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#);
        assert_eq!(m.cursor_in.as_deref(), Some("5"));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":""}}"#);
        assert_eq!(m.cursor_in.as_deref(), Some(""));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":12}}"#);
        assert_eq!(m.cursor_out.as_deref(), Some("12"));
    }

    #[test]
    fn a_reissued_request_has_the_fingerprint_of_the_first_whatever_its_id_and_meta() {
        let first = one(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":4}}}"#);
        let again = one(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":5}}}"#);
        let other = one(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":{"a":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#);
        let legacy = one(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":1}}}"#);
        assert!(first.fingerprint.is_some());
        assert_eq!(first.fingerprint, again.fingerprint);
        assert_ne!(first.fingerprint, other.fingerprint);
        assert_eq!(legacy.fingerprint, None, "only 2026-07-28 requests are re-issued by the spec");
    }
}
