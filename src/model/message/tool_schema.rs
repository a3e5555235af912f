//! One tool of a `tools/list` result → [`ToolDef`]: the input and output schema heads, the
//! schema walk (arrays without `items`, tuple-form `items`), `x-mcp-header` arguments, sizes
//! and the definition a tool change is measured on.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::parsed::ToolDef;
use super::raw::raw_str;
use crate::model::jsonstr::utf16_units;

#[derive(Deserialize)]
pub(super) struct ToolView<'a> {
    #[serde(borrow)]
    pub(super) name: Option<&'a RawValue>,
    #[serde(borrow)]
    title: Option<&'a RawValue>,
    #[serde(borrow)]
    description: Option<&'a RawValue>,
    #[serde(rename = "inputSchema", borrow)]
    input_schema: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", borrow)]
    output_schema: Option<&'a RawValue>,
    #[serde(borrow)]
    annotations: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(rename = "$schema", borrow)]
    dialect: Option<&'a RawValue>,
}

fn schema_head(schema: &RawValue) -> (String, Option<String>) {
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

pub(super) fn tool_def(t: ToolView) -> ToolDef {
    let (input_root_type, input_dialect) = match t.input_schema {
        Some(s) => schema_head(s),
        None => ("missing".into(), None),
    };
    let output_dialect = t.output_schema.and_then(|s| schema_head(s).1);
    let mut walk = SchemaWalk::default();
    let mut header_params = Vec::new();
    if let Some(schema) = t.input_schema
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(schema.get())
    {
        walk.visit(&v, &mut String::from("#"));
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            header_params = props
                .iter()
                .filter_map(|(arg, s)| s.get("x-mcp-header").and_then(|h| h.as_str()).map(|h| (arg.clone(), h.to_string())))
                .collect();
        }
    }
    ToolDef {
        header_params,
        arrays_without_items: walk.arrays_without_items,
        first_array_without_items: walk.first_path,
        tuple_items: walk.tuple_items,
        name: raw_str(t.name).unwrap_or_default(),
        title: raw_str(t.title),
        description_utf16: raw_str(t.description).map(|d| utf16_units(&d)),
        input_root_type,
        input_dialect,
        output_dialect,
        has_output_schema: t.output_schema.is_some_and(|s| s.get() != "null"),
        schema_bytes: t.input_schema.map_or(0, |s| s.get().len() as u64) + t.output_schema.map_or(0, |s| s.get().len() as u64),
        output_schema: t.output_schema.filter(|s| s.get() != "null").map(|s| s.get().to_string()),
        definition: definition(&t),
    }
}

/// A tool's definition without its name, as JSON: title, description, inputSchema,
/// outputSchema and annotations, each as the server sent it.
fn definition(t: &ToolView) -> String {
    let mut o = serde_json::Map::new();
    for (key, raw) in [("title", t.title), ("description", t.description), ("inputSchema", t.input_schema), ("outputSchema", t.output_schema), ("annotations", t.annotations)] {
        if let Some(v) = raw.and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok()).filter(|v| !v.is_null()) {
            o.insert(key.to_string(), v);
        }
    }
    serde_json::Value::Object(o).to_string()
}

#[cfg(test)]
mod tests {
    use super::super::one;

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
