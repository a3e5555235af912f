//! HTTP/1.x message heads: httparse → owned facts (framing, content type, MCP headers),
//! and where a message may start when resynchronising. No bodies, no state.

/// Request lines we resynchronise on (a method followed by a space).
const REQUEST_STARTS: [&[u8]; 9] = [
    b"GET ",
    b"POST ",
    b"PUT ",
    b"DELETE ",
    b"HEAD ",
    b"OPTIONS ",
    b"PATCH ",
    b"CONNECT ",
    b"TRACE ",
];
const RESPONSE_START: &[u8] = b"HTTP/1.";

/// Which end of the conversation a direction's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// Parsed head facts, owned (the head buffer is reused).
#[derive(Debug, Default)]
pub struct HeadFacts {
    pub content_length: Option<u64>,
    pub chunked: bool,
    pub transfer_encoding: bool,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub session_id: Option<String>,
    pub protocol_version: Option<String>,
    pub mcp_method: Option<String>,
    pub mcp_name: Option<String>,
    /// `Mcp-Param-{Name}` headers: (Name as sent, raw value).
    pub mcp_params: Vec<(String, String)>,
    pub user_agent: Option<String>,
}

const MCP_PARAM: &str = "mcp-param-";

pub fn header_facts(headers: &[httparse::Header<'_>]) -> HeadFacts {
    let mut f = HeadFacts::default();
    let text = |v: &[u8]| String::from_utf8_lossy(v).trim().to_string();
    for h in headers {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            if f.content_length.is_none() {
                f.content_length = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.split(',').next().and_then(|x| x.trim().parse().ok()));
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            f.transfer_encoding = true;
            // Chunked only counts as the last coding; the last header line wins.
            let v = text(h.value).to_ascii_lowercase();
            f.chunked = v.rsplit(',').next().is_some_and(|last| last.trim() == "chunked");
        } else if name.eq_ignore_ascii_case("content-type") {
            f.content_type = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("content-encoding") {
            f.content_encoding = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("mcp-session-id") {
            f.session_id = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("mcp-protocol-version") {
            f.protocol_version = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("mcp-method") {
            f.mcp_method = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("mcp-name") {
            f.mcp_name = Some(text(h.value));
        } else if name.eq_ignore_ascii_case("user-agent") {
            f.user_agent = Some(text(h.value));
        } else if name.len() > MCP_PARAM.len() && name.is_char_boundary(MCP_PARAM.len()) && name[..MCP_PARAM.len()].eq_ignore_ascii_case(MCP_PARAM) {
            f.mcp_params.push((name[MCP_PARAM.len()..].to_string(), text(h.value)));
        }
    }
    f
}

#[derive(Debug)]
pub enum ParsedHead {
    Request {
        method: String,
        url: String,
        facts: HeadFacts,
        len: usize,
    },
    Response {
        status: u16,
        reason: String,
        facts: HeadFacts,
        len: usize,
    },
}

pub enum HeadParse {
    Complete(Box<ParsedHead>),
    Partial,
    Invalid,
}

pub fn parse_head(buf: &[u8], role: Option<Role>) -> HeadParse {
    let looks_response = {
        let n = buf.len().min(5);
        buf[..n] == b"HTTP/"[..n]
    };
    let as_response = match role {
        Some(Role::Server) => true,
        Some(Role::Client) => false,
        None => looks_response,
    };
    let mut small = [httparse::EMPTY_HEADER; 64];
    match parse_head_with(buf, as_response, &mut small) {
        Err(httparse::Error::TooManyHeaders) => {
            let mut big = vec![httparse::EMPTY_HEADER; 1024];
            parse_head_with(buf, as_response, &mut big).unwrap_or(HeadParse::Invalid)
        }
        Err(_) => HeadParse::Invalid,
        Ok(p) => p,
    }
}

fn parse_head_with<'b>(
    buf: &'b [u8],
    as_response: bool,
    headers: &mut [httparse::Header<'b>],
) -> Result<HeadParse, httparse::Error> {
    if as_response {
        let mut resp = httparse::Response::new(headers);
        let status = httparse::ParserConfig::default()
            .allow_spaces_after_header_name_in_responses(true)
            .allow_obsolete_multiline_headers_in_responses(true)
            .parse_response(&mut resp, buf)?;
        Ok(match status {
            httparse::Status::Partial => HeadParse::Partial,
            httparse::Status::Complete(len) => HeadParse::Complete(Box::new(ParsedHead::Response {
                status: resp.code.unwrap_or(0),
                reason: resp.reason.unwrap_or("").to_string(),
                facts: header_facts(resp.headers),
                len,
            })),
        })
    } else {
        let mut req = httparse::Request::new(headers);
        Ok(match req.parse(buf)? {
            httparse::Status::Partial => HeadParse::Partial,
            httparse::Status::Complete(len) => HeadParse::Complete(Box::new(ParsedHead::Request {
                method: req.method.unwrap_or("").to_string(),
                url: req.path.unwrap_or("").to_string(),
                facts: header_facts(req.headers),
                len,
            })),
        })
    }
}

/// True when `s` starts with (or, being short, could start) a message of `role`.
pub fn message_start_at(s: &[u8], role: Option<Role>) -> bool {
    let is_prefix = |token: &[u8]| {
        let n = s.len().min(token.len());
        n > 0 && s[..n] == token[..n]
    };
    let request = || REQUEST_STARTS.iter().any(|t| is_prefix(t));
    let response = || is_prefix(RESPONSE_START);
    match role {
        Some(Role::Client) => request(),
        Some(Role::Server) => response(),
        None => request() || response(),
    }
}

/// Index of the first plausible message start in `data`.
pub fn find_message_start(data: &[u8], at_line_start: bool, role: Option<Role>) -> Option<usize> {
    if at_line_start && message_start_at(data, role) {
        return Some(0);
    }
    memchr::memchr_iter(b'\n', data)
        .map(|i| i + 1)
        .find(|&p| p < data.len() && message_start_at(&data[p..], role))
}

/// `sessionId` / `session_id` query parameter of a URL or path.
pub fn query_session(url: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "sessionId" || k == "session_id")
            .then(|| v.to_string())
            .filter(|v| !v.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_session_parameter_is_found() {
        assert_eq!(query_session("/messages?sessionId=abc&x=1").as_deref(), Some("abc"));
        assert_eq!(query_session("http://h/messages/?session_id=ff").as_deref(), Some("ff"));
        assert_eq!(query_session("/messages"), None);
    }

    #[test]
    fn headers_are_case_insensitive_and_te_chunked_must_be_last() {
        let buf =
            b"POST /mcp HTTP/1.1\r\nMCP-SESSION-ID: s\r\ntransfer-encoding: gzip, chunked\r\ncontent-length: 5\r\n\r\n";
        let HeadParse::Complete(head) = parse_head(buf, None) else {
            panic!("complete head")
        };
        let ParsedHead::Request { facts, len, .. } = *head else {
            panic!("a request")
        };
        assert_eq!(len, buf.len());
        assert_eq!(facts.session_id.as_deref(), Some("s"));
        assert!(facts.chunked);
        let buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n";
        let HeadParse::Complete(head) = parse_head(buf, Some(Role::Server)) else {
            panic!("complete head")
        };
        let ParsedHead::Response { facts, .. } = *head else {
            panic!("a response")
        };
        assert!(!facts.chunked && facts.transfer_encoding);
    }

    #[test]
    fn message_starts_are_found_at_line_starts_only() {
        let data = b"xx POST /a\nGET /b HTTP/1.1";
        assert_eq!(find_message_start(data, true, Some(Role::Client)), Some(11));
        assert_eq!(find_message_start(b"HTTP/1.1 200", true, Some(Role::Client)), None);
        assert_eq!(find_message_start(b"HTT", true, None), Some(0));
    }
}
