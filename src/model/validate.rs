//! Predicting what a validating client does with a tool result: structuredContent checked
//! against the tool's outputSchema from the same session's `tools/list` (JSON Schema 2020-12
//! unless the schema declares another dialect), and text that disagrees with it.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

/// A tool's outputSchema, compiled on first use.
enum Schema {
    Text(String),
    Compiled(Box<jsonschema::Validator>),
    Unusable(String),
}

/// Output schemas seen in each session's `tools/list` results, by session, then tool (looked
/// up by borrowed names).
#[derive(Default)]
pub struct OutputSchemas {
    schemas: HashMap<String, HashMap<String, Schema>>,
}

/// The outcome of checking one structuredContent.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaCheck {
    /// The session never listed an outputSchema for this tool (before this result).
    NoSchema,
    Valid,
    /// Validator messages, e.g. `Additional properties are not allowed ('cache_hit' was unexpected) at /`.
    Invalid(Vec<String>),
    /// The schema itself does not compile; the message says why.
    SchemaError(String),
    /// structuredContent was not checked (it nests deeper than serde_json parses, 128 levels;
    /// clients' parsers read it): neither valid nor a predicted rejection. The text says why.
    Unchecked(String),
}

impl OutputSchemas {
    /// Records (or replaces) a tool's outputSchema text for a session.
    pub fn insert(&mut self, session: &str, tool: &str, schema_text: String) {
        let tools = match self.schemas.get_mut(session) {
            Some(tools) => tools,
            None => self.schemas.entry(session.to_string()).or_default(),
        };
        tools.insert(tool.to_string(), Schema::Text(schema_text));
    }

    pub fn knows(&self, session: &str, tool: &str) -> bool {
        self.schemas.get(session).is_some_and(|tools| tools.contains_key(tool))
    }

    /// Validates `structured` (JSON text) against the tool's schema (the fuzz harness's entry).
    pub fn check(&mut self, session: &str, tool: &str, structured: &str) -> SchemaCheck {
        self.check_parsed(session, tool, &serde_json::from_str::<Value>(structured).map_err(|e| e.to_string()))
    }

    /// Validates structuredContent, as parsed (or the parser's message), against the tool's schema.
    pub fn check_parsed(&mut self, session: &str, tool: &str, structured: &Result<Value, String>) -> SchemaCheck {
        let Some(entry) = self.schemas.get_mut(session).and_then(|tools| tools.get_mut(tool)) else {
            return SchemaCheck::NoSchema;
        };
        if let Schema::Text(text) = entry {
            *entry = match serde_json::from_str::<Value>(text) {
                Ok(schema) => match jsonschema::options().build(&schema) {
                    Ok(v) => Schema::Compiled(Box::new(v)),
                    Err(e) => Schema::Unusable(format!("outputSchema does not compile: {e}")),
                },
                Err(e) => Schema::Unusable(format!("outputSchema is not JSON: {e}")),
            };
        }
        match entry {
            Schema::Compiled(v) => match structured {
                Ok(instance) => {
                    let errors: Vec<String> = v
                        .iter_errors(instance)
                        .take(5)
                        .map(|e| {
                            let path = e.instance_path().to_string();
                            format!("{e} at {}", if path.is_empty() { "/" } else { &path })
                        })
                        .collect();
                    if errors.is_empty() { SchemaCheck::Valid } else { SchemaCheck::Invalid(errors) }
                }
                Err(e) if is_recursion_limit(e) => SchemaCheck::Unchecked(format!(
                    "structuredContent not checked: it nests deeper than mcpsift's JSON parser reads (128 levels) ({e})"
                )),
                Err(e) => SchemaCheck::Invalid(vec![format!("structuredContent is not JSON: {e}")]),
            },
            Schema::Unusable(msg) => SchemaCheck::SchemaError(msg.clone()),
            Schema::Text(_) => SchemaCheck::SchemaError("schema not compiled".into()),
        }
    }
}

/// serde_json stops at 128 nested levels: text deeper than that may be valid JSON.
fn is_recursion_limit(message: &str) -> bool {
    message.starts_with("recursion limit exceeded")
}

/// Why the first text block and structuredContent disagree, if they do: text that parses as a
/// JSON object different from structuredContent, or `key=N` numbers in text that differ from
/// the same top-level keys of structuredContent.
pub fn text_disagreement(text: &str, structured: &str) -> Option<String> {
    text_disagreement_parsed(text, &serde_json::from_str::<Value>(structured).map_err(|e| e.to_string()))
}

/// Whether a first text can disagree with structuredContent at all: it is a JSON object or
/// has a `key=N`. Else [`text_disagreement_parsed`] says nothing, so the tree is not needed.
pub fn text_may_disagree(text: &str) -> bool {
    text.trim().starts_with('{') || text.contains('=')
}

