//! Cursor chains: every paginated call (protocol `*/list` methods and tools whose arguments or
//! results carry cursors) as a page of a chain, with the facts pagination rules need.
//!
//! A chain starts with a page requested without a cursor; a page whose cursor was issued by a
//! page of a chain continues that chain; a cursor never issued in the session starts a chain
//! of its own. Cursors that are base64 JSON expose their offset or last key.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::rows::{CallRow, PageRow};

const LIST_METHODS: &[&str] = &["tools/list", "resources/list", "resources/templates/list", "prompts/list"];

/// What a cursor says about itself when it is base64 of JSON.
struct DecodedCursor {
    text: String,
    offset: Option<i64>,
    after: Option<String>,
}

fn decode_cursor(cursor: &str) -> Option<DecodedCursor> {
    let bytes = crate::ingest::lines::jsonl::decode_base64(cursor.trim())?;
    let text = String::from_utf8(bytes).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let o = v.as_object()?;
    let offset = ["offset", "start", "skip", "position"].iter().find_map(|k| o.get(*k).and_then(Value::as_i64));
    let after = ["after", "last_id", "lastId", "last", "after_id"].iter().find_map(|k| match o.get(*k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    });
    Some(DecodedCursor { text, offset, after })
}

/// Whether a call is a page of a cursor chain.
pub(crate) fn is_page(c: &CallRow) -> bool {
    LIST_METHODS.contains(&c.method.as_str()) || (c.method == "tools/call" && (c.cursor_in.is_some() || c.cursor_out.is_some()))
}

