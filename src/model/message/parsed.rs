//! What one payload parses to: the message facts ([`Message`], [`Kind`], [`ToolDef`],
//! [`Implementation`]) and [`Parsed`]; types, their size limits and the shared method and
//! tool names they hold ([`intern`]), no reading.

use std::sync::Arc;

use serde::Deserialize;

use super::raw::lenient_string;
use super::structured::Structured;

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

/// Everything model needs from one JSON-RPC message: the facts most messages have here, the
/// rare ones in [`Rare`], allocated only for a message that has one (a message is made and
/// dropped per frame: a third of its former 824 bytes is what most frames need). The rare
/// facts read as fields of the message (`m.cursor_in`, through `Deref`); writing one makes the
/// box, so the readers write them with [`Message::put`], which leaves `None` unwritten.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    pub kind: Option<Kind>,
    /// Shared with the rows it goes to, and among messages of the same method ([`intern`]).
    pub method: Option<Arc<str>>,
    /// The id as JSON text: `1` and `"1"` stay different. Shared with the frame row, the call
    /// row and the call's key: one allocation per message.
    pub rpc_id: Option<Arc<str>>,
    /// Shared like `method`.
    pub tool: Option<Arc<str>>,
    pub is_error: Option<bool>,
    pub error_code: Option<i64>,
    pub error_message: Option<String>,
    /// Content block types in order, comma-separated (`text,image`).
    /// Shared like `method` ([`intern`]).
    pub content_types: Option<Arc<str>>,
    pub content_blocks: u32,
    pub text_bytes: u64,
    pub blob_bytes_b64: u64,
    pub blob_bytes_decoded: u64,
    pub has_structured: bool,
    pub structured_bytes: u64,
    /// structuredContent, when small enough to keep for later checks: read as JSON here when
    /// its page items or its text may need the tree, else when its schema or page asks.
    pub structured: Option<Structured>,
    /// First text block when small enough to compare with structuredContent.
    pub first_text: Option<String>,
    pub truncation_marker: Option<String>,
    /// `nextCursor` of a list result, or `nextCursor`/`next_cursor` in structuredContent.
    pub cursor_out: Option<String>,
    /// A 2026-07-28 request's identity without its id and `_meta`: method, name or uri,
    /// arguments and cursor hashed, to link a request re-issued after a broken stream.
    pub fingerprint: Option<u64>,
    pub note: Option<String>,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read): what `Mcp-Name` must say.
    pub target_name: Option<String>,
    /// The rare facts, read as the message's own fields (`Deref`).
    pub rare: RareFacts,
}

/// A message's rare facts: no box until one is written. Equal when the facts are (a box
/// written empty equals none).
#[derive(Debug, Clone, Default)]
pub struct RareFacts(Option<Box<Rare>>);

impl RareFacts {
    /// Whether the message carries a box of rare facts.
    pub fn boxed(&self) -> bool {
        self.0.is_some()
    }

    fn get(&self) -> &Rare {
        self.0.as_deref().unwrap_or(&NO_RARE)
    }
}

impl PartialEq for RareFacts {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// The facts few messages have: initialize's implementations and versions, pagination,
/// page items, cache hints, cancellation, tool lists, `_meta` facts, scalar arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rare {
    pub client_info: Option<Implementation>,
    pub server_info: Option<Implementation>,
    pub protocol_version: Option<String>,
    /// `params.cursor` of a list request, or a cursor in `tools/call` arguments.
    pub cursor_in: Option<String>,
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
    pub page_size_arg: Option<i64>,
    /// `notifications/cancelled`: the id it cancels (JSON text) and the reason.
    pub cancels_id: Option<String>,
    pub cancel_reason: Option<String>,
    pub tools: Vec<ToolDef>,
    /// The result's `resultType` (2026-07-28: `complete`, `input_required`).
    pub result_type: Option<String>,
    /// `_meta` protocolVersion of a request (what `MCP-Protocol-Version` must say).
    pub meta_protocol_version: Option<String>,
    /// tools/call: top-level scalar arguments rendered as a header would carry them (read
    /// only when asked, [`parse_payload_for`](super::parse_payload_for): the model asks for HTTP frames).
    pub scalar_args: Vec<(String, String)>,
    /// `requestState`: what an `input_required` result issued, or what a retry echoes.
    pub request_state: Option<String>,
    /// A request's `params._meta.traceparent` (W3C Trace Context, as the OpenTelemetry MCP
    /// conventions propagate it).
    pub traceparent: Option<String>,
}

