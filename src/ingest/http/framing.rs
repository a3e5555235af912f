//! The HTTP layer's framing byte counts, shared by the stream driver and the body decoder;
//! reported to the sink once per run by the driver. Counts only, no parsing.

/// Framing byte counts of the HTTP layer, reported to [`Sink::framing`](crate::ingest::frame::Sink::framing) at the end of a run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HttpFramingBytes {
    /// Request and response heads, interim (1xx) heads included.
    pub http_heads: u64,
    /// Chunk-size lines, chunk CRLFs, trailers.
    pub http_chunking: u64,
    /// SSE field names, colons, line breaks, comments, `event:`/`id:`/`retry:` values, BOM.
    pub sse_framing: u64,
    /// Data of SSE events that are not frames (`endpoint`, other types, empty data).
    pub sse_other_events: u64,
    /// Bodies that are not JSON or SSE (`Accepted`, HTML error pages); decoded bytes.
    pub http_body_other: u64,
    /// Compressed body bytes as on the wire (after de-chunking).
    pub http_gzip_encoded_bytes: u64,
    /// What those bytes decoded to; frames and the categories above count decoded bytes.
    pub http_gzip_decoded_bytes: u64,
    /// SSE bytes skipped after a TCP gap until the next event boundary (reported as a skip).
    pub sse_resync: u64,
}

impl HttpFramingBytes {
    /// Adds `from`'s counts to these.
    pub fn add(&mut self, from: &HttpFramingBytes) {
        self.http_heads += from.http_heads;
        self.http_chunking += from.http_chunking;
        self.sse_framing += from.sse_framing;
        self.sse_other_events += from.sse_other_events;
        self.http_body_other += from.http_body_other;
        self.http_gzip_encoded_bytes += from.http_gzip_encoded_bytes;
        self.http_gzip_decoded_bytes += from.http_gzip_decoded_bytes;
        self.sse_resync += from.sse_resync;
    }
}
