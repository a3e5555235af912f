//! The postmortem story of one session: its frames and events in order, around a finding or
//! an id, with the findings written where they happen. Gathered from the tables (bounded by
//! the window: only the rows shown are read into memory); rendered by `export/` (text, Markdown, JSON); the words of a line and the header are here, shared by the renderings.

use std::fmt::Write as _;

use polars::prelude::*;
use serde::Serialize;

use crate::model::tables::{int_values as ints, string_values as strings};
use crate::query::{QueryError, TableSource, run_sql, sql_literal as lit_sql};
use crate::report::findings::Finding;
use crate::report::redact::redact;
use crate::report::stats::thousands;

/// What to tell the story of.
#[derive(Debug, Clone)]
pub struct TimelineRequest {
    pub capture: Option<String>,
    pub session: String,
    /// The request id to center on (`None`: the session's last frames, where deaths happen).
    pub around: Option<String>,
    /// Frames shown before the anchor (and half as many after it).
    pub window: u64,
    pub redact: bool,
}

/// One line of the story: a frame, or an event between frames.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineLine {
    /// `frame` or `event`.
    pub what: String,
    pub seq: Option<u64>,
    pub ts_us: Option<i64>,
    /// Microseconds since the previous line with a timestamp.
    pub delta_us: Option<i64>,
    pub direction: Option<String>,
    pub kind: String,
    pub method: Option<String>,
    pub tool: Option<String>,
    pub rpc_id: Option<String>,
    pub bytes: Option<u64>,
    /// `ok`, `isError`, `error CODE: message`, an HTTP status, or the event's text.
    pub outcome: Option<String>,
    /// The findings on this frame: `ID severity rule: detail`.
    pub findings: Vec<String>,
    /// This is the frame the story is centered on.
    pub anchor: bool,
    /// The clock went backwards at this line.
    pub clock_backwards: bool,
}

/// The story of one session.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub capture: String,
    pub session: String,
    pub client: Option<String>,
    pub server: Option<String>,
    pub ending: Option<String>,
    pub end_cause: Option<String>,
    /// Frames in the session.
    pub frames_total: u64,
    /// Frames left out before and after the window.
    pub left_out_before: u64,
    pub left_out_after: u64,
    /// `time` when the lines have timestamps, else `position` (stdio tee logs carry none).
    pub ordered_by: String,
    pub clock_went_backwards: bool,
    pub lines: Vec<TimelineLine>,
    /// Findings of the session not tied to one frame (written after the last line).
    pub session_findings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Polars(#[from] PolarsError),
    #[error("no session {session:?}{}; sessions: {known}", .capture.as_ref().map(|c| format!(" in capture {c:?}")).unwrap_or_default())]
    NoSession { session: String, capture: Option<String>, known: String },
    #[error("session {session:?} is in several captures ({captures}): name one with --capture")]
    Ambiguous { session: String, captures: String },
    #[error("no frame with request id {id} in session {session:?}")]
    NoId { id: String, session: String },
}


