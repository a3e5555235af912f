//! Multi-round-trip calls (2026-07-28): an `input_required` result issues a `requestState`;
//! the client's retry (a new id, the same method and tool) echoes it and joins that chain as
//! its next round. Chains are keyed by the state, not by session: a stateless client may
//! retry on another connection. Either side may come first: a stdio tee pair is read one
//! direction after the other, so every retry is seen before the result it answers.
//! Also what a chain means once its rows leave (`settle`): which round is its last, its
//! latency from its first request, and a timeout's wait; the rules read these columns.

use std::collections::HashMap;
use std::sync::Arc;

use super::facts::timed_out;
use super::rows::CallRow;

type Key = (Arc<str>, Option<Arc<str>>, String);

/// Chains waiting for their next round, retries waiting for their chain, and when each chain
/// of more than one round started.
#[derive(Default)]
pub(crate) struct Chains {
    /// (method, tool, issued state) → the issuing round's (chain_id, round, call number).
    waiting: HashMap<Key, (u64, u32, usize)>,
    /// (method, tool, echoed state) → call number of a retry seen before the result.
    retries: HashMap<Key, usize>,
    /// chain_id → the earliest request timestamp of its rounds and the largest response of
    /// its answered rounds, for chains of more than one round (one entry per such chain: its
    /// rows may leave before its last round comes).
    starts: HashMap<u64, Start>,
}

/// What a chain of more than one round keeps while its rounds come.
#[derive(Clone, Copy)]
struct Start {
    ts: Option<i64>,
    resp_bytes: u64,
}

impl Chains {
    /// A request about to be held as call number `idx`: when it echoes a waiting state of the
    /// same method and tool it becomes that chain's next round (a state is used once), and
    /// the call number of the round it continues is returned: that round is no longer the
    /// chain's last. Otherwise it waits for the result that issues its state.
    pub fn request(&mut self, call: &mut CallRow, state: Option<&str>, idx: usize) -> Option<usize> {
        let state = state?;
        let key = (call.method.clone(), call.tool.clone(), state.to_string());
        if let Some((chain, round, of)) = self.waiting.remove(&key) {
            call.chain_id = chain;
            call.round = round.saturating_add(1);
            self.joined(chain, call.req_ts_us);
            Some(of)
        } else {
            self.retries.insert(key, idx);
            None
        }
    }

    /// An `input_required` result of `call` (call number `idx`) issued `state`. Returns the
    /// call number of a retry already seen with that state: the caller makes it the next
    /// round ([`next_round`]).
    pub fn issued(&mut self, call: &CallRow, idx: usize, state: &str) -> Option<usize> {
        self.joined(call.chain_id, call.req_ts_us);
        if let Some(start) = self.starts.get_mut(&call.chain_id) {
            start.resp_bytes = start.resp_bytes.max(call.resp_bytes.unwrap_or(0));
        }
        let key = (call.method.clone(), call.tool.clone(), state.to_string());
        if let Some(idx) = self.retries.remove(&key) {
            return Some(idx);
        }
        self.waiting.insert(key, (call.chain_id, call.round, idx));
        None
    }

    /// A round with request timestamp `ts` belongs to `chain`, which has more than one round.
    pub fn joined(&mut self, chain: u64, ts: Option<i64>) {
        let start = &mut self.starts.entry(chain).or_insert(Start { ts, resp_bytes: 0 }).ts;
        *start = match (*start, ts) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Fills what a call means for its chain, as it leaves the rows: whether it timed out,
    /// and on the chain's last round the logical call's latency (first round's request to
    /// this answer) and largest response, and, for a timeout, how long the requester waited
    /// from the first request.
    /// Timestamps are subtracted as doubles, as the rules did in SQL, so the numbers are the
    /// ones the reports always showed.
    pub fn settle(&self, call: &mut CallRow) {
        call.timed_out = timed_out(call);
        let chain = self.starts.get(&call.chain_id).copied();
        let start = match chain.map(|c| c.ts) {
            Some(start) => match (start, call.req_ts_us) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            None => call.req_ts_us,
        };
        let ms = |from: Option<i64>, to: Option<i64>| Some((to? as f64 - from? as f64) / 1000.0);
        call.chain_latency_ms = match (call.chain_last, call.round) {
            (false, _) => None,
            (true, 1) => call.latency_ms,
            (true, _) => ms(start, call.resp_ts_us),
        };
        let own = call.resp_bytes.unwrap_or(0);
        call.chain_resp_bytes = call.chain_last.then(|| chain.map_or(own, |c| c.resp_bytes.max(own)));
        call.waited_ms = if call.timed_out && call.chain_last { ms(start, call.cancel_ts_us).or(call.chain_latency_ms) } else { None };
    }
}

/// Makes `retry` the round after `of` (whose `chains.issued` recorded the chain's start).
pub(crate) fn next_round(chains: &mut Chains, retry: &mut CallRow, of: (u64, u32)) {
    retry.chain_id = of.0;
    retry.round = of.1.saturating_add(1);
    chains.joined(of.0, retry.req_ts_us);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seq: u64) -> CallRow {
        CallRow { method: "tools/call".into(), tool: Some("approve".into()), req_seq: seq, chain_id: seq, round: 1, ..CallRow::default() }
    }

