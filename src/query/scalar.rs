//! Scalar subqueries (`x >= (SELECT MIN(...) FROM limits)`), which polars' SQL refuses: each
//! uncorrelated one is run first and put into the statement as a literal (and so is an `IN
//! (SELECT ...)` of a few values, which polars would run as a join the scan cannot filter by), so a rule file written
//! in standard SQL (as DuckDB and Spark run it) also runs here, and a threshold read from a table
//! reaches the Parquet scan as a constant (row groups whose statistics are below it are skipped).
//! Written by hand: sqlparser gives the tree and its visitor, polars runs each subquery.

use std::ops::ControlFlow;

use polars::prelude::*;
use polars::sql::SQLContext;
use sqlparser::ast::{Expr, Statement, Value, VisitMut, With};

use super::sql::QueryError;

/// Replaces every scalar subquery in `stmt` by its value. A subquery may name the statement's
/// own common table expressions (`WITH`); one that names the outer query's columns (correlated)
/// fails as polars fails on it. No row is NULL; more than one row, or more than one column, is
/// an error, as in standard SQL.
pub fn inline_scalar_subqueries(ctx: &mut SQLContext, stmt: &mut Statement) -> Result<(), QueryError> {
    let Statement::Query(query) = stmt else { return inline(ctx, stmt, None) };
    // Each common table expression sees only those before it; the body sees them all.
    if let Some(with) = &mut query.with {
        for i in 0..with.cte_tables.len() {
            let before = With { cte_tables: with.cte_tables[..i].to_vec(), ..with.clone() };
            inline(ctx, &mut *with.cte_tables[i].query, (i > 0).then_some(&before))?;
        }
    }
    let with = query.with.clone();
    inline(ctx, &mut **query, with.as_ref())
}

/// An `IN (SELECT ...)` subquery with at most this many distinct values becomes a literal list.
const IN_LIST_MAX: usize = 4096;

