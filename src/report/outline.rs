//! The report's outline: the read model laid out as headings, paragraphs, tables, advice and
//! charts ([`Block`]s), which the Markdown and HTML renderers walk. Gathers and formats nothing.

use super::document::*;
use super::format::{bytes_label, duration, ms_label, utc};
use crate::query::header::ExcerptSource;
use crate::query::rules::Severity;

/// A piece of inline text in the outline.
#[derive(Debug, Clone, PartialEq)]
pub enum Span {
    Text(String),
    /// An identifier: tool, capture, cause token.
    Code(String),
    Strong(String),
    /// A link to a section of the report.
    Anchor { text: String, id: String },
    /// A share in [0, 1], drawn as a small bar in Markdown.
    Meter(f64),
}

/// A table cell: spans, right-aligned when its column is numeric.
pub type Cell = Vec<Span>;

/// One block of the report outline; the Markdown and HTML renderers walk the same outline.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading { level: u8, id: String, text: String },
    Para(Vec<Span>),
    Table { header: Vec<&'static str>, numeric: Vec<bool>, rows: Vec<Vec<Cell>>, more: usize },
    /// The "what to change" line of a finding type.
    Advice(String),
    Chart(ChartKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    FrameSizes,
    Truncation,
    /// The swimlane of `Report::timelines[i]`.
    Swimlane(usize),
}

/// Rows shown per findings table (the JSON report lists all).
pub const MAX_ROWS: usize = 50;

fn t(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}
fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}
fn num(n: u64) -> Cell {
    vec![t(super::stats::thousands(n))]
}
fn opt_code(s: &Option<String>) -> Cell {
    s.as_ref().map_or_else(|| vec![t("-")], |s| vec![code(s.clone())])
}
fn name_version(name: &Option<String>, version: &Option<String>) -> String {
    format!("{} {}", name.as_deref().unwrap_or("?"), version.as_deref().unwrap_or("?"))
}

/// Section ids from a title (HTML ids and GitHub's heading anchors agree on these).
pub fn section_id(title: &str) -> String {
    title.to_lowercase().replace(['`', ','], "").split_whitespace().collect::<Vec<_>>().join("-")
}

impl Report {
    /// The report as a sequence of blocks.
    pub fn outline(&self) -> Vec<Block> {
        let mut b = Vec::new();
        self.summary(&mut b);
        self.inputs_section(&mut b);
        self.sessions_section(&mut b);
        self.frame_sizes_section(&mut b);
        self.truncation_section(&mut b);
        self.latency_section(&mut b);
        for r in self.rules.iter().filter(|r| r.layout.section.is_none()) {
            self.rule_section(&mut b, r);
        }
        self.timelines_section(&mut b);
        b
    }

    /// The id of the timeline of a finding's session, when it has one.
    fn timeline_of(&self, capture: &str, session: Option<&str>) -> Option<String> {
        let s = session?;
        self.timelines.iter().position(|t| t.capture == capture && t.session == s).map(|i| format!("timeline-{i}"))
    }