    #[test]
    fn a_retry_after_the_result_joins_the_chain_once() {
        let mut chains = Chains::default();
        let first = call(3);
        assert_eq!(chains.issued(&first, 0, "s1"), None);
        let mut retry = call(7);
        assert_eq!(chains.request(&mut retry, Some("s1"), 1), Some(0), "it continues call 0");
        assert_eq!((retry.chain_id, retry.round), (3, 2));
        let mut again = call(9);
        assert_eq!(chains.request(&mut again, Some("s1"), 2), None);
        assert_eq!((again.chain_id, again.round), (9, 1), "a state joins one retry only");
        let mut other_tool = CallRow { tool: Some("other".into()), ..call(11) };
        assert_eq!(chains.issued(&retry, 1, "s2"), None);
        chains.request(&mut other_tool, Some("s2"), 3);
        assert_eq!((other_tool.chain_id, other_tool.round), (11, 1), "the method and tool must match");
    }

    #[test]
    fn a_chain_is_sized_by_its_largest_round_on_its_last_round() {
        let mut chains = Chains::default();
        let mut first = CallRow { resp_bytes: Some(5_000), ..call(3) };
        chains.issued(&first, 0, "s1");
        let mut last = CallRow { resp_bytes: Some(300), chain_last: true, ..call(7) };
        chains.request(&mut last, Some("s1"), 1);
        first.chain_last = false;
        chains.settle(&mut first);
        chains.settle(&mut last);
        assert_eq!((first.chain_resp_bytes, last.chain_resp_bytes), (None, Some(5_000)), "the input_required round was the larger");
        let mut alone = CallRow { chain_last: true, ..call(11) };
        chains.settle(&mut alone);
        assert_eq!(alone.chain_resp_bytes, Some(0), "an unanswered call of one round");
    }

    #[test]
    fn a_retry_seen_before_the_result_is_found_when_the_result_comes() {
        let mut chains = Chains::default();
        let first = call(0);
        let mut retry = call(1);
        chains.request(&mut retry, Some("s1"), 5);
        assert_eq!((retry.chain_id, retry.round), (1, 1), "not linked yet");
        assert_eq!(chains.issued(&first, 4, "s1"), Some(5));
        next_round(&mut chains, &mut retry, (first.chain_id, first.round));
        assert_eq!((retry.chain_id, retry.round), (0, 2));
        assert_eq!(chains.issued(&first, 4, "s1"), None, "the retry was claimed");
    }

    #[test]
    fn a_chain_is_timed_from_its_first_request_on_its_last_round() {
        let mut chains = Chains::default();
        let mut first = CallRow { req_ts_us: Some(1_000_000), resp_ts_us: Some(1_500_000), latency_ms: Some(500.0), ..call(0) };
        assert_eq!(chains.issued(&first, 0, "s1"), None);
        let mut last = CallRow { req_ts_us: Some(3_000_000), resp_ts_us: Some(3_250_000), latency_ms: Some(250.0), chain_last: true, ..call(1) };
        assert_eq!(chains.request(&mut last, Some("s1"), 1), Some(0));
        first.chain_last = false;
        chains.settle(&mut first);
        chains.settle(&mut last);
        assert_eq!(first.chain_latency_ms, None, "an earlier round is not the logical call");
        assert_eq!(last.chain_latency_ms, Some(2250.0), "from the first request to the last answer");
        assert!(!last.timed_out);

        let mut alone = CallRow { req_ts_us: Some(10_000), cancel_ts_us: Some(70_010_000), cancelled: true, cancel_reason: Some("Request timed out".into()), chain_last: true, ..call(5) };
        chains.settle(&mut alone);
        assert!(alone.timed_out);
        assert_eq!((alone.chain_latency_ms, alone.waited_ms), (None, Some(70_000.0)), "unanswered: waited until the cancellation");
        let mut answered = CallRow { error_code: Some(-32001), latency_ms: Some(60_000.0), chain_last: true, ..call(6) };
        chains.settle(&mut answered);
        assert!(answered.timed_out);
        assert_eq!(answered.waited_ms, Some(60_000.0), "answered -32001: waited until the answer");
        let mut other = CallRow { cancelled: true, cancel_reason: Some("user pressed stop".into()), chain_last: true, ..call(7) };
        chains.settle(&mut other);
        assert!(!other.timed_out);
    }
}