/// Gathers the story: the session's row, the frames of the window and the events among them,
/// and the findings where they happen.
pub fn timeline(tables: &dyn TableSource, req: &TimelineRequest, findings: &[Finding]) -> Result<Timeline, TimelineError> {
    let cap_filter = req.capture.as_deref().map(|c| format!(" AND capture = {}", lit_sql(c))).unwrap_or_default();
    let sessions = run_sql(
        tables,
        &format!(
            "SELECT capture, session, client_name, client_version, server_name, server_version, CAST(ending AS STRING) AS ending, end_cause, frames FROM sessions WHERE session = {}{cap_filter}",
            lit_sql(&req.session)
        ),
    )?;
    if sessions.height() == 0 {
        let known = run_sql(tables, "SELECT DISTINCT session FROM sessions ORDER BY session LIMIT 20")?;
        let known = strings(&known, "session")?.into_iter().flatten().collect::<Vec<_>>().join(", ");
        return Err(TimelineError::NoSession { session: req.session.clone(), capture: req.capture.clone(), known });
    }
    let caps = strings(&sessions, "capture")?;
    if sessions.height() > 1 {
        return Err(TimelineError::Ambiguous { session: req.session.clone(), captures: caps.into_iter().flatten().collect::<Vec<_>>().join(", ") });
    }
    let capture = caps[0].clone().unwrap_or_default();
    let who = |n: &str, v: &str| -> PolarsResult<Option<String>> {
        let (n, v) = (strings(&sessions, n)?[0].clone(), strings(&sessions, v)?[0].clone());
        Ok(n.map(|n| format!("{n} {}", v.unwrap_or_else(|| "?".into()))))
    };
    let where_session = format!("capture = {} AND session = {}", lit_sql(&capture), lit_sql(&req.session));
    let bounds = run_sql(tables, &format!("SELECT MIN(seq) AS lo, MAX(seq) AS hi, COUNT(*) AS n FROM frames WHERE {where_session}"))?;
    let (first, last, total) = (ints(&bounds, "lo")?[0].unwrap_or(0), ints(&bounds, "hi")?[0].unwrap_or(-1), ints(&bounds, "n")?[0].unwrap_or(0));
    // The anchor: the last frame carrying the id (the answer, where a problem shows), else the
    // session's last frame.
    let anchor = match &req.around {
        Some(id) => {
            let a = run_sql(tables, &format!("SELECT MAX(seq) AS seq FROM frames WHERE {where_session} AND rpc_id = {}", lit_sql(id)))?;
            match ints(&a, "seq")?[0] {
                Some(s) => s,
                None => return Err(TimelineError::NoId { id: id.clone(), session: req.session.clone() }),
            }
        }
        None => last,
    };
    let window = i64::try_from(req.window).unwrap_or(i64::MAX);
    let after = if req.around.is_some() { (window / 2).max(3) } else { 0 };
    let counted = |sql: String| -> Result<u64, TimelineError> { Ok(ints(&run_sql(tables, &sql)?, "n")?[0].unwrap_or(0).max(0) as u64) };
    let timed = counted(format!("SELECT COUNT(ts_us) AS n FROM frames WHERE {where_session}"))? > 0;
    // Without timestamps (stdio tee logs) the capture numbers one file's frames, then the
    // other's: the story is rebuilt in causal order, each answer after its request.
    let causal = if !timed && total > 0 && total.unsigned_abs() <= CAUSAL_MAX_FRAMES {
        let all = run_sql(tables, &format!("SELECT seq, CAST(direction AS STRING) AS direction, CAST(kind AS STRING) AS kind, rpc_id FROM frames WHERE {where_session} ORDER BY seq"))?;
        Some(causal_order(&ints(&all, "seq")?, &strings(&all, "direction")?, &strings(&all, "kind")?, &strings(&all, "rpc_id")?))
    } else {
        None
    };
    let (frames, left_out_before, left_out_after, position) = match &causal {
        Some(order) => {
            let end = order.len().saturating_sub(1);
            let at = if req.around.is_some() { order.iter().position(|s| *s == anchor).unwrap_or(end) } else { end };
            let from = at.saturating_sub(usize::try_from(window).unwrap_or(usize::MAX));
            let to = at.saturating_add(usize::try_from(after).unwrap_or(0)).min(order.len().saturating_sub(1));
            let chosen = &order[from..=to];
            let list = chosen.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            let frames = run_sql(tables, &format!("{FRAME_COLUMNS} WHERE {where_session} AND seq IN ({list}) ORDER BY seq"))?;
            let position: std::collections::HashMap<i64, usize> = chosen.iter().enumerate().map(|(i, s)| (*s, i)).collect();
            (frames, from as u64, (order.len() - 1 - to) as u64, Some(position))
        }
        None => {
            // Seqs are the capture's, so the session's frames are not contiguous: count rows, not seqs.
            let before_rows = run_sql(
                tables,
                &format!("SELECT seq FROM frames WHERE {where_session} AND seq <= {anchor} ORDER BY seq DESC LIMIT {}", window.saturating_add(1)),
            )?;
            let lo = ints(&before_rows, "seq")?.into_iter().flatten().min().unwrap_or(first);
            let after_rows = run_sql(tables, &format!("SELECT seq FROM frames WHERE {where_session} AND seq > {anchor} ORDER BY seq LIMIT {after}"))?;
            let hi = ints(&after_rows, "seq")?.into_iter().flatten().max().unwrap_or(anchor);
            let frames = run_sql(tables, &format!("{FRAME_COLUMNS} WHERE {where_session} AND seq >= {lo} AND seq <= {hi} ORDER BY seq"))?;
            let before = counted(format!("SELECT COUNT(*) AS n FROM frames WHERE {where_session} AND seq < {lo}"))?;
            let after = counted(format!("SELECT COUNT(*) AS n FROM frames WHERE {where_session} AND seq > {hi}"))?;
            (frames, before, after, None)
        }
    };

    let (seq, ts, offset) = (ints(&frames, "seq")?, ints(&frames, "ts_us")?, ints(&frames, "frame_offset")?);
    let (dir, kind, method, tool, rpc) = (strings(&frames, "direction")?, strings(&frames, "kind")?, strings(&frames, "method")?, strings(&frames, "tool")?, strings(&frames, "rpc_id")?);
    let (bytes, code, status) = (ints(&frames, "wire_bytes")?, ints(&frames, "error_code")?, ints(&frames, "http_status")?);
    let (msg, note) = (strings(&frames, "error_message")?, strings(&frames, "note")?);
    let is_error: Vec<Option<bool>> = frames.column("is_error")?.bool()?.iter().collect();
    let clean = |t: String| if req.redact { redact(&t) } else { t };
    // (position key, line): frames by seq; events slot in by time or by offset.
    let mut lines: Vec<(i64, i64, TimelineLine)> = Vec::new();
    for i in 0..frames.height() {
        let outcome = match (kind[i].as_deref(), code[i], is_error[i]) {
            (Some("error"), c, _) => Some(format!("error {}: {}", c.map_or("?".into(), |c| c.to_string()), msg[i].clone().unwrap_or_default())),
            (Some("response"), _, Some(true)) => Some("isError".to_string()),
            (Some("response"), _, _) => Some("ok".to_string()),
            (Some("incomplete") | Some("non_json") | Some("invalid_json"), _, _) => note[i].clone(),
            _ => None,
        }
        .map(|o| match status[i] {
            Some(s) if s >= 400 => format!("HTTP {s}; {o}"),
            _ => o,
        })
        .map(clean);
        let key = match (&position, seq[i]) {
            (Some(p), Some(q)) => p.get(&q).map_or(0, |i| *i as i64),
            _ => ts[i].unwrap_or(offset[i].unwrap_or(0)),
        };
        let order_key = if position.is_some() { key } else { seq[i].unwrap_or(0) };
        lines.push((key, order_key, TimelineLine {
            what: "frame".into(),
            seq: seq[i].map(|s| s.max(0) as u64),
            ts_us: ts[i],
            delta_us: None,
            direction: dir[i].clone(),
            kind: kind[i].clone().unwrap_or_default(),
            method: method[i].clone(),
            tool: tool[i].clone(),
            rpc_id: rpc[i].clone(),
            bytes: bytes[i].map(|b| b.max(0) as u64),
            outcome,
            findings: Vec::new(),
            anchor: seq[i] == Some(anchor) && req.around.is_some(),
            clock_backwards: false,
        }));
    }
    let by_time = ts.iter().any(Option::is_some);
    if position.is_some() {
        lines.sort_by_key(|l| l.1);
    }
    // Events are placed by time, or by offset in their file (not in a rebuilt causal order).
    if let (false, Some(k0), Some(k1)) = (position.is_some(), lines.first().map(|l| l.0), lines.last().map(|l| l.0)) {
        let pos = if by_time { "ts_us" } else { "\"offset\"" };
        // At the session's ends the window is open: what the host said after the last frame
        // (a transport closed, a server crashed) belongs to the story.
        let mut range = String::new();
        if left_out_before > 0 {
            range.push_str(&format!(" AND {pos} >= {k0}"));
        }
        if left_out_after > 0 {
            range.push_str(&format!(" AND {pos} <= {k1}"));
        }
        let events = run_sql(
            tables,
            &format!(
                "SELECT ts_us, \"offset\" AS event_offset, level, kind, text FROM events WHERE capture = {} AND (session = {} OR session IS NULL){range} ORDER BY {pos} LIMIT {}",
                lit_sql(&capture),
                lit_sql(&req.session),
                window.saturating_mul(2).max(10)
            ),
        )?;
        let (ets, eoff, level, ekind, text) = (ints(&events, "ts_us")?, ints(&events, "event_offset")?, strings(&events, "level")?, strings(&events, "kind")?, strings(&events, "text")?);
        for i in 0..events.height() {
            let key = if by_time { ets[i].unwrap_or(k0) } else { eoff[i].unwrap_or(k0) };
            let t: String = text[i].clone().unwrap_or_default().chars().take(200).collect();
            lines.push((key, i64::MAX, TimelineLine {
                what: "event".into(),
                seq: None,
                ts_us: ets[i],
                delta_us: None,
                direction: None,
                kind: format!("{}:{}", level[i].clone().unwrap_or_default(), ekind[i].clone().unwrap_or_default()),
                method: None,
                tool: None,
                rpc_id: None,
                bytes: None,
                outcome: Some(clean(t)),
                findings: Vec::new(),
                anchor: false,
                clock_backwards: false,
            }));
        }
    }
    // Frames keep their seq order; an event goes after the frames at or before its position.
    let (frames_only, events_only): (Vec<_>, Vec<_>) = lines.into_iter().partition(|(_, s, _)| *s != i64::MAX);
    let lines = merge_events(frames_only, events_only);
    let mut out: Vec<TimelineLine> = lines.into_iter().map(|(_, _, l)| l).collect();
    let mut prev: Option<i64> = None;
    let mut backwards = false;
    for l in &mut out {
        if let Some(t) = l.ts_us {
            if let Some(p) = prev {
                l.delta_us = Some(t.saturating_sub(p));
                if t < p {
                    l.clock_backwards = true;
                    backwards = true;
                }
            }
            prev = Some(t);
        }
    }
    // Findings where they happen: on the last frame of their request id, else after the story.
    let mut session_findings = Vec::new();
    for f in findings.iter().filter(|f| f.capture == capture && f.session.as_deref() == Some(req.session.as_str())) {
        let tool = f.tool.as_deref().map(|t| format!(" {t}")).unwrap_or_default();
        let text = format!("{} {} {}{tool}: {}", f.id, f.severity, f.rule, f.line().chars().take(240).collect::<String>());
        match f.rpc_id.as_deref().and_then(|id| out.iter_mut().rev().find(|l| l.what == "frame" && l.rpc_id.as_deref() == Some(id))) {
            Some(line) => line.findings.push(text),
            None if f.rpc_id.is_none() => session_findings.push(text),
            None => {}
        }
    }
    Ok(Timeline {
        capture,
        session: req.session.clone(),
        client: who("client_name", "client_version")?,
        server: who("server_name", "server_version")?,
        ending: strings(&sessions, "ending")?[0].clone(),
        end_cause: strings(&sessions, "end_cause")?[0].clone().map(clean),
        frames_total: total.max(0) as u64,
        left_out_before,
        left_out_after,
        ordered_by: if by_time {
            "time".into()
        } else if position.is_some() {
            "causal".into()
        } else {
            "position".into()
        },
        clock_went_backwards: backwards,
        lines: out,
        session_findings,
    })
}

