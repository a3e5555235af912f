//! Rules: SQL files whose rows are findings. Built-ins (queries/*.sql) are embedded in the
//! binary; `--queries DIR` adds rules or overrides built-ins of the same name.

use std::path::Path;

use polars::prelude::*;

use super::{QueryError, context, run_in};
use crate::model::tables::Tables;

/// The `findings` columns every rule returns, with their types.
pub fn findings_schema() -> Vec<(&'static str, DataType)> {
    vec![
        ("rule", DataType::String),
        ("severity", DataType::String),
        ("capture", DataType::String),
        ("session", DataType::String),
        ("rpc_id", DataType::String),
        ("tool", DataType::String),
        ("client", DataType::String),
        ("bytes", DataType::Int64),
        ("detail", DataType::String),
    ]
}

/// One rule: a name and its SQL.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub sql: String,
    /// `built-in` or the file it came from.
    pub origin: String,
}

const BUILTIN: &[(&str, &str)] = &[
    ("near_limit_frames", include_str!("../../queries/near_limit_frames.sql")),
    ("truncation_rates", include_str!("../../queries/truncation_rates.sql")),
    ("validation_errors", include_str!("../../queries/validation_errors.sql")),
    ("pagination_drift", include_str!("../../queries/pagination_drift.sql")),
    ("schema_compat", include_str!("../../queries/schema_compat.sql")),
    ("connection_deaths", include_str!("../../queries/connection_deaths.sql")),
];

/// One line of advice per built-in rule: what to change.
pub fn advice(rule: &str) -> &'static str {
    match rule {
        "near_limit_frames" => "Keep results well under the smallest reader: paginate, or return a resource_link above 1 MiB instead of inline text or base64 images.",
        "truncation_rates" => "Paginate or summarise large results; when cutting, say so in structuredContent and give the model a way to fetch the rest.",
        "validation_errors" => "Return structuredContent that matches outputSchema exactly; omit structuredContent on isError results; keep text and structuredContent in agreement.",
        "pagination_drift" => "Advance cursors by exactly the items returned, never return the cursor you were sent, and follow nextCursor until it is absent.",
        "schema_compat" => "Give every inputSchema root type object and every array items; keep names unique, descriptions under 2048 UTF-16 units and tools/list small.",
        "connection_deaths" => "Log only to stderr, end every message with a newline, stay under reader limits, and answer or cancel every request.",
        _ => "See the rule's SQL header.",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("unknown rule {0} (known: {1})")]
    Unknown(String, String),
    #[error("rule {rule}: {source}")]
    Query { rule: String, source: QueryError },
    #[error("rule {rule}: output lacks findings column {column}: {source}")]
    Shape { rule: String, column: String, source: PolarsError },
}

/// Built-in rules, in reporting order.
pub fn builtin_rules() -> Vec<Rule> {
    BUILTIN.iter().map(|(name, sql)| Rule { name: name.to_string(), sql: sql.to_string(), origin: "built-in".into() }).collect()
}

/// Built-ins plus every `*.sql` in `dir` (a file named like a built-in replaces it).
pub fn load_rules(dir: Option<&Path>) -> Result<Vec<Rule>, RuleError> {
    let mut rules = builtin_rules();
    let Some(dir) = dir else { return Ok(rules) };
    let io = |source| RuleError::Io { path: dir.display().to_string(), source };
    let mut files: Vec<_> = std::fs::read_dir(dir).map_err(io)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for path in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "sql")) {
        let sql = std::fs::read_to_string(&path).map_err(|source| RuleError::Io { path: path.display().to_string(), source })?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let rule = Rule { name: name.clone(), sql, origin: path.display().to_string() };
        match rules.iter_mut().find(|r| r.name == name) {
            Some(r) => *r = rule,
            None => rules.push(rule),
        }
    }
    Ok(rules)
}

/// Keeps only the named rules (all when `names` is empty).
pub fn select(rules: Vec<Rule>, names: &[String]) -> Result<Vec<Rule>, RuleError> {
    if names.is_empty() {
        return Ok(rules);
    }
    let known = rules.iter().map(|r| r.name.clone()).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    for n in names {
        let r = rules.iter().find(|r| &r.name == n).ok_or_else(|| RuleError::Unknown(n.clone(), known.clone()))?;
        out.push(r.clone());
    }
    Ok(out)
}

/// Runs one rule and returns its rows with exactly the findings columns and types.
pub fn run_rule(tables: &Tables, rule: &Rule) -> Result<DataFrame, RuleError> {
    let mut ctx = context(tables);
    let df = run_in(&mut ctx, &rule.sql).map_err(|source| RuleError::Query { rule: rule.name.clone(), source })?;
    normalize(&rule.name, &df)
}

fn normalize(rule: &str, df: &DataFrame) -> Result<DataFrame, RuleError> {
    let mut cols = Vec::new();
    for (name, dtype) in findings_schema() {
        let shape = |source| RuleError::Shape { rule: rule.to_string(), column: name.to_string(), source };
        let c = df.column(name).map_err(shape)?.cast(&dtype).map_err(shape)?;
        cols.push(c);
    }
    DataFrame::new(df.height(), cols).map_err(|source| RuleError::Shape { rule: rule.to_string(), column: "*".into(), source })
}

/// Runs every rule; findings sorted by severity (error, warn, info), rule order, capture.
pub fn run_rules(tables: &Tables, rules: &[Rule]) -> Result<DataFrame, RuleError> {
    let mut all = empty_findings();
    for (i, rule) in rules.iter().enumerate() {
        let mut df = run_rule(tables, rule)?;
        let order = Column::new("rule_order".into(), vec![i as u32; df.height()]);
        df.with_column(order).map_err(|source| RuleError::Shape { rule: rule.name.clone(), column: "rule_order".into(), source })?;
        all.vstack_mut(&df).map_err(|source| RuleError::Shape { rule: rule.name.clone(), column: "*".into(), source })?;
    }
    let sorted = all
        .lazy()
        .with_column(
            when(col("severity").eq(lit("error")))
                .then(lit(0u32))
                .when(col("severity").eq(lit("warn")))
                .then(lit(1u32))
                .otherwise(lit(2u32))
                .alias("severity_rank"),
        )
        .sort_by_exprs(vec![col("severity_rank"), col("rule_order"), col("capture")], SortMultipleOptions::default().with_maintain_order(true))
        .select(findings_schema().iter().map(|(n, _)| col(*n)).collect::<Vec<_>>())
        .collect()
        .map_err(|source| RuleError::Shape { rule: "*".into(), column: "*".into(), source })?;
    Ok(sorted)
}

fn empty_findings() -> DataFrame {
    let mut cols: Vec<Column> = findings_schema().into_iter().map(|(n, t)| Column::new_empty(n.into(), &t)).collect();
    cols.push(Column::new_empty("rule_order".into(), &DataType::UInt32));
    DataFrame::new(0, cols).expect("static findings schema is valid")
}