/// What a message without rare facts reads.
static NO_RARE: Rare = Rare {
    client_info: None,
    server_info: None,
    protocol_version: None,
    cursor_in: None,
    items_returned: None,
    first_item_key: None,
    last_item_key: None,
    item_keys: Vec::new(),
    item_key_field: None,
    items_without_key: 0,
    ttl_ms: None,
    cache_scope: None,
    page_size_arg: None,
    cancels_id: None,
    cancel_reason: None,
    tools: Vec::new(),
    result_type: None,
    meta_protocol_version: None,
    scalar_args: Vec::new(),
    request_state: None,
    traceparent: None,
};

impl std::ops::Deref for Message {
    type Target = Rare;
    fn deref(&self) -> &Rare {
        self.rare.get()
    }
}

impl std::ops::DerefMut for Message {
    fn deref_mut(&mut self) -> &mut Rare {
        self.rare.0.get_or_insert_with(Box::default)
    }
}

impl Message {
    /// Sets a rare fact when there is one: `None` leaves the message without [`Rare`].
    pub(super) fn put<T>(&mut self, value: Option<T>, field: impl FnOnce(&mut Rare) -> &mut Option<T>) {
        if let Some(v) = value {
            *field(self) = Some(v);
        }
    }
}

/// Keep texts up to this size for comparisons; larger ones are only measured.
pub(super) const KEEP_TEXT_BYTES: usize = 64 * 1024;
/// Keep structuredContent up to this size for schema validation.
pub(super) const KEEP_STRUCTURED_BYTES: usize = 1 << 20;

/// What a frame's payload holds: one message, a batch, or something that is not JSON-RPC.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    One(Box<Message>),
    Batch(Vec<Message>),
    /// Not a message; the kind says why.
    Other(Kind, Option<String>),
}

/// Method and tool names read on this thread, shared: a message's method and tool go to its
/// frame row and its call row, and a response's frame row takes its request's, so a name is
/// one allocation however many rows and messages carry it. Cleared past [`INTERNED_MAX`] names
/// (a capture with a new name in every message costs what copies did). A name longer than
/// [`INTERNED_MAX_BYTES`] is not kept (a result's list of block types grows with its blocks):
/// what the thread holds stays bounded by count times length, not by the largest frames seen.
pub fn intern(name: &str) -> Arc<str> {
    if name.len() > INTERNED_MAX_BYTES {
        return Arc::from(name);
    }
    thread_local! {
        static NAMES: std::cell::RefCell<std::collections::HashSet<Arc<str>>> = std::cell::RefCell::default();
    }
    NAMES.with_borrow_mut(|names| {
        if let Some(known) = names.get(name) {
            return Arc::clone(known);
        }
        if names.len() >= INTERNED_MAX {
            names.clear();
        }
        let new: Arc<str> = Arc::from(name);
        names.insert(Arc::clone(&new));
        new
    })
}

/// Names [`intern`] keeps per thread.
const INTERNED_MAX: usize = 4096;
/// The longest name [`intern`] keeps.
const INTERNED_MAX_BYTES: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_name_is_shared_and_a_long_one_is_not_kept() {
        let (a, b) = (intern("tools/call"), intern("tools/call"));
        assert!(Arc::ptr_eq(&a, &b), "one allocation for a name seen twice");
        let long = vec!["text"; 100].join(",");
        let (c, d) = (intern(&long), intern(&long));
        assert_eq!((&*c, &*d), (long.as_str(), long.as_str()));
        assert!(!Arc::ptr_eq(&c, &d), "a {}-byte list is not kept", long.len());
        let edge = "x".repeat(INTERNED_MAX_BYTES);
        assert!(Arc::ptr_eq(&intern(&edge), &intern(&edge)), "the longest kept name is kept");
    }
}