/// Sessions up to this many frames without timestamps are put in causal order (the order is
/// computed over the whole session: its four small columns).
const CAUSAL_MAX_FRAMES: u64 = 2_000_000;

/// The columns a timeline line is made of.
const FRAME_COLUMNS: &str = "SELECT seq, ts_us, \"offset\" AS frame_offset, CAST(direction AS STRING) AS direction, CAST(kind AS STRING) AS kind, method, tool, rpc_id, wire_bytes, is_error, error_code, error_message, http_status, note FROM frames";

/// A causal order of a session without timestamps, as seqs: the client's frames in their
/// order, each server frame after the previous server frame and, when it answers a request,
/// after that request (the latest request with its id before it in the client's order).
pub fn causal_order(seq: &[Option<i64>], dir: &[Option<String>], kind: &[Option<String>], rpc: &[Option<String>]) -> Vec<i64> {
    let mut keyed: Vec<(i64, i64, i64)> = Vec::with_capacity(seq.len());
    let mut requested: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    let (mut c2s_n, mut s2c_floor) = (0i64, 0i64);
    // Client frames first, numbered 2, 4, 6, ...: a request's answer goes at its number + 1.
    for i in 0..seq.len() {
        if dir[i].as_deref() != Some("s2c") {
            c2s_n += 2;
            if kind[i].as_deref() == Some("request")
                && let Some(id) = rpc[i].as_deref()
            {
                requested.insert(id, c2s_n);
            }
            keyed.push((c2s_n, 0, seq[i].unwrap_or(0)));
        }
    }
    for i in 0..seq.len() {
        if dir[i].as_deref() == Some("s2c") {
            let after = match (kind[i].as_deref(), rpc[i].as_deref()) {
                (Some("response" | "error"), Some(id)) => requested.get(id).map_or(s2c_floor, |k| k + 1),
                _ => s2c_floor,
            };
            s2c_floor = s2c_floor.max(after);
            keyed.push((s2c_floor, 1, seq[i].unwrap_or(0)));
        }
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, s)| s).collect()
}