/// Replaces the scalar subqueries in `node`, each run with the common table expressions `with`,
/// and the small `IN (SELECT ...)` subqueries.
fn inline<V: VisitMut>(ctx: &mut SQLContext, node: &mut V, with: Option<&With>) -> Result<(), QueryError> {
    let mut failed = None;
    let _ = sqlparser::ast::visit_expressions_mut(node, |expr| {
        let text = |query: &sqlparser::ast::Query| match (with, &query.with) {
            (Some(w), None) => format!("{w} {query}"),
            _ => query.to_string(),
        };
        let run = |ctx: &mut SQLContext, text: &str| ctx.execute(text).and_then(super::source::collect).map_err(QueryError::from);
        match expr {
            Expr::Subquery(query) => match run(ctx, &text(query)).and_then(|df| scalar(&df)) {
                Ok(value) => *expr = Expr::value(value),
                Err(e) => {
                    failed = Some(e);
                    return ControlFlow::Break(());
                }
            },
            Expr::InSubquery { expr: left, subquery, negated } => {
                // One that cannot run alone (it names the outer query) is left to polars.
                if let Ok(Some(list)) = run(ctx, &text(subquery)).map(|df| in_list(&df)) {
                    *expr = match list.is_empty() {
                        true => Expr::value(Value::Boolean(*negated)),
                        false => Expr::InList { expr: left.clone(), list: list.into_iter().map(Expr::value).collect(), negated: *negated },
                    };
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    });
    failed.map_or(Ok(()), Err)
}

/// The distinct values of a one-column result as literals, when there are at most
/// [`IN_LIST_MAX`] and none is NULL (`x IN (..., NULL)` is NULL, not false, when x is absent;
/// polars' subquery and list forms differ there, so that case stays a subquery).
fn in_list(df: &DataFrame) -> Option<Vec<Value>> {
    if df.width() != 1 {
        return None;
    }
    let column = df.columns()[0].unique_stable().ok()?;
    if column.len() > IN_LIST_MAX || column.null_count() > 0 {
        return None;
    }
    (0..column.len()).map(|i| literal(column.get(i).ok()?).ok()).collect()
}

/// The one value of a one-column result as a SQL literal (NULL when it has no row).
fn scalar(df: &DataFrame) -> Result<Value, QueryError> {
    if df.width() != 1 {
        return Err(QueryError::Scalar(format!("a scalar subquery returned {} columns", df.width())));
    }
    if df.height() > 1 {
        return Err(QueryError::Scalar(format!("a scalar subquery returned {} rows", df.height())));
    }
    let column = &df.columns()[0];
    if df.height() == 0 {
        return Ok(Value::Null);
    }
    literal(column.get(0).map_err(QueryError::Polars)?)
}

/// A value of a result as a SQL literal.
fn literal(value: AnyValue) -> Result<Value, QueryError> {
    Ok(match value {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Boolean(b),
        AnyValue::String(s) => Value::SingleQuotedString(s.to_string()),
        AnyValue::StringOwned(s) => Value::SingleQuotedString(s.to_string()),
        v if v.is_integer() => Value::Number(v.to_string(), false),
        AnyValue::Float64(f) => float(f)?,
        AnyValue::Float32(f) => float(f64::from(f))?,
        other => return Err(QueryError::Scalar(format!("a scalar subquery returned a value of type {}, not a number, string or boolean", other.dtype()))),
    })
}

/// A float as a literal that parses back to the same value (Rust's shortest round-trip form).
fn float(f: f64) -> Result<Value, QueryError> {
    if f.is_finite() {
        Ok(Value::Number(format!("{f:?}"), false))
    } else {
        Err(QueryError::Scalar(format!("a scalar subquery returned {f}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::sql::run_in;

    fn names(df: &DataFrame) -> Vec<String> {
        df.column("name").expect("name").str().expect("str").iter().map(|s| s.unwrap_or("NULL").to_string()).collect()
    }

    fn ctx() -> SQLContext {
        let ctx = SQLContext::new();
        let t = df!("name" => ["a", "b", "c"], "bytes" => [10i64, 20, 30], "ratio" => [0.9f64, 0.5, 0.8], "on" => [true, true, false]).expect("frame");
        ctx.register("t", t.lazy());
        ctx
    }

    #[test]
    fn a_scalar_subquery_is_compared_as_its_value() {
        let mut ctx = ctx();
        let df = run_in(&mut ctx, "SELECT name FROM t WHERE bytes >= (SELECT MIN(ratio * bytes) FROM t WHERE \"on\") ORDER BY name").expect("runs");
        // MIN(0.9 * 10, 0.5 * 20) = 9: rows 10, 20, 30 pass.
        assert_eq!(names(&df), ["a", "b", "c"]);
        let df = run_in(&mut ctx, "SELECT name FROM t WHERE bytes > (SELECT MAX(bytes) - 15 FROM t) ORDER BY name").expect("runs");
        assert_eq!(names(&df), ["b", "c"]);
    }

    #[test]
    fn a_subquery_may_name_the_statements_ctes_and_no_row_is_null() {
        let mut ctx = ctx();
        let df = run_in(&mut ctx, "WITH big AS (SELECT * FROM t WHERE bytes > 15) SELECT name FROM t WHERE bytes = (SELECT MIN(bytes) FROM big)").expect("runs");
        assert_eq!(names(&df), ["b"]);
        let df = run_in(&mut ctx, "SELECT name FROM t WHERE bytes >= (SELECT bytes FROM t WHERE bytes > 100)").expect("runs");
        assert_eq!(df.height(), 0);
        let df = run_in(&mut ctx, "SELECT name FROM t WHERE name = (SELECT name FROM t WHERE bytes = 20)").expect("runs");
        assert_eq!(df.height(), 1);
    }

    #[test]
    fn an_in_subquery_gives_the_rows_it_gives_as_a_join() {
        let mut ctx = ctx();
        // A list of values, an empty one (IN: none; NOT IN: all), and one holding a NULL
        // (left to polars as a subquery: NOT IN a set with NULL keeps no row).
        let cases = [
            ("SELECT name FROM t WHERE bytes IN (SELECT bytes FROM t WHERE \"on\") ORDER BY name", vec!["a", "b"]),
            ("SELECT name FROM t WHERE bytes NOT IN (SELECT bytes FROM t WHERE \"on\") ORDER BY name", vec!["c"]),
            ("SELECT name FROM t WHERE bytes IN (SELECT bytes FROM t WHERE bytes > 100) ORDER BY name", vec![]),
            ("SELECT name FROM t WHERE bytes NOT IN (SELECT bytes FROM t WHERE bytes > 100) ORDER BY name", vec!["a", "b", "c"]),
            ("WITH big AS (SELECT bytes FROM t WHERE bytes > 15) SELECT name FROM t WHERE bytes IN (SELECT bytes FROM big) ORDER BY name", vec!["b", "c"]),
            ("SELECT name FROM t WHERE bytes NOT IN (SELECT CASE WHEN bytes = 10 THEN NULL ELSE bytes END FROM t) ORDER BY name", vec![]),
        ];
        for (sql, want) in cases {
            let df = run_in(&mut ctx, sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(names(&df), want, "{sql}");
        }
        let mut stmt = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::GenericDialect {}, "SELECT name FROM t WHERE bytes IN (SELECT bytes FROM t WHERE \"on\")").expect("parses").remove(0);
        inline_scalar_subqueries(&mut ctx, &mut stmt).expect("inlines");
        assert_eq!(stmt.to_string(), "SELECT name FROM t WHERE bytes IN (10, 20)");
    }

    #[test]
    fn more_than_one_row_is_an_error() {
        let mut ctx = ctx();
        let err = run_in(&mut ctx, "SELECT name FROM t WHERE bytes >= (SELECT bytes FROM t)").expect_err("three rows");
        assert!(err.to_string().contains("returned 3 rows"), "{err}");
    }
}
