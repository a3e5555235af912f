//! Where a query's tables come from: a [`TableSource`] names a lazy frame per table, from the
//! run's in-memory tables or from a dataset's part files (scanned lazily, so a query reads
//! only the columns and rows it keeps). Runs nothing.

use polars::prelude::*;

use crate::model::tables::{TABLE_NAMES, Tables};

/// The tables a query can name.
pub trait TableSource: Sync {
    /// The table `name` (one of [`TABLE_NAMES`]) as a lazy frame.
    fn table(&self, name: &str) -> PolarsResult<LazyFrame>;
    /// The same tables split into pieces of whole captures, in reading order, for queries
    /// whose answer for a capture depends only on its rows; `None`: one piece (the source).
    fn by_capture(&self) -> Option<Vec<Box<dyn TableSource + '_>>> {
        None
    }
    /// Whether every row of these tables belongs to one capture (a piece of one capture of a
    /// dataset), so their `capture` columns hold one value.
    fn one_capture(&self) -> bool {
        false
    }
    /// The tool definitions saved by `mcpsift baseline`, when the run compares with them.
    fn baseline(&self) -> Option<&crate::model::tool_changes::Baseline> {
        None
    }
    /// The table `name` of those computed at query time (`tool_changes`) as stored with these
    /// tables, if it was, for a run without a baseline; `None`: computed when a query names it.
    fn stored(&self, _name: &str) -> Option<LazyFrame> {
        None
    }
}

/// A source with a baseline to compare tool definitions with (`check --baseline`).
pub struct WithBaseline<'a> {
    pub inner: &'a dyn TableSource,
    pub baseline: crate::model::tool_changes::Baseline,
}

impl TableSource for WithBaseline<'_> {
    fn table(&self, name: &str) -> PolarsResult<LazyFrame> {
        self.inner.table(name)
    }
    fn by_capture(&self) -> Option<Vec<Box<dyn TableSource + '_>>> {
        self.inner.by_capture()
    }
    fn baseline(&self) -> Option<&crate::model::tool_changes::Baseline> {
        Some(&self.baseline)
    }
}

impl TableSource for Tables {
    fn table(&self, name: &str) -> PolarsResult<LazyFrame> {
        self.named().into_iter().find(|(n, _)| *n == name).map(|(_, df)| df.clone().lazy()).ok_or_else(|| unknown(name))
    }
}

/// Runs `per_piece` on each piece of whole captures (or once on all of them) and returns the
/// results in reading order; a failing piece's error is the first in reading order. Up to two
/// pieces run at a time ([`super::parallel::map_ordered`]), each in a query slot of the
/// process ([`super::parallel::in_slot`]). The heap a piece freed goes back to the system
/// once it is done ([`super::heap`]), so memory is bounded by two pieces, not by their number.
pub fn each_capture<T: Send, E: Send>(source: &dyn TableSource, per_piece: impl Fn(&dyn TableSource) -> Result<T, E> + Sync) -> Result<Vec<T>, E> {
    match source.by_capture() {
        Some(pieces) => super::parallel::map_ordered(pieces.len(), |i| {
            let result = super::parallel::in_slot(|| per_piece(pieces[i].as_ref()));
            super::heap::release_freed();
            result
        })
        .into_iter()
        .collect(),
        None => Ok(vec![super::parallel::in_slot(|| per_piece(source))?]),
    }
}

pub(crate) fn unknown(name: &str) -> PolarsError {
    PolarsError::ColumnNotFound(format!("no table {name:?} (tables: {})", TABLE_NAMES.join(", ")).into())
}

/// Runs a lazy frame to a DataFrame. Scans read only the columns a query names and apply its
/// filters while reading. The in-memory engine, not polars' streaming one: polars 0.55's
/// streaming engine panics (`unreachable`) lowering several of the shipped rules.
pub fn collect(lf: LazyFrame) -> PolarsResult<DataFrame> {
    lf.collect()
}
