//! Where a body's outputs go: a JSON body and an SSE `message` event become frames with their
//! exchange's HTTP context; a request frame is held until its response head is seen; an SSE
//! `endpoint` event names the legacy session; other events are counted. No framing here.

use std::sync::Arc;

use crate::ingest::connection::ConnectionId;
use crate::ingest::frame::{Direction, Frame, Transport};
use crate::ingest::http::body::BodyOutput;
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::exchange::Exchange;
use crate::ingest::http::head::query_session;

/// Turns body `outputs` of exchange `x`'s message in `direction` into frames, skips and
/// counts. Returns whether a request frame was held (the caller bounds what is held).
pub(super) fn route_outputs(
    outputs: Vec<BodyOutput>,
    x: &mut Exchange,
    direction: Direction,
    connection: ConnectionId,
    client_ip: Option<String>,
    env: &mut HttpEnv<'_>,
) -> bool {
    let mut held_any = false;
    for output in outputs {
        match output {
            BodyOutput::Json {
                payload,
                wire_bytes,
                offset,
                ts_us,
                incomplete,
                note,
            } => {
                let frame = Frame {
                    session: x.session().map(Arc::from),
                    transport: Transport::Http,
                    direction: Some(direction),
                    ts_us,
                    offset,
                    wire_bytes,
                    payload,
                    incomplete,
                    note,
                    http: Some(x.context(connection, None, client_ip.clone())),
                    recorded: None,
                };
                if direction == Direction::ClientToServer && !x.response_seen && !x.method.is_empty() {
                    held_any = true;
                    x.held.push(frame);
                } else {
                    env.frame(frame);
                }
            }
            BodyOutput::Skip(skip) => env.sink.skip(skip),
            BodyOutput::Sse(event) => {
                env.stats.sse_events += 1;
                if event.event_type == "endpoint" {
                    if let Some(s) = query_session(&String::from_utf8_lossy(&event.data)) {
                        x.stream_session = Some(s);
                    }
                    env.framing.sse_other_events += event.data_bytes;
                    continue;
                }
                if event.event_type != "message" || event.data_bytes == 0 {
                    env.framing.sse_other_events += event.data_bytes;
                    continue;
                }
                let frame = Frame {
                    session: x.session().map(Arc::from),
                    transport: Transport::Sse,
                    direction: Some(direction),
                    ts_us: event.ts_us,
                    offset: event.data_offset,
                    wire_bytes: event.data_bytes,
                    payload: event.data,
                    incomplete: event.incomplete,
                    note: None,
                    http: Some(x.context(connection, event.id, client_ip.clone())),
                    recorded: None,
                };
                env.frame(frame);
            }
        }
    }
    held_any
}
