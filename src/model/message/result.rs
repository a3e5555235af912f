//! A response's `result` measured: content blocks (text and base64 sizes, types), the
//! structuredContent kept or measured, truncation markers, cursors, cache hints, server
//! info; tools and page items are read by `tool_schema` and `items`.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;

use super::items::{item_key, list_item_key, main_array, set_item_keys};
use super::meta::Meta;
use super::parsed::{Implementation, KEEP_STRUCTURED_BYTES, KEEP_TEXT_BYTES, Message, intern};
use super::raw::{Raw, borrowed_str, is_true, raw_str};
use super::scan::read_view;
use super::structured::{Structured, output_schema_seen};
use super::tool_schema::{ToolView, tool_def};
use crate::model::jsonstr::{base64_sizes, decoded_len};
use crate::model::validate::{literal_may_disagree, text_may_disagree};

#[derive(Deserialize, Default)]
pub(super) struct ResultView<'a> {
    #[serde(borrow)]
    pub(super) content: Option<Vec<Block<'a>>>,
    #[serde(rename = "structuredContent", borrow)]
    pub(super) structured: Option<Raw<'a>>,
    #[serde(rename = "isError", borrow)]
    pub(super) is_error: Option<Raw<'a>>,
    #[serde(rename = "serverInfo")]
    pub(super) server_info: Option<Implementation>,
    #[serde(rename = "protocolVersion", borrow)]
    pub(super) protocol_version: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) tools: Option<Vec<ToolView<'a>>>,
    #[serde(borrow)]
    pub(super) resources: Option<Vec<Raw<'a>>>,
    #[serde(rename = "resourceTemplates", borrow)]
    pub(super) resource_templates: Option<Vec<Raw<'a>>>,
    #[serde(borrow)]
    pub(super) prompts: Option<Vec<Raw<'a>>>,
    #[serde(rename = "nextCursor", borrow)]
    pub(super) next_cursor: Option<Raw<'a>>,
    #[serde(rename = "_meta", borrow)]
    pub(super) meta: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) truncated: Option<Raw<'a>>,
    #[serde(rename = "resultType", borrow)]
    pub(super) result_type: Option<Raw<'a>>,
    #[serde(rename = "ttlMs", borrow)]
    pub(super) ttl_ms: Option<Raw<'a>>,
    #[serde(rename = "cacheScope", borrow)]
    pub(super) cache_scope: Option<Raw<'a>>,
    #[serde(rename = "requestState", borrow)]
    pub(super) request_state: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
pub(super) struct Block<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "borrowed_str")]
    pub(super) kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) text: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) data: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) resource: Option<Raw<'a>>,
}

#[derive(Deserialize)]
struct EmbeddedResource<'a> {
    #[serde(borrow)]
    text: Option<Raw<'a>>,
    #[serde(borrow)]
    blob: Option<Raw<'a>>,
}

/// Tool-level pagination facts in structuredContent.
#[derive(Deserialize)]
struct PageResult<'a> {
    #[serde(rename = "nextCursor", borrow)]
    next_cursor_camel: Option<Raw<'a>>,
    #[serde(borrow)]
    next_cursor: Option<Raw<'a>>,
    #[serde(borrow)]
    truncated: Option<Raw<'a>>,
}

impl<'a> EmbeddedResource<'a> {
    fn read(text: &'a str) -> Option<Self> {
        read_view(text, ["text", "blob"], |[text, blob]| Some(EmbeddedResource { text, blob }))
    }
}

impl<'a> PageResult<'a> {
    fn read(text: &'a str) -> Option<Self> {
        read_view(text, ["nextCursor", "next_cursor", "truncated"], |[next_cursor_camel, next_cursor, truncated]| Some(PageResult { next_cursor_camel, next_cursor, truncated }))
    }
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

/// A content block's `type`, `?` when it has none.
fn block_type<'b>(b: &'b Block<'_>) -> &'b str {
    b.kind.as_deref().unwrap_or("?")
}

pub(super) fn read_result(r: ResultView, m: &mut Message) {
    m.is_error = r.is_error.and_then(|v| match v.get() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    m.put(r.server_info, |x| &mut x.server_info);
    m.put(raw_str(r.protocol_version), |x| &mut x.protocol_version);
    m.put(raw_str(r.result_type), |x| &mut x.result_type);
    m.put(raw_str(r.request_state), |x| &mut x.request_state);
    let mut marker: Option<String> = None;
    // The first text block is decoded only when needed: to compare with structuredContent, or
    // to read an error result's message.
    let mut first_text: Option<Raw> = None;
    let has_structured = r.structured.is_some_and(|s| s.get() != "null");
    if let Some(blocks) = &r.content {
        // The list of types is shared (few lists recur): one block's type is looked up as it is.
        m.content_types = Some(match blocks.as_slice() {
            [one] => intern(block_type(one)),
            more => intern(&more.iter().map(block_type).collect::<Vec<_>>().join(",")),
        });
        m.content_blocks = blocks.len() as u32;
        for b in blocks {
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
                && let Some(er) = EmbeddedResource::read(res.get())
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
    }
    // A result that is no error reads its first text only to compare it with structuredContent,
    // which a text without `=` or a leading `{` never fails: not decoded then.
    let text_needed = |t: &Raw| m.is_error == Some(true) || (has_structured && literal_may_disagree(t.get()));
    if let Some(text) = first_text.filter(|t| t.get().len() <= KEEP_TEXT_BYTES && text_needed(t)) {
        m.first_text = serde_json::from_str::<String>(text.get()).ok();
    }
    if let Some(sc) = r.structured.filter(|s| s.get() != "null") {
        m.has_structured = true;
        m.structured_bytes = sc.get().len() as u64;
        if sc.get().len() <= KEEP_STRUCTURED_BYTES {
            let kept = Structured::new(sc.get());
            // Read here, on the pool, when anything may need the tree: an array (page items,
            // counted now), a first text the model compares as JSON or `key=N`, or an
            // outputSchema seen in this run. Else the model reads it if a check asks.
            if kept.may_hold_array() {
                if let Ok(v) = kept.value()
                    && let Some(items) = main_array(v)
                {
                    // Only the first and last keys here: every key is read for pages alone
                    // ([`page_item_keys`]), not for every result with an array.
                    m.items_returned = Some(items.len() as u64);
                    m.first_item_key = items.first().and_then(item_key).map(|k| k.0);
                    m.last_item_key = items.last().and_then(item_key).map(|k| k.0);
                }
            } else if m.first_text.as_deref().is_some_and(text_may_disagree) || output_schema_seen() {
                let _ = kept.value();
            }
            m.structured = Some(kept);
        }
        if let Some(pr) = PageResult::read(sc.get()) {
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
        && let Some(meta) = Meta::read(meta.get())
    {
        if m.server_info.is_none() {
            m.put(meta.server_info, |x| &mut x.server_info);
        }
        if marker.is_none() && is_true(meta.truncated) {
            marker = Some("_meta.truncated".into());
        }
    }
    m.truncation_marker = marker;
    if let Some(nc) = r.next_cursor {
        m.cursor_out = raw_str(Some(nc));
    }
    m.put(r.ttl_ms.and_then(|t| t.get().parse::<i64>().ok()), |x| &mut x.ttl_ms);
    m.put(raw_str(r.cache_scope), |x| &mut x.cache_scope);
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
        let keys: Vec<Option<(String, &'static str)>> = items.iter().map(|i| list_item_key(*i, field)).collect();
        set_item_keys(m, keys.into_iter());
    }
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

#[cfg(test)]
mod tests {
    use super::super::one;

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
}
