//! The words a rule file carries in its leading `--` comment: title, severity meanings, advice,
//! one sentence per cause token, and report layout hints. Parses only; running is in rules.rs.
//!
//! The format, one field per comment line (keys are lowercase; other comment lines are free
//! text: what the rule flags, why, the evidence):
//!
//! ```sql
//! -- title: Validation errors
//! -- severity error: the client rejects the result
//! -- severity warn: the result is accepted but reads differently
//! -- advice: Return structuredContent that matches outputSchema exactly.
//! -- causes:
//! --   predicted_reject: structuredContent fails the tool's outputSchema.
//! --   empty_content: structuredContent beside an empty content array.
//! -- columns: session
//! -- excerpt: last_error
//! -- section: frame_sizes
//! ```
//!
//! `causes:` is followed by indented `token: sentence` lines, one per token the rule's `cause`
//! column can hold. The layout hints are optional: `columns: session` adds a session column to
//! the report's findings tables; `excerpt: last_error` quotes the session's last error instead
//! of the call's error message; `section: frame_sizes`, `section: truncation` or `section: latency` shows the rule
//! inside that built-in report section instead of a section of its own. A file without any of
//! these fields still runs: its name is its title and it has no advice.

use super::severity::Severity;

/// Where the report quotes what the peer said beside a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExcerptSource {
    /// The error message of the call named by (capture, session, rpc_id).
    #[default]
    CallError,
    /// The last error of the finding's session.
    SessionLastError,
}

/// The parsed header of one rule file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleHeader {
    pub title: Option<String>,
    /// What each severity means for this rule, in the file's order.
    pub severities: Vec<(Severity, String)>,
    pub advice: Option<String>,
    /// Cause token and its sentence, in the file's order.
    pub causes: Vec<(String, String)>,
    /// `columns:` names (only `session` is used by the report today).
    pub columns: Vec<String>,
    pub excerpt: ExcerptSource,
    /// `section:` the built-in report section this rule is shown in.
    pub section: Option<String>,
    /// `scope: capture`: a capture's findings depend only on its own rows, so the rule may run
    /// capture by capture (memory bounded by the largest capture, not the run).
    pub per_capture: bool,
}

impl RuleHeader {
    /// Reads the leading comment block of `sql`; unknown lines are free text and ignored.
    pub fn parse(sql: &str) -> RuleHeader {
        let mut h = RuleHeader::default();
        let mut in_causes = false;
        for line in sql.lines() {
            let Some(body) = line.trim_start().strip_prefix("--") else {
                if line.trim().is_empty() {
                    continue;
                }
                break;
            };
            // Indented `token: sentence` lines belong to `causes:`.
            if in_causes
                && body.starts_with("   ")
                && let Some((token, sentence)) = body.trim().split_once(':')
                && is_token(token)
            {
                h.causes.push((token.to_string(), sentence.trim().to_string()));
                continue;
            }
            in_causes = false;
            let Some((key, value)) = body.trim_start_matches(' ').split_once(':') else { continue };
            let value = value.trim().to_string();
            match key {
                "title" => h.title = Some(value),
                "advice" => h.advice = Some(value),
                "causes" => in_causes = true,
                "columns" => h.columns = value.split([',', ' ']).filter(|c| !c.is_empty()).map(str::to_string).collect(),
                "excerpt" if value == "last_error" => h.excerpt = ExcerptSource::SessionLastError,
                "section" => h.section = Some(value),
                "scope" => h.per_capture = value == "capture",
                _ => {
                    if let Some(sev) = key.strip_prefix("severity ").and_then(Severity::parse) {
                        h.severities.push((sev, value));
                    }
                }
            }
        }
        h
    }

    /// The sentence of a cause token, if the header has one.
    pub fn cause_sentence(&self, token: &str) -> Option<&str> {
        self.causes.iter().find(|(t, _)| t == token).map(|(_, s)| s.as_str())
    }

    /// What `severity` means for this rule, if the header says.
    pub fn severity_meaning(&self, severity: Severity) -> Option<&str> {
        self.severities.iter().find(|(s, _)| *s == severity).map(|(_, m)| m.as_str())
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_are_read_and_free_text_ignored() {
        let sql = "-- demo: what it flags.\n-- Why: because.\n-- title: Demo rule\n-- severity error: lost data\n-- severity info: fine\n-- advice: Do less.\n-- causes:\n--   too_big: It is too big.\n--   too_small: It is too small.\n-- columns: session\n-- excerpt: last_error\nSELECT 1";
        let h = RuleHeader::parse(sql);
        assert_eq!(h.title.as_deref(), Some("Demo rule"));
        assert_eq!(h.advice.as_deref(), Some("Do less."));
        assert_eq!(h.severity_meaning(Severity::Error), Some("lost data"));
        assert_eq!(h.severity_meaning(Severity::Warn), None);
        assert_eq!(h.cause_sentence("too_small"), Some("It is too small."));
        assert_eq!(h.columns, vec!["session"]);
        assert_eq!(h.excerpt, ExcerptSource::SessionLastError);
        assert_eq!(RuleHeader::parse("SELECT 1"), RuleHeader::default());
    }
}
