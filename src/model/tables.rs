//! Gathers the captures' rows and chunks into the run's polars tables (DESIGN.md "Tables").
//! Column lists are not here: each table's columns are declared once in `rows.rs`.

use polars::prelude::*;

use super::capture::CaptureRows;
use super::rows::{CallRow, EventRow, FrameRow, PageRow, SessionRow, ToolRow};
use super::schema::Table;
pub use super::limits::{ReaderLimit, default_limits};

/// Every table's name, in [`Tables::named`] order.
pub const TABLE_NAMES: [&str; 7] = [FrameRow::NAME, CallRow::NAME, SessionRow::NAME, ToolRow::NAME, EventRow::NAME, PageRow::NAME, ReaderLimit::NAME];

/// A column's values as strings (cast first), for code that reads a query's few rows.
pub fn string_values(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<String>>> {
    Ok(df.column(name)?.cast(&DataType::String)?.str()?.iter().map(|v| v.map(str::to_string)).collect())
}

/// A column's values as 64-bit integers (cast first).
pub fn int_values(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<i64>>> {
    Ok(df.column(name)?.cast(&DataType::Int64)?.i64()?.iter().collect())
}

/// The columns of the table `name`.
pub fn schema_of(name: &str) -> Option<Schema> {
    Some(match name {
        FrameRow::NAME => FrameRow::schema(),
        CallRow::NAME => CallRow::schema(),
        SessionRow::NAME => SessionRow::schema(),
        ToolRow::NAME => ToolRow::schema(),
        EventRow::NAME => EventRow::schema(),
        PageRow::NAME => PageRow::schema(),
        ReaderLimit::NAME => ReaderLimit::schema(),
        _ => return None,
    })
}

/// All tables of a run.
pub struct Tables {
    pub frames: DataFrame,
    pub calls: DataFrame,
    pub sessions: DataFrame,
    pub tools: DataFrame,
    pub events: DataFrame,
    pub pages: DataFrame,
    pub limits: DataFrame,
}

impl Tables {
    /// (name, table) pairs in a stable order.
    pub fn named(&self) -> [(&'static str, &DataFrame); 7] {
        [
            (FrameRow::NAME, &self.frames),
            (CallRow::NAME, &self.calls),
            (SessionRow::NAME, &self.sessions),
            (ToolRow::NAME, &self.tools),
            (EventRow::NAME, &self.events),
            (PageRow::NAME, &self.pages),
            (ReaderLimit::NAME, &self.limits),
        ]
    }
}

/// The column reference of every table in docs/tables.md, as (table name, Markdown table) in
/// [`Tables::named`] order; `tests/readme.rs` checks docs/tables.md against it.
pub fn reference() -> [(&'static str, String); 7] {
    use super::schema::reference;
    [
        (FrameRow::NAME, reference::<FrameRow>()),
        (CallRow::NAME, reference::<CallRow>()),
        (SessionRow::NAME, reference::<SessionRow>()),
        (ToolRow::NAME, reference::<ToolRow>()),
        (EventRow::NAME, reference::<EventRow>()),
        (PageRow::NAME, reference::<PageRow>()),
        (ReaderLimit::NAME, reference::<ReaderLimit>()),
    ]
}

fn df<T: Table>(rows: &[T]) -> PolarsResult<DataFrame> {
    T::to_df(&rows.iter().collect::<Vec<_>>())
}

/// Builds every table from the captures' rows, moving the bulky row data (frames, calls,
/// tools, pages) out of `captures` capture by capture so rows and columns of a run never
/// coexist in full; the small accounting (sessions, events, counts, diagnostics) stays.
pub fn build_tables(captures: &mut [CaptureRows], limits: &[ReaderLimit]) -> PolarsResult<Tables> {
    let mut frames = df::<FrameRow>(&[])?;
    let mut calls = df::<CallRow>(&[])?;
    let mut tools = df::<ToolRow>(&[])?;
    let mut pages = df::<PageRow>(&[])?;
    for c in captures.iter_mut() {
        for chunk in std::mem::take(&mut c.frame_chunks) {
            frames.vstack_mut_owned(chunk)?;
        }
        for chunk in std::mem::take(&mut c.call_chunks) {
            calls.vstack_mut_owned(chunk)?;
        }
        let rows = std::mem::take(&mut c.calls);
        calls.vstack_mut_owned(df(&rows)?)?;
        drop(rows);
        let rows = std::mem::take(&mut c.tools);
        tools.vstack_mut_owned(df(&rows)?)?;
        let rows = std::mem::take(&mut c.pages);
        pages.vstack_mut_owned(df(&rows)?)?;
    }
    let sessions: Vec<&SessionRow> = captures.iter().flat_map(|c| &c.sessions).collect();
    let events: Vec<&EventRow> = captures.iter().flat_map(|c| &c.events).collect();
    Ok(Tables {
        frames,
        calls,
        sessions: SessionRow::to_df(&sessions)?,
        tools,
        events: EventRow::to_df(&events)?,
        pages,
        limits: df(limits)?,
    })
}
