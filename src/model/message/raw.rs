//! Reading `RawValue` literals: a JSON string decoded, any other JSON kept as its text,
//! `null` as absent or kept present. No MCP here.

use serde::Deserialize;
use serde_json::value::RawValue;

pub(super) fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = <Option<&RawValue>>::deserialize(d)?;
    Ok(v.map(raw_to_string))
}

/// A JSON string value decoded; any other JSON kept as its text.
pub(super) fn raw_to_string(r: &RawValue) -> String {
    let t = r.get();
    if t.starts_with('"') {
        serde_json::from_str::<String>(t).unwrap_or_else(|_| t.to_string())
    } else {
        t.to_string()
    }
}

pub(super) fn raw_str(r: Option<&RawValue>) -> Option<String> {
    r.filter(|r| r.get() != "null").map(raw_to_string)
}

/// Keeps `null` as a present raw value (an error with `"id": null` has an id field).
pub(super) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

pub(super) fn is_true(r: Option<&RawValue>) -> bool {
    r.is_some_and(|r| r.get() == "true")
}
