//! Multi-round-trip calls (2026-07-28): an `input_required` result issues a `requestState`;
//! the client's retry (a new id, the same method and tool) echoes it and joins that chain as
//! its next round. Chains are keyed by the state, not by session: a stateless client may
//! retry on another connection. Either side may come first: a stdio tee pair is read one
//! direction after the other, so every retry is seen before the result it answers.

use std::collections::HashMap;

use super::rows::CallRow;

type Key = (String, Option<String>, String);

/// Chains waiting for their next round, and retries waiting for their chain.
#[derive(Default)]
pub(crate) struct Chains {
    /// (method, tool, issued state) → the issuing round's (chain_id, round).
    waiting: HashMap<Key, (u64, u32)>,
    /// (method, tool, echoed state) → call number of a retry seen before the result.
    retries: HashMap<Key, usize>,
}

impl Chains {
    /// A request about to be held as call number `idx`: when it echoes a waiting state of the
    /// same method and tool it becomes that chain's next round (a state is used once);
    /// otherwise it waits for the result that issues its state.
    pub fn request(&mut self, call: &mut CallRow, state: Option<&str>, idx: usize) {
        let Some(state) = state else { return };
        let key = (call.method.clone(), call.tool.clone(), state.to_string());
        if let Some((chain, round)) = self.waiting.remove(&key) {
            call.chain_id = chain;
            call.round = round.saturating_add(1);
        } else {
            self.retries.insert(key, idx);
        }
    }

    /// An `input_required` result of `call` issued `state`. Returns the call number of a
    /// retry already seen with that state: the caller makes it the next round.
    pub fn issued(&mut self, call: &CallRow, state: &str) -> Option<usize> {
        let key = (call.method.clone(), call.tool.clone(), state.to_string());
        if let Some(idx) = self.retries.remove(&key) {
            return Some(idx);
        }
        self.waiting.insert(key, (call.chain_id, call.round));
        None
    }
}

/// Makes `retry` the round after `of`.
pub(crate) fn next_round(retry: &mut CallRow, of: (u64, u32)) {
    retry.chain_id = of.0;
    retry.round = of.1.saturating_add(1);
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
        assert_eq!(chains.issued(&first, "s1"), None);
        let mut retry = call(7);
        chains.request(&mut retry, Some("s1"), 1);
        assert_eq!((retry.chain_id, retry.round), (3, 2));
        let mut again = call(9);
        chains.request(&mut again, Some("s1"), 2);
        assert_eq!((again.chain_id, again.round), (9, 1), "a state joins one retry only");
        let mut other_tool = CallRow { tool: Some("other".into()), ..call(11) };
        assert_eq!(chains.issued(&retry, "s2"), None);
        chains.request(&mut other_tool, Some("s2"), 3);
        assert_eq!((other_tool.chain_id, other_tool.round), (11, 1), "the method and tool must match");
    }

    #[test]
    fn a_retry_seen_before_the_result_is_found_when_the_result_comes() {
        let mut chains = Chains::default();
        let first = call(0);
        let mut retry = call(1);
        chains.request(&mut retry, Some("s1"), 5);
        assert_eq!((retry.chain_id, retry.round), (1, 1), "not linked yet");
        assert_eq!(chains.issued(&first, "s1"), Some(5));
        next_round(&mut retry, (first.chain_id, first.round));
        assert_eq!((retry.chain_id, retry.round), (0, 2));
        assert_eq!(chains.issued(&first, "s1"), None, "the retry was claimed");
    }
}