    /// Each session with findings told as a swimlane and a list, the findings where they happen.
    fn timelines_section(&self, b: &mut Vec<Block>) {
        if self.timelines.is_empty() {
            return;
        }
        b.push(Block::Heading { level: 2, id: "timelines".into(), text: "Timelines".into() });
        let mut p = vec![t(format!(
            "The story of each session with warn or error findings (at most {}), around its most severe finding: client and server lanes, one arrow per message (width by size), the findings where they happen. ",
            super::gather::MAX_TIMELINES
        ))];
        if !self.timelines_left_out.is_empty() {
            p.push(t(format!("Left out ({}): {}. ", self.timelines_left_out.len(), self.timelines_left_out.join(", "))));
        }
        p.extend([code("mcpsift timeline --finding ID"), t(" tells any of them in the terminal.")]);
        b.push(Block::Para(p));
        for (i, tl) in self.timelines.iter().enumerate() {
            b.push(Block::Heading { level: 3, id: format!("timeline-{i}"), text: format!("{} ({})", tl.session, tl.capture) });
            let mut about = vec![t(format!(
                "Client {}, server {}; {} frame(s), ended {}",
                tl.client.as_deref().unwrap_or("?"),
                tl.server.as_deref().unwrap_or("?"),
                tl.frames_total,
                tl.ending.as_deref().unwrap_or("?")
            ))];
            if let Some(c) = &tl.end_cause {
                about.push(t(format!(" ({c})")));
            }
            about.push(t(match tl.ordered_by.as_str() {
                "causal" => "; no timestamps: causal order, each answer after its request.",
                "position" => "; no timestamps: in file order.",
                _ => ".",
            }));
            if tl.left_out_before + tl.left_out_after > 0 {
                about.push(t(format!(" {} earlier and {} later frame(s) left out.", tl.left_out_before, tl.left_out_after)));
            }
            b.push(Block::Para(about));
            b.push(Block::Chart(ChartKind::Swimlane(i)));
            let rows = tl
                .lines
                .iter()
                .map(|l| {
                    let what = [Some(l.kind.clone()), l.method.clone(), l.tool.clone(), l.rpc_id.as_ref().map(|id| format!("id={id}"))].into_iter().flatten().collect::<Vec<_>>().join(" ");
                    vec![
                        vec![t(l.seq.map(|q| q.to_string()).unwrap_or_default())],
                        vec![t(match l.direction.as_deref() { Some("c2s") => "C→S", Some("s2c") => "S→C", _ => "·" })],
                        vec![t(what)],
                        l.bytes.map_or_else(|| vec![t("-")], num),
                        vec![t(l.outcome.clone().unwrap_or_default())],
                        vec![t(l.findings.join("; "))],
                    ]
                })
                .collect();
            b.push(Block::Table { header: vec!["seq", "dir", "message", "bytes", "outcome", "findings"], numeric: vec![false, false, false, true, false, false], rows, more: 0 });
        }
    }

    fn summary(&self, b: &mut Vec<Block>) {
        let tt = &self.totals;
        let inputs = self.inputs.iter().map(|p| code(p.clone())).fold(Vec::new(), |mut v, s| {
            if !v.is_empty() {
                v.push(t(", "));
            }
            v.push(s);
            v
        });
        let mut p = vec![t(format!("Generated by {} from ", self.generator))];
        p.extend(inputs);
        p.push(t(". "));
        match self.redaction {
            Redaction::On => p.extend([
                t("Secrets are redacted (Authorization and Cookie headers, bearer tokens, api_key, token, password and secret values); "),
                code("--no-redact"),
                t(" shows them."),
            ]),
            Redaction::Off => p.extend([t("Redaction is off ("), code("--no-redact"), t("): excerpts are shown as captured.")]),
        }
        b.push(Block::Para(p));
        if let (Some(first), Some(last)) = (tt.first_ts_us, tt.last_ts_us) {
            b.push(Block::Para(vec![t(format!("Traffic from {} to {} ({}).", utc(first), utc(last), duration(last - first)))]));
        }
        b.push(Block::Heading { level: 2, id: "summary".into(), text: "Summary".into() });
        let mut findings = vec![t(format!("{}: ", tt.findings))];
        findings.push(Span::Strong(format!("{} error", tt.error)));
        findings.push(t(format!(", {} warn, {} info", tt.warn, tt.info)));
        b.push(Block::Table {
            header: vec!["", "value"],
            numeric: vec![false, true],
            rows: vec![
                vec![vec![t("captures")], num(tt.captures as u64)],
                vec![vec![t("sessions")], num(tt.sessions as u64)],
                vec![vec![t("frames")], num(tt.frames)],
                vec![vec![t("requests (tools/call)")], vec![t(format!("{} ({})", super::stats::thousands(tt.calls), super::stats::thousands(tt.tool_calls)))]],
                vec![vec![t("bytes read")], vec![t(bytes_label(tt.bytes_read))]],
                vec![vec![t("findings")], findings],
            ],
            more: 0,
        });
        let rows = self
            .rules
            .iter()
            .map(|r| {
                let id = match r.layout.section.as_deref() {
                    Some(FRAME_SIZES) => FRAME_SIZES_ID.to_string(),
                    Some(TRUNCATION) => TRUNCATION_ID.to_string(),
                    Some(LATENCY) => LATENCY_ID.to_string(),
                    _ => section_id(&r.title),
                };
                vec![
                    vec![Span::Anchor { text: r.title.clone(), id }],
                    num(r.error as u64),
                    num(r.warn as u64),
                    num(r.info as u64),
                    vec![t(r.advice.clone().unwrap_or_default())],
                ]
            })
            .collect();
        b.push(Block::Table { header: vec!["finding type", "error", "warn", "info", "what to change"], numeric: vec![false, true, true, true, false], rows, more: 0 });
    }