/// [`text_may_disagree`] of the text a JSON string literal (quotes included) decodes to, read
/// without decoding it: false only when that text has no `=` and, past its leading
/// whitespace, no `{`. Any `\u` escape or non-ASCII byte before the first other character
/// counts as a maybe (either could be `=` or whitespace), so a false is always right.
pub fn literal_may_disagree(literal: &str) -> bool {
    let b = literal.as_bytes();
    if memchr::memchr(b'=', b).is_some() || memchr::memmem::find(b, b"\\u").is_some() {
        return true;
    }
    let mut i = usize::from(b.first() == Some(&b'"'));
    loop {
        match b.get(i) {
            Some(b' ') => i += 1,
            Some(b'\\') if matches!(b.get(i + 1), Some(b'n' | b't' | b'r' | b'f')) => i += 2,
            Some(&c) => return c == b'{' || !c.is_ascii(),
            None => return false,
        }
    }
}

/// [`text_disagreement`] with structuredContent as parsed (or the parser's message).
pub fn text_disagreement_parsed(text: &str, structured: &Result<Value, String>) -> Option<String> {
    // The one test of which texts can disagree: callers skip reading the tree by it.
    if !text_may_disagree(text) {
        return None;
    }
    let sc = structured.as_ref().ok()?;
    let trimmed = text.trim();
    if trimmed.starts_with('{')
        && let Ok(tv) = serde_json::from_str::<Value>(trimmed)
    {
        {
            if tv == *sc {
                return None;
            }
            let keys: Vec<String> = match (&tv, sc) {
                (Value::Object(a), Value::Object(b)) => {
                    let mut k: Vec<String> = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).cloned().collect();
                    k.sort();
                    k.dedup();
                    k
                }
                _ => Vec::new(),
            };
            return Some(format!("text JSON differs from structuredContent in {}", if keys.is_empty() { "shape".into() } else { keys.join(", ") }));
        }
    }
    if !text.contains('=') {
        return None;
    }
    let obj = sc.as_object()?;
    let re = key_number_pattern();
    for cap in re.captures_iter(text) {
        let (key, num) = (&cap[1], &cap[2]);
        let Some(sv) = obj.get(key).and_then(Value::as_f64) else { continue };
        let Ok(tv) = num.parse::<f64>() else { continue };
        if (sv - tv).abs() > f64::EPSILON {
            return Some(format!("text says {key}={num}, structuredContent.{key} is {}", obj[key]));
        }
    }
    None
}

fn key_number_pattern() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+(?:\.\d+)?)\b").expect("static pattern"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_said_not_to_disagree_decodes_to_a_text_that_cannot() {
        let pieces = [" ", "\\n", "\\t", "\\r", "\\f", "\\b", "\\u0020", "\\u003d", "\\u007b", "{", "=", "a", "é", "\u{a0}", "\\\"", "\\/", "\\\\"];
        let mut said_no = 0;
        let mut stack = vec![(String::new(), 0)];
        while let Some((body, depth)) = stack.pop() {
            let literal = format!("\"{body}\"");
            let text: String = serde_json::from_str(&literal).unwrap_or_else(|e| panic!("{literal}: {e}"));
            if !literal_may_disagree(&literal) {
                said_no += 1;
                assert!(!text_may_disagree(&text), "{literal} decodes to {text:?}");
            }
            if depth < 4 {
                stack.extend(pieces.iter().map(|p| (format!("{body}{p}"), depth + 1)));
            }
        }
        assert!(said_no > 1000, "the shortcut applies to plain texts ({said_no})");
        assert!(!literal_may_disagree(r#""matches: 60\nall found""#));
        assert!(literal_may_disagree(r#"" \n{\"a\":1}""#) && literal_may_disagree(r#""a=1""#));
    }

    #[test]
    fn extra_property_under_additional_properties_false_is_rejected() {
        let mut s = OutputSchemas::default();
        s.insert("s", "t", r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"total":{"type":"integer"}},"required":["total"],"additionalProperties":false}"#.into());
        assert_eq!(s.check("s", "t", r#"{"total":3}"#), SchemaCheck::Valid);
        match s.check("s", "t", r#"{"total":3,"cache_hit":true}"#) {
            SchemaCheck::Invalid(e) => assert!(e[0].contains("cache_hit"), "{e:?}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.check("other", "t", "{}"), SchemaCheck::NoSchema);
    }

    #[test]
    fn text_and_structured_disagreement() {
        assert_eq!(text_disagreement("count=5", r#"{"count":7}"#).as_deref(), Some("text says count=5, structuredContent.count is 7"));
        assert_eq!(text_disagreement("count=7 links", r#"{"count":7}"#), None);
        assert_eq!(text_disagreement(r#"{"total":12}"#, r#"{"total":9}"#).as_deref(), Some("text JSON differs from structuredContent in total"));
        assert_eq!(text_disagreement(r#"{"total":9}"#, r#"{"total":9}"#), None);
    }
}