/// Frames in their order, each event placed after the last frame at or before its position.
fn merge_events(frames: Vec<(i64, i64, TimelineLine)>, mut events: Vec<(i64, i64, TimelineLine)>) -> Vec<(i64, i64, TimelineLine)> {
    events.sort_by_key(|(k, _, _)| *k);
    let mut out = Vec::with_capacity(frames.len() + events.len());
    let mut ev = events.into_iter().peekable();
    for f in frames {
        while ev.peek().is_some_and(|e| e.0 < f.0) {
            out.extend(ev.next());
        }
        out.push(f);
    }
    out.extend(ev);
    out
}

// The words every rendering of a timeline shares.

/// The line's clock time (`HH:MM:SS.mmm`, `-` untimed).
pub fn time_text(l: &TimelineLine) -> String {
    match l.ts_us {
        Some(ts) => {
            let secs = ts.div_euclid(1_000_000);
            let micros = ts.rem_euclid(1_000_000);
            let (h, m, s) = ((secs / 3600).rem_euclid(24), (secs / 60).rem_euclid(60), secs.rem_euclid(60));
            format!("{h:02}:{m:02}:{s:02}.{:03}", micros / 1000)
        }
        None => "-".into(),
    }
}

/// Time since the line before (`+1.5ms`, `+2.0s`).
pub fn delta_text(l: &TimelineLine) -> String {
    match l.delta_us {
        Some(d) if d.abs() >= 1_000_000 => format!("+{:.1}s", d as f64 / 1e6),
        Some(d) => format!("+{:.1}ms", d as f64 / 1e3),
        None => String::new(),
    }
}

