//! Query: polars SQL over the tables (`sql`), where the tables come from (`source`), the rule
//! files (`rules`, `header`, `severity`), scalar subqueries run ahead (`scalar`), a
//! per-capture query planned once for every piece (`plan`), the heap
//! handed back between pieces (`heap`) and queries run two at a time (`parallel`).

pub mod header;
pub mod constant;
pub mod heap;
pub mod parallel;
pub mod plan;
pub mod rules;
pub mod scalar;
pub mod severity;
pub mod source;
pub mod sql;

pub use source::TableSource;
pub use sql::{QueryError, context, context_for, run_in, run_sql, sql_literal};

