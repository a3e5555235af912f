//! A per-capture query planned once and run on every piece of a dataset. polars turns a rule's
//! SQL into an optimized plan in 20-45 ms, about as long as the rule then runs on a piece of
//! 256 K frames, so planning it again for each piece was a third of `check` over a dataset. A
//! plan is made on the first piece of each shape (which tables it has rows in); for each later
//! piece of that shape, its scans are pointed at that piece's part files (and the first file's
//! cached Parquet metadata dropped) and the plan is run as it is. Anything the swap cannot
//! account for (a multi-statement query, a table computed at query time, a scan of files the
//! plan's piece does not name, a scalar subquery with another value) plans the piece anew. On a
//! piece of one capture, group-bys keyed on the tables' `capture` column (one value there) take
//! it as an aggregate instead of hashing it into every row's key.
//! Written by hand: polars has no prepared statements; its IR and in-memory engine are public,
//! and this file is the only one using them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use polars::prelude::*;
use polars_mem_engine::create_physical_plan;
use polars::polars_utils::arena::{Arena, Node};
use polars_plan::plans::expr_ir::{ExprIR, OutputName};
use polars_plan::plans::{AExpr, IR, IRAggExpr, IRPlan};
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
    /// Made for a piece of one capture, its `capture` group keys aggregated
    /// ([`aggregate_constant_keys`]): fits only such pieces.
    one_capture: bool,
    /// Group keys taken as aggregates because the part files said they hold one value: the
    /// scan's files (on the template's piece) and the column. Fits a piece whose files say so too.
    requires: Vec<(ScanSources, PlSmallStr)>,
    plan: IRPlan,
}

/// Runs `sql` on each piece of whole captures of `tables` (or once on all of them), as
/// [`run_sql`] would on each, planning it once where the pieces allow; `keep` turns each
/// piece's rows into what is kept of them as soon as they are ready (`err` wraps a query's
/// error). Pieces run two at a time ([`super::parallel`]), so `keep` sees them in the order
/// they finish; the results are in reading order.
pub fn run_sql_each<T: Send, E: Send>(tables: &dyn TableSource, sql: &str, err: impl Fn(QueryError) -> E + Sync, keep: impl FnMut(DataFrame) -> Result<T, E> + Send) -> Result<Vec<T>, E> {
    Ok(run_counting(tables, sql, err, keep)?.0)
}

/// Each piece's rows of `sql` as [`run_sql_each`] gives them, and how many pieces were planned
/// (the others ran a plan made on an earlier piece).
pub fn run_sql_each_counting(tables: &dyn TableSource, sql: &str) -> Result<(Vec<DataFrame>, usize), QueryError> {
    run_counting(tables, sql, |e| e, Ok)
}

fn run_counting<T: Send, E: Send>(tables: &dyn TableSource, sql: &str, err: impl Fn(QueryError) -> E + Sync, keep: impl FnMut(DataFrame) -> Result<T, E> + Send) -> Result<(Vec<T>, usize), E> {
    let statements = Parser::parse_sql(&GenericDialect {}, sql).map_err(|e| err(QueryError::Parse(e.to_string())))?;
    let reusable = match statements.as_slice() {
        [Statement::Query(_)] => !computes_tables(sql),
        _ => false,
    };
    let templates: Mutex<Vec<Template>> = Mutex::new(Vec::new());
    let planned = AtomicUsize::new(0);
    let keep = Mutex::new(keep);
    let rows = each_capture(tables, |piece| {
        let rows = if reusable {
            run_planned(piece, &statements[0], &templates, &planned)
        } else {
            planned.fetch_add(1, Ordering::Relaxed);
            run_sql(piece, sql)
        };
        let rows = rows.map_err(&err)?;
        let mut keep = keep.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        (*keep)(rows)
    })?;
    Ok((rows, planned.into_inner()))
}

/// Plans kept per query: one per shape of the pieces' tables (which tables are empty), each
/// made on the first piece of that shape.
const TEMPLATES: usize = 16;

