//! A page's items and their identities: the keys of a protocol list (tools, resources,
//! templates, prompts) or of structuredContent's main array, the field they came from, and
//! the items without one.

use serde::Deserialize;

use super::parsed::Message;
use super::raw::{Raw, raw_to_string};

/// A protocol list item's key: the string `field` of the object.
pub(super) fn list_item_key(item: Raw, field: &'static str) -> Option<(String, &'static str)> {
    let o = serde_json::from_str::<ListItem>(item.get()).ok()?;
    let v = match field {
        "uri" => o.uri,
        "uriTemplate" => o.uri_template,
        _ => o.name,
    }?;
    v.get().starts_with('"').then(|| (raw_to_string(v), field))
}

/// The identity fields of a resource, template or prompt.
#[derive(Deserialize)]
struct ListItem<'a> {
    #[serde(borrow)]
    uri: Option<Raw<'a>>,
    #[serde(rename = "uriTemplate", borrow)]
    uri_template: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
}

/// A page's item keys, the field they came from and the items without one: a protocol list's
/// (read with the result), else the main array's of structuredContent.
pub fn page_item_keys(m: &Message) -> (Vec<String>, Option<String>, u64) {
    if !m.item_keys.is_empty() || m.items_without_key > 0 {
        return (m.item_keys.clone(), m.item_key_field.clone(), m.items_without_key);
    }
    let Some(items) = m.structured.as_ref().filter(|s| s.may_hold_array()).and_then(|s| s.value().as_ref().ok()).and_then(main_array) else {
        return (Vec::new(), None, 0);
    };
    let mut page = Message::default();
    set_item_keys(&mut page, items.iter().map(item_key));
    (std::mem::take(&mut page.item_keys), page.item_key_field.take(), page.items_without_key)
}

/// Records a page's item keys, the field they came from, and the items without one.
pub(super) fn set_item_keys<F: AsRef<str>>(m: &mut Message, keys: impl Iterator<Item = Option<(String, F)>>) {
    let mut field: Option<String> = None;
    for k in keys {
        match k {
            Some((key, f)) => {
                match &field {
                    None => field = Some(f.as_ref().to_string()),
                    Some(seen) if seen != f.as_ref() => field = Some("mixed".into()),
                    _ => {}
                }
                m.item_keys.push(key);
            }
            None => m.items_without_key += 1,
        }
    }
    m.item_key_field = field;
    m.first_item_key = m.item_keys.first().cloned();
    m.last_item_key = m.item_keys.last().cloned();
}

/// The page's items: the first top-level array of objects in structuredContent (or the value
/// itself when it is such an array).
pub(super) fn main_array(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    let is_items = |a: &Vec<serde_json::Value>| a.first().is_none_or(serde_json::Value::is_object);
    match v {
        serde_json::Value::Array(a) if is_items(a) => Some(a),
        serde_json::Value::Object(o) => o.values().find_map(|x| x.as_array().filter(|a| is_items(a) && !a.is_empty())),
        _ => None,
    }
}

/// An item's identity and the field it came from: `id`, `name`, `uri`, else the first
/// scalar field (string or number) of the object.
pub(super) fn item_key(item: &serde_json::Value) -> Option<(String, String)> {
    let o = item.as_object()?;
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    ["id", "name", "uri"]
        .iter()
        .find_map(|k| o.get(*k).and_then(text).map(|t| (t, (*k).to_string())))
        .or_else(|| o.iter().find_map(|(k, v)| text(v).map(|t| (t, k.clone()))))
}

#[cfg(test)]
mod tests {
    use super::super::one;
    use super::*;

    #[test]
    fn item_keys_by_list_kind_and_items_without_keys_are_counted() {
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"title":"no name"},{"name":7}],"nextCursor":""}}"#);
        assert_eq!((m.item_keys.clone(), m.items_without_key, m.item_key_field.as_deref()), (vec!["a".to_string()], 2, Some("name")));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"A"},{"name":"B"}]}}"#);
        assert_eq!((m.item_keys.clone(), m.items_without_key, m.item_key_field.as_deref()), (vec!["file:///a".to_string()], 1, Some("uri")));
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[{"uriTemplate":"x://{id}","name":"X"}]}}"#);
        assert_eq!((m.item_keys.clone(), m.item_key_field.as_deref()), (vec!["x://{id}".to_string()], Some("uriTemplate")));
        // Tool-level lists: id, name, uri, else the first scalar field; `mixed` when items differ.
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"rows":[{"id":3},{"name":"n"},{"flag":true,"code":"c"},{"nested":{}}]}}}"#);
        assert_eq!(page_item_keys(&m), (vec!["3".to_string(), "n".to_string(), "c".to_string()], Some("mixed".to_string()), 1));
        assert_eq!((m.first_item_key.as_deref(), m.last_item_key.as_deref()), (Some("3"), None));
        // A page without items has no keys and nothing to count.
        let m = one(r#"{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}"#);
        assert_eq!((m.items_returned, m.item_keys.len(), m.items_without_key, m.item_key_field.clone()), (Some(0), 0, 0, None));
    }
}
