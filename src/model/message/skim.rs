//! The skimmer: one checking pass over a message object that fills the typed view ([`Typed`])
//! for the shapes nearly every message has, without serde's visitors. It checks the whole
//! object as JSON (strings and their escapes, control characters, numbers, literals, nesting,
//! nothing after the object) and keeps the spans of the fields the views read. What it does not
//! model gives `None`, and serde reads the message as before: an escaped key, a field twice, a
//! field of another kind than the view's, clientInfo, serverInfo, a protocol list (tools,
//! resources, templates, prompts), nesting deeper than `scan`'s limit. So a message it accepts
//! is one serde reads the same (`tests` here, `fuzz/fuzz_targets/skim.rs` against serde).


use std::borrow::Cow;

use super::params::Params;
use super::raw::Raw;
use super::scan::{Scan, Seen};
use super::result::{Block, ResultView};
use super::view::{ErrorView, Typed};

/// The typed view of a message object, or `None` for serde to read it.
pub(super) fn skim(text: &str) -> Option<Typed<'_>> {
    let mut s = Scan::new(text);
    let mut t = Typed::default();
    let mut seen = Seen::default();
    s.object(|s, key| {
        match key {
            "id" => {
                seen.once(0)?;
                t.id = Some(Raw(s.value(1)?));
            }
            "method" => {
                seen.once(1)?;
                t.method = s.plain_string_or_null()?.map(Cow::Borrowed);
            }
            "params" => {
                seen.once(2)?;
                t.params = s.object_or_null(|s| s.params())?.map(Box::new);
            }
            "result" => {
                seen.once(3)?;
                t.result = s.object_or_null(|s| s.result())?.map(Box::new);
            }
            "error" => {
                seen.once(4)?;
                t.error = s.object_or_null(|s| s.error())?;
            }
            _ => {
                s.value(1)?;
            }
        }
        Some(())
    })?;
    s.ws();
    s.at_end().then_some(t)
}

impl<'a> Scan<'a> {
    fn params(&mut self) -> Option<Params<'a>> {
        const FIELDS: [&str; 9] = ["name", "cursor", "uri", "arguments", "protocolVersion", "requestId", "reason", "_meta", "requestState"];
        let [name, cursor, uri, arguments, protocol_version, request_id, reason, meta, request_state] = self.fields(FIELDS, &["clientInfo"])?;
        Some(Params { name, cursor, uri, arguments, client_info: None, protocol_version, request_id, reason, meta, request_state })
    }

    fn result(&mut self) -> Option<ResultView<'a>> {
        let mut r = ResultView::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            let (field, slot) = match key {
                "content" => {
                    seen.once(0)?;
                    r.content = s.blocks()?;
                    return Some(());
                }
                "structuredContent" => (1, &mut r.structured),
                "isError" => (2, &mut r.is_error),
                "protocolVersion" => (3, &mut r.protocol_version),
                "nextCursor" => (4, &mut r.next_cursor),
                "_meta" => (5, &mut r.meta),
                "truncated" => (6, &mut r.truncated),
                "resultType" => (7, &mut r.result_type),
                "ttlMs" => (8, &mut r.ttl_ms),
                "cacheScope" => (9, &mut r.cache_scope),
                "requestState" => (10, &mut r.request_state),
                "serverInfo" | "tools" | "resources" | "resourceTemplates" | "prompts" => return None,
                _ => return s.value(2).map(drop),
            };
            seen.once(field)?;
            *slot = s.raw()?;
            Some(())
        })?;
        Some(r)
    }

    /// `content`: an array of block objects, or `null`.
    fn blocks(&mut self) -> Option<Option<Vec<Block<'a>>>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|()| None);
        }
        let mut blocks = Vec::new();
        self.array(|s| s.block().map(|b| blocks.push(b)))?;
        Some(Some(blocks))
    }

    fn block(&mut self) -> Option<Block<'a>> {
        let mut b = Block::default();
        let mut seen = Seen::default();
        self.object(|s, key| {
            let (field, slot) = match key {
                "type" => {
                    seen.once(0)?;
                    b.kind = s.plain_string_or_null()?.map(Cow::Borrowed);
                    return Some(());
                }
                "text" => (1, &mut b.text),
                "data" => (2, &mut b.data),
                "resource" => (3, &mut b.resource),
                _ => return s.value(3).map(drop),
            };
            seen.once(field)?;
            *slot = s.raw()?;
            Some(())
        })?;
        Some(b)
    }

    fn error(&mut self) -> Option<ErrorView<'a>> {
        let [code, message] = self.fields(["code", "message"], &[])?;
        Some(ErrorView { code, message })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Kind, Parsed, parse_payload_by_serde as serde_only, parse_payload_for};
    use super::*;

    /// The skimmer's message and serde's are the same, and whether the skimmer took it.
    fn same(payload: &str) -> bool {
        let (ours, serdes) = (parse_payload_for(payload.as_bytes(), true), serde_only(payload.as_bytes(), true));
        assert_eq!(ours, serdes, "{payload}");
        skim(payload).is_some()
    }

    #[test]
    fn common_shapes_are_skimmed_and_read_as_serde_reads_them() {
        for p in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a b","limit":134,"cursor":"c1"},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"s-1","result":{"content":[{"type":"text","text":"caf\u00e9 \"x\"\n... [truncated]"},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}],"structuredContent":{"matches":3,"truncated":true},"isError":false}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5e1,"total":-10,"message":"half"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":{"a":[1,2,{"b":null}]}}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///srv/a.txt"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"file:///srv/a.txt","text":"x"}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"abc"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"resource","resource":{"uri":"x","blob":"aGk="}}],"_meta":{"truncated":true}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-ab-cd-01"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7","reason":"timeout"}}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{"resultType":"input_required","requestState":"s","ttlMs":500,"cacheScope":"session","nextCursor":null}}"#,
            "  {\"jsonrpc\" : \"2.0\" ,\r\n\t\"method\":\"ping\", \"id\" : 0 }\n",
            r#"{"id":1,"method":null,"params":null,"result":null}"#,
            r#"{}"#,
            r#"{"a":[],"b":{},"c":[[[]]],"d":-0.0e-0,"e":[true,false,null]}"#,
            // serde checks a surrogate only in the strings it decodes, not in a text it measures.
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\ud800 \uDFFF"}]}}"#,
        ] {
            assert!(same(p), "not skimmed: {p}");
        }
    }

    #[test]
    fn what_it_does_not_model_goes_to_serde_and_reads_the_same() {
        let deep = format!("{{\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}1{}}}}}", "[".repeat(70), "]".repeat(70));
        for p in [
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"c","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"s"},"protocolVersion":"2025-06-18"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"u"}],"nextCursor":"n"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":"not a list"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[["text","x"]]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","type":"image"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":7,"text":"x"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{"name":"a","name":"b"},"method":"tools/call"}"#,
            &deep,
        ] {
            assert!(!same(p), "skimmed: {p}");
        }
    }

    #[test]
    fn invalid_json_is_never_skimmed() {
        for p in [
            r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1e,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":tru,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\qb"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\u12"}]}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\tb\"}]}}",
            r#"{"jsonrpc":"2.0","id":[1,],"method":"ping"}"#,
            r#"{"jsonrpc":"2.0" "id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        ] {
            assert!(skim(p).is_none(), "skimmed: {p}");
            let ours = parse_payload_for(p.as_bytes(), false);
            assert_eq!(ours, serde_only(p.as_bytes(), false), "{p}");
            assert!(matches!(ours, Parsed::Other(Kind::InvalidJson, _)), "{p}: {ours:?}");
        }
    }
}
