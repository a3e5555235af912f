//! Hand-written SVG charts for the HTML report: frame sizes against reader limits (log-scale
//! histogram) and truncation rates (horizontal stacked bars). No scripts, no external fonts.

use std::fmt::Write as _;

use super::document::{FrameSizes, TruncationGroup};
use super::format::short_bytes;

/// Escapes text for XML/HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const WIDTH: f64 = 760.0;
const FONT: &str = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\" font-size=\"12\"";
pub const C2S_COLOR: &str = "#4c78a8";
pub const S2C_COLOR: &str = "#f58518";
pub const LIMIT_COLOR: &str = "#c0392b";
pub const TRUNCATED_COLOR: &str = "#e45756";
pub const LOST_COLOR: &str = "#7b4173";
pub const CANCELLED_COLOR: &str = "#9d755d";

/// A round step giving at most `max_ticks` ticks up to `max`.
fn tick_step(max: u64, max_ticks: u64) -> u64 {
    let mut magnitude = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = m * magnitude;
            if max.div_ceil(step) <= max_ticks {
                return step;
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

fn open_svg(s: &mut String, id: &str, height: f64, title: &str, desc: &str) {
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"{id}\" viewBox=\"0 0 {WIDTH} {height:.0}\" width=\"100%\" \
         preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" {FONT}>\
         <title id=\"{id}-title\">{}</title><desc id=\"{id}-desc\">{}</desc>\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height:.0}\" fill=\"#ffffff\"/>",
        esc(title),
        esc(desc)
    );
}

/// Histogram of frame sizes in power-of-two bins (log-scale x axis), c2s and s2c stacked,
/// with one labelled vertical line per enabled reader limit. `None` without frames.
pub fn frame_size_chart(sizes: &FrameSizes, id: &str) -> Option<String> {
    if sizes.bins.is_empty() {
        return None;
    }
    let limits: Vec<_> = sizes.limits.iter().filter(|l| l.enabled && l.bytes > 0).collect();
    let (left, right) = (56.0, 30.0);
    let top = 14.0 + 15.0 * limits.len() as f64;
    let plot_h = 220.0;
    let bottom_area = 62.0;
    let height = top + plot_h + bottom_area;
    let plot_w = WIDTH - left - right;
    let n = sizes.bins.len() as f64;
    let bw = plot_w / n;
    let k0 = sizes.bins.first().map_or(0, |b| if b.lo_bytes == 0 { 0 } else { b.lo_bytes.trailing_zeros() }) as f64;
    let y_max = sizes.bins.iter().map(|b| b.c2s + b.s2c).max().unwrap_or(1).max(1);
    let step = tick_step(y_max, 5);
    let y_top = y_max.div_ceil(step) * step;
    // Non-zero counts stay visible (3 px at least) next to tall bars.
    let y = |v: u64| if v == 0 { top + plot_h } else { (top + plot_h - plot_h * v as f64 / y_top as f64).min(top + plot_h - 3.0) };
    let x_of_bytes = |bytes: u64| left + ((bytes.max(1) as f64).log2() - k0) * bw;

    let mut s = String::new();
    let desc = format!(
        "{} frames in power-of-two size bins from {} to {}; blue: client to server, orange: server to client; red lines: {}.",
        sizes.frames,
        short_bytes(sizes.bins.first().map_or(0, |b| b.lo_bytes)),
        short_bytes(sizes.bins.last().map_or(0, |b| b.hi_bytes)),
        if limits.is_empty() { "no enabled limits".to_string() } else { limits.iter().map(|l| format!("{} at {}", l.name, short_bytes(l.bytes))).collect::<Vec<_>>().join(", ") }
    );
    open_svg(&mut s, id, height, "Frame sizes on the wire against reader limits (log scale)", &desc);
    // Grid and y axis.
    let mut v = 0;
    while v <= y_top {
        let yy = y(v);
        let _ = write!(s, "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#e3e3e3\"/>", left + plot_w);
        let _ = write!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#333\">{v}</text>", left - 6.0, yy + 4.0);
        v += step;
    }
    // Bars.
    for (i, b) in sizes.bins.iter().enumerate() {
        let x = left + i as f64 * bw + 1.0;
        let w = (bw - 2.0).max(1.0);
        let range = format!("{} to {}", short_bytes(b.lo_bytes), short_bytes(b.hi_bytes));
        if b.c2s > 0 {
            let _ = write!(
                s,
                "<rect class=\"bar c2s\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{C2S_COLOR}\"><title>{}: {} client→server frame(s)</title></rect>",
                y(b.c2s),
                y(0) - y(b.c2s),
                esc(&range),
                b.c2s
            );
        }
        if b.s2c > 0 {
            let _ = write!(
                s,
                "<rect class=\"bar s2c\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{S2C_COLOR}\"><title>{}: {} server→client frame(s)</title></rect>",
                y(b.c2s + b.s2c),
                y(b.c2s) - y(b.c2s + b.s2c),
                esc(&range),
                b.s2c
            );
        }
    }
    // X axis: labels at every `label_every`-th power of two.
    let base = top + plot_h;
    let _ = write!(s, "<line x1=\"{left}\" y1=\"{base:.1}\" x2=\"{:.1}\" y2=\"{base:.1}\" stroke=\"#333\"/>", left + plot_w);
    let _ = write!(s, "<line x1=\"{left}\" y1=\"{top:.1}\" x2=\"{left}\" y2=\"{base:.1}\" stroke=\"#333\"/>");
    let first_k = k0 as u32;
    let last_k = first_k + sizes.bins.len() as u32;
    let label_every = [1u32, 2, 3, 4, 5, 10].into_iter().find(|e| (first_k..=last_k).filter(|k| k % e == 0).count() <= 8).unwrap_or(10);
    for k in (first_k..=last_k).filter(|k| k % label_every == 0) {
        let xx = left + (f64::from(k) - k0) * bw;
        let _ = write!(s, "<line x1=\"{xx:.1}\" y1=\"{base:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>", base + 5.0);
        let _ = write!(s, "<text class=\"tick\" x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">{}</text>", base + 18.0, short_bytes(1u64 << k));
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">frame size on the wire (bytes, log scale)</text>",
        left + plot_w / 2.0,
        base + 36.0
    );
    let _ = write!(s, "<text x=\"14\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\" transform=\"rotate(-90 14 {:.1})\">frames</text>", top + plot_h / 2.0, top + plot_h / 2.0);
    // Legend.
    let ly = base + 52.0;
    let _ = write!(s, "<rect x=\"{left}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{C2S_COLOR}\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#333\">client → server</text>", ly - 10.0, left + 16.0);
    let _ = write!(s, "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{S2C_COLOR}\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#333\">server → client</text>", left + 130.0, ly - 10.0, left + 146.0);
    let _ = write!(s, "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{LIMIT_COLOR}\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#333\">reader limit</text>", left + 262.0, ly - 10.0, left + 262.0, ly + 2.0, left + 270.0);
    // Limit lines, each label on its own row above the plot.
    // Labels right of their line (left part of the plot) go on top, smallest first; labels
    // left of their line follow, largest first: then no line crosses another's label.
    let right_side = |bytes: u64| x_of_bytes(bytes) > left + plot_w * 0.6;
    let mut sorted = limits.clone();
    sorted.sort_by_key(|l| (right_side(l.bytes), if right_side(l.bytes) { u64::MAX - l.bytes } else { l.bytes }));
    for (i, l) in sorted.iter().enumerate() {
        let xx = x_of_bytes(l.bytes);
        let label_y = 12.0 + 15.0 * i as f64;
        let (anchor, dx) = if right_side(l.bytes) { ("end", -4.0) } else { ("start", 4.0) };
        let _ = write!(
            s,
            "<g class=\"limit\"><title>{}: {} bytes ({} scope, warn at {:.0}%)</title>\
             <line x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{base:.1}\" stroke=\"{LIMIT_COLOR}\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\
             <text x=\"{:.1}\" y=\"{label_y:.1}\" text-anchor=\"{anchor}\" fill=\"{LIMIT_COLOR}\">{} {}</text></g>",
            esc(&l.name),
            super::stats::thousands(l.bytes),
            esc(&l.scope),
            l.warn_ratio * 100.0,
            label_y - 9.0,
            xx + dx,
            esc(&l.name),
            short_bytes(l.bytes)
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// Longest bar label, in characters.
const LABEL_CHARS: usize = 38;

/// Horizontal stacked bars: the share of results truncated, lost and cancelled per tool ×
/// client version (groups with anything not delivered whole, at most `max_rows`). `None`
/// when every result arrived whole.
pub fn truncation_chart(groups: &[TruncationGroup], id: &str, max_rows: usize) -> Option<String> {
    let rows: Vec<&TruncationGroup> = groups.iter().filter(|g| g.not_whole() > 0).take(max_rows).collect();
    if rows.is_empty() {
        return None;
    }
    let (label_w, value_w) = (270.0, 110.0);
    let bar_w = WIDTH - label_w - value_w - 10.0;
    let (top, row_h) = (26.0, 26.0);
    let height = top + row_h * rows.len() as f64 + 40.0;
    let mut s = String::new();
    let desc = format!(
        "Share of tool results not delivered whole, for {} tool and client version group(s); red: truncated, purple: lost, brown: cancelled.",
        rows.len()
    );
    open_svg(&mut s, id, height, "Truncated, lost and cancelled results by tool and client version", &desc);
    let x0 = label_w;
    for pct in [0u32, 25, 50, 75, 100] {
        let xx = x0 + bar_w * f64::from(pct) / 100.0;
        let _ = write!(s, "<line x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"#e3e3e3\"/>", top - 4.0, top + row_h * rows.len() as f64);
        let _ = write!(s, "<text class=\"tick\" x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">{pct}%</text>", top - 10.0);
    }
    for (i, g) in rows.iter().enumerate() {
        let yy = top + row_h * i as f64;
        let mut label = format!("{} · {} {}", g.tool, g.client_name, g.client_version);
        if label.chars().count() > LABEL_CHARS {
            label = format!("{}…", label.chars().take(LABEL_CHARS - 1).collect::<String>());
        }
        let _ = write!(s, "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#222\">{}</text>", x0 - 8.0, yy + 17.0, esc(&label));
        let mut x = x0;
        for (part, color, what) in [(g.truncated, TRUNCATED_COLOR, "truncated"), (g.lost, LOST_COLOR, "lost"), (g.cancelled, CANCELLED_COLOR, "cancelled")] {
            if part == 0 || g.calls == 0 {
                continue;
            }
            let w = bar_w * part as f64 / g.calls as f64;
            let _ = write!(
                s,
                "<rect class=\"bar {what}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}: {part} of {} call(s) {what}</title></rect>",
                yy + 4.0,
                row_h - 8.0,
                esc(&label),
                g.calls
            );
            x += w;
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#222\">{:.1}% ({} of {})</text>",
            x0 + bar_w + 8.0,
            yy + 17.0,
            100.0 * g.rate(),
            g.not_whole(),
            g.calls
        );
    }
    let ly = top + row_h * rows.len() as f64 + 26.0;
    for (i, (color, what)) in [(TRUNCATED_COLOR, "truncated"), (LOST_COLOR, "lost (no response)"), (CANCELLED_COLOR, "cancelled")].iter().enumerate() {
        let lx = x0 + 150.0 * i as f64;
        let _ = write!(s, "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{ly:.1}\" fill=\"#333\">{what}</text>", ly - 10.0, lx + 16.0);
    }
    s.push_str("</svg>");
    Some(s)
}

/// The lanes' colour in a swimlane (used nowhere else in the report).
pub const LANE_COLOR: &str = "#6f42c1";

/// A session's timeline as a swimlane: the client's lane on the left, the server's on the
/// right, one arrow per message in the story's order (thicker for larger frames, labelled with
/// method, tool and size), red where a finding is; a frame over a reader limit is crossed, and
/// a death ends the lanes.
pub fn swimlane(t: &crate::report::timeline::Timeline, id: &str) -> String {
    const ROW: f64 = 24.0;
    const TOP: f64 = 44.0;
    let (left, right) = (120.0, WIDTH - 120.0);
    let height = TOP + ROW * (t.lines.len() as f64 + 1.5) + 24.0;
    let desc = format!("{} message(s) of session {} between the client and the server lanes{}.", t.lines.iter().filter(|l| l.what == "frame").count(), t.session, if t.ending.as_deref() == Some("abrupt") { "; the session ended abruptly" } else { "" });
    let mut s = String::new();
    open_svg(&mut s, id, height, &format!("Timeline of {}", t.session), &desc);
    let _ = writeln!(s, "<g class=\"lanes\" {FONT}>");
    for (x, name) in [(left, t.client.as_deref().unwrap_or("client")), (right, t.server.as_deref().unwrap_or("server"))] {
        let _ = writeln!(s, "<text x=\"{x}\" y=\"18\" text-anchor=\"middle\" font-weight=\"600\">{}</text>", esc(name));
        let _ = writeln!(s, "<line class=\"lane\" x1=\"{x}\" y1=\"26\" x2=\"{x}\" y2=\"{:.1}\" stroke=\"{LANE_COLOR}\" stroke-width=\"3\"/>", height - 20.0);
    }
    let _ = writeln!(s, "</g>");
    for (i, l) in t.lines.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let flagged = !l.findings.is_empty();
        if l.what == "event" {
            let text: String = l.outcome.clone().unwrap_or_default().chars().take(70).collect();
            let _ = writeln!(s, "<text class=\"event\" x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"middle\" fill=\"#777\" {FONT}>{}</text>", (left + right) / 2.0, esc(&format!("· {} {text}", l.kind)));
            continue;
        }
        let (x1, x2, class) = if l.direction.as_deref() == Some("s2c") { (right, left, "s2c") } else { (left, right, "c2s") };
        let bytes = l.bytes.unwrap_or(0);
        let width = (1.0 + (bytes.max(1) as f64).log2() / 3.0).min(9.0);
        let color = if flagged { LIMIT_COLOR } else if class == "c2s" { C2S_COLOR } else { S2C_COLOR };
        let head = if x2 > x1 { x2 - 8.0 } else { x2 + 8.0 };
        let label = [l.method.clone(), l.tool.clone(), Some(format!("{} B", super::stats::thousands(bytes))), l.outcome.clone().filter(|o| o != "ok")].into_iter().flatten().collect::<Vec<_>>().join(" ");
        let _ = writeln!(
            s,
            "<g class=\"arrow {class}{}\" data-seq=\"{}\" data-bytes=\"{bytes}\"><line x1=\"{x1}\" y1=\"{y:.1}\" x2=\"{head}\" y2=\"{y:.1}\" stroke=\"{color}\" stroke-width=\"{width:.1}\"/><path d=\"M{x2} {y:.1} L{head} {:.1} L{head} {:.1} Z\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" {FONT}>{}</text><title>{}</title></g>",
            if flagged { " finding" } else { "" },
            l.seq.unwrap_or(0),
            y - 5.0,
            y + 5.0,
            (left + right) / 2.0,
            y - 6.0,
            esc(&label.chars().take(80).collect::<String>()),
            esc(&l.findings.join("\n"))
        );
        // A frame over a reader limit is crossed where its reader takes it.
        if l.findings.iter().any(|f| f.contains(" error near_limit_frames")) {
            let (tx, anchor) = if x2 < x1 { (x2 + 14.0, "start") } else { (x2 - 14.0, "end") };
            let _ = writeln!(s, "<g class=\"limit-cross\"><path d=\"M{:.1} {:.1} l12 12 M{:.1} {:.1} l-12 12\" stroke=\"{LIMIT_COLOR}\" stroke-width=\"3\"/><text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" fill=\"{LIMIT_COLOR}\" {FONT}>over the reading client's limit: it drops the frame here</text></g>", x2 - 6.0, y - 6.0, x2 + 6.0, y - 6.0, y + 17.0);
        }
    }
    if t.ending.as_deref() == Some("abrupt") && t.left_out_after == 0 {
        let y = TOP + ROW * t.lines.len() as f64 + 4.0;
        let _ = writeln!(s, "<g class=\"death\"><rect x=\"{left}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"6\" fill=\"{LIMIT_COLOR}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{LIMIT_COLOR}\" {FONT}>{}</text></g>", right - left, (left + right) / 2.0, y + 20.0, esc(&format!("session died: {}", t.end_cause.as_deref().unwrap_or("abruptly")).chars().take(100).collect::<String>()));
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{LimitLine, SizeBin};

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(7, 5), 2);
        assert_eq!(tick_step(1, 5), 1);
        assert_eq!(tick_step(230, 5), 50);
    }

    #[test]
    fn frame_chart_has_title_bars_and_limit_lines() {
        let sizes = FrameSizes {
            frames: 3,
            largest_c2s: 100,
            largest_s2c: 9_000_000,
            bins: (6..24).map(|k| SizeBin { lo_bytes: 1 << k, hi_bytes: 1 << (k + 1), c2s: u64::from(k == 6), s2c: u64::from(k == 23) * 2 }).collect(),
            limits: vec![LimitLine { name: "ts_sdk_stdio".into(), bytes: 10_485_760, warn_ratio: 0.9, scope: "stdio".into(), enabled: true }],
        };
        let svg = frame_size_chart(&sizes, "sizes").unwrap_or_default();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("<title id=\"sizes-title\">"));
        assert_eq!(svg.matches("class=\"bar ").count(), 2);
        assert!(svg.contains("ts_sdk_stdio 10 MiB"));
    }

    #[test]
    fn truncation_chart_is_absent_when_everything_arrived() {
        let g = TruncationGroup { tool: "t".into(), client_name: "c".into(), client_version: "1".into(), calls: 2, truncated: 0, lost: 0, cancelled: 0, max_resp_bytes: 10 };
        assert!(truncation_chart(&[g], "t", 20).is_none());
    }
}
