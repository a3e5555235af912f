//! A request's or notification's `params`: target name, cursor and page size, clientInfo,
//! protocol version, cancellation, `_meta`, the re-issue fingerprint, scalar arguments.

use serde::Deserialize;

use super::meta::Meta;
use super::parsed::{Implementation, KEEP_TEXT_BYTES, Message};
use super::raw::{Raw, raw_str};
use super::scan::read_view;

#[derive(Deserialize)]
pub(super) struct Params<'a> {
    #[serde(borrow)]
    pub(super) name: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) cursor: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) uri: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) arguments: Option<Raw<'a>>,
    #[serde(rename = "clientInfo")]
    pub(super) client_info: Option<Implementation>,
    #[serde(rename = "protocolVersion", borrow)]
    pub(super) protocol_version: Option<Raw<'a>>,
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) reason: Option<Raw<'a>>,
    #[serde(rename = "_meta", borrow)]
    pub(super) meta: Option<Raw<'a>>,
    #[serde(rename = "requestState", borrow)]
    pub(super) request_state: Option<Raw<'a>>,
}

/// Tool-level pagination arguments in `tools/call`.
#[derive(Deserialize)]
struct PageArgs<'a> {
    #[serde(borrow)]
    cursor: Option<Raw<'a>>,
    #[serde(borrow)]
    page_size: Option<Raw<'a>>,
    #[serde(rename = "pageSize", borrow)]
    page_size_camel: Option<Raw<'a>>,
    #[serde(borrow)]
    limit: Option<Raw<'a>>,
}

impl<'a> PageArgs<'a> {
    fn read(text: &'a str) -> Option<Self> {
        read_view(text, ["cursor", "page_size", "pageSize", "limit"], |[cursor, page_size, page_size_camel, limit]| Some(PageArgs { cursor, page_size, page_size_camel, limit }))
    }
}

pub(super) fn read_params(method: &str, mut p: Params, m: &mut Message, scalar_args: bool) {
    m.target_name = match method {
        "tools/call" | "prompts/get" => raw_str(p.name),
        "resources/read" => raw_str(p.uri),
        _ => None,
    };
    if method == "tools/call" {
        m.tool = m.target_name.as_deref().map(super::parsed::intern);
        if scalar_args && let Some(args) = p.arguments.filter(|a| a.get().len() <= KEEP_TEXT_BYTES) {
            let scalars = read_scalar_args(args.get());
            if !scalars.is_empty() {
                m.scalar_args = scalars;
            }
        }
        if let Some(args) = p.arguments.filter(|a| a.get().len() <= KEEP_TEXT_BYTES)
            && let Some(pa) = PageArgs::read(args.get())
        {
            m.put(raw_str(pa.cursor), |r| &mut r.cursor_in);
            m.put([pa.page_size, pa.page_size_camel, pa.limit].into_iter().flatten().find_map(|r| r.get().parse::<i64>().ok()), |r| &mut r.page_size_arg);
        }
    } else {
        m.put(raw_str(p.cursor), |r| &mut r.cursor_in);
    }
    if let Some(ci) = p.client_info.take() {
        m.client_info = Some(ci);
    }
    m.put(raw_str(p.protocol_version), |r| &mut r.protocol_version);
    m.put(raw_str(p.request_state), |r| &mut r.request_state);
    if method == "notifications/cancelled" {
        m.put(p.request_id.map(|r| r.get().to_string()), |r| &mut r.cancels_id);
        m.put(raw_str(p.reason), |r| &mut r.cancel_reason);
    }
    if let Some(meta) = p.meta
        && let Some(meta) = Meta::read(meta.get())
    {
        if m.client_info.is_none() {
            m.put(meta.client_info, |r| &mut r.client_info);
        }
        m.put(raw_str(meta.protocol_version), |r| &mut r.meta_protocol_version);
        m.put(raw_str(meta.traceparent), |r| &mut r.traceparent);
        if m.meta_protocol_version.is_some() {
            m.fingerprint = Some(fingerprint(method, &p));
        }
        if m.protocol_version.is_none() {
            let version = m.meta_protocol_version.clone();
            m.put(version, |r| &mut r.protocol_version);
        }
    }
}

/// A request's identity without its id and `_meta`: what a re-issued request repeats.
fn fingerprint(method: &str, p: &Params) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    method.hash(&mut h);
    for part in [p.name, p.uri, p.arguments, p.cursor, p.request_state] {
        part.map(Raw::get).hash(&mut h);
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

#[cfg(test)]
mod tests {
    use super::super::one;
    use crate::model::message::Implementation;

    #[test]
    fn initialize_and_modern_meta_client_info() {
        let m = one(r#"{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli","version":"0.1.0"}},"jsonrpc":"2.0","id":0}"#);
        assert_eq!(m.client_info, Some(Implementation { name: Some("cli".into()), version: Some("0.1.0".into()) }));
        assert_eq!(m.protocol_version.as_deref(), Some("2025-11-25"));
        let m = one(r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"}},"name":"get_weather"}}"#);
        assert_eq!(m.client_info.clone().and_then(|c| c.name).as_deref(), Some("ExampleClient"));
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
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
