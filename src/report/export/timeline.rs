//! A session's timeline as text (coloured on a terminal), Markdown or JSON: one line per
//! frame or event, the findings written where they happen.

use std::fmt::Write as _;
use std::io::Write;

use super::{ExportError, Exporter};
use crate::report::stats::thousands;
use crate::report::timeline::{Timeline, TimelineLine};

/// Plain or coloured terminal text.
pub struct TimelineText {
    pub color: bool,
}

pub struct TimelineMarkdown;

pub struct TimelineJson;

fn time(l: &TimelineLine) -> String {
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

fn delta(l: &TimelineLine) -> String {
    match l.delta_us {
        Some(d) if d.abs() >= 1_000_000 => format!("+{:.1}s", d as f64 / 1e6),
        Some(d) => format!("+{:.1}ms", d as f64 / 1e3),
        None => String::new(),
    }
}

fn arrow(l: &TimelineLine) -> &'static str {
    match l.direction.as_deref() {
        Some("c2s") => "C→S",
        Some("s2c") => "S→C",
        _ => " · ",
    }
}

/// The line's words after its time: kind, method, tool, id, bytes, outcome.
fn words(l: &TimelineLine) -> String {
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

fn header(t: &Timeline) -> Vec<String> {
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

pub fn render_text(t: &Timeline, color: bool) -> String {
    let paint = |code: &str, s: &str| if color { format!("\x1b[{code}m{s}\x1b[0m") } else { s.to_string() };
    let mut s = String::new();
    for h in header(t) {
        let _ = writeln!(s, "{}", paint("1", &h));
    }
    for l in &t.lines {
        let pos = l.seq.map_or_else(|| "     ".to_string(), |q| format!("#{q:<4}"));
        let mark = if l.anchor { "▶" } else if l.clock_backwards { "⟲" } else { " " };
        let body = format!("{mark} {pos} {} {:>9} {} {}", time(l), delta(l), arrow(l), words(l));
        let body = if l.what == "event" { paint("2", &body) } else if l.outcome.as_deref().is_some_and(|o| o.starts_with("error") || o.starts_with("HTTP") || o == "isError") { paint("33", &body) } else { body };
        let _ = writeln!(s, "{body}");
        for f in &l.findings {
            let _ = writeln!(s, "{}", paint("31", &format!("        ^ {f}")));
        }
    }
    if t.left_out_after > 0 {
        let _ = writeln!(s, "… {} later frame(s) left out (--window)", t.left_out_after);
    }
    for f in &t.session_findings {
        let _ = writeln!(s, "{}", paint("31", &format!("  session: {f}")));
    }
    s
}

pub fn render_markdown(t: &Timeline) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Timeline of `{}`\n", t.session);
    for h in header(t) {
        let _ = writeln!(s, "{h}  ");
    }
    let _ = writeln!(s, "\n| | seq | time | Δ | dir | what | findings |\n|---|--:|---|--:|---|---|---|");
    for l in &t.lines {
        let cell = |x: &str| x.replace('|', "\\|");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            if l.anchor { "▶" } else { "" },
            l.seq.map(|q| q.to_string()).unwrap_or_default(),
            time(l),
            delta(l),
            arrow(l),
            cell(&words(l)),
            cell(&l.findings.join("<br>"))
        );
    }
    if t.left_out_after > 0 {
        let _ = writeln!(s, "\n… {} later frame(s) left out (--window)", t.left_out_after);
    }
    for f in &t.session_findings {
        let _ = writeln!(s, "\n- session: {f}");
    }
    s
}

impl Exporter<Timeline> for TimelineText {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        out.write_all(render_text(t, self.color).as_bytes())?;
        Ok(())
    }
}

impl Exporter<Timeline> for TimelineMarkdown {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        out.write_all(render_markdown(t).as_bytes())?;
        Ok(())
    }
}

impl Exporter<Timeline> for TimelineJson {
    fn export(&self, t: &Timeline, out: &mut dyn Write) -> Result<(), ExportError> {
        serde_json::to_writer_pretty(&mut *out, t).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}