/// Builds the pages of one capture from its calls (in request order).
pub fn build_pages(calls: &[CallRow]) -> Vec<PageRow> {
    let mut pages: Vec<PageRow> = Vec::new();
    // (session, cursor) → index of the page that issued it.
    let mut issued: HashMap<(String, String), usize> = HashMap::new();
    let mut issued_anywhere: HashMap<String, String> = HashMap::new();
    let mut sent: HashSet<(String, String)> = HashSet::new();
    let mut chains_started: HashMap<(String, String), u64> = HashMap::new();
    let mut ordered: Vec<&CallRow> = calls.iter().filter(|c| is_page(c)).collect();
    ordered.sort_by_key(|c| c.req_seq);
    for c in ordered {
        let chain = if c.method == "tools/call" { c.tool.clone().unwrap_or_default() } else { c.method.clone() };
        let mut row = PageRow {
            capture: c.capture.to_string(),
            session: c.session.to_string(),
            chain: chain.clone(),
            rpc_id: c.rpc_id.clone(),
            req_seq: c.req_seq,
            cursor_in: c.cursor_in.clone(),
            cursor_out: c.cursor_out.clone(),
            items_returned: c.items_returned,
            page_size_arg: c.page_size_arg,
            first_item_key: c.first_item_key.clone(),
            last_item_key: c.last_item_key.clone(),
            answered: c.resp_seq.is_some(),
            resp_bytes: c.resp_bytes,
            ..PageRow::default()
        };
        let previous = c.cursor_in.as_ref().and_then(|cur| issued.get(&(c.session.to_string(), cur.clone())).copied());
        match (&c.cursor_in, previous) {
            (Some(_), Some(p)) => {
                row.chain_id = pages[p].chain_id.clone();
                row.page_no = pages[p].page_no + 1;
                row.cursor_issued_before = true;
                row.page_size_changed = pages[p].page_size_arg != c.page_size_arg && pages[p].page_size_arg.is_some();
            }
            _ => {
                let n = chains_started.entry((c.session.to_string(), chain.clone())).or_default();
                *n += 1;
                row.chain_id = format!("{chain}#{n}");
                row.page_no = 1;
            }
        }
        if let Some(cur) = &c.cursor_in {
            row.cursor_seen_before = !sent.insert((c.session.to_string(), cur.clone()));
            if !row.cursor_issued_before {
                row.cursor_issued_in = issued_anywhere.get(cur).cloned();
            }
            if let Some(d) = decode_cursor(cur) {
                row.offset_in = d.offset;
                if let (Some(after), Some(p)) = (&d.after, previous) {
                    row.cursor_matches_last_item = Some(pages[p].last_item_key.as_deref() == Some(after.as_str()));
                }
                row.cursor_decoded = Some(d.text);
            }
        } else {
            row.offset_in = Some(0);
        }
        if let Some(out) = c.cursor_out.as_deref().filter(|s| !s.is_empty()) {
            row.offset_out = decode_cursor(out).and_then(|d| d.offset);
            issued.insert((c.session.to_string(), out.to_string()), pages.len());
            issued_anywhere.entry(out.to_string()).or_insert_with(|| c.session.to_string());
        }
        if let (Some(i), Some(o)) = (row.offset_in, row.offset_out) {
            // Offsets come from the input: saturate rather than overflow.
            let advance = o.saturating_sub(i);
            row.advance = Some(advance);
            if let Some(items) = row.items_returned.map(|n| i64::try_from(n).unwrap_or(i64::MAX)) {
                row.repeated_items = Some(items.saturating_sub(advance).max(0));
                row.skipped_items = Some(advance.saturating_sub(items).max(0));
            }
        }
        pages.push(row);
    }
    // A next cursor is followed when a later page of the session sends it: one pass records
    // the latest request sending each (session, cursor), so this is linear, not page × page.
    let mut last_sent: HashMap<(&str, &str), u64> = HashMap::new();
    for p in &pages {
        if let Some(cur) = p.cursor_in.as_deref() {
            let seq = last_sent.entry((p.session.as_str(), cur)).or_insert(p.req_seq);
            *seq = (*seq).max(p.req_seq);
        }
    }
    let followed: Vec<bool> = pages
        .iter()
        .map(|p| match p.cursor_out.as_deref().filter(|s| !s.is_empty()) {
            Some(out) => last_sent.get(&(p.session.as_str(), out)).is_some_and(|&seq| seq > p.req_seq),
            None => p.followed,
        })
        .collect();
    for (p, f) in pages.iter_mut().zip(followed) {
        p.followed = f;
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seq: u64, cursor_in: Option<&str>, cursor_out: Option<&str>, items: u64) -> CallRow {
        CallRow {
            session: "s".into(),
            method: "tools/call".into(),
            tool: Some("query_rows".into()),
            req_seq: seq,
            resp_seq: Some(seq + 1),
            cursor_in: cursor_in.map(str::to_string),
            cursor_out: cursor_out.map(str::to_string),
            items_returned: Some(items),
            ..CallRow::default()
        }
    }

    #[test]
    fn drift_repeats_and_abandoned_cursor() {
        // {"offset":10} and {"offset":20}
        let c10 = "eyJvZmZzZXQiOjEwfQ==";
        let c20 = "eyJvZmZzZXQiOjIwfQ==";
        let pages = build_pages(&[call(0, None, Some(c10), 20), call(2, Some(c10), Some(c20), 20)]);
        assert_eq!(pages.len(), 2);
        assert_eq!((pages[0].advance, pages[0].repeated_items, pages[0].followed), (Some(10), Some(10), true));
        assert_eq!((pages[1].chain_id.as_str(), pages[1].page_no, pages[1].followed), ("query_rows#1", 2, false));
        assert_eq!(pages[1].cursor_decoded.as_deref(), Some("{\"offset\":10}"));
    }

    #[test]
    fn loop_and_foreign_cursor() {
        let c = "eyJvZmZzZXQiOjIwfQ==";
        let pages = build_pages(&[call(0, None, Some(c), 10), call(2, Some(c), Some(c), 10), call(4, Some(c), Some(c), 10), call(6, Some("bm9wZQ=="), None, 1)]);
        assert!(pages[2].cursor_seen_before);
        assert_eq!(pages[2].chain_id, "query_rows#1");
        assert!(!pages[3].cursor_issued_before);
        assert_eq!(pages[3].chain_id, "query_rows#2");
    }

    #[test]
    fn two_hundred_thousand_pages_of_one_session_are_linked_in_linear_time() {
        // One long chain: page n sends cursor n-1 and issues cursor n. Pairwise comparison
        // (the old way) is 2e10 steps here: minutes, even in release.
        let n = 200_000u64;
        let cursors: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let calls: Vec<CallRow> =
            (0..n).map(|i| call(2 * i, i.checked_sub(1).map(|p| cursors[p as usize].as_str()), Some(&cursors[i as usize]), 1)).collect();
        let pages = build_pages(&calls);
        assert_eq!(pages.len() as u64, n);
        assert!(pages[..pages.len() - 1].iter().all(|p| p.followed));
        assert!(!pages[pages.len() - 1].followed);
        assert_eq!(pages[pages.len() - 1].page_no, n);
    }

    #[test]
    fn extreme_cursor_offsets_and_counts_do_not_overflow() {
        // {"offset":-9223372036854775808} and {"offset":9223372036854775807}
        let min = "eyJvZmZzZXQiOi05MjIzMzcyMDM2ODU0Nzc1ODA4fQ==";
        let max = "eyJvZmZzZXQiOjkyMjMzNzIwMzY4NTQ3NzU4MDd9";
        let pages = build_pages(&[call(0, Some(min), Some(max), u64::MAX), call(2, Some(max), Some(min), u64::MAX)]);
        assert_eq!(pages[0].offset_in, Some(i64::MIN));
        assert_eq!(pages[0].advance, Some(i64::MAX));
        assert_eq!(pages[1].advance, Some(i64::MIN));
        assert_eq!(pages[1].skipped_items, Some(0));
        assert_eq!(pages[1].repeated_items, Some(i64::MAX));
    }
}
