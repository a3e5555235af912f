//! A result's structuredContent as kept for the model's later checks: its text, read as JSON
//! once, on first use ([`Structured::value`]). Most results need no tree (no array for page
//! items, text that is not JSON, no outputSchema), so the parse pool reads it only when one
//! of those may need it and otherwise leaves it to whoever asks.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

/// structuredContent's text and, once read, its JSON (or the parser's message).
#[derive(Debug, Clone)]
pub struct Structured {
    text: Box<str>,
    tree: OnceLock<Result<Value, String>>,
}

impl Structured {
    /// Keeps `text`, not yet read.
    pub fn new(text: &str) -> Self {
        Structured { text: text.into(), tree: OnceLock::new() }
    }

    /// The JSON, read on the first call: what `serde_json::from_str` returns, its error as text.
    pub fn value(&self) -> &Result<Value, String> {
        self.tree.get_or_init(|| serde_json::from_str::<Value>(&self.text).map_err(|e| e.to_string()))
    }

    /// Whether the JSON may hold an array: false when no `[` byte is in the text at all (not
    /// even inside a string), so a value without one has no page items.
    pub fn may_hold_array(&self) -> bool {
        memchr::memchr(b'[', self.text.as_bytes()).is_some()
    }
}

/// Set once any tools/list of this run lists an outputSchema: from then on the pool reads every
/// kept structuredContent, as the model will check it. A hint of where the reading happens
/// (the pool runs ahead of the model), never of what is read.
static OUTPUT_SCHEMA_SEEN: AtomicBool = AtomicBool::new(false);

/// Notes that a tool with an outputSchema was listed.
pub(super) fn note_output_schema() {
    if !OUTPUT_SCHEMA_SEEN.load(Ordering::Relaxed) {
        OUTPUT_SCHEMA_SEEN.store(true, Ordering::Relaxed);
    }
}

/// Whether [`note_output_schema`] was called in this run.
pub(super) fn output_schema_seen() -> bool {
    OUTPUT_SCHEMA_SEEN.load(Ordering::Relaxed)
}

/// Equal when the JSON is (or both fail alike), as the trees were compared before they were
/// read lazily.
impl PartialEq for Structured {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text || self.value() == other.value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_once_and_says_where_arrays_may_be() {
        let s = Structured::new(r#"{"a":1,"b":"[x"}"#);
        assert!(s.may_hold_array(), "a bracket inside a string counts: the check is a byte search");
        assert!(!Structured::new(r#"{"matches":60,"truncated":true}"#).may_hold_array());
        let first: *const _ = s.value();
        assert!(std::ptr::eq(first, s.value()), "the tree is read once");
        assert_eq!(s.value().as_ref().ok(), Some(&serde_json::json!({"a":1,"b":"[x"})));
        let bad = Structured::new("{\"a\":");
        assert_eq!(bad.value().as_ref().err().map(String::as_str), serde_json::from_str::<Value>("{\"a\":").map_err(|e| e.to_string()).err().as_deref());
        assert_eq!(Structured::new("{\"a\": 1}"), Structured::new("{\"a\":1}"), "equal as JSON");
    }
}
