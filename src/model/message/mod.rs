//! One JSON-RPC payload → [`Parsed`]: the entry points, which tell a message object from a
//! batch, a JSON value that is not JSON-RPC, and text that is not JSON. The message's facts
//! are read by the modules below, without materialising big strings.
//!
//! The message is deserialised once into borrowed views (`RawValue` for anything large);
//! text and base64 sizes are measured on the raw literals. A message whose shape does not
//! fit the typed view is classified again with a loose envelope, so valid JSON-RPC is never
//! called invalid because one MCP field has an unexpected type.
//!
//! Most message objects are not read by serde but by a skimmer (`skim`) that fills the same
//! typed view (`view`) from one checking pass, and hands serde what it does not model.
//!
//! Imports flow one way: this file → `envelope` → `skim` → `view` → `params`, `result` →
//! `tool_schema`, `items`, `meta` → `scan`, `parsed`, `raw`; no module here imports from this file.

mod envelope;
mod items;
mod meta;
mod params;
mod parsed;
mod raw;
mod result;
mod scan;
mod skim;
mod structured;
mod tool_schema;
mod view;

use std::sync::Arc;


use crate::ingest::frame::{RecordedFacts, RecordedKind};

use envelope::parse_object;
use raw::Raw;
pub use items::page_item_keys;
pub use parsed::{Implementation, Kind, Message, Parsed, ToolDef, intern};
pub use result::TRUNCATION_MARKERS;
pub use structured::Structured;

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
        method: r.method.as_deref().map(intern),
        rpc_id: r.rpc_id.as_deref().map(Arc::from),
        tool: r.tool.as_deref().map(intern),
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
    parse_payload_with(payload, scalar_args, true)
}

/// [`parse_payload_for`] with serde reading every message object, the skimmer not tried: the
/// reference the skimmer is checked against (its tests, `fuzz/fuzz_targets/skim.rs`).
#[doc(hidden)]
pub fn parse_payload_by_serde(payload: &[u8], scalar_args: bool) -> Parsed {
    parse_payload_with(payload, scalar_args, false)
}

fn parse_payload_with(payload: &[u8], scalar_args: bool, skimming: bool) -> Parsed {
    let first = payload.iter().find(|b| !b.is_ascii_whitespace()).copied();
    match first {
        Some(b'{') => match parse_object(payload, scalar_args, skimming) {
            Ok(m) => Parsed::One(Box::new(m)),
            Err(other) => *other,
        },
        Some(b'[') => match serde_json::from_slice::<Vec<Raw>>(payload) {
            Ok(items) => {
                let msgs: Vec<Message> = items
                    .iter()
                    .map(|r| match parse_object(r.get().as_bytes(), scalar_args, skimming) {
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
            let note = embedded_jsonrpc_note(payload, skimming);
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
fn embedded_jsonrpc_note(payload: &[u8], skimming: bool) -> Option<String> {
    let at = memchr::memmem::find(payload, b"\"jsonrpc\"")?;
    let (start, m) = memchr::memchr_iter(b'{', &payload[..at])
        .take(16)
        .find_map(|start| parse_object(&payload[start..], false, skimming).ok().map(|m| (start, m)))?;
    Some(format!(
        "JSON-RPC {} embedded at byte {start} (id {})",
        m.kind.map(Kind::as_str).unwrap_or("message"),
        m.rpc_id.as_deref().unwrap_or("none")
    ))
}

/// One message of `s`, for the tests of this folder's modules.
#[cfg(test)]
fn one(s: &str) -> Message {
    match parse_payload(s.as_bytes()) {
        Parsed::One(m) => *m,
        other => panic!("not one message: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_and_a_tool_are_one_allocation_however_many_messages_name_them() {
        use std::sync::Arc;
        let a = one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch"}}"#);
        let b = one(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch"}}"#);
        assert_eq!((a.method.as_deref(), a.tool.as_deref()), (Some("tools/call"), Some("fetch")));
        assert!(Arc::ptr_eq(a.method.as_ref().unwrap(), b.method.as_ref().unwrap()));
        assert!(Arc::ptr_eq(a.tool.as_ref().unwrap(), b.tool.as_ref().unwrap()));
        let escaped = one(r#"{"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{"name":"f\u0065tch"}}"#);
        assert!(Arc::ptr_eq(a.method.as_ref().unwrap(), escaped.method.as_ref().unwrap()), "the name, not its spelling");
        assert_eq!(escaped.tool.as_deref(), Some("fetch"));
    }

    #[test]
    fn most_messages_carry_no_rare_facts_and_stay_small() {
        for common in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"f","arguments":{"q":"x"},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"}],"structuredContent":{"matches":1,"truncated":false}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#,
        ] {
            // Not asked for an HTTP request's scalar arguments: those are rare facts.
            let Parsed::One(m) = parse_payload_for(common.as_bytes(), false) else { panic!("{common}") };
            assert!(!m.rare.boxed(), "{common}");
        }
        let m = one(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}"#);
        assert_eq!((m.rare.boxed(), m.cursor_in.as_deref()), (true, Some("c")));
        assert!(std::mem::size_of::<Message>() <= 400, "{} bytes", std::mem::size_of::<Message>());
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
}
