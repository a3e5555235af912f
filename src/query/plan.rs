//! A per-capture query planned once and run on every piece of a dataset. polars turns a rule's
//! SQL into an optimized plan in 20-45 ms, about as long as the rule then runs on a piece of
//! 256 K frames, so planning it again for each piece was a third of `check` over a dataset. A
//! plan is made on the first piece of each shape (which tables it has rows in); for each later
//! piece of that shape, its scans are pointed at that piece's part files (and the first file's
//! cached Parquet metadata dropped) and the plan is run as it is. Anything the swap cannot
//! account for (a multi-statement query, a table computed at query time, a scan of files the
//! plan's piece does not name, a scalar subquery with another value) plans the piece anew.
//! Written by hand: polars has no prepared statements; its IR and in-memory engine are public,
//! and this file is the only one using them.

use polars::prelude::*;
use polars_mem_engine::create_physical_plan;
use polars_plan::plans::{IR, IRPlan};
use sqlparser::ast::Statement;
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::source::{TableSource, each_capture};
use super::sql::{QueryError, computes_tables, context_of, run_sql, table_frames};

/// How a piece offers one table: scanned from these part files, or held in memory (an empty
/// table, the `limits`).
enum Shape {
    Files(ScanSources),
    Memory,
}

/// A plan made on one piece, with what it read there.
struct Template {
    /// The statement as run (scalar subqueries put in).
    text: String,
    shapes: Vec<Shape>,
    plan: IRPlan,
}

/// Runs `sql` on each piece of whole captures of `tables` (or once on all of them), as
/// [`run_sql`] would on each, planning it once where the pieces allow; `keep` turns each
/// piece's rows into what is kept of them before the next piece runs (`err` wraps a query's
/// error).
pub fn run_sql_each<T, E>(tables: &dyn TableSource, sql: &str, err: impl Fn(QueryError) -> E, keep: impl FnMut(DataFrame) -> Result<T, E>) -> Result<Vec<T>, E> {
    Ok(run_counting(tables, sql, err, keep)?.0)
}

/// Each piece's rows of `sql` as [`run_sql_each`] gives them, and how many pieces were planned
/// (the others ran a plan made on an earlier piece).
pub fn run_sql_each_counting(tables: &dyn TableSource, sql: &str) -> Result<(Vec<DataFrame>, usize), QueryError> {
    run_counting(tables, sql, |e| e, Ok)
}

fn run_counting<T, E>(tables: &dyn TableSource, sql: &str, err: impl Fn(QueryError) -> E, mut keep: impl FnMut(DataFrame) -> Result<T, E>) -> Result<(Vec<T>, usize), E> {
    let statements = Parser::parse_sql(&GenericDialect {}, sql).map_err(|e| err(QueryError::Parse(e.to_string())))?;
    let reusable = match statements.as_slice() {
        [Statement::Query(_)] => !computes_tables(sql),
        _ => false,
    };
    let mut templates: Vec<Template> = Vec::new();
    let mut planned = 0;
    let rows = each_capture(tables, |piece| {
        let rows = if reusable {
            run_planned(piece, &statements[0], &mut templates, &mut planned)
        } else {
            planned += 1;
            run_sql(piece, sql)
        };
        keep(rows.map_err(&err)?)
    })?;
    Ok((rows, planned))
}

/// Plans kept per query: one per shape of the pieces' tables (which tables are empty), each
/// made on the first piece of that shape.
const TEMPLATES: usize = 16;

/// Runs `stmt` on `piece`, with the plan of `templates` that fits it, else planning it (and
/// keeping that plan).
fn run_planned(piece: &dyn TableSource, stmt: &Statement, templates: &mut Vec<Template>, planned: &mut usize) -> Result<DataFrame, QueryError> {
    let frames = table_frames(piece)?;
    let shapes: Vec<Shape> = frames.iter().map(|(_, frame)| shape(frame)).collect();
    let mut ctx = context_of(frames);
    let mut stmt = stmt.clone();
    super::scalar::inline_scalar_subqueries(&mut ctx, &mut stmt)?;
    let text = stmt.to_string();
    if let Some(plan) = templates.iter().filter(|t| t.text == text).find_map(|t| t.for_piece(&shapes)) {
        return Ok(execute(plan)?);
    }
    *planned += 1;
    let mut plan = ctx.execute(&text)?.to_alp_optimized()?;
    plan.ensure_root_node_is_sink();
    if templates.len() < TEMPLATES {
        let copy = IRPlan::new(plan.lp_top, plan.lp_arena.clone(), plan.expr_arena.clone());
        templates.push(Template { text, shapes, plan: copy });
    }
    Ok(execute(plan)?)
}

/// How `frame` offers its table.
fn shape(frame: &LazyFrame) -> Shape {
    match &frame.logical_plan {
        DslPlan::Scan { sources, .. } => Shape::Files(sources.clone()),
        _ => Shape::Memory,
    }
}

impl Template {
    /// The plan with its scans reading `shapes`' files instead, or `None` when the piece's
    /// tables differ in shape or the plan holds a scan this cannot point elsewhere.
    fn for_piece(&self, shapes: &[Shape]) -> Option<IRPlan> {
        if shapes.len() != self.shapes.len() || shapes.iter().zip(&self.shapes).any(|(a, b)| std::mem::discriminant(a) != std::mem::discriminant(b)) {
            return None;
        }
        let mut lp_arena = self.plan.lp_arena.clone();
        for i in 0..lp_arena.len() {
            let node = polars::polars_utils::arena::Node(i);
            if let IR::Scan { sources, scan_type, predicate_file_skip_applied, unified_scan_args, .. } = lp_arena.get_mut(node) {
                if predicate_file_skip_applied.is_some() || unified_scan_args.has_row_index_or_slice() {
                    return None;
                }
                let k = self.shapes.iter().position(|s| matches!(s, Shape::Files(f) if f == sources))?;
                let Shape::Files(replacement) = &shapes[k] else { return None };
                *sources = replacement.clone();
                match scan_type.as_mut() {
                    polars_plan::dsl::FileScanIR::Parquet { first_metadata, metadata_per_source, .. } => {
                        *first_metadata = None;
                        *metadata_per_source = None;
                    }
                    _ => return None,
                }
            }
        }
        Some(IRPlan::new(self.plan.lp_top, lp_arena, self.plan.expr_arena.clone()))
    }
}

/// Runs an optimized plan with a sink at its root on polars' in-memory engine, as
/// `LazyFrame::collect` does after optimizing.
fn execute(mut plan: IRPlan) -> PolarsResult<DataFrame> {
    let mut physical = create_physical_plan(plan.lp_top, &mut plan.lp_arena, &mut plan.expr_arena, polars::lazy::frame::BUILD_STREAMING_EXECUTOR)?;
    let mut state = polars_expr::state::ExecutionState::new();
    physical.execute(&mut state)
}