/// Runs `stmt` on `piece`, with the plan of `templates` that fits it, else planning it (and
/// keeping that plan). A piece that finds no plan plans with the templates locked, so a piece
/// of the same query running beside it waits for that plan instead of making it too.
fn run_planned(piece: &dyn TableSource, stmt: &Statement, templates: &Mutex<Vec<Template>>, planned: &AtomicUsize) -> Result<DataFrame, QueryError> {
    let frames = table_frames(piece)?;
    let shapes: Vec<Shape> = frames.iter().map(|(_, frame)| shape(frame)).collect();
    let mut ctx = context_of(frames);
    let mut stmt = stmt.clone();
    super::scalar::inline_scalar_subqueries(&mut ctx, &mut stmt)?;
    let text = stmt.to_string();
    let one_capture = piece.one_capture();
    let mut templates = templates.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(plan) = templates.iter().filter(|t| t.text == text && t.one_capture == one_capture).find_map(|t| t.for_piece(&shapes)) {
        drop(templates);
        return Ok(execute(plan)?);
    }
    planned.fetch_add(1, Ordering::Relaxed);
    let mut plan = ctx.execute(&text)?.to_alp_optimized()?;
    let requires = aggregate_constant_keys(&mut plan, one_capture);
    plan.ensure_root_node_is_sink();
    if templates.len() < TEMPLATES {
        let copy = IRPlan::new(plan.lp_top, plan.lp_arena.clone(), plan.expr_arena.clone());
        templates.push(Template { text, shapes, one_capture, requires, plan: copy });
    }
    drop(templates);
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
        for (sources, column) in &self.requires {
            let k = self.shapes.iter().position(|s| matches!(s, Shape::Files(f) if f == sources))?;
            let Shape::Files(here) = &shapes[k] else { return None };
            if !constant_in(here).contains(column.as_str()) {
                return None;
            }
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

/// The column every table has, which holds one value on a piece of one capture.
const CAPTURE: &str = "capture";

/// The string columns that hold one value in every row of a scan's files ([`super::constant`]).
fn constant_in(sources: &ScanSources) -> std::sync::Arc<std::collections::BTreeSet<String>> {
    let files: Vec<&str> = sources.as_paths().map(|p| p.iter().map(|p| p.as_str()).collect()).unwrap_or_default();
    if files.is_empty() {
        return std::sync::Arc::default();
    }
    super::constant::constant_columns(&files)
}

/// Each group-by with two or more keys takes as `FIRST(key)` instead every key that holds one
/// value over its input, keeping at least one key, the columns in their order again. The groups
/// are the same (such a key has one value), and hashing it into every row's key cost polars most
/// of the grouping: on a piece of one capture, the tables' own `capture` column; on any piece, a
/// column its part files' statistics say holds one value ([`super::constant`]), as a capture's
/// client name and version do. A group-by over a join, a derived column, or a table held in
/// memory is left as it is. Returns the columns taken so because of their statistics: a plan
/// made so fits only pieces whose files say the same.
fn aggregate_constant_keys(plan: &mut IRPlan, one_capture: bool) -> Vec<(ScanSources, PlSmallStr)> {
    let mut requires = Vec::new();
    for i in 0..plan.lp_arena.len() {
        let node = Node(i);
        let IR::GroupBy { input, keys, options, apply: None, .. } = plan.lp_arena.get(node) else { continue };
        if keys.len() < 2 || options.is_rolling() || options.is_dynamic() {
            continue;
        }
        let mut found: Vec<(usize, Vec<(ScanSources, PlSmallStr)>)> = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            let AExpr::Column(c) = plan.expr_arena.get(key.node()) else { continue };
            if one_capture && from_capture(&plan.lp_arena, &plan.expr_arena, *input, c) {
                found.push((k, Vec::new()));
            } else {
                let mut proof = Vec::new();
                if one_valued(&plan.lp_arena, &plan.expr_arena, *input, c, &mut proof) {
                    found.push((k, proof));
                }
            }
        }
        if found.len() == keys.len() {
            found.pop();
        }
        if found.is_empty() {
            continue;
        }
        let IR::GroupBy { input, mut keys, mut aggs, schema, maintain_order, options, apply } = plan.lp_arena.take(node) else { continue };
        for (k, proof) in found.into_iter().rev() {
            let key = keys.remove(k);
            let first = plan.expr_arena.add(AExpr::Agg(IRAggExpr::First(key.node())));
            aggs.insert(0, ExprIR::new(first, OutputName::Alias(key.output_name().clone())));
            requires.extend(proof);
        }
        let order = keys.iter().chain(&aggs).map(|e| e.output_name().clone());
        let grouped: Schema = order.filter_map(|name| schema.get(&name).map(|dtype| (name, dtype.clone()))).collect();
        let inner = plan.lp_arena.add(IR::GroupBy { input, keys, aggs, schema: grouped.into(), maintain_order, options, apply });
        plan.lp_arena.replace(node, IR::SimpleProjection { input: inner, columns: schema });
    }
    requires
}

/// Whether column `name` of `node`'s output is the `capture` column of the piece's scans,
/// passed through unchanged (filtered, sorted, renamed, unioned), or has no row.
fn from_capture(lp: &Arena<IR>, exprs: &Arena<AExpr>, node: Node, name: &str) -> bool {
    match lp.get(node) {
        IR::Scan { .. } => name == CAPTURE,
        IR::DataFrameScan { df, .. } => df.height() == 0,
        IR::Union { inputs, .. } => inputs.iter().all(|i| from_capture(lp, exprs, *i, name)),
        _ => match passed_through(lp, exprs, node, name) {
            Some(Some((input, c))) => from_capture(lp, exprs, input, &c),
            _ => false,
        },
    }
}

/// Whether column `name` of `node`'s output is a scanned column whose part files say it holds
/// one value, passed through unchanged (filtered, sorted, renamed), the scan's files and column
/// added to `proof`. Of a union, one input may have rows: the others must be tables held in
/// memory without rows (another input's one value could be another value).
fn one_valued(lp: &Arena<IR>, exprs: &Arena<AExpr>, node: Node, name: &str, proof: &mut Vec<(ScanSources, PlSmallStr)>) -> bool {
    match lp.get(node) {
        IR::Scan { sources, .. } => {
            let one = constant_in(sources).contains(name);
            if one {
                proof.push((sources.clone(), PlSmallStr::from(name)));
            }
            one
        }
        IR::Union { inputs, .. } => {
            let mut with_rows = inputs.iter().filter(|i| !no_rows(lp, **i));
            match (with_rows.next(), with_rows.next()) {
                (Some(only), None) => one_valued(lp, exprs, *only, name, proof),
                _ => false,
            }
        }
        _ => match passed_through(lp, exprs, node, name) {
            Some(Some((input, c))) => one_valued(lp, exprs, input, &c, proof),
            _ => false,
        },
    }
}

/// Whether `node` yields no row for certain: a table held in memory without rows, filtered,
/// projected or unioned.
fn no_rows(lp: &Arena<IR>, node: Node) -> bool {
    match lp.get(node) {
        IR::DataFrameScan { df, .. } => df.height() == 0,
        IR::Filter { input, .. } | IR::Sort { input, .. } | IR::Slice { input, .. } | IR::Cache { input, .. } | IR::SimpleProjection { input, .. } | IR::Select { input, .. } | IR::HStack { input, .. } => {
            no_rows(lp, *input)
        }
        IR::Union { inputs, .. } => inputs.iter().all(|i| no_rows(lp, *i)),
        _ => false,
    }
}

/// For a node that passes rows through (filter, sort, slice, cache, projection, select, stack
/// of columns): its input and the input's name of output column `name`; `Some(None)` when that
/// column is computed there; `None` for any other node.
fn passed_through(lp: &Arena<IR>, exprs: &Arena<AExpr>, node: Node, name: &str) -> Option<Option<(Node, PlSmallStr)>> {
    let renamed = |list: &[ExprIR]| list.iter().find(|e| e.output_name().as_str() == name).map(|e| match exprs.get(e.node()) {
        AExpr::Column(c) => Some(c.clone()),
        _ => None,
    });
    match lp.get(node) {
        IR::Filter { input, .. } | IR::Sort { input, .. } | IR::Slice { input, .. } | IR::Cache { input, .. } | IR::SimpleProjection { input, .. } => Some(Some((*input, PlSmallStr::from(name)))),
        IR::Select { input, expr, .. } => Some(renamed(expr).flatten().map(|c| (*input, c))),
        IR::HStack { input, exprs: list, .. } => Some(match renamed(list) {
            None => Some((*input, PlSmallStr::from(name))),
            Some(c) => c.map(|c| (*input, c)),
        }),
        _ => None,
    }
}

/// Runs an optimized plan with a sink at its root on polars' in-memory engine, as
/// `LazyFrame::collect` does after optimizing.
fn execute(mut plan: IRPlan) -> PolarsResult<DataFrame> {
    let mut physical = create_physical_plan(plan.lp_top, &mut plan.lp_arena, &mut plan.expr_arena, polars::lazy::frame::BUILD_STREAMING_EXECUTOR)?;
    let mut state = polars_expr::state::ExecutionState::new();
    physical.execute(&mut state)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-capture Parquet table of tool calls, the way a dataset's part holds them, and the
    /// plan of `query` over it (`calls` in the query) with and without the constant key taken
    /// out of its group-bys.
    fn planned(query: impl Fn(LazyFrame) -> LazyFrame) -> (IRPlan, IRPlan) {
        let dir = std::env::temp_dir().join(format!("mcpsift-plan-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("calls.parquet");
        let mut df = df!(
            "capture" => ["/logs/day-1.log"; 6],
            "tool" => [Some("read"), Some("read"), Some("grep"), None, Some("grep"), Some("read")],
            "client_version" => ["1.2", "1.2", "1.2", "1.2", "1.3", "1.2"],
            "bytes" => [10i64, 20, 30, 40, 50, 60]
        )
        .expect("frame");
        ParquetWriter::new(std::fs::File::create(&path).expect("file")).finish(&mut df).expect("parquet");
        let scan = LazyFrame::scan_parquet(PlRefPath::new(path.display().to_string()), ScanArgsParquet::default()).expect("scan");
        let lf = query(scan);
        let plain = lf.clone().to_alp_optimized().expect("plan");
        let mut rewritten = lf.to_alp_optimized().expect("plan");
        aggregate_constant_keys(&mut rewritten, true);
        (plain, rewritten)
    }

    fn run(mut plan: IRPlan) -> DataFrame {
        plan.ensure_root_node_is_sink();
        execute(plan).expect("runs").sort(["tool", "client_version"], SortMultipleOptions::default().with_nulls_last(true)).expect("sorted")
    }

    /// Group-by nodes keyed on a plain `capture` column.
    fn capture_keys(plan: &IRPlan) -> usize {
        (0..plan.lp_arena.len())
            .filter(|i| matches!(plan.lp_arena.get(Node(*i)), IR::GroupBy { keys, .. } if keys.iter().any(|k| matches!(plan.expr_arena.get(k.node()), AExpr::Column(c) if c.as_str() == CAPTURE))))
            .count()
    }

    #[test]
    fn a_constant_capture_key_is_aggregated_and_the_groups_stay_the_same() {
        let (plain, rewritten) = planned(|calls| {
            calls.filter(col("bytes").gt(lit(15))).group_by([col("capture"), col("tool"), col("client_version")]).agg([len().alias("calls"), col("bytes").sum().alias("bytes")])
        });
        assert_eq!((capture_keys(&plain), capture_keys(&rewritten)), (1, 0));
        let (a, b) = (run(plain), run(rewritten));
        // Rows with bytes > 15: read/1.2 (20, 60), grep/1.2 (30), NULL/1.2 (40), grep/1.3 (50).
        assert_eq!(b.get_column_names(), ["capture", "tool", "client_version", "calls", "bytes"]);
        assert_eq!(b.column("calls").expect("calls").u32().expect("u32").iter().collect::<Vec<_>>(), [Some(1), Some(1), Some(2), Some(1)]);
        assert_eq!(b.column("bytes").expect("bytes").i64().expect("i64").iter().collect::<Vec<_>>(), [Some(30), Some(50), Some(80), Some(40)]);
        assert!(b.column("capture").expect("capture").str().expect("str").iter().all(|c| c == Some("/logs/day-1.log")));
        assert!(a.equals_missing(&b), "{a}\n{b}");
    }

    #[test]
    fn a_capture_key_that_is_computed_or_alone_stays_a_key() {
        // A key computed from capture is not the column as stored.
        let (_, rewritten) = planned(|calls| calls.group_by([col("capture").str().to_uppercase().alias("capture"), col("tool")]).agg([len().alias("calls")]));
        let computed = (0..rewritten.lp_arena.len()).any(|i| matches!(rewritten.lp_arena.get(Node(i)), IR::GroupBy { keys, .. } if keys.len() == 2));
        assert!(computed);
        // Grouped by capture alone, an empty input still gives no row, not one.
        let (plain, rewritten) = planned(|calls| calls.filter(col("bytes").gt(lit(1000))).group_by([col("capture")]).agg([len().alias("calls")]));
        assert_eq!(capture_keys(&rewritten), 1);
        assert_eq!((run_height(plain), run_height(rewritten)), (0, 0));
    }

    /// A Parquet file of tool calls in a folder of its own: `clients` gives each row's client.
    fn calls_file(name: &str, clients: [&str; 4]) -> LazyFrame {
        let dir = std::env::temp_dir().join(format!("mcpsift-plan-{}-{:?}", std::process::id(), std::thread::current().id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(format!("{name}.parquet"));
        let mut df = df!("tool" => ["read", "grep", "read", "read"], "client_name" => clients, "bytes" => [1i64, 2, 3, 4]).expect("frame");
        ParquetWriter::new(std::fs::File::create(&path).expect("file")).finish(&mut df).expect("parquet");
        LazyFrame::scan_parquet(PlRefPath::new(path.display().to_string()), ScanArgsParquet::default()).expect("scan")
    }

    #[test]
    fn a_key_its_files_say_holds_one_value_is_aggregated_where_they_say_so() {
        let query = |calls: LazyFrame| calls.group_by([col("tool"), col("client_name")]).agg([len().alias("calls"), col("bytes").sum().alias("bytes")]);
        let (one, other_one, two) = (calls_file("one", ["c1"; 4]), calls_file("other-one", ["c9"; 4]), calls_file("two", ["c1", "c1", "c2", "c1"]));
        let plain = query(one.clone()).to_alp_optimized().expect("plan");
        let mut rewritten = query(one.clone()).to_alp_optimized().expect("plan");
        let requires = aggregate_constant_keys(&mut rewritten, false);
        assert_eq!(requires.iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>(), ["client_name"]);
        let keys = |plan: &IRPlan| (0..plan.lp_arena.len()).find_map(|i| match plan.lp_arena.get(Node(i)) {
            IR::GroupBy { keys, .. } => Some(keys.len()),
            _ => None,
        });
        assert_eq!((keys(&plain), keys(&rewritten)), (Some(2), Some(1)));
        let sorted = |mut plan: IRPlan| {
            plan.ensure_root_node_is_sink();
            execute(plan).expect("runs").sort(["tool"], SortMultipleOptions::default()).expect("sorted")
        };
        let (a, b) = (sorted(plain), sorted(IRPlan::new(rewritten.lp_top, rewritten.lp_arena.clone(), rewritten.expr_arena.clone())));
        assert_eq!(b.get_column_names(), ["tool", "client_name", "calls", "bytes"]);
        assert!(a.equals_missing(&b), "{a}\n{b}");
        // The plan fits another piece whose file holds one client (another one), not a piece
        // whose file holds two: that one is planned anew.
        let template = Template { text: String::new(), shapes: vec![shape(&one)], one_capture: false, requires, plan: rewritten };
        let on_other = template.for_piece(&[shape(&other_one)]).expect("fits a piece with one client");
        let c = sorted(on_other);
        assert_eq!(c.column("client_name").expect("client").str().expect("str").iter().collect::<Vec<_>>(), [Some("c9"), Some("c9")]);
        assert!(template.for_piece(&[shape(&two)]).is_none(), "two clients: planned anew");
        let grouped = sorted(query(two).to_alp_optimized().expect("plan"));
        assert_eq!(grouped.height(), 3, "read/c1, grep/c1, read/c2: {grouped}");
    }

    fn run_height(mut plan: IRPlan) -> usize {
        plan.ensure_root_node_is_sink();
        execute(plan).expect("runs").height()
    }
}