/// `C→S`, `S→C`, or ` · ` for an event.
pub fn arrow(l: &TimelineLine) -> &'static str {
    match l.direction.as_deref() {
        Some("c2s") => "C→S",
        Some("s2c") => "S→C",
        _ => " · ",
    }
}

/// The line's words after its time: kind, method, tool, id, bytes, outcome.
pub fn words(l: &TimelineLine) -> String {
    let mut s = l.kind.clone();
    for part in [l.method.as_deref(), l.tool.as_deref()].into_iter().flatten() {
        let _ = write!(s, " {part}");
    }
    if let Some(id) = &l.rpc_id {
        let _ = write!(s, " id={id}");
    }
    if let Some(b) = l.bytes {
        let _ = write!(s, " {} B", thousands(b));
    }
    if let Some(o) = &l.outcome {
        let _ = write!(s, " {o}");
    }
    s
}

/// The header lines: who, how many frames, how it ended, how the lines are ordered.
pub fn header(t: &Timeline) -> Vec<String> {
    let mut h = vec![format!(
        "timeline of session {} in {} (client {}, server {}): {} frame(s), ended {}",
        t.session,
        t.capture,
        t.client.as_deref().unwrap_or("?"),
        t.server.as_deref().unwrap_or("?"),
        t.frames_total,
        t.ending.as_deref().unwrap_or("?")
    )];
    if let Some(c) = &t.end_cause {
        h.push(format!("end cause: {c}"));
    }
    if t.ordered_by == "position" {
        h.push("ordered by position: these frames carry no timestamps (stdio tee logs have none)".into());
    }
    if t.ordered_by == "causal" {
        h.push("no timestamps (stdio tee logs have none): frames in causal order, each answer after its request; #N is the frame's seq".into());
    }
    if t.clock_went_backwards {
        h.push("the capture's clock went backwards inside this window (lines marked ⟲): order is the capture's, not the clock's".into());
    }
    if t.left_out_before > 0 {
        h.push(format!("… {} earlier frame(s) left out (--window)", t.left_out_before));
    }
    h
}
