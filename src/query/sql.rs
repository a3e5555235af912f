//! Running SQL over the tables: multi-statement text split with sqlparser and run in order (so
//! `CREATE TABLE x AS ...; SELECT ... FROM x` works), the last result returned; the context
//! every table is registered in, with the tables computed at query time.

use polars::prelude::*;
use polars::sql::SQLContext;
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::source::{self, TableSource};
use crate::model::tables::TABLE_NAMES;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("SQL does not parse: {0}")]
    Parse(String),
    #[error("SQL has no statement")]
    Empty,
    #[error("query failed: {0}")]
    Polars(#[from] PolarsError),
    #[error("query failed: {0}")]
    Scalar(String),
}

/// `s` as a SQL string literal (quotes doubled), for values put into generated queries.
pub fn sql_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A SQL context with every table registered under its DESIGN.md name.
pub fn context(tables: &dyn TableSource) -> Result<SQLContext, QueryError> {
    Ok(context_of(table_frames(tables)?))
}

/// Every table of `tables` as a lazy frame, in [`TABLE_NAMES`] order.
pub(crate) fn table_frames(tables: &dyn TableSource) -> PolarsResult<Vec<(&'static str, LazyFrame)>> {
    TABLE_NAMES.iter().map(|name| Ok((*name, tables.table(name)?))).collect()
}

/// A SQL context with these frames registered under their names.
pub(crate) fn context_of(frames: Vec<(&'static str, LazyFrame)>) -> SQLContext {
    let ctx = SQLContext::new();
    for (name, frame) in frames {
        ctx.register(name, frame);
    }
    ctx
}

/// [`context`], plus the tables computed at query time that `sql` names: `tool_changes`
/// (tool definitions compared across a server's sessions and with the source's baseline). A
/// dataset stores it as its writer computed it, without a baseline: a run without one reads
/// that instead of comparing every listed tool again (`check` over the 10 GB fleet dataset
/// spent 0.6 CPU-s and a peak of 620 MB on it).
pub fn context_for(tables: &dyn TableSource, sql: &str) -> Result<SQLContext, QueryError> {
    let ctx = context(tables)?;
    if computes_tables(sql) {
        use crate::model::tool_changes::{server_tools, tool_changes};
        let stored = if tables.baseline().is_none() { tables.stored("tool_changes") } else { None };
        let changes = match stored {
            Some(stored) => stored,
            None => tool_changes(&server_tools(tables.table("tools")?, tables.table("sessions")?, tables.table("pages")?)?, tables.baseline())?.lazy(),
        };
        ctx.register("tool_changes", changes);
    }
    Ok(ctx)
}

/// Whether `sql` names a table computed at query time ([`context_for`] registers them).
pub fn computes_tables(sql: &str) -> bool {
    sql.contains("tool_changes")
}

/// Runs `sql` (one or more `;`-separated statements) and returns the last statement's rows.
pub fn run_sql(tables: &dyn TableSource, sql: &str) -> Result<DataFrame, QueryError> {
    let mut ctx = context_for(tables, sql)?;
    run_in(&mut ctx, sql)
}

/// Runs `sql` in an existing context.
pub fn run_in(ctx: &mut SQLContext, sql: &str) -> Result<DataFrame, QueryError> {
    let statements = Parser::parse_sql(&GenericDialect {}, sql).map_err(|e| QueryError::Parse(e.to_string()))?;
    let mut last = None;
    for mut stmt in statements {
        super::scalar::inline_scalar_subqueries(ctx, &mut stmt)?;
        last = Some(source::collect(ctx.execute(&stmt.to_string())?)?);
    }
    last.ok_or(QueryError::Empty)
}
