//! Routing headers of 2026-07-28 HTTP requests (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-{Name}`): decoding the `=?base64?...?=` form, and comparing them
//! with the body as a server does before answering `-32020` (mcp-wire-facts.md §2.5).

use super::message::Message;
use super::rows::FrameRow;
use crate::ingest::frame::HttpContext;

/// A header value as meant: `=?base64?X?=` decoded (UTF-8), anything else as sent. A
/// malformed sentinel stays as sent.
pub fn decode_header_value(v: &str) -> String {
    v.strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
        .and_then(base64_decode)
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| v.to_string())
}

/// The encoded word's base64 (padding ignored wherever it sits; whitespace is not base64 here).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    if s.bytes().any(|c| matches!(c, b'\n' | b'\r' | b' ')) {
        return None;
    }
    crate::ingest::base64::decode_base64(&s.replace('=', ""))
}

/// Two renderings of one value agree: equal text, or equal numbers (`42` and `42.0`).
fn same(header: &str, body: &str) -> bool {
    header == body || matches!((header.parse::<f64>(), body.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
}

/// Fills the routing-header columns of an HTTP request frame; `header_params` are the
/// called tool's `x-mcp-header` arguments when its inputSchema was listed.
pub fn fill_routing(row: &mut FrameRow, http: &HttpContext, m: &Message, header_params: Option<&[(String, String)]>) {
    row.hdr_protocol_version = http.protocol_version.clone();
    row.hdr_method = http.mcp_method.clone();
    row.hdr_name = http.mcp_name.as_deref().map(decode_header_value);
    let params: Vec<(String, String)> = http.extras.iter().flat_map(|e| &e.mcp_params).map(|(n, v)| (n.clone(), decode_header_value(v))).collect();
    if !params.is_empty() {
        row.hdr_params = Some(params.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; "));
    }
    row.meta_protocol_version = m.meta_protocol_version.clone();
    let modern = m.meta_protocol_version.is_some();
    let mut why: Vec<String> = Vec::new();
    let mut check = |name: &str, header: Option<&str>, body: Option<&str>| match (header, body) {
        (Some(h), Some(b)) if !same(h, b) => why.push(format!("{name} differs")),
        (None, Some(_)) if modern => why.push(format!("{name} missing")),
        _ => {}
    };
    if modern {
        check("MCP-Protocol-Version", http.protocol_version.as_deref(), m.meta_protocol_version.as_deref());
    }
    check("Mcp-Method", http.mcp_method.as_deref(), m.method.as_deref());
    check("Mcp-Name", row.hdr_name.as_deref(), m.target_name.as_deref());
    for (arg, token) in header_params.unwrap_or_default() {
        let header = params.iter().find(|(n, _)| n.eq_ignore_ascii_case(token)).map(|(_, v)| v.as_str());
        let body = m.scalar_args.iter().find(|(k, _)| k == arg).map(|(_, v)| v.as_str());
        match (header, body) {
            (Some(h), Some(b)) if !same(h, b) => why.push(format!("Mcp-Param-{token} differs")),
            (None, Some(_)) => why.push(format!("Mcp-Param-{token} missing")),
            (Some(_), None) => why.push(format!("Mcp-Param-{token} without its argument")),
            _ => {}
        }
    }
    if !why.is_empty() {
        row.header_mismatch = Some(why.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_base64_sentinel_only() {
        assert_eq!(decode_header_value("=?base64?esO8cmljaC1ub3Jk?="), "zürich-nord");
        assert_eq!(decode_header_value("eu-west-1"), "eu-west-1");
        assert_eq!(decode_header_value("=?base64?***?="), "=?base64?***?=", "malformed stays as sent");
    }

    #[test]
    fn flags_each_header_that_disagrees_with_the_body() {
        let http = HttpContext {
            protocol_version: Some("2026-07-28".into()),
            mcp_method: Some("tools/call".into()),
            mcp_name: Some("=?base64?cXVlcnk=?=".into()),
            extras: Some(Box::new(crate::ingest::frame::RequestExtras {
                mcp_params: vec![("Region".into(), "us-east-1".into()), ("Limit".into(), "10.0".into())],
                ..Default::default()
            })),
            ..HttpContext::default()
        };
        let mut m = Message { method: Some("tools/call".into()), target_name: Some("query".into()), ..Message::default() };
        m.meta_protocol_version = Some("2026-07-28".into());
        m.scalar_args = vec![("region".into(), "eu-west-1".into()), ("limit".into(), "10".into()), ("zone".into(), "a".into())];
        let params = [("region".to_string(), "Region".to_string()), ("limit".to_string(), "Limit".to_string()), ("zone".to_string(), "Zone".to_string())];
        let mut row = FrameRow::default();
        fill_routing(&mut row, &http, &m, Some(&params));
        assert_eq!(row.hdr_name.as_deref(), Some("query"));
        assert_eq!(row.hdr_params.as_deref(), Some("Region=us-east-1; Limit=10.0"));
        assert_eq!(row.header_mismatch.as_deref(), Some("Mcp-Param-Region differs, Mcp-Param-Zone missing"));
        let mut legacy = m;
        legacy.meta_protocol_version = None;
        let mut row = FrameRow::default();
        fill_routing(&mut row, &HttpContext::default(), &legacy, None);
        assert_eq!(row.header_mismatch, None, "no routing headers are required before 2026-07-28");
    }
}
