//! The `_meta` object of params and results: the 2026-07-28 clientInfo, serverInfo and
//! protocolVersion, `truncated`, `traceparent`. A view only; params and result read it.

use serde::Deserialize;

use super::parsed::Implementation;
use super::raw::Raw;
use super::scan::read_view;

#[derive(Deserialize, Default)]
pub(super) struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    pub(super) client_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(super) server_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    pub(super) protocol_version: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) truncated: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) traceparent: Option<Raw<'a>>,
}

impl<'a> Meta<'a> {
    /// A `_meta` object read, `None` when it is not one: skimmed when it names no
    /// implementation (nearly always: a progress token), else read by serde.
    pub(super) fn read(text: &'a str) -> Option<Meta<'a>> {
        const FIELDS: [&str; 5] = [
            "io.modelcontextprotocol/clientInfo",
            "io.modelcontextprotocol/serverInfo",
            "io.modelcontextprotocol/protocolVersion",
            "truncated",
            "traceparent",
        ];
        read_view(text, FIELDS, |[client, server, protocol_version, truncated, traceparent]| {
            (client.is_none() && server.is_none()).then_some(Meta { client_info: None, server_info: None, protocol_version, truncated, traceparent })
        })
    }
}
