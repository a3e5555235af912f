//! The `_meta` object of params and results: the 2026-07-28 clientInfo, serverInfo and
//! protocolVersion, `truncated`, `traceparent`. A view only; params and result read it.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::parsed::Implementation;

#[derive(Deserialize, Default)]
pub(super) struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    pub(super) client_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(super) server_info: Option<Implementation>,
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    pub(super) protocol_version: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) truncated: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) traceparent: Option<&'a RawValue>,
}
