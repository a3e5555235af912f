//! Rules: SQL files whose rows are findings. Built-ins (queries/*.sql) are embedded in the
//! binary; `--queries DIR` adds rules or overrides built-ins of the same name. Also the one
//! definition of the findings table (columns, the severity enum and its rank). A rule's words
//! (title, advice, cause sentences) come from its file's header: see [`super::header`].

use std::path::Path;

use polars::prelude::*;

use super::header::RuleHeader;
pub use super::severity::Severity;
use super::{QueryError, context, run_in};
use crate::model::tables::Tables;

/// Separates the cause tokens of one finding in the `cause` column (primary cause first).
pub const CAUSE_SEPARATOR: char = ',';

/// The `findings` columns every rule returns, with their types. `cause` holds the finding's
/// machine-readable cause tokens (primary first, joined by [`CAUSE_SEPARATOR`], NULL when the
/// rule has none); `detail` is human text. A rule without a `cause` column gets NULLs.
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
        ("cause", DataType::String),
        ("detail", DataType::String),
    ]
}

/// Columns a rule may leave out (filled with NULLs).
const OPTIONAL_COLUMNS: &[&str] = &["cause"];

/// One rule: a name, its SQL and the words of its header.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub name: String,
    pub sql: String,
    /// `built-in` or the file it came from.
    pub origin: String,
    pub header: RuleHeader,
}

impl Rule {
    pub fn new(name: impl Into<String>, sql: impl Into<String>, origin: impl Into<String>) -> Rule {
        let sql = sql.into();
        Rule { name: name.into(), header: RuleHeader::parse(&sql), sql, origin: origin.into() }
    }

    /// The header's title, else the rule's name.
    pub fn title(&self) -> &str {
        self.header.title.as_deref().unwrap_or(&self.name)
    }

    /// The header's advice line, if any.
    pub fn advice(&self) -> Option<&str> {
        self.header.advice.as_deref()
    }
}

const BUILTIN: &[(&str, &str)] = &[
    ("near_limit_frames", include_str!("../../queries/near_limit_frames.sql")),
    ("truncation_rates", include_str!("../../queries/truncation_rates.sql")),
    ("validation_errors", include_str!("../../queries/validation_errors.sql")),
    ("pagination_drift", include_str!("../../queries/pagination_drift.sql")),
    ("schema_compat", include_str!("../../queries/schema_compat.sql")),
    ("connection_deaths", include_str!("../../queries/connection_deaths.sql")),
];

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
    BUILTIN.iter().map(|(name, sql)| Rule::new(*name, *sql, "built-in")).collect()
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
        let rule = Rule::new(name.clone(), sql, path.display().to_string());
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
        let c = match df.column(name) {
            Err(_) if OPTIONAL_COLUMNS.contains(&name) => Column::full_null(name.into(), df.height(), &dtype),
            found => found.map_err(shape)?.cast(&dtype).map_err(shape)?,
        };
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
        .with_column(severity_rank().alias("severity_rank"))
        .sort_by_exprs(vec![col("severity_rank"), col("rule_order"), col("capture")], SortMultipleOptions::default().with_maintain_order(true))
        .select(findings_schema().iter().map(|(n, _)| col(*n)).collect::<Vec<_>>())
        .collect()
        .map_err(|source| RuleError::Shape { rule: "*".into(), column: "*".into(), source })?;
    Ok(sorted)
}

/// The rank of the `severity` column as an expression, from [`Severity`]'s order.
fn severity_rank() -> Expr {
    let rank = |s: Severity| lit(s as u32);
    when(col("severity").eq(lit(Severity::Error.as_str())))
        .then(rank(Severity::Error))
        .when(col("severity").eq(lit(Severity::Warn.as_str())))
        .then(rank(Severity::Warn))
        .otherwise(rank(Severity::Info))
}

fn empty_findings() -> DataFrame {
    let mut cols: Vec<Column> = findings_schema().into_iter().map(|(n, t)| Column::new_empty(n.into(), &t)).collect();
    cols.push(Column::new_empty("rule_order".into(), &DataType::UInt32));
    DataFrame::new(0, cols).expect("static findings schema is valid")
}
