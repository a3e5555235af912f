//! The severity of a finding and its rank (error first), defined once for rules, check and report.

/// How bad a finding is; the order (error first) is the reporting order everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warn,
    Info,
}

impl Severity {
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warn, Severity::Info];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warn => "warn",
            Severity::Info => "info",
        }
    }

    /// The column value; anything else is not a severity.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Rank in reports (0 first); unknown strings rank last, like `info`.
    pub fn rank_of(s: &str) -> u8 {
        Severity::parse(s).unwrap_or(Severity::Info) as u8
    }
}
