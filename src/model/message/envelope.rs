//! The JSON-RPC envelope: a message object read through the typed view (loose one as the
//! fallback) into its kind, id, method and error; params and result are handed to their own
//! modules.

use std::sync::Arc;

use serde::Deserialize;

use super::params::read_params;
use super::parsed::{Kind, Message, Parsed};
use super::raw::{Raw, present, raw_str};
use super::result::read_result;
use super::skim::skim;
use super::view::Typed;

#[derive(Deserialize)]
struct Loose<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Raw<'a>>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    method: Option<Raw<'a>>,
    #[serde(borrow)]
    result: Option<Raw<'a>>,
    #[serde(borrow)]
    error: Option<Raw<'a>>,
}

/// A message object read through the typed view: filled by the skimmer when it can
/// (`skimming`), else by serde; the loose view when the typed one does not fit.
pub(super) fn parse_object(payload: &[u8], scalar_args: bool, skimming: bool) -> Result<Message, Box<Parsed>> {
    // Nearly every payload is valid UTF-8: checked once here (simdutf8, several times the speed
    // of the standard check on large texts), serde reads it as text and does not check each
    // string and raw value again (4% of the CPU of `tables` on small messages).
    let typed = match simdutf8::basic::from_utf8(payload) {
        Ok(text) => match skimming.then(|| skim(text)).flatten() {
            Some(t) => Ok(t),
            None => serde_json::from_str::<Typed>(text),
        },
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
    let mut m = Message { rpc_id: l.id.map(|r| Arc::from(r.get())), ..Message::default() };
    m.method = raw_str(l.method).as_deref().map(super::parsed::intern);
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
    let mut m = Message { rpc_id: t.id.filter(|r| r.get() != "null").map(|r| Arc::from(r.get())), ..Message::default() };
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
    m.method = Some(super::parsed::intern(&method));
    m
}

#[cfg(test)]
mod tests {
    use super::super::one;
    use super::*;

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
}
