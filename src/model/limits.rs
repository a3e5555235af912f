//! Reader budgets: the default `limits` rows and the typed `--limit NAME=BYTES[:RATIO]`
//! override. The `limits` table's columns are declared in `rows.rs`; clap is not known here.

use std::str::FromStr;

pub use super::rows::ReaderLimit;

/// Default budgets, from reference/field-notes.md.
pub fn default_limits() -> Vec<ReaderLimit> {
    [
        ("ts_sdk_stdio", 10_485_760, "stdio", true),
        ("codex_stdio", 8_388_608, "stdio", true),
        ("go_scanner", 65_536, "stdio", false),
        ("sdk_http_body", 4_194_304, "http_request", true),
        ("inline_result", 1_048_576, "result", false),
        ("truncation_cap_64k", 65_536, "result", false),
        ("tools_list_payload", 204_800, "tools_list", true),
        // mcp (Python) >= 2.x client: DEFAULT_MAX_SSE_EVENT_SIZE = 1 MiB per SSE event
        // (`SSE stream failed: Server-sent event exceeded the 1048576 byte limit.`); JSON
        // bodies and stdio lines have no such cap.
        ("py_client_sse_event", 1_048_576, "sse_event", true),
    ]
    .into_iter()
    .map(|(name, bytes, scope, enabled)| ReaderLimit { name: name.to_string(), bytes, warn_ratio: DEFAULT_WARN_RATIO, scope: scope.to_string(), enabled })
    .collect()
}

/// Frames at 90% of a budget are near it: close enough that a slightly larger result breaks.
const DEFAULT_WARN_RATIO: f64 = 0.9;

/// `NAME=BYTES[:RATIO]`: overrides a default budget (and enables it) or adds a `stdio` one.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitOverride {
    pub name: String,
    pub bytes: u64,
    /// `None` keeps the budget's ratio (0.9 for a new one).
    pub warn_ratio: Option<f64>,
}

/// A limit override that does not parse; the binary prefixes the flag and the spec.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitOverrideError {
    #[error("expected NAME=BYTES[:RATIO]")]
    Shape,
    #[error("BYTES must be a whole number")]
    Bytes,
    #[error("RATIO must be in (0, 1]")]
    Ratio,
}

impl FromStr for LimitOverride {
    type Err = LimitOverrideError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let (name, rest) = spec.split_once('=').ok_or(LimitOverrideError::Shape)?;
        let (bytes, ratio) = match rest.split_once(':') {
            Some((b, r)) => (b, Some(r)),
            None => (rest, None),
        };
        let bytes: u64 = bytes.replace('_', "").parse().map_err(|_| LimitOverrideError::Bytes)?;
        let warn_ratio = match ratio {
            Some(r) => Some(r.parse().ok().filter(|r: &f64| *r > 0.0 && *r <= 1.0).ok_or(LimitOverrideError::Ratio)?),
            None => None,
        };
        Ok(LimitOverride { name: name.to_string(), bytes, warn_ratio })
    }
}

impl LimitOverride {
    /// Overrides the budget of that name (enabling it) or adds a new `stdio` budget.
    pub fn apply(&self, limits: &mut Vec<ReaderLimit>) {
        match limits.iter_mut().find(|l| l.name == self.name) {
            Some(l) => {
                l.bytes = self.bytes;
                l.enabled = true;
                if let Some(r) = self.warn_ratio {
                    l.warn_ratio = r;
                }
            }
            None => limits.push(ReaderLimit {
                name: self.name.clone(),
                bytes: self.bytes,
                warn_ratio: self.warn_ratio.unwrap_or(DEFAULT_WARN_RATIO),
                scope: "stdio".into(),
                enabled: true,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_enables_a_default_and_keeps_its_ratio() {
        let mut limits = default_limits();
        "go_scanner=1_000".parse::<LimitOverride>().unwrap().apply(&mut limits);
        let l = limits.iter().find(|l| l.name == "go_scanner").unwrap();
        assert_eq!((l.bytes, l.warn_ratio, l.enabled), (1000, 0.9, true));
    }

    #[test]
    fn new_override_is_a_stdio_limit() {
        let mut limits = default_limits();
        "mine=64:0.5".parse::<LimitOverride>().unwrap().apply(&mut limits);
        let l = limits.last().unwrap();
        assert_eq!((l.name.as_str(), l.bytes, l.warn_ratio, l.scope.as_str(), l.enabled), ("mine", 64, 0.5, "stdio", true));
    }

    #[test]
    fn bad_overrides_name_the_problem() {
        assert_eq!("nolimit".parse::<LimitOverride>(), Err(LimitOverrideError::Shape));
        assert_eq!("a=lots".parse::<LimitOverride>(), Err(LimitOverrideError::Bytes));
        assert_eq!("a=10:1.5".parse::<LimitOverride>(), Err(LimitOverrideError::Ratio));
        assert_eq!("a=10:x".parse::<LimitOverride>().unwrap_err().to_string(), "RATIO must be in (0, 1]");
    }
}
