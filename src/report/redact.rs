//! Redaction of secrets in report and check output: Authorization/Cookie headers, bearer
//! tokens, and values of keys such as api_key, token, password, secret.

use regex::Regex;

fn patterns() -> &'static [(Regex, &'static str)] {
    static P: std::sync::OnceLock<Vec<(Regex, &'static str)>> = std::sync::OnceLock::new();
    P.get_or_init(|| {
        [
            (r"(?i)\b(authorization|proxy-authorization|cookie|set-cookie)(\s*[:=]\s*)[^\r\n]+", "${1}${2}[REDACTED]"),
            (r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+", "Bearer [REDACTED]"),
            (
                r#"(?i)("?[A-Za-z0-9_-]*(?:api[_-]?key|access[_-]?token|refresh[_-]?token|token|password|passwd|secret|client[_-]?secret)"?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;}&]+)"#,
                "${1}\"[REDACTED]\"",
            ),
        ]
        .into_iter()
        .map(|(p, r)| (Regex::new(p).expect("static pattern"), r))
        .collect()
    })
}

/// Replaces secrets in `text`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for (re, replacement) in patterns() {
        out = re.replace_all(&out, *replacement).into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_are_replaced_and_the_rest_kept() {
        assert_eq!(redact("Authorization: Bearer abc.def"), "Authorization: [REDACTED]");
        assert_eq!(redact("call with bearer eyJhbGciOi and more"), "call with Bearer [REDACTED] and more");
        assert_eq!(redact(r#"{"api_key":"sk-123","q":"x"}"#), r#"{"api_key":"[REDACTED]","q":"x"}"#);
        assert_eq!(redact("password=hunter2; user=bob"), "password=\"[REDACTED]\"; user=bob");
        assert_eq!(redact("count=5 tokens_used"), "count=5 tokens_used");
    }
}
