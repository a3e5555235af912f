//! Request/response pairing: calls are held as rows until answered, found by (session,
//! request direction, id) or, for `id: null` HTTP errors, by their exchange. What a response
//! says is read elsewhere (`facts.rs`); this only finds the call it answers.
#![allow(clippy::vec_box, reason = "answered calls stay in the boxes they were held in: moving a large row out of its box is a copy (measured, bench/README.md)")]

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use equivalent::Equivalent;

use polars::prelude::PlHashMap;

use super::chunks::{CALL_CHUNK_ROWS, Spares};
use super::facts::input_required;
use super::rows::CallRow;
use crate::ingest::frame::{Direction, HttpContext};

/// The calls of one capture that are still rows, by call number (request order).
pub(crate) struct Calls {
    /// Call `base + i` at `rows[i]`; `None` once it left as a chunk. Boxed: a row is large, and
    /// a hole left by a chunked call, before a call still pending, costs a pointer.
    rows: VecDeque<Option<Box<CallRow>>>,
    /// Call number of `rows[0]`.
    base: usize,
    /// Calls in `rows` (not holes).
    held: usize,
    next: usize,
    chunk_at: usize,
    /// (session, request direction, id) → call number of the latest such request.
    by_key: PlHashMap<CallKey, usize>,
    /// (connection, exchange) → call number, to pair `id: null` HTTP errors.
    by_exchange: HashMap<(u64, u64), usize>,
    /// Boxes of chunked calls handed back, and those taken from there not yet reused.
    spares: Arc<Spares>,
    reuse: Vec<Box<CallRow>>,
}

/// What holding a request found.
pub(crate) struct Requested {
    /// The request's call number.
    pub idx: usize,
    /// The call number of the latest earlier request with the same key.
    pub earlier: Option<usize>,
    /// Enough calls are held to chunk the answered ones.
    pub chunk: bool,
}

/// A request's (session, request direction, id), held by the map.
#[derive(PartialEq, Eq)]
struct CallKey {
    session: Arc<str>,
    requester: Direction,
    id: Arc<str>,
}

/// The same key borrowed, to look one up without building it: every response, duplicate
/// check and chunking looks up a key, and building one costs an allocation for the id.
struct KeyRef<'a> {
    session: &'a str,
    requester: Direction,
    id: &'a str,
}

impl<'a> KeyRef<'a> {
    fn of(key: &'a CallKey) -> Self {
        KeyRef { session: &key.session, requester: key.requester, id: &key.id }
    }
}

impl Hash for KeyRef<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.session.hash(h);
        self.requester.hash(h);
        self.id.hash(h);
    }
}

impl Hash for CallKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        KeyRef::of(self).hash(h);
    }
}

impl Equivalent<CallKey> for KeyRef<'_> {
    fn equivalent(&self, key: &CallKey) -> bool {
        self.requester == key.requester && self.id == &*key.id && self.session == &*key.session
    }
}

impl Default for Calls {
    fn default() -> Self {
        Calls {
            rows: VecDeque::new(),
            base: 0,
            held: 0,
            next: 0,
            chunk_at: CALL_CHUNK_ROWS,
            by_key: PlHashMap::default(),
            by_exchange: HashMap::new(),
            spares: Arc::default(),
            reuse: Vec::new(),
        }
    }
}

impl Calls {
    /// The latest request with that key, if it is still a row.
    pub fn latest(&self, session: &Arc<str>, requester: Direction, id: &str) -> Option<&CallRow> {
        self.by_key.get(&KeyRef { session, requester, id }).and_then(|i| self.get(*i))
    }

    /// Call number `idx`, if it is still a row.
    pub fn get(&self, idx: usize) -> Option<&CallRow> {
        self.rows.get(idx.checked_sub(self.base)?)?.as_deref()
    }

    /// Holds a new request. Says when enough calls are held to chunk the answered ones, and
    /// the call number of an earlier request with the same key (a duplicate id), found by the
    /// same lookup that records this one.
    pub fn request(&mut self, call: CallRow, http: Option<&HttpContext>) -> Requested {
        let key = CallKey { session: Arc::clone(&call.session), requester: call.direction, id: Arc::clone(&call.rpc_id) };
        let idx = self.push(call);
        let earlier = self.by_key.insert(key, idx);
        if let Some(h) = http {
            self.by_exchange.insert((h.connection, h.exchange), idx);
        }
        Requested { idx, earlier, chunk: self.held >= self.chunk_at }
    }

    /// Holds `call` as the next call number.
    fn push(&mut self, call: CallRow) -> usize {
        let idx = self.next;
        self.next += 1;
        if self.reuse.is_empty() {
            self.reuse = self.spares.take_all();
        }
        let boxed = match self.reuse.pop() {
            Some(mut spare) => {
                *spare = call;
                spare
            }
            None => Box::new(call),
        };
        self.rows.push_back(Some(boxed));
        self.held += 1;
        idx
    }