    fn inputs_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: "inputs-and-byte-accounting".into(), text: "Inputs and byte accounting".into() });
        b.push(Block::Para(vec![t(
            "Every byte read is in a frame, in framing (line terminators, envelopes, log prefixes, HTTP heads), or skipped with a reason. Sizes are bytes as on the wire, after decompression.",
        )]));
        let rows = self
            .captures
            .iter()
            .map(|c| {
                let formats: Vec<&str> = c.files.iter().map(|f| f.format).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
                let skipped: u64 = c.skipped_bytes.values().sum();
                let mut skip_cell = num(skipped);
                if skipped > 0 {
                    let reasons: Vec<String> = c.skipped_bytes.iter().map(|(k, v)| format!("{k} {}", super::stats::thousands(*v))).collect();
                    skip_cell.push(t(format!(" ({})", reasons.join(", "))));
                }
                let diags: Vec<String> = c.diagnostics.iter().map(|(k, v)| format!("{k} ×{v}")).collect();
                vec![
                    vec![code(c.name.clone())],
                    vec![t(formats.join(", "))],
                    num(c.bytes_read),
                    num(c.frame_bytes),
                    num(c.frames),
                    num(c.framing_bytes),
                    skip_cell,
                    vec![t(c.unaccounted_bytes.to_string())],
                    vec![t(if diags.is_empty() { "-".to_string() } else { diags.join(", ") })],
                ]
            })
            .collect();
        b.push(Block::Table {
            header: vec!["capture", "format", "bytes read", "in frames", "frames", "framing", "skipped", "unaccounted", "diagnostics"],
            numeric: vec![false, false, true, true, true, true, true, true, false],
            rows,
            more: 0,
        });
        if self.skipped_files.count > 0 {
            b.push(Block::Para(vec![t(format!(
                "Skipped {} file(s) that are not captures or logs: {}.",
                self.skipped_files.count,
                bytes_label(self.skipped_files.bytes)
            ))]));
        }
    }

    fn sessions_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: "sessions".into(), text: "Sessions".into() });
        if self.sessions.is_empty() {
            b.push(Block::Para(vec![t("No MCP sessions in the inputs.")]));
            return;
        }
        let rows = self
            .sessions
            .iter()
            .map(|s| {
                let mut ending = vec![if s.ending.as_str() == "abrupt" { Span::Strong(s.ending.as_str().to_string()) } else { t(s.ending.as_str()) }];
                if let Some(cause) = &s.end_cause {
                    ending.push(t(format!(": {cause}")));
                }
                let span = match (s.first_ts_us, s.last_ts_us) {
                    (Some(a), Some(z)) => format!("{} ({})", utc(a), duration(z - a)),
                    _ => "-".into(),
                };
                vec![
                    vec![code(s.capture.clone())],
                    vec![code(s.session.clone())],
                    vec![t(s.transport.as_str())],
                    vec![t(name_version(&s.client_name, &s.client_version))],
                    vec![t(name_version(&s.server_name, &s.server_version))],
                    vec![t(s.protocol_version.clone().unwrap_or_else(|| "?".into()))],
                    vec![t(span)],
                    num(s.frames),
                    num(s.bytes_c2s),
                    num(s.bytes_s2c),
                    num(s.max_frame_bytes),
                    ending,
                ]
            })
            .collect();
        b.push(Block::Table {
            header: vec!["capture", "session", "transport", "client", "server", "protocol", "started (duration)", "frames", "bytes c2s", "bytes s2c", "largest frame", "ending"],
            numeric: vec![false, false, false, false, false, false, false, true, true, true, true, false],
            rows,
            more: 0,
        });
    }

    fn frame_sizes_section(&self, b: &mut Vec<Block>) {
        let fs = &self.frame_sizes;
        b.push(Block::Heading { level: 2, id: FRAME_SIZES_ID.into(), text: "Frame sizes against reader limits".into() });
        b.push(Block::Para(vec![t(format!(
            "{} frames; largest client→server {}, largest server→client {}. Bins are powers of two; each enabled reader limit is a line.",
            super::stats::thousands(fs.frames),
            bytes_label(fs.largest_c2s),
            bytes_label(fs.largest_s2c)
        ))]));
        b.push(Block::Chart(ChartKind::FrameSizes));
        let rows = fs
            .limits
            .iter()
            .map(|l| {
                vec![
                    vec![code(l.name.clone())],
                    vec![t(bytes_label(l.bytes))],
                    vec![t(format!("{:.0}%", l.warn_ratio * 100.0))],
                    vec![t(l.scope.clone())],
                    vec![t(if l.enabled { "yes" } else { "no" })],
                ]
            })
            .collect();
        b.push(Block::Table { header: vec!["limit", "bytes", "warn at", "applies to", "checked"], numeric: vec![false, true, true, false, false], rows, more: 0 });
        for r in self.in_section(FRAME_SIZES) {
            self.findings_blocks(b, r, 3);
        }
    }

    fn truncation_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: TRUNCATION_ID.into(), text: "Truncation rates by tool and client version".into() });
        if self.truncation.is_empty() {
            b.push(Block::Para(vec![t("No tool calls in the inputs.")]));
            return;
        }
        let (bad, good): (Vec<&TruncationGroup>, Vec<&TruncationGroup>) = self.truncation.iter().partition(|g| g.not_whole() > 0);
        if bad.is_empty() {
            b.push(Block::Para(vec![t(format!("Every one of {} tool result(s) arrived whole.", good.iter().map(|g| g.calls).sum::<u64>()))]));
        } else {
            b.push(Block::Para(vec![t("Results the model did not get whole: truncated by a marker, lost (no response before the connection ended) or cancelled by the client.")]));
            b.push(Block::Chart(ChartKind::Truncation));
            let rows = bad
                .iter()
                .map(|g| {
                    vec![
                        vec![code(g.tool.clone())],
                        vec![t(g.client_name.clone())],
                        vec![t(g.client_version.clone())],
                        num(g.calls),
                        num(g.truncated),
                        num(g.lost),
                        num(g.cancelled),
                        vec![Span::Meter(g.rate())],
                        vec![t(bytes_label(g.max_resp_bytes))],
                    ]
                })
                .collect();
            b.push(Block::Table {
                header: vec!["tool", "client", "version", "calls", "truncated", "lost", "cancelled", "not whole", "largest result"],
                numeric: vec![false, false, false, true, true, true, true, false, true],
                rows,
                more: 0,
            });
            if !good.is_empty() {
                b.push(Block::Para(vec![t(format!(
                    "{} other tool × client group(s): all {} result(s) arrived whole.",
                    good.len(),
                    good.iter().map(|g| g.calls).sum::<u64>()
                ))]));
            }
        }
        for advice in self.in_section(TRUNCATION).filter_map(|r| r.advice.clone()) {
            b.push(Block::Advice(advice));
        }
    }

    fn latency_section(&self, b: &mut Vec<Block>) {
        b.push(Block::Heading { level: 2, id: LATENCY_ID.into(), text: "Latency by tool and client version".into() });
        if self.latency.is_empty() {
            b.push(Block::Para(vec![t("No tool calls in the inputs.")]));
        } else {
            let timed: u64 = self.latency.iter().map(|g| g.timed).sum();
            let calls: u64 = self.latency.iter().map(|g| g.calls).sum();
            b.push(Block::Para(vec![t(format!(
                "tools/call response time minus request time, over all captures: {} of {} call(s) timed (answered, neither cancelled nor timed out, timestamps on both frames; stdio tee logs carry none). Calls are logical calls: a multi-round-trip chain counts once, from its first request to its final answer. p50, p95 and p99 are linear-interpolated quantiles; timeouts are counted apart with how long the requester waited.",
                super::stats::thousands(timed),
                super::stats::thousands(calls)
            ))]));
            let groups = LatencyGroup::slowest_first(&self.latency);
            let rows = groups
                .iter()
                .take(MAX_ROWS)
                .map(|g| {
                    vec![
                        vec![code(g.tool.clone())],
                        vec![t(g.client_name.clone())],
                        vec![t(g.client_version.clone())],
                        num(g.calls),
                        num(g.timed),
                        vec![t(ms_label(g.p50_ms))],
                        vec![t(ms_label(g.p95_ms))],
                        vec![t(ms_label(g.p99_ms))],
                        vec![t(ms_label(g.max_ms))],
                        vec![t(if g.timeouts == 0 { "0".to_string() } else { g.timeouts_label() })],
                    ]
                })
                .collect();
            b.push(Block::Table {
                header: vec!["tool", "client", "version", "calls", "timed", "p50", "p95", "p99", "max", "timeouts"],
                numeric: vec![false, false, false, true, true, true, true, true, true, false],
                rows,
                more: groups.len().saturating_sub(MAX_ROWS),
            });
        }
        for r in self.in_section(LATENCY) {
            self.findings_blocks(b, r, 3);
        }
    }

    fn rule_section(&self, b: &mut Vec<Block>, r: &RuleSection) {
        b.push(Block::Heading { level: 2, id: section_id(&r.title), text: r.title.clone() });
        self.findings_blocks(b, r, 3);
    }

    /// Findings of one rule: counts, then per cause a table (or one table without causes), then advice.
    fn findings_blocks(&self, b: &mut Vec<Block>, r: &RuleSection, level: u8) {
        if r.total() == 0 {
            b.push(Block::Para(vec![t("No findings from "), code(r.rule.clone()), t(".")]));
            return;
        }
        b.push(Block::Para(vec![
            t(format!("{} finding(s) from ", r.total())),
            code(r.rule.clone()),
            t(": "),
            Span::Strong(format!("{} error", r.error)),
            t(format!(", {} warn, {} info.", r.warn, r.info)),
        ]));
        let by_cause = r.groups.iter().any(|g| !g.cause.is_empty());
        for g in &r.groups {
            if by_cause {
                let cause = if g.cause.is_empty() { "other".to_string() } else { g.cause.clone() };
                b.push(Block::Heading { level, id: format!("{}-{}", section_id(&r.title), cause.replace('_', "-")), text: format!("{cause} ({})", g.findings.len()) });
                if let Some(meaning) = r.cause_sentence(&cause) {
                    let mut chars = meaning.chars();
                    let sentence = chars.next().map(|c| c.to_uppercase().chain(chars).collect::<String>()).unwrap_or_default();
                    b.push(Block::Para(vec![t(sentence)]));
                }
            }
            let with_session = r.layout.with_session;
            let has_excerpt = g.findings.iter().any(|f| f.excerpt.is_some());
            let mut header = vec!["id", "severity", "capture"];
            if with_session {
                header.push("session");
            }
            header.extend(["tool", "client", "bytes", "detail"]);
            if has_excerpt {
                header.push(if r.layout.excerpt == ExcerptSource::SessionLastError { "last error" } else { "excerpt" });
            }
            let numeric: Vec<bool> = header.iter().map(|h| *h == "bytes").collect();
            let rows = g
                .findings
                .iter()
                .take(MAX_ROWS)
                .map(|f| {
                    let sev = if f.severity == Severity::Error.as_str() { Span::Strong(f.severity.clone()) } else { t(f.severity.clone()) };
                    let id = match self.timeline_of(&f.capture, f.session.as_deref()) {
                        Some(anchor) => Span::Anchor { text: f.id.clone(), id: anchor },
                        None => code(f.id.clone()),
                    };
                    let mut row = vec![vec![id], vec![sev], vec![code(f.capture.clone())]];
                    if with_session {
                        row.push(opt_code(&f.session));
                    }
                    row.push(opt_code(&f.tool));
                    row.push(vec![t(f.client.clone().unwrap_or_else(|| "-".into()))]);
                    row.push(f.bytes.map_or_else(|| vec![t("-")], |n| num(n.max(0) as u64)));
                    let mut detail: Vec<Span> = Vec::new();
                    for c in f.causes.iter().skip(usize::from(by_cause)) {
                        detail.push(code(c.clone()));
                        detail.push(t(" "));
                    }
                    detail.push(t(f.detail.clone()));
                    row.push(detail);
                    if has_excerpt {
                        row.push(f.excerpt.as_ref().map_or_else(|| vec![t("-")], |e| vec![code(e.clone())]));
                    }
                    row
                })
                .collect();
            b.push(Block::Table { header, numeric, rows, more: g.findings.len().saturating_sub(MAX_ROWS) });
        }
        if let Some(advice) = &r.advice {
            b.push(Block::Advice(advice.clone()));
        }
    }

    /// Rules whose header places them in a built-in section.
    fn in_section<'a>(&'a self, section: &'a str) -> impl Iterator<Item = &'a RuleSection> + 'a {
        self.rules.iter().filter(move |r| r.layout.section.as_deref() == Some(section))
    }
}

/// `section:` values of rule headers: the built-in sections a rule can be shown in.
const FRAME_SIZES: &str = "frame_sizes";
const TRUNCATION: &str = "truncation";
const LATENCY: &str = "latency";
const LATENCY_ID: &str = "latency";
const FRAME_SIZES_ID: &str = "frame-sizes-against-reader-limits";
const TRUNCATION_ID: &str = "truncation-rates";
