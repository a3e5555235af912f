//! One tool of a `tools/list` result → [`ToolDef`]: the input and output schema heads, the
//! schema walk (arrays without `items`, tuple-form `items`), `x-mcp-header` arguments, sizes
//! and the definition a tool change is measured on.

use std::fmt::Write as _;

use serde::Deserialize;

use super::parsed::ToolDef;
use super::raw::{Raw, raw_str};
use super::structured::note_output_schema;
use crate::model::jsonstr::utf16_units;

#[derive(Deserialize)]
pub(super) struct ToolView<'a> {
    #[serde(borrow)]
    pub(super) name: Option<Raw<'a>>,
    #[serde(borrow)]
    title: Option<Raw<'a>>,
    #[serde(borrow)]
    description: Option<Raw<'a>>,
    #[serde(rename = "inputSchema", borrow)]
    input_schema: Option<Raw<'a>>,
    #[serde(rename = "outputSchema", borrow)]
    output_schema: Option<Raw<'a>>,
    #[serde(borrow)]
    annotations: Option<Raw<'a>>,
}

#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Raw<'a>>,
    #[serde(rename = "$schema", borrow)]
    dialect: Option<Raw<'a>>,
}

fn schema_head(schema: Raw) -> (String, Option<String>) {
    match serde_json::from_str::<SchemaHead>(schema.get()) {
        Ok(h) => (raw_str(h.kind).unwrap_or_else(|| "missing".into()), raw_str(h.dialect)),
        Err(_) => ("not_an_object".into(), None),
    }
}

/// Walks a JSON Schema for array nodes without `items` and tuple-form `items`.
#[derive(Default)]
struct SchemaWalk {
    arrays_without_items: u64,
    first_path: Option<String>,
    tuple_items: bool,
}

