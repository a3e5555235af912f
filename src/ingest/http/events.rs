//! The events the HTTP layer reports: `http_status` for a failed response and `tcp_gap` for
//! bytes missing from a connection's stream. Wording and facts only; when to report is the
//! driver's.

use crate::ingest::connection::ConnectionId;
use crate::ingest::frame::{Event, EventFacts};
use crate::ingest::http::env::HttpEnv;
use crate::ingest::http::exchange::Exchange;
use crate::ingest::http::head::Role;

/// Emits the `http_status` event of a failed response.
pub(super) fn status_event(
    x: &Exchange,
    connection: ConnectionId,
    ts_us: Option<i64>,
    preview: Option<&[u8]>,
    env: &mut HttpEnv<'_>,
) {
    let Some(status) = x.status.filter(|s| *s >= 400) else {
        return;
    };
    env.stats.status_errors += 1;
    let method = if x.method.is_empty() {
        "(request not captured)"
    } else {
        x.method.as_str()
    };
    let mut text = format!("{method} {} -> {status} {}", x.url, x.reason)
        .trim_end()
        .to_string();
    if let Some(p) = preview.filter(|p| !p.is_empty()) {
        text.push_str(": ");
        text.push_str(&lossy_preview(p));
    }
    text.push_str(&format!(" (connection {connection}, exchange {})", x.number));
    env.sink.event(Event {
        session: x.session(),
        ts_us,
        offset: x.response_head_offset,
        level: "error".to_string(),
        server: None,
        kind: "http_status".to_string(),
        text,
        facts: EventFacts { http_status: Some(u32::from(status)), ..EventFacts::default() },
    });
}

/// The `tcp_gap` event of `len` bytes lost at `offset` of the stream `role` sends.
pub(super) fn gap_event(session: Option<String>, ts_us: Option<i64>, offset: u64, len: u64, connection: ConnectionId, role: Option<Role>) -> Event {
    let way = match role {
        Some(Role::Client) => "client to server",
        Some(Role::Server) => "server to client",
        None => "unknown direction",
    };
    Event {
        session,
        ts_us,
        offset,
        level: "warn".to_string(),
        server: None,
        kind: "tcp_gap".to_string(),
        text: format!("tcp gap of {len} bytes at stream offset {offset} (connection {connection}, {way})"),
        ..Event::default()
    }
}

fn lossy_preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}
