//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network) that
//! reads on a phone (tables scroll sideways, charts scale) and prints cleanly.

use std::fmt::Write as _;

use super::markdown::meter;
use super::{ExportError, Exporter};
use crate::report::chart::{esc, frame_size_chart, swimlane, truncation_chart};
use crate::report::document::Report;
use crate::report::outline::{Block, ChartKind, Span};

pub struct Html;

impl Exporter<Report> for Html {
    fn export(&self, report: &Report, out: &mut dyn std::io::Write) -> Result<(), ExportError> {
        out.write_all(render(report).as_bytes())?;
        Ok(())
    }
}

/// Bars in the truncation chart (the table lists every group).
const CHART_ROWS: usize = 20;

const CSS: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff;
  line-height: 1.45; margin: 0 auto; padding: 1rem 1.25rem 3rem; max-width: 72rem; }
h1 { font-size: 1.8rem; margin: .5rem 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 .5rem; padding-bottom: .25rem; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .4rem; }
p { margin: .5rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em;
  background: #f3f4f6; padding: .05em .3em; border-radius: 4px; overflow-wrap: break-word; }
nav.toc { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: .5rem 1rem; margin: 1rem 0; }
nav.toc ol { margin: .25rem 0; padding-left: 1.25rem; columns: 2 16rem; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: .5rem 0 1rem; border: 1px solid #d0d7de; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { padding: .35rem .6rem; border-bottom: 1px solid #e5e7eb; text-align: left; vertical-align: top; }
th { background: #f6f8fa; white-space: nowrap; position: sticky; top: 0; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr:last-child td { border-bottom: none; }
strong.error, td strong { color: #b42318; }
.advice { background: #eef6ff; border-left: 4px solid #2f6feb; padding: .5rem .75rem; border-radius: 0 6px 6px 0; }
.more { color: #57606a; font-style: italic; }
figure.chart { margin: .75rem 0 1rem; }
figure.chart svg { display: block; width: 100%; height: auto; max-width: 60rem; }
figcaption { color: #57606a; font-size: .85rem; margin-top: .25rem; }
.meter { display: inline-block; width: 5rem; height: .7rem; background: #eee; border-radius: 3px; vertical-align: middle; margin-right: .35rem; overflow: hidden; }
.meter > span { display: block; height: 100%; background: #e45756; }
footer { margin-top: 2.5rem; color: #57606a; font-size: .85rem; }
@media (max-width: 640px) {
  body { padding: .5rem .6rem 2rem; font-size: 15px; }
  h1 { font-size: 1.45rem; }
  th, td { padding: .3rem .4rem; }
  nav.toc ol { columns: 1; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav.toc { display: none; }
  .table-wrap { overflow: visible; border: none; }
  table { font-size: 8.5pt; }
  th { position: static; }
  td, th { overflow-wrap: anywhere; }
  h2, h3 { break-after: avoid; }
  tr, figure.chart, .advice { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
  code { background: none; padding: 0; }
  .meter { border: 1px solid #999; }
  .meter > span, figure.chart svg * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"#;

fn spans(out: &mut String, spans: &[Span]) {
    for s in spans {
        match s {
            Span::Text(t) => out.push_str(&esc(t)),
            Span::Code(t) => {
                let _ = write!(out, "<code>{}</code>", esc(t));
            }
            Span::Strong(t) => {
                let _ = write!(out, "<strong>{}</strong>", esc(t));
            }
            Span::Anchor { text, id } => {
                let _ = write!(out, "<a href=\"#{}\">{}</a>", esc(id), esc(text));
            }
            Span::Meter(share) => {
                let pct = (share.clamp(0.0, 1.0) * 100.0).round();
                let text = meter(*share);
                let label = text.split(' ').next_back().unwrap_or_default();
                let _ = write!(out, "<span class=\"meter\" aria-hidden=\"true\"><span style=\"width:{pct}%\"></span></span>{}", esc(label));
            }
        }
    }
}

/// Renders the whole report as one HTML document.
pub fn render(report: &Report) -> String {
    let outline = report.outline();
    let mut body = String::new();
    let mut toc = String::new();
    let mut open = false;
    let mut in_header = true;
    body.push_str("<header>\n<h1>MCP traffic report</h1>\n");
    for block in &outline {
        match block {
            Block::Heading { level: 2, id, text } => {
                if in_header {
                    body.push_str("</header>\n<!--toc-->\n");
                    in_header = false;
                }
                if open {
                    body.push_str("</section>\n");
                }
                let _ = writeln!(body, "<section id=\"{}\">\n<h2>{}</h2>", esc(id), esc(text));
                let _ = write!(toc, "<li><a href=\"#{}\">{}</a></li>", esc(id), esc(text));
                open = true;
            }
            Block::Heading { level, id, text } => {
                let _ = writeln!(body, "<h{level} id=\"{}\">{}</h{level}>", esc(id), esc(text));
            }
            Block::Para(p) => {
                body.push_str("<p>");
                spans(&mut body, p);
                body.push_str("</p>\n");
            }
            Block::Table { header, numeric, rows, more } => {
                body.push_str("<div class=\"table-wrap\"><table>\n<thead><tr>");
                for (h, n) in header.iter().zip(numeric) {
                    let _ = write!(body, "<th scope=\"col\"{}>{}</th>", if *n { " class=\"num\"" } else { "" }, esc(h));
                }
                body.push_str("</tr></thead>\n<tbody>\n");
                for row in rows {
                    body.push_str("<tr>");
                    for (i, cell) in row.iter().enumerate() {
                        let num = numeric.get(i).copied().unwrap_or(false);
                        body.push_str(if num { "<td class=\"num\">" } else { "<td>" });
                        spans(&mut body, cell);
                        body.push_str("</td>");
                    }
                    body.push_str("</tr>\n");
                }
                body.push_str("</tbody></table></div>\n");
                if *more > 0 {
                    let _ = writeln!(body, "<p class=\"more\">… and {more} more (the JSON report lists all).</p>");
                }
            }
            Block::Advice(a) => {
                let _ = writeln!(body, "<p class=\"advice\"><strong>What to change:</strong> {}</p>", esc(a));
            }
            Block::Chart(ChartKind::FrameSizes) => {
                if let Some(svg) = frame_size_chart(&report.frame_sizes, "chart-frame-sizes") {
                    let _ = writeln!(
                        body,
                        "<figure class=\"chart\">{svg}<figcaption>Frames per power-of-two size bin, client→server and server→client stacked; dashed lines are the enabled reader limits.</figcaption></figure>"
                    );
                }
            }
            Block::Chart(ChartKind::Swimlane(i)) => {
                if let Some(tl) = report.timelines.get(*i) {
                    let svg = swimlane(tl, &format!("chart-swimlane-{i}"));
                    let _ = writeln!(body, "<figure class=\"chart swimlane\">{svg}<figcaption>Client (left) and server (right) lanes: one arrow per message, thicker for larger ones; red marks a frame with a finding, a crossed limit and a death.</figcaption></figure>");
                }
            }
            Block::Chart(ChartKind::Truncation) => {
                if let Some(svg) = truncation_chart(&report.truncation, "chart-truncation", CHART_ROWS) {
                    let _ = writeln!(
                        body,
                        "<figure class=\"chart\">{svg}<figcaption>Share of each group's tool calls whose result was truncated, lost or cancelled (at most {CHART_ROWS} groups, highest first).</figcaption></figure>"
                    );
                }
            }
        }
    }
    if in_header {
        body.push_str("</header>\n");
    }
    if open {
        body.push_str("</section>\n");
    }
    let _ = writeln!(body, "<footer>{}: captures and logs in, numbers out. Sizes are bytes on the wire.</footer>", esc(&report.generator));
    let nav = format!("<nav class=\"toc\" aria-label=\"Contents\"><strong>Contents</strong><ol>{toc}</ol></nav>");
    let body = body.replacen("<!--toc-->", &nav, 1);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{}\">\n<title>MCP traffic report</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        esc(&report.generator)
    )
}
