//! Pagination walks: every paginated call (protocol `*/list` methods and tools whose arguments
//! or results carry cursors) as a page of a walk, with the facts pagination rules need.
//!
//! A walk is one conversation's traversal of one list: it starts at a request without a
//! cursor and follows each `nextCursor` to the request that sends it (the session is the
//! conversation, so a walk crosses TCP connections). A later walk that sends the same cursor
//! strings (a client re-listing after its cache expired, or after an error) is a new walk,
//! not a loop; a loop is a cursor sent again within one walk. A cursor never issued in the
//! conversation starts a walk of its own. Items are compared by identity (their key) with
//! every earlier page of the walk; cursors that are base64 JSON also expose their offset or
//! last key, which is supporting evidence.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::rows::{CallRow, PageRow};

const LIST_METHODS: &[&str] = &["tools/list", "resources/list", "resources/templates/list", "prompts/list"];

/// How many keys a `repeated_keys` / `skipped_keys` cell names before saying how many more.
const KEYS_SHOWN: usize = 10;

/// What a cursor says about itself when it is base64 of JSON.
struct DecodedCursor {
    text: String,
    offset: Option<i64>,
    after: Option<String>,
}

fn decode_cursor(cursor: &str) -> Option<DecodedCursor> {
    let bytes = crate::ingest::base64::decode_base64(cursor.trim())?;
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

/// Whether a call is a page of a walk.
pub(crate) fn is_page(c: &CallRow) -> bool {
    LIST_METHODS.contains(&&*c.method) || (&*c.method == "tools/call" && (c.cursor_in.is_some() || c.cursor_out.is_some()))
}

/// The identities of one page's items (from the response), keyed by the request's seq.
#[derive(Debug, Default, Clone)]
pub struct PageItems {
    pub keys: Vec<String>,
    pub field: Option<String>,
    pub without_key: u64,
}

/// A walk being built: its pages (indexes), cursors sent, item keys returned.
#[derive(Default)]
struct Walk {
    pages: Vec<usize>,
    sent: HashSet<String>,
    keys: HashSet<String>,
    /// Some page's items had keys.
    keyed: bool,
}

/// `a, b, c` for at most [`KEYS_SHOWN`] keys, then `and N more`.
fn key_list(keys: &[&str]) -> Option<String> {
    if keys.is_empty() {
        return None;
    }
    let mut s = keys.iter().take(KEYS_SHOWN).copied().collect::<Vec<_>>().join(", ");
    if keys.len() > KEYS_SHOWN {
        s.push_str(&format!(" and {} more", keys.len() - KEYS_SHOWN));
    }
    Some(s)
}

/// Builds the pages of one capture from its calls (in any order), the item keys of their
/// responses, and each session's last request seq and whether the capture holds its whole
/// pipe (a walk left open before the conversation's last request, or in a pipe recorded to its
/// end, is abandoned; one left open where a packet capture or log stops is `unknown`).
pub fn build_pages(calls: &[CallRow], items: &HashMap<u64, PageItems>, last_request: &HashMap<String, (u64, bool)>) -> Vec<PageRow> {
    let mut pages: Vec<PageRow> = Vec::new();
    let mut walks: Vec<Walk> = Vec::new();
    let mut walk_of: Vec<usize> = Vec::new();
    // (session, cursor) → the latest page that issued it.
    let mut issued: HashMap<(String, String), usize> = HashMap::new();
    let mut issued_anywhere: HashMap<String, String> = HashMap::new();
    // (session, cursor) → walks that sent it.
    let mut sent_in: HashMap<(String, String), usize> = HashMap::new();
    let mut walks_started: HashMap<(String, String), u64> = HashMap::new();
    let mut ordered: Vec<&CallRow> = calls.iter().filter(|c| is_page(c)).collect();
    ordered.sort_by_key(|c| c.req_seq);
    let no_items = PageItems::default();
    for c in ordered {
        let chain: String = if &*c.method == "tools/call" { c.tool.as_deref().unwrap_or_default().to_string() } else { c.method.to_string() };
        let page_items = items.get(&c.req_seq).unwrap_or(&no_items);
        let session = c.session.to_string();
        let mut row = PageRow {
            capture: c.capture.to_string(),
            session: session.clone(),
            chain: chain.clone(),
            rpc_id: c.rpc_id.to_string(),
            req_seq: c.req_seq,
            cursor_in: c.cursor_in.clone(),
            cursor_out: c.cursor_out.clone(),
            items_returned: c.items_returned,
            page_size_arg: c.page_size_arg,
            first_item_key: c.first_item_key.clone(),
            last_item_key: c.last_item_key.clone(),
            item_key_field: page_items.field.clone(),
            items_without_key: page_items.without_key,
            answered: c.resp_seq.is_some(),
            resp_bytes: c.resp_bytes,
            ..PageRow::default()
        };
        let cursor = c.cursor_in.as_ref().map(|cur| (session.clone(), cur.clone()));
        let previous = cursor.as_ref().and_then(|k| issued.get(k).copied()).filter(|p| pages[*p].chain == chain);
        let walk = match previous {
            Some(p) => {
                row.walk = pages[p].walk.clone();
                row.page_no = pages[p].page_no + 1;
                row.cursor_issued_before = true;
                row.page_size_changed = pages[p].page_size_arg != c.page_size_arg && pages[p].page_size_arg.is_some();
                pages[p].followed = true;
                walk_of[p]
            }
            None => {
                let n = walks_started.entry((session.clone(), chain.clone())).or_default();
                *n += 1;
                row.walk = format!("{chain}#{n}");
                row.page_no = 1;
                walks.push(Walk::default());
                walks.len() - 1
            }
        };
        if let Some(key) = &cursor {
            row.cursor_seen_before = !walks[walk].sent.insert(key.1.clone());
            match sent_in.insert(key.clone(), walk) {
                Some(w) if w != walk => row.cursor_of_earlier_walk = true,
                _ => {}
            }
            if !row.cursor_issued_before {
                row.cursor_issued_in = issued_anywhere.get(&key.1).cloned();
            }
            if let Some(d) = decode_cursor(&key.1) {
                row.offset_in = d.offset;
                if let (Some(after), Some(p)) = (&d.after, previous) {
                    row.cursor_matches_last_item = Some(pages[p].last_item_key.as_deref() == Some(after.as_str()));
                }
                row.cursor_decoded = Some(d.text);
            }
        } else {
            row.offset_in = Some(0);
        }
        // Items by identity against every earlier page of the walk: the repeats are written
        // on the page whose next cursor led here (its cursor advanced too little), as the
        // decoded offsets' are.
        if !page_items.keys.is_empty() {
            let w = &mut walks[walk];
            let mut repeated: Vec<&str> = Vec::new();
            let mut this_page: HashSet<&str> = HashSet::new();
            for k in &page_items.keys {
                if this_page.insert(k) && w.keys.contains(k.as_str()) {
                    repeated.push(k);
                }
            }
            if let Some(p) = previous.filter(|_| w.keyed) {
                pages[p].repeated_items = Some(repeated.len() as i64);
                pages[p].repeated_keys = key_list(&repeated);
            }
            w.keys.extend(this_page.into_iter().map(str::to_string));
            w.keyed = true;
        }
        if let Some(out) = c.cursor_out.as_deref().filter(|s| !s.is_empty()) {
            row.offset_out = decode_cursor(out).and_then(|d| d.offset);
            issued.insert((session.clone(), out.to_string()), pages.len());
            issued_anywhere.entry(out.to_string()).or_insert_with(|| session.clone());
        }
        if let (Some(i), Some(o)) = (row.offset_in, row.offset_out) {
            // Offsets come from the input: saturate rather than overflow.
            let advance = o.saturating_sub(i);
            row.advance = Some(advance);
            if let Some(n) = row.items_returned.map(|n| i64::try_from(n).unwrap_or(i64::MAX)) {
                row.offset_repeats = Some(n.saturating_sub(advance).max(0));
                row.offset_skips = Some(advance.saturating_sub(n).max(0));
            }
        }
        walks[walk].pages.push(pages.len());
        walk_of.push(walk);
        pages.push(row);
    }
    end_walks(&mut pages, &walks, last_request);
    skipped_by_identity(&mut pages, &walks);
    pages
}

/// How each walk ended, written on its last page.
fn end_walks(pages: &mut [PageRow], walks: &[Walk], last_request: &HashMap<String, (u64, bool)>) {
    for w in walks {
        let Some(&last) = w.pages.last() else { continue };
        let p = &pages[last];
        let next = p.cursor_out.as_deref().filter(|s| !s.is_empty());
        let end = if p.cursor_seen_before {
            "loop"
        } else if !p.answered {
            "unknown"
        } else if next.is_none() {
            "complete"
        } else if next == p.cursor_in.as_deref() {
            "loop"
        } else if last_request.get(&p.session).is_some_and(|&(seq, whole)| whole || seq > p.req_seq) {
            "abandoned"
        } else {
            "unknown"
        };
        pages[last].walk_end = Some(end.to_string());
    }
}

/// Items a complete walk never returned though the list had them all along: a complete walk
/// of the same list in the same conversation that ended before this one started returned
/// them, and so did one that started after it ended (a list that changed between two walks
/// is not drift). Written on the walk's last page.
fn skipped_by_identity(pages: &mut [PageRow], walks: &[Walk]) {
    let span = |w: &Walk| (pages[w.pages[0]].req_seq, pages[*w.pages.last().expect("walks have pages")].req_seq);
    let mut by_list: HashMap<(String, String, String), Vec<&Walk>> = HashMap::new();
    for w in walks.iter().filter(|w| w.keyed && w.pages.last().is_some_and(|&l| pages[l].walk_end.as_deref() == Some("complete"))) {
        let p = &pages[w.pages[0]];
        by_list.entry((p.capture.clone(), p.session.clone(), p.chain.clone())).or_default().push(w);
    }
    let mut found: Vec<(usize, Vec<String>)> = Vec::new();
    for group in by_list.values().filter(|g| g.len() > 2) {
        // Per key: the end of the first walk that returned it and the start of the last one.
        // A key is in a walk before `w` when its first walk ended before `w` started, and in
        // one after it when its last walk started after `w` ended: one pass over the keys, then
        // one per walk over the distinct keys (never walk x walk, which a gateway re-listing
        // tools thousands of times in one session turns into minutes).
        let mut seen: HashMap<&str, (u64, u64)> = HashMap::new();
        for w in group {
            let (start, end) = span(w);
            for k in &w.keys {
                let e = seen.entry(k.as_str()).or_insert((end, start));
                e.0 = e.0.min(end);
                e.1 = e.1.max(start);
            }
        }
        for w in group {
            let (start, end) = span(w);
            let mut missing: Vec<String> =
                seen.iter().filter(|(k, (first_end, last_start))| *first_end < start && *last_start > end && !w.keys.contains(**k)).map(|(k, _)| (*k).to_string()).collect();
            missing.sort_unstable();
            found.push((*w.pages.last().expect("walks have pages"), missing));
        }
    }
    for (last, missing) in found {
        let shown: Vec<&str> = missing.iter().map(String::as_str).collect();
        pages[last].skipped_items = Some(missing.len() as i64);
        pages[last].skipped_keys = key_list(&shown);
    }
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

    fn list(session: &str, seq: u64, cursor_in: Option<&str>, cursor_out: Option<&str>) -> CallRow {
        CallRow { session: session.into(), method: "tools/list".into(), tool: None, ..call(seq, cursor_in, cursor_out, 0) }
    }

    fn keyed(pages: &[(u64, &[&str])]) -> HashMap<u64, PageItems> {
        pages
            .iter()
            .map(|(seq, keys)| (*seq, PageItems { keys: keys.iter().map(|k| k.to_string()).collect(), field: Some("name".into()), without_key: 0 }))
            .collect()
    }

    fn whole(session: &str, last: u64) -> HashMap<String, (u64, bool)> {
        HashMap::from([(session.to_string(), (last, true))])
    }

    #[test]
    fn offsets_are_supporting_evidence_when_items_have_no_keys() {
        // {"offset":10} and {"offset":20}
        let c10 = "eyJvZmZzZXQiOjEwfQ==";
        let c20 = "eyJvZmZzZXQiOjIwfQ==";
        let pages = build_pages(&[call(0, None, Some(c10), 20), call(2, Some(c10), Some(c20), 20)], &HashMap::new(), &whole("s", 2));
        assert_eq!(pages.len(), 2);
        assert_eq!((pages[0].advance, pages[0].offset_repeats, pages[0].followed), (Some(10), Some(10), true));
        assert_eq!(pages[0].repeated_items, None, "no keys: identity unknown");
        assert_eq!((pages[1].walk.as_str(), pages[1].page_no, pages[1].followed), ("query_rows#1", 2, false));
        assert_eq!(pages[1].walk_end.as_deref(), Some("abandoned"));
        assert_eq!(pages[1].cursor_decoded.as_deref(), Some("{\"offset\":10}"));
    }

    #[test]
    fn opaque_cursor_drift_is_found_by_identity() {
        // Page 1 returns 5 tools, its cursor advances 3: page 2 repeats d and e.
        let items = keyed(&[(0, &["a", "b", "c", "d", "e"]), (2, &["d", "e", "f", "g", "h"]), (4, &["i"])]);
        let calls = [list("s", 0, None, Some("tl.AAA")), list("s", 2, Some("tl.AAA"), Some("tl.BBB")), list("s", 4, Some("tl.BBB"), None)];
        let pages = build_pages(&calls, &items, &whole("s", 4));
        // Written on the page whose cursor advanced too little.
        assert_eq!(pages.iter().map(|p| p.repeated_items).collect::<Vec<_>>(), vec![Some(2), Some(0), None]);
        assert_eq!(pages[0].repeated_keys.as_deref(), Some("d, e"));
        assert!(pages.iter().all(|p| p.walk == "tools/list#1"));
        assert_eq!(pages[2].walk_end.as_deref(), Some("complete"));
        assert!(pages[..2].iter().all(|p| p.followed && p.walk_end.is_none()));
    }

    #[test]
    fn a_second_walk_with_the_same_cursors_is_not_a_loop() {
        let calls = [
            list("s", 0, None, Some("c1")),
            list("s", 2, Some("c1"), None),
            // The client re-lists (cache expired, or after -32020): same cursor strings.
            list("s", 4, None, Some("c1")),
            list("s", 6, Some("c1"), None),
        ];
        let pages = build_pages(&calls, &HashMap::new(), &whole("s", 6));
        assert!(pages.iter().all(|p| !p.cursor_seen_before));
        assert_eq!(pages.iter().map(|p| p.walk.as_str()).collect::<Vec<_>>(), vec!["tools/list#1", "tools/list#1", "tools/list#2", "tools/list#2"]);
        assert!(pages[3].cursor_of_earlier_walk && pages[3].cursor_issued_before);
        assert_eq!((pages[1].walk_end.as_deref(), pages[3].walk_end.as_deref()), (Some("complete"), Some("complete")));
    }

    #[test]
    fn loop_within_a_walk_and_foreign_cursor() {
        let c = "eyJvZmZzZXQiOjIwfQ==";
        let pages = build_pages(
            &[call(0, None, Some(c), 10), call(2, Some(c), Some(c), 10), call(4, Some(c), Some(c), 10), call(6, Some("bm9wZQ=="), None, 1)],
            &HashMap::new(),
            &whole("s", 6),
        );
        assert!(!pages[1].cursor_seen_before);
        assert!(pages[2].cursor_seen_before);
        assert_eq!(pages[2].walk, "query_rows#1");
        assert_eq!(pages[2].walk_end.as_deref(), Some("loop"));
        assert!(!pages[3].cursor_issued_before);
        assert_eq!(pages[3].walk, "query_rows#2");
    }

    #[test]
    fn a_walk_cut_off_by_a_packet_capture_is_unknown_not_abandoned() {
        let calls = [list("s", 0, None, Some("c1"))];
        let cut = HashMap::from([("s".to_string(), (0, false))]);
        assert_eq!(build_pages(&calls, &HashMap::new(), &cut)[0].walk_end.as_deref(), Some("unknown"));
        let went_on = HashMap::from([("s".to_string(), (9, false))]);
        assert_eq!(build_pages(&calls, &HashMap::new(), &went_on)[0].walk_end.as_deref(), Some("abandoned"));
    }

    #[test]
    fn items_without_keys_are_never_repeats_and_skips_need_walks_before_and_after() {
        let mut items = keyed(&[(0, &["a", "b"]), (2, &["a", "b", "c"]), (4, &["a", "b", "c"]), (6, &[])]);
        items.get_mut(&6).unwrap().without_key = 3;
        let calls = [list("s", 0, None, None), list("s", 2, None, None), list("s", 4, None, None), list("s", 6, None, None)];
        let pages = build_pages(&calls, &items, &whole("s", 6));
        // Walk 1 misses c, but no walk before it: the list may have grown.
        assert_eq!(pages[0].skipped_items, Some(0));
        // Walk 4 has no keys: not compared, and its keyless items are not repeats.
        assert_eq!((pages[3].repeated_items, pages[3].skipped_items, pages[3].items_without_key), (None, None, 3));
        let calls = [list("s", 0, None, None), list("s", 2, None, None), list("s", 4, None, None)];
        let items = keyed(&[(0, &["a", "b", "c"]), (2, &["a", "c"]), (4, &["a", "b", "c"])]);
        let pages = build_pages(&calls, &items, &whole("s", 4));
        assert_eq!((pages[1].skipped_items, pages[1].skipped_keys.as_deref()), (Some(1), Some("b")));
    }

    #[test]
    fn two_hundred_thousand_pages_of_one_session_are_linked_in_linear_time() {
        // One long walk: page n sends cursor n-1 and issues cursor n. Pairwise comparison
        // (the old way) is 2e10 steps here: minutes, even in release.
        let n = 200_000u64;
        let cursors: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        let calls: Vec<CallRow> =
            (0..n).map(|i| call(2 * i, i.checked_sub(1).map(|p| cursors[p as usize].as_str()), Some(&cursors[i as usize]), 1)).collect();
        let pages = build_pages(&calls, &HashMap::new(), &whole("s", 2 * n));
        assert_eq!(pages.len() as u64, n);
        assert!(pages[..pages.len() - 1].iter().all(|p| p.followed));
        assert!(!pages[pages.len() - 1].followed);
        assert_eq!(pages[pages.len() - 1].page_no, n);
    }

    #[test]
    fn fifty_thousand_one_page_walks_of_one_session_are_compared_in_linear_time() {
        // A gateway re-listing its tools all day: every tools/list a complete walk of its own.
        let n = 50_000u64;
        let calls: Vec<CallRow> = (0..n).map(|i| list("s", 2 * i, None, None)).collect();
        let items: HashMap<u64, PageItems> = (0..n).map(|i| (2 * i, PageItems { keys: vec!["a".into(), "b".into(), "c".into()], field: Some("name".into()), without_key: 0 })).collect();
        // Walk x walk was 2.5e9 set operations here: minutes, even in release.
        let pages = build_pages(&calls, &items, &whole("s", 2 * n));
        assert!(pages.iter().all(|p| p.skipped_items == Some(0)));
    }

    #[test]
    fn extreme_cursor_offsets_and_counts_do_not_overflow() {
        // {"offset":-9223372036854775808} and {"offset":9223372036854775807}
        let min = "eyJvZmZzZXQiOi05MjIzMzcyMDM2ODU0Nzc1ODA4fQ==";
        let max = "eyJvZmZzZXQiOjkyMjMzNzIwMzY4NTQ3NzU4MDd9";
        let pages = build_pages(&[call(0, Some(min), Some(max), u64::MAX), call(2, Some(max), Some(min), u64::MAX)], &HashMap::new(), &whole("s", 2));
        assert_eq!(pages[0].offset_in, Some(i64::MIN));
        assert_eq!(pages[0].advance, Some(i64::MAX));
        assert_eq!(pages[1].advance, Some(i64::MIN));
        assert_eq!(pages[1].offset_skips, Some(0));
        assert_eq!(pages[1].offset_repeats, Some(i64::MAX));
    }
}