impl SchemaWalk {
    /// `path` is the JSON Pointer of `v`; children append to it and take their part off again
    /// (one buffer for the walk, a copy only for the first array without items).
    fn visit(&mut self, v: &serde_json::Value, path: &mut String) {
        let at = path.len();
        let Some(o) = v.as_object() else {
            if let Some(a) = v.as_array() {
                for (i, x) in a.iter().enumerate() {
                    let _ = write!(path, "/{i}");
                    self.visit(x, path);
                    path.truncate(at);
                }
            }
            return;
        };
        let is_array = match o.get("type") {
            Some(serde_json::Value::String(t)) => t == "array",
            Some(serde_json::Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !o.contains_key("items") && !o.contains_key("prefixItems") {
            self.arrays_without_items += 1;
            self.first_path.get_or_insert_with(|| path.clone());
        }
        if o.get("items").is_some_and(serde_json::Value::is_array) {
            self.tuple_items = true;
        }
        for (k, child) in o {
            if matches!(k.as_str(), "enum" | "const" | "default" | "examples" | "required") {
                continue;
            }
            path.push('/');
            path.push_str(k);
            self.visit(child, path);
            path.truncate(at);
        }
    }
}

/// What a tool's inputSchema says, read off its text: the head, the walk, the `x-mcp-header`
/// arguments, and the schema as compact JSON for the definition (`None` when it does not parse
/// or is null).
#[derive(Clone, Default)]
struct InputSchema {
    head: (String, Option<String>),
    arrays_without_items: u64,
    first_array_without_items: Option<String>,
    tuple_items: bool,
    header_params: Vec<(String, String)>,
    compact: Option<String>,
}

fn read_input_schema(schema: Raw) -> InputSchema {
    let mut facts = InputSchema { head: schema_head(schema), ..InputSchema::default() };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(schema.get()) {
        let mut walk = SchemaWalk::default();
        walk.visit(&v, &mut String::from("#"));
        (facts.arrays_without_items, facts.first_array_without_items, facts.tuple_items) = (walk.arrays_without_items, walk.first_path, walk.tuple_items);
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            facts.header_params = props
                .iter()
                .filter_map(|(arg, s)| s.get("x-mcp-header").and_then(|h| h.as_str()).map(|h| (arg.clone(), h.to_string())))
                .collect();
        }
        facts.compact = (!v.is_null()).then(|| v.to_string());
    }
    facts
}

/// Input schemas read on this thread, by their text, up to [`INPUT_SCHEMAS_BYTES`] of text:
/// servers list the same tools in every session and on every `tools/list`, and reading a
/// schema (parsed as a JSON tree, walked, written back) was a ninth of the allocations of
/// `tables` on small messages. The facts are a pure function of the text.
const INPUT_SCHEMAS_BYTES: usize = 4 << 20;

thread_local! {
    static INPUT_SCHEMAS: std::cell::RefCell<(std::collections::HashMap<String, InputSchema>, usize)> = std::cell::RefCell::default();
}

fn input_schema(schema: Raw) -> InputSchema {
    let text = schema.get();
    if let Some(known) = INPUT_SCHEMAS.with_borrow(|(known, _)| known.get(text).cloned()) {
        return known;
    }
    let facts = read_input_schema(schema);
    if text.len() <= INPUT_SCHEMAS_BYTES {
        INPUT_SCHEMAS.with_borrow_mut(|(known, bytes)| {
            if *bytes + text.len() > INPUT_SCHEMAS_BYTES {
                known.clear();
                *bytes = 0;
            }
            *bytes += text.len();
            known.insert(text.to_string(), facts.clone());
        });
    }
    facts
}

pub(super) fn tool_def(t: ToolView) -> ToolDef {
    let input = match t.input_schema {
        Some(s) => input_schema(s),
        None => InputSchema { head: ("missing".into(), None), ..InputSchema::default() },
    };
    let output_dialect = t.output_schema.and_then(|s| schema_head(s).1);
    if t.output_schema.is_some_and(|s| s.get() != "null") {
        note_output_schema();
    }
    ToolDef {
        name: raw_str(t.name).unwrap_or_default(),
        title: raw_str(t.title),
        description_utf16: raw_str(t.description).map(|d| utf16_units(&d)),
        output_dialect,
        has_output_schema: t.output_schema.is_some_and(|s| s.get() != "null"),
        schema_bytes: t.input_schema.map_or(0, |s| s.get().len() as u64) + t.output_schema.map_or(0, |s| s.get().len() as u64),
        output_schema: t.output_schema.filter(|s| s.get() != "null").map(|s| s.get().to_string()),
        definition: definition(&t, input.compact.as_deref()),
        header_params: input.header_params,
        arrays_without_items: input.arrays_without_items,
        first_array_without_items: input.first_array_without_items,
        tuple_items: input.tuple_items,
        input_root_type: input.head.0,
        input_dialect: input.head.1,
    }
}

/// A tool's definition without its name, as compact JSON: title, description, inputSchema
/// (`input`, already compact), outputSchema and annotations, each as the server sent it; a
/// field that is null or does not parse is left out. The fields come in the order a
/// `serde_json::Map` keeps them (as sent, or sorted, by serde_json's features), as they did
/// when the definition was written from one.
fn definition(t: &ToolView, input: Option<&str>) -> String {
    let compact = |raw: Option<Raw>| raw.and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok()).filter(|v| !v.is_null()).map(|v| v.to_string());
    let fields = [("title", compact(t.title)), ("description", compact(t.description)), ("inputSchema", input.map(str::to_string)), ("outputSchema", compact(t.output_schema)), ("annotations", compact(t.annotations))];
    let mut order = serde_json::Map::new();
    for (key, text) in &fields {
        if text.is_some() {
            order.insert((*key).to_string(), serde_json::Value::Null);
        }
    }
    let mut out = String::from("{");
    for key in order.keys() {
        if let Some((_, Some(text))) = fields.iter().find(|(k, _)| k == key) {
            if out.len() > 1 {
                out.push(',');
            }
            let _ = write!(out, "\"{key}\":{text}");
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::super::one;

    #[test]
    fn a_schema_read_again_is_the_same_and_a_changed_one_is_read_anew() {
        let list = |schema: &str| format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{{"name":"a","description":"d \u00e9","inputSchema":{schema},"annotations":null}}]}}}}"#);
        let first = one(&list(r#"{ "type": "object", "properties": {"q": {"type":"array", "x-mcp-header": "Q"}}}"#));
        let again = one(&list(r#"{ "type": "object", "properties": {"q": {"type":"array", "x-mcp-header": "Q"}}}"#));
        assert_eq!(first.tools, again.tools);
        let t = &again.tools[0];
        assert_eq!((t.arrays_without_items, t.header_params.clone()), (1, vec![("q".to_string(), "Q".to_string())]));
        assert_eq!(t.definition, r#"{"description":"d é","inputSchema":{"type":"object","properties":{"q":{"type":"array","x-mcp-header":"Q"}}}}"#, "compact JSON, nulls left out");
        let changed = one(&list(r#"{"type":"object","properties":{"q":{"type":"array","items":{}}}}"#));
        assert_eq!(changed.tools[0].arrays_without_items, 0, "a different schema is not the one read before");
    }

    #[test]
    fn tools_list_definitions() {
        let m = one(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"x📎","inputSchema":{"type":"array"},"outputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}},{"name":"b","inputSchema":{}}],"nextCursor":"n1"}}"#);
        assert_eq!(m.items_returned, Some(2));
        assert_eq!(m.cursor_out.as_deref(), Some("n1"));
        assert_eq!(m.tools[0].input_root_type, "array");
        assert_eq!(m.tools[0].description_utf16, Some(3));
        assert_eq!(m.tools[0].output_dialect.as_deref(), Some("http://json-schema.org/draft-07/schema#"));
        assert_eq!(m.tools[1].input_root_type, "missing");
    }
}