    /// Where chunked calls' boxes go back to.
    pub fn spares(&self) -> &Arc<Spares> {
        &self.spares
    }

    /// The call a response answers: by key, or (id `null`) by HTTP exchange, the second
    /// reported as `true`. The number may name a call that already left as a chunk.
    pub fn answered_by(&self, session: &Arc<str>, requester: Direction, id: &str, http: Option<&HttpContext>) -> (Option<usize>, bool) {
        let idx = self.by_key.get(&KeyRef { session, requester, id }).copied();
        if idx.is_none()
            && id == "null"
            && let Some(h) = http
        {
            let idx = self.by_exchange.get(&(h.connection, h.exchange)).copied();
            return (idx, idx.is_some());
        }
        (idx, false)
    }

    /// Calls held as rows.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The call number the next request will get.
    pub fn next_index(&self) -> usize {
        self.next
    }

    pub fn contains(&self, idx: usize) -> bool {
        self.get(idx).is_some()
    }

    pub fn get_mut(&mut self, idx: usize) -> Option<&mut CallRow> {
        self.rows.get_mut(idx.checked_sub(self.base)?)?.as_deref_mut()
    }

    /// The latest request with that key, for a cancellation.
    pub fn latest_mut(&mut self, session: &Arc<str>, requester: Direction, id: String) -> Option<&mut CallRow> {
        let idx = *self.by_key.get(&KeyRef { session, requester, id: &id })?;
        self.get_mut(idx)
    }

    /// Removes answered calls, in request order; pending calls stay, and so do cancelled
    /// calls not yet answered: a cancelled call is often answered late, and its response must
    /// still find it. They leave at a later chunk once answered, or at the end of the capture,
    /// so they are held no longer (and cost no more) than calls never answered.
    /// An `input_required` round no later round has joined stays too: whether it is its
    /// chain's last (`chain_last`) is known when the retry comes, or at the end.
    /// Boxed as held: a row is large, and moving it out of its box costs a copy.
    pub fn take_finished(&mut self) -> Vec<Box<CallRow>> {
        let mut rows = Vec::with_capacity(self.held);
        for (i, slot) in self.rows.iter_mut().enumerate() {
            let Some(call) = slot.take_if(|c| c.resp_seq.is_some() && !(c.chain_last && input_required(c))) else { continue };
            // One lookup: the key is removed, and put back in the rare case it names a later
            // request with the same id (nothing iterates the map, so its order is no output).
            let key = KeyRef { session: &call.session, requester: call.direction, id: &call.rpc_id };
            if let Some((key, later)) = self.by_key.remove_entry(&key)
                && later != self.base + i
            {
                self.by_key.insert(key, later);
            }
            rows.push(call);
        }
        self.held -= rows.len();
        while self.rows.front().is_some_and(Option::is_none) {
            self.rows.pop_front();
            self.base += 1;
        }
        rows
    }

    /// Takes back calls that could not be chunked (never expected), so nothing is lost.
    pub fn restore(&mut self, rows: Vec<Box<CallRow>>) {
        for call in rows {
            self.push(*call);
        }
    }

    /// Chunk again once twice as many calls as now are held (pending ones stay rows).
    pub fn chunked(&mut self) {
        self.chunk_at = (self.held * 2).max(CALL_CHUNK_ROWS);
    }

    /// All calls still held, in request order.
    pub fn into_rows(self) -> Vec<CallRow> {
        self.rows.into_iter().flatten().map(|c| *c).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(session: &Arc<str>, id: &str) -> CallRow {
        CallRow { session: Arc::clone(session), rpc_id: Arc::from(id), method: Arc::from("tools/call"), direction: Direction::ClientToServer, ..CallRow::default() }
    }

    #[test]
    fn an_answered_call_leaves_the_map_and_a_later_request_with_its_id_stays_findable() {
        let s: Arc<str> = Arc::from("s");
        let mut calls = Calls::default();
        let first = calls.request(call(&s, "7"), None).idx;
        let other = calls.request(call(&s, "8"), None).idx;
        calls.get_mut(first).expect("held").resp_seq = Some(2);
        // A later request reuses id 7 before the first one's row leaves.
        let later = calls.request(call(&s, "7"), None);
        assert_eq!(later.earlier, Some(first), "the duplicate is seen");
        let taken = calls.take_finished();
        assert_eq!(taken.len(), 1, "only the answered call leaves");
        assert_eq!(calls.answered_by(&s, Direction::ClientToServer, "7", None), (Some(later.idx), false), "id 7 still names the later request");
        assert_eq!(calls.answered_by(&s, Direction::ClientToServer, "8", None), (Some(other), false));
        // Once answered and taken, its key is gone too.
        calls.get_mut(later.idx).expect("held").resp_seq = Some(4);
        assert_eq!(calls.take_finished().len(), 1);
        assert_eq!(calls.answered_by(&s, Direction::ClientToServer, "7", None), (None, false), "no request with id 7 is held");
        assert_eq!(calls.held(), 1);
    }
}
