//! `mcpsift report`: the Markdown report of the samples byte for byte, the HTML's sections and
//! charts, redaction, JSON, and the HTML rendered in headless Chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{mcpsift, read_json, samples, temp_dir};

/// Samples whose report is pinned (relative paths, so the report names them the same anywhere).
const SAMPLES: [&str; 4] = ["samples/stdio_ts", "samples/stdio_py", "samples/hostlog", "samples/transcript"];

fn report(args: &[&str]) -> String {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.push("-q");
    let out = mcpsift(&all);
    assert!(out.status.success(), "report {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf8 report")
}

fn samples_report(format: &str) -> String {
    let mut args: Vec<&str> = SAMPLES.to_vec();
    args.extend(["--format", format]);
    report(&args)
}

#[test]
fn markdown_report_of_the_samples_matches_the_expected_file() {
    let expected_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/report_samples.md");
    let got = samples_report("md");
    if std::env::var_os("MCPSIFT_UPDATE_EXPECTED").is_some() {
        std::fs::write(&expected_path, &got).expect("write expected report");
    }
    let expected = std::fs::read_to_string(&expected_path).expect("tests/expected/report_samples.md (MCPSIFT_UPDATE_EXPECTED=1 writes it)");
    if got != expected {
        let first = got.lines().zip(expected.lines()).position(|(a, b)| a != b).unwrap_or(got.lines().count().min(expected.lines().count()));
        panic!(
            "the Markdown report changed (MCPSIFT_UPDATE_EXPECTED=1 cargo test report rewrites it); first different line {}:\n got: {:?}\nwant: {:?}",
            first + 1,
            got.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}

#[test]
fn markdown_report_names_every_seeded_problem_with_its_advice() {
    let md = samples_report("md");
    for needle in [
        "## Inputs and byte accounting",
        "## Sessions",
        "## Frame sizes against reader limits",
        "## Truncation rates by tool and client version",
        "## Validation errors",
        "### predicted_reject",
        "## Pagination walks that drifted",
        "## Schema compatibility",
        "## Connection deaths",
        "9,961,474",
        "◀ limit: ts_sdk_stdio 10 MiB",
        "| `export_log` | invoice-notebook | 0.9.2 | 4 | 2 | 0 | 0 | █████░░░░░ 50.0% |",
        "return a resource_link above 1 MiB",
        "omit structuredContent on isError results",
        "follow nextCursor until it is absent",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
    }
}

fn output_file(name: &str, args: &[&str]) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let path = dir.join(name);
    let path_s = path.display().to_string();
    let mut all: Vec<&str> = vec!["report"];
    all.extend_from_slice(args);
    all.extend(["-o", &path_s, "-q"]);
    let out = mcpsift(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).expect("report written");
    (path, text)
}

#[test]
fn html_report_is_self_contained_with_every_section_and_both_charts() {
    let (_, html) = output_file("report.html", &["samples/"]);
    let dom = tl::parse(&html, tl::ParserOptions::default()).expect("HTML parses");
    let parser = dom.parser();
    let ids: Vec<String> = dom
        .query_selector("section")
        .expect("selector")
        .filter_map(|h| h.get(parser)?.as_tag()?.attributes().id().map(|id| id.as_utf8_str().into_owned()))
        .collect();
    for id in [
        "summary",
        "inputs-and-byte-accounting",
        "sessions",
        "frame-sizes-against-reader-limits",
        "truncation-rates",
        "validation-errors",
        "pagination-walks-that-drifted",
        "schema-compatibility",
        "connection-deaths",
    ] {
        assert!(ids.iter().any(|i| i == id), "no section {id}: {ids:?}");
    }
    let svgs: Vec<&tl::HTMLTag> = dom.query_selector("svg").expect("selector").filter_map(|h| h.get(parser)?.as_tag()).collect();
    let is_swimlane = |svg: &&tl::HTMLTag| svg.attributes().id().is_some_and(|id| id.as_utf8_str().starts_with("chart-swimlane-"));
    assert_eq!(svgs.iter().filter(|s| !is_swimlane(s)).count(), 2, "two charts");
    assert!(svgs.iter().any(is_swimlane), "the sessions with findings have swimlanes");
    for svg in &svgs {
        let inner = svg.inner_html(parser);
        assert!(inner.contains("<title id="), "every chart has a title: {}", &inner[..inner.len().min(200)]);
        assert!(svg.attributes().get("role").flatten().is_some_and(|r| r.as_utf8_str() == "img"));
    }
    // One dashed line per enabled limit.
    let enabled = mcpsift::model::limits::default_limits().iter().filter(|l| l.enabled).count();
    assert_eq!(dom.query_selector("g.limit").expect("selector").count(), enabled);
    assert!(dom.query_selector("rect.bar").expect("selector").count() >= 8);
    assert!(html.contains("ts_sdk_stdio 10 MiB"));
    // Nothing loads from anywhere: no scripts, no stylesheets, no images, only in-page links.
    for banned in ["<script", "<link", "<img", "src=", "url("] {
        assert!(!html.contains(banned), "found {banned}");
    }
    for a in dom.query_selector("a[href]").expect("selector").filter_map(|h| h.get(parser)?.as_tag()) {
        let href = a.attributes().get("href").flatten().map(|v| v.as_utf8_str().into_owned()).unwrap_or_default();
        assert!(href.starts_with('#'), "external link {href}");
    }
    assert!(html.contains("name=\"viewport\""), "narrow screens");
    assert!(html.contains("@media print"), "print styles");
    assert!(html.contains("class=\"table-wrap\""), "tables scroll sideways");
}

#[test]
fn format_follows_the_extension_and_json_carries_the_numbers() {
    let (_, json) = output_file("report.json", &["samples/stdio_ts"]);
    let v: Value = serde_json::from_str(&json).expect("JSON report");
    assert_eq!(v["totals"]["captures"], 1);
    assert_eq!(v["frame_sizes"]["largest_s2c"], 9_961_474);
    assert_eq!(v["redaction"], "on");
    let rules: Vec<&str> = v["rules"].as_array().expect("rules").iter().filter_map(|r| r["rule"].as_str()).collect();
    assert_eq!(rules, ["near_limit_frames", "truncation_rates", "latency", "validation_errors", "pagination_drift", "schema_compat", "connection_deaths", "header_mismatch", "protocol_conformance", "tool_definition_changed"]);
    let (_, md) = output_file("report.md", &["samples/stdio_ts"]);
    assert!(md.starts_with("# MCP traffic report\n"));
    let out = mcpsift(&["report", "samples/stdio_ts", "-q", "-o", "/tmp/report.txt"]);
    assert_eq!(out.status.code(), Some(2), "unknown extension is a usage error");
}

/// A transcript whose tool result leaks a bearer token and an api key.
fn leaky_transcript() -> PathBuf {
    let dir = temp_dir("leaky");
    let path = dir.join("leak.jsonl");
    let lines = [
        r#"{"dir":"c2s","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli","version":"1.0"}}}}"#,
        r#"{"dir":"s2c","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"2.0"}}}}"#,
        r#"{"dir":"c2s","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch","arguments":{}}}}"#,
        r#"{"dir":"s2c","message":{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"Output validation error: upstream said Authorization: Bearer sk-live-SECRET42 and api_key=AKIA-SECRET43"}]}}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

#[test]
fn secrets_are_redacted_unless_no_redact() {
    let path = leaky_transcript();
    let p = path.display().to_string();
    let md = report(&[&p, "--format", "md"]);
    assert!(md.contains("## Validation errors") && md.contains("server_output"), "{md}");
    assert!(md.contains("[REDACTED]"), "{md}");
    assert!(!md.contains("SECRET42") && !md.contains("SECRET43"), "{md}");
    let html = report(&[&p, "--format", "html"]);
    assert!(!html.contains("SECRET42") && !html.contains("SECRET43"));
    let raw = report(&[&p, "--format", "md", "--no-redact"]);
    assert!(raw.contains("SECRET42"), "{raw}");
}

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"].iter().flat_map(|b| std::env::split_paths(&path).map(move |d| d.join(b))).find(|p| p.is_file())
}

fn run_chromium(browser: &Path, profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let profile = format!("--user-data-dir={}", profile.display());
    let mut args = vec![
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        profile.as_str(),
    ];
    args.extend_from_slice(extra);
    args.push(url);
    Command::new(browser).args(&args).output().expect("run chromium")
}

/// Pixels of a screenshot close to an RGB colour.
fn pixels_near(png_path: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(std::fs::read(png_path).expect("screenshot")));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("screenshot fits in memory")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let step = info.color_type.samples();
    buf[..info.buffer_size()].chunks(step).filter(|p| p.len() >= 3 && (0..3).all(|i| p[i].abs_diff(rgb[i]) <= 6)).count()
}

#[test]
fn html_report_renders_its_charts_in_headless_chromium() {
    let browser = chromium().expect("chromium is required for this test (.ci/run installs it: apt-get install chromium)");
    let (path, _) = output_file("browser.html", &["samples/"]);
    let dir = path.parent().expect("temp dir").to_path_buf();
    let url = format!("file://{}", path.display());
    let dom = run_chromium(&browser, &dir.join("profile-dom"), &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("<svg").count() - dom.matches("<desc id=\"chart-swimlane-").count(), 2, "both charts in the DOM: {}", &dom[..dom.len().min(400)]);
    for needle in ["<title id=\"chart-frame-sizes-title\">", "<title id=\"chart-truncation-title\">", "class=\"bar s2c\"", "class=\"limit\""] {
        assert!(dom.contains(needle), "DOM lacks {needle}");
    }
    let shot = dir.join("report.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    let out = run_chromium(&browser, &dir.join("profile-shot"), &[&shot_arg, "--window-size=1100,16000", "--hide-scrollbars"], &url);
    assert!(shot.is_file(), "no screenshot: {}", String::from_utf8_lossy(&out.stderr));
    // The bars' colours only occur in the charts: painted charts, not a blank page.
    let blue = pixels_near(&shot, [0x4c, 0x78, 0xa8]);
    let orange = pixels_near(&shot, [0xf5, 0x85, 0x18]);
    let red = pixels_near(&shot, [0xe4, 0x57, 0x56]);
    assert!(blue > 500 && orange > 500 && red > 200, "chart pixels: blue {blue}, orange {orange}, red {red}");
}

#[test]
fn a_finding_links_to_its_session_swimlane_with_its_arrows_and_the_limit_crossing() {
    let browser = chromium().expect("chromium is required for this test (.ci/run installs it: apt-get install chromium)");
    let truth = read_json(&samples().join("stdio_ts2/truth.json"));
    let over = truth["big_frames"].as_array().unwrap().iter().find(|b| b["over_ts_stdio_limit"] == true).expect("an over-limit frame")["bytes"].as_i64().unwrap();
    // The finding on the frame the TypeScript client dropped, by its id.
    // Named as the report names it (finding ids depend on the capture's name).
    let out = mcpsift(&["check", "samples/stdio_ts2", "-q", "--format", "json", "--rule", "near_limit_frames"]);
    let check: Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = check["findings"].as_array().unwrap().iter().find(|f| f["bytes"].as_i64() == Some(over)).expect("the over-limit finding").clone();
    let id = finding["id"].as_str().unwrap();
    let (path, _) = output_file("swimlane.html", &["samples/stdio_ts2"]);
    let (_, json) = output_file("swimlane.json", &["samples/stdio_ts2"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    let dir = path.parent().expect("temp dir").to_path_buf();
    let url = format!("file://{}", path.display());
    let dom = run_chromium(&browser, &dir.join("profile-dom"), &["--dump-dom"], &url);
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    // The finding's id links to its session's timeline.
    let link = format!(">{id}</a>");
    let at = dom.find(&link).unwrap_or_else(|| panic!("no link for {id}"));
    let href_start = dom[..at].rfind("href=\"#").expect("an in-page link") + 7;
    let target = dom[href_start..].split('"').next().unwrap().to_string();
    let n: usize = target.strip_prefix("timeline-").expect("a timeline anchor").parse().unwrap();
    let timeline = &report["timelines"][n];
    assert_eq!(timeline["session"], finding["session"]);
    // Its swimlane: one arrow per frame of the story, the crossed limit on the dropped frame.
    let svg_start = dom.find(&format!("id=\"chart-swimlane-{n}\"")).expect("the swimlane");
    let svg = &dom[svg_start..svg_start + dom[svg_start..].find("</svg>").unwrap()];
    let frames = timeline["lines"].as_array().unwrap().iter().filter(|l| l["what"] == "frame").count();
    assert_eq!(svg.matches("<g class=\"arrow ").count(), frames);
    let crossed = svg.find("class=\"limit-cross\"").expect("the limit crossing is marked");
    let arrow = &svg[..crossed];
    let last_arrow = &arrow[arrow.rfind("<g class=\"arrow ").unwrap()..];
    assert!(last_arrow.contains(&format!("data-bytes=\"{over}\"")), "the crossing is on the {over}-byte frame: {last_arrow}");
    // The link's target is painted: the swimlane's lanes (a colour used nowhere else) are on the page.
    assert!(dom.contains(&format!("id=\"{target}\"")), "the link's target exists");
    let shot = dir.join("timeline.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    run_chromium(&browser, &dir.join("profile-shot"), &[&shot_arg, "--window-size=1100,16000", "--hide-scrollbars"], &format!("{url}#{target}"));
    let lanes = pixels_near(&shot, [0x6f, 0x42, 0xc1]);
    assert!(lanes > 300, "the swimlanes are painted: {lanes} lane pixels");
    if std::env::var_os("MCPSIFT_SAVE_SCREENSHOT").is_some() {
        std::fs::copy(&shot, concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/report-timeline.png")).expect("save the screenshot");
    }
}
