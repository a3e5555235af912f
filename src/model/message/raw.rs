//! Reading raw JSON literals ([`Raw`]): a JSON string decoded, any other JSON kept as its
//! text, `null` as absent or kept present. No MCP here.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One JSON value's text as the payload holds it: what serde_json's borrowed `RawValue` reads
/// (the views' fields), or a span the skimmer checked (`skim`). Deserialises exactly as
/// `&RawValue` does, so a view reads the same whichever of the two filled it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Raw<'a>(pub(super) &'a str);

impl<'a> Raw<'a> {
    pub(super) fn get(self) -> &'a str {
        self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|r| Raw(r.get()))
    }
}

pub(super) fn lenient_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = <Option<Raw>>::deserialize(d)?;
    Ok(v.map(raw_to_string))
}

/// A JSON string value decoded; any other JSON kept as its text.
pub(super) fn raw_to_string(r: Raw) -> String {
    let t = r.get();
    if t.starts_with('"') {
        serde_json::from_str::<String>(t).unwrap_or_else(|_| t.to_string())
    } else {
        t.to_string()
    }
}

pub(super) fn raw_str(r: Option<Raw>) -> Option<String> {
    r.filter(|r| r.get() != "null").map(raw_to_string)
}

/// Keeps `null` as a present raw value (an error with `"id": null` has an id field).
pub(super) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Raw<'de>>, D::Error> {
    Raw::deserialize(d).map(Some)
}

pub(super) fn is_true(r: Option<Raw>) -> bool {
    r.is_some_and(|r| r.get() == "true")
}

/// A string field borrowed from the payload when it has no escapes. serde's own
/// `Option<Cow<str>>` copies every string, `#[serde(borrow)]` or not (the attribute borrows a
/// bare `Cow` only): a method name and a content block's type were an allocation each.
/// `null` is absent; any other kind of value fails as serde's `String` fails ("expected a string").
pub(super) fn borrowed_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct Text;
    impl<'de> serde::de::Visitor<'de> for Text {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    struct Optional;
    impl<'de> serde::de::Visitor<'de> for Optional {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("option")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_string(Text).map(Some)
        }
    }
    d.deserialize_option(Optional)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Ours<'a> {
        #[serde(default, borrow, deserialize_with = "borrowed_str")]
        m: Option<Cow<'a, str>>,
    }

    #[derive(Deserialize)]
    struct Serdes<'a> {
        #[serde(borrow)]
        m: Option<Cow<'a, str>>,
    }

    #[test]
    fn borrowed_str_borrows_what_it_can_and_fails_as_serde_does() {
        let plain = serde_json::from_str::<Ours>(r#"{"m":"tools/call"}"#).unwrap().m;
        assert!(matches!(plain, Some(Cow::Borrowed("tools/call"))), "{plain:?}");
        let escaped = serde_json::from_str::<Ours>(r#"{"m":"tools\/c\u0061ll"}"#).unwrap().m;
        assert!(matches!(escaped.as_ref(), Some(Cow::Owned(s)) if s == "tools/call"), "{escaped:?}");
        assert_eq!(serde_json::from_str::<Ours>(r#"{"m":null}"#).unwrap().m, None);
        assert_eq!(serde_json::from_str::<Ours>(r#"{}"#).unwrap().m, None);
        // serde's own Option<Cow<str>> copies even a plain string: what this helper is for.
        assert!(matches!(serde_json::from_str::<Serdes>(r#"{"m":"tools/call"}"#).unwrap().m, Some(Cow::Owned(_))));
        for bad in [r#"{"m":5}"#, r#"{"m":{"a":1}}"#, r#"{"m":[1]}"#, r#"{"m":true}"#, r#"{"m":"x"#] {
            let ours = serde_json::from_str::<Ours>(bad).err().map(|e| e.to_string());
            let serdes = serde_json::from_str::<Serdes>(bad).err().map(|e| e.to_string());
            assert!(ours.is_some(), "{bad}");
            assert_eq!(ours, serdes, "{bad}");
        }
    }
}
