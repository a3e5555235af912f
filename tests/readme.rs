//! The documentation against the code: docs/tables.md's column lists are rendered from the one
//! declaration in `src/model/rows.rs`, docs/layout.md names every folder of `src/`, the front
//! page stays a front page, and every relative link of README.md and docs/ leads somewhere.

use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each `<!-- columns:NAME -->` ... `<!-- /columns:NAME -->` block of docs/tables.md equals
/// the reference rendered from the schema. On a difference the expected block is printed:
/// paste it.
#[test]
fn tables_doc_column_reference_matches_the_schema() {
    let doc = read(&repo().join("docs/tables.md"));
    let mut wrong = Vec::new();
    for (table, expected) in mcpsift::model::tables::reference() {
        let begin = format!("<!-- columns:{table} -->\n");
        let end = format!("<!-- /columns:{table} -->");
        let found = doc.find(&begin).and_then(|b| {
            let start = b + begin.len();
            doc[start..].find(&end).map(|e| &doc[start..start + e])
        });
        if found != Some(expected.as_str()) {
            eprintln!("docs/tables.md: the `{table}` reference differs from the schema (src/model/rows.rs); expected:\n\n{begin}{expected}{end}\n");
            wrong.push(table);
        }
    }
    assert!(wrong.is_empty(), "docs/tables.md column reference out of date for {wrong:?} (expected text printed above)");
}

/// Every folder under `src/`, as a path relative to `src/` with `/` separators (`ingest/har`).
fn source_folders(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 folder name").to_string();
        let rel = if rel.is_empty() { name } else { format!("{rel}/{name}") };
        source_folders(&path, &rel, out);
        out.push(rel);
    }
}

/// Whether `text` names `folder` (relative to `src/`) as `src/FOLDER/`, or as `FOLDER/` not
/// glued to a longer path (`queries/report/` does not name `report/`).
fn names_folder(text: &str, folder: &str) -> bool {
    if text.contains(&format!("src/{folder}/")) {
        return true;
    }
    let needle = format!("{folder}/");
    text.match_indices(&needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        !matches!(before, Some(c) if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
    })
}

/// docs/layout.md describes every folder of `src/`: a folder added without a word there fails
/// here, by name.
#[test]
fn layout_doc_names_every_source_folder() {
    let layout = read(&repo().join("docs/layout.md"));
    let mut folders = Vec::new();
    source_folders(&repo().join("src"), "", &mut folders);
    assert!(folders.iter().any(|f| f == "ingest/http"), "the walk of src/ found {folders:?}");
    let missing: Vec<String> = folders.into_iter().filter(|f| !names_folder(&layout, f)).map(|f| format!("src/{f}/")).collect();
    assert!(missing.is_empty(), "docs/layout.md does not mention {missing:?}: say what each folder does (as `src/PATH/` or `PATH/`)");
}

#[test]
fn names_folder_needs_the_whole_path() {
    assert!(names_folder("- `src/report/export/`: one file", "report/export"));
    assert!(names_folder("  - `ingest/har/`: HAR files", "ingest/har"));
    assert!(!names_folder("SQL in `queries/report/`", "report"));
    assert!(!names_folder("see `src/ingest/har/`", "har"));
}

/// The relative link targets of one Markdown text: `[text](target)` and `![alt](target)`
/// outside code blocks and code spans, without `#anchor`; web and mail links and links to an
/// anchor of the same page are left out.
fn relative_links(markdown: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fence: Option<usize> = None;
    for line in markdown.lines() {
        let ticks = line.trim_start().chars().take_while(|&c| c == '`').count();
        match fence {
            None if ticks >= 3 => {
                fence = Some(ticks);
                continue;
            }
            Some(n) if ticks >= n && line.trim().chars().all(|c| c == '`') => {
                fence = None;
                continue;
            }
            Some(_) => continue,
            None => {}
        }
        // Drop code spans: text between backticks is not Markdown.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            rest = &rest[end..];
            if target.is_empty() || target.starts_with('#') || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap_or(target);
            links.push(path.to_string());
        }
    }
    links
}

#[test]
fn relative_links_skip_code_web_and_anchors() {
    let md = "See [a](docs/a.md#x), ![b](img.png) and [c](https://x.org/y).\n`[d](no.md)` [e](#top)\n```\n[f](no.md)\n```\n";
    assert_eq!(relative_links(md), vec!["docs/a.md".to_string(), "img.png".to_string()]);
}

/// README.md stays a front page (under 400 lines; the manual is in docs/), and every relative
/// link in README.md and docs/*.md points at a file or folder that exists.
#[test]
fn readme_is_a_front_page_and_doc_links_resolve() {
    let readme = read(&repo().join("README.md"));
    let lines = readme.lines().count();
    assert!(lines < 400, "README.md has {lines} lines: keep it under 400 and move reference text to docs/");

    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ is in the repository")
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() > 1, "docs/ holds the guide: {docs:?}");
    pages.extend(docs);

    let mut broken = Vec::new();
    for page in &pages {
        let dir = page.parent().expect("a page is in a folder");
        for link in relative_links(&read(page)) {
            if !dir.join(&link).exists() {
                broken.push(format!("{}: {link}", page.strip_prefix(repo()).unwrap_or(page).display()));
            }
        }
    }
    assert!(broken.is_empty(), "relative links to nothing: {broken:#?}");
}
