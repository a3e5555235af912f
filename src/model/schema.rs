//! The `table!` macro: one declaration per table (column, Rust type, one-line doc) that yields
//! the row struct, the polars schema, the column builders rows are pushed into, the reader back to rows and the
//! column docs. It declares no table itself (they are in `rows.rs`) and knows no MCP.

use std::sync::Arc;

use polars::prelude::*;

use super::message::Kind;
use crate::ingest::frame::{Direction, Transport};

/// A table's column as the reference in docs/tables.md lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDoc {
    pub name: &'static str,
    /// `string`, `u64`, `i64`, `u32`, `f64`, `bool`, or the values of a categorical column
    /// (`c2s|s2c`); a trailing `?` means nullable.
    pub ty: String,
    pub doc: &'static str,
}

/// Reading a DataFrame back into rows failed.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("table {table}: {source}")]
    Polars { table: &'static str, source: PolarsError },
    #[error("table {table}: column {column}: null in row {row} of a non-null column")]
    Null { table: &'static str, column: &'static str, row: usize },
    #[error("table {table}: column {column}: unknown value {value:?}")]
    Unknown { table: &'static str, column: &'static str, value: String },
}

/// What every table declared with [`table!`] offers.
pub trait Table: Sized {
    /// The table's name (`frames`, `calls`, ...).
    const NAME: &'static str;
    /// Column names, types and docs, in column order.
    fn columns() -> Vec<ColumnDoc>;
    /// Column names and polars dtypes, in column order.
    fn schema() -> Schema;
    /// One builder per column, in column order (a tuple).
    type Builders: Send;
    /// Empty builders for about `capacity` rows.
    fn builders(capacity: usize) -> Self::Builders;
    /// Appends one row to the builders (its strings are copied into the columns' buffers).
    fn push(builders: &mut Self::Builders, row: &Self);
    /// The table of the rows pushed.
    fn finish(builders: Self::Builders) -> PolarsResult<DataFrame>;
    /// The table of some rows.
    fn to_df(rows: &[&Self]) -> PolarsResult<DataFrame> {
        let mut builders = Self::builders(rows.len());
        for row in rows {
            Self::push(&mut builders, row);
        }
        Self::finish(builders)
    }
    /// The rows of a table built by [`Table::to_df`] (or read back from its files).
    fn rows_from_df(df: &DataFrame) -> Result<Vec<Self>, SchemaError>;
}

/// Why reading one column failed (the macro adds table and column names).
#[derive(Debug)]
pub enum CellError {
    Polars(PolarsError),
    Null(usize),
    Unknown(String),
}

impl From<PolarsError> for CellError {
    fn from(e: PolarsError) -> Self {
        CellError::Polars(e)
    }
}

impl CellError {
    pub fn in_column(self, table: &'static str, column: &'static str) -> SchemaError {
        match self {
            CellError::Polars(source) => SchemaError::Polars { table, source },
            CellError::Null(row) => SchemaError::Null { table, column, row },
            CellError::Unknown(value) => SchemaError::Unknown { table, column, value },
        }
    }
}

/// A Rust type a column can hold: its dtype, its name in docs/tables.md, the builder a row's value is
/// pushed into (strings are copied into the column's buffers as they come) and how a column
/// becomes values again.
pub trait ColumnType: Sized {
    /// Where a column's values accumulate until the column is finished.
    type Builder: Send;
    fn dtype() -> DataType;
    fn type_name() -> String;
    fn builder(name: &str, capacity: usize) -> Self::Builder;
    fn push(builder: &mut Self::Builder, value: &Self);
    fn finish(builder: Self::Builder) -> Column;
    fn from_column(c: &Column) -> Result<Vec<Self>, CellError>;
}

/// The builder of a number column: its name and values.
pub struct Values<T> {
    name: PlSmallStr,
    values: Vec<T>,
}

impl<T> Values<T> {
    fn new(name: &str, capacity: usize) -> Self {
        Values { name: name.into(), values: Vec::with_capacity(capacity) }
    }
}

macro_rules! number_column {
    ($($t:ty => $dtype:expr, $name:literal, $get:ident);+ $(;)?) => {$(
        impl ColumnType for $t {
            type Builder = Values<$t>;
            fn dtype() -> DataType {
                $dtype
            }
            fn type_name() -> String {
                $name.to_string()
            }
            fn builder(name: &str, capacity: usize) -> Values<$t> {
                Values::new(name, capacity)
            }
            fn push(builder: &mut Values<$t>, value: &$t) {
                builder.values.push(*value);
            }
            fn finish(builder: Values<$t>) -> Column {
                Column::new(builder.name, builder.values)
            }
            fn from_column(c: &Column) -> Result<Vec<$t>, CellError> {
                c.$get()?.iter().enumerate().map(|(i, v)| v.ok_or(CellError::Null(i))).collect()
            }
        }
        impl ColumnType for Option<$t> {
            type Builder = Values<Option<$t>>;
            fn dtype() -> DataType {
                $dtype
            }
            fn type_name() -> String {
                concat!($name, "?").to_string()
            }
            fn builder(name: &str, capacity: usize) -> Values<Option<$t>> {
                Values::new(name, capacity)
            }
            fn push(builder: &mut Values<Option<$t>>, value: &Option<$t>) {
                builder.values.push(*value);
            }
            fn finish(builder: Values<Option<$t>>) -> Column {
                Column::new(builder.name, builder.values)
            }
            fn from_column(c: &Column) -> Result<Vec<Option<$t>>, CellError> {
                Ok(c.$get()?.iter().collect())
            }
        }
    )+};
}
number_column!(
    u64 => DataType::UInt64, "u64", u64;
    i64 => DataType::Int64, "i64", i64;
    u32 => DataType::UInt32, "u32", u32;
    f64 => DataType::Float64, "f64", f64;
    bool => DataType::Boolean, "bool", bool;
);

impl ColumnType for String {
    type Builder = StringChunkedBuilder;
    fn dtype() -> DataType {
        DataType::String
    }
    fn type_name() -> String {
        "string".into()
    }
    fn builder(name: &str, capacity: usize) -> StringChunkedBuilder {
        StringChunkedBuilder::new(name.into(), capacity)
    }
    fn push(builder: &mut StringChunkedBuilder, value: &String) {
        builder.append_value(value);
    }
    fn finish(builder: StringChunkedBuilder) -> Column {
        builder.finish().into_column()
    }
    fn from_column(c: &Column) -> Result<Vec<String>, CellError> {
        c.str()?.iter().enumerate().map(|(i, v)| v.map(str::to_string).ok_or(CellError::Null(i))).collect()
    }
}

/// Optional text columns, owned (`String`) or shared (`Arc<str>`: texts a session shares with
/// each of its calls, its client and server names and versions: the call holds the session's
/// text, not a copy, which was a fifth of all allocations on `small.log`).
macro_rules! optional_text_column {
    ($($t:ty),+ $(,)?) => {$(
        impl ColumnType for Option<$t> {
            type Builder = StringChunkedBuilder;
            fn dtype() -> DataType {
                DataType::String
            }
            fn type_name() -> String {
                "string?".into()
            }
            fn builder(name: &str, capacity: usize) -> StringChunkedBuilder {
                StringChunkedBuilder::new(name.into(), capacity)
            }
            fn push(builder: &mut StringChunkedBuilder, value: &Option<$t>) {
                builder.append_option(value.as_deref());
            }
            fn finish(builder: StringChunkedBuilder) -> Column {
                builder.finish().into_column()
            }
            fn from_column(c: &Column) -> Result<Vec<Option<$t>>, CellError> {
                Ok(c.str()?.iter().map(|v| v.map(<$t>::from)).collect())
            }
        }
    )+};
}
optional_text_column!(String, Arc<str>);

/// Capture and session names are shared (`Arc<str>`): millions of rows, a handful of names.
/// Their builder keeps runs of one name ([`Runs`]), not the text once per row.
impl ColumnType for Arc<str> {
    type Builder = Runs;
    fn dtype() -> DataType {
        DataType::String
    }
    fn type_name() -> String {
        "string".into()
    }
    fn builder(name: &str, _capacity: usize) -> Runs {
        Runs { name: name.into(), runs: Vec::new() }
    }
    fn push(builder: &mut Runs, value: &Arc<str>) {
        match builder.runs.last_mut() {
            Some((last, n)) if Arc::ptr_eq(last, value) || **last == **value => *n += 1,
            _ => builder.runs.push((Arc::clone(value), 1)),
        }
    }
    fn finish(builder: Runs) -> Column {
        match builder.runs.as_slice() {
            // A chunk holds one capture's rows, most often of one session: the text is stored once.
            [(value, n)] => StringChunked::full(builder.name, value, *n).into_column(),
            runs => {
                let mut b = StringChunkedBuilder::new(builder.name, runs.iter().map(|(_, n)| n).sum());
                for (value, n) in runs {
                    for _ in 0..*n {
                        b.append_value(&**value);
                    }
                }
                b.finish().into_column()
            }
        }
    }
    fn from_column(c: &Column) -> Result<Vec<Arc<str>>, CellError> {
        // Rows read back share one Arc per distinct name, as the model's rows do.
        let mut interned: PlHashMap<&str, Arc<str>> = PlHashMap::default();
        c.str()?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let v = v.ok_or(CellError::Null(i))?;
                Ok(Arc::clone(interned.entry(v).or_insert_with(|| v.into())))
            })
            .collect()
    }
}

/// The builder of a shared-name column: its name and runs of one value with their lengths.
pub struct Runs {
    name: PlSmallStr,
    runs: Vec<(Arc<str>, usize)>,
}

/// A categorical column: an enum in Rust, its `as_str` text in the table.
pub trait Categorical: Copy + 'static {
    /// Every value, in the order docs/tables.md lists them.
    const VALUES: &'static [Self];
    fn as_str(self) -> &'static str;
    fn from_name(s: &str) -> Option<Self> {
        Self::VALUES.iter().copied().find(|v| v.as_str() == s)
    }
}

/// The builder of a categorical column: each row's position among the texts seen so far, and
/// those texts once. `finish` gathers the rows from the texts, so a row costs an index, not a
/// copy of its text (`client_to_server` is too long to sit in a string view).
pub struct Choices {
    name: PlSmallStr,
    texts: Vec<&'static str>,
    rows: Vec<IdxSize>,
}

impl Choices {
    pub fn new(name: &str, capacity: usize) -> Self {
        Choices { name: name.into(), texts: Vec::new(), rows: Vec::with_capacity(capacity) }
    }

    pub fn push(&mut self, text: &'static str) {
        let at = match self.texts.iter().position(|t| std::ptr::eq(*t, text) || *t == text) {
            Some(at) => at,
            None => {
                self.texts.push(text);
                self.texts.len() - 1
            }
        };
        self.rows.push(at as IdxSize);
    }

    pub fn finish(self) -> Column {
        let texts = StringChunked::from_slice(self.name, &self.texts);
        let rows = IdxCa::from_vec(PlSmallStr::EMPTY, self.rows);
        // Every row is a position in `texts`, pushed with it.
        texts.take(&rows).expect("rows index the builder's own texts").into_column()
    }
}

macro_rules! categorical_column {
    ($($t:ty),+ $(,)?) => {$(
        impl $crate::model::schema::ColumnType for $t {
            type Builder = $crate::model::schema::Choices;
            fn dtype() -> polars::prelude::DataType {
                polars::prelude::DataType::String
            }
            fn type_name() -> String {
                <$t as $crate::model::schema::Categorical>::VALUES.iter().map(|v| $crate::model::schema::Categorical::as_str(*v)).collect::<Vec<_>>().join("|")
            }
            fn builder(name: &str, capacity: usize) -> $crate::model::schema::Choices {
                $crate::model::schema::Choices::new(name, capacity)
            }
            fn push(builder: &mut $crate::model::schema::Choices, value: &$t) {
                builder.push($crate::model::schema::Categorical::as_str(*value));
            }
            fn finish(builder: $crate::model::schema::Choices) -> polars::prelude::Column {
                builder.finish()
            }
            fn from_column(c: &polars::prelude::Column) -> Result<Vec<$t>, $crate::model::schema::CellError> {
                c.str()?
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let v = v.ok_or($crate::model::schema::CellError::Null(i))?;
                        <$t as $crate::model::schema::Categorical>::from_name(v).ok_or_else(|| $crate::model::schema::CellError::Unknown(v.to_string()))
                    })
                    .collect()
            }
        }
        /// Serialized as its table text (the report's JSON).
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::model::schema::Categorical::as_str(*self))
            }
        }
    )+};
}
pub(crate) use categorical_column;

/// Declares a categorical enum with its table text per variant (and a `#[default]`).
macro_rules! categorical {
    ($(#[doc = $doc:literal])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }
        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
        impl $crate::model::schema::Categorical for $name {
            const VALUES: &'static [Self] = &[$($name::$variant),+];
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }
        }
        $crate::model::schema::categorical_column!($name);
    };
}
pub(crate) use categorical;

impl Categorical for Kind {
    const VALUES: &'static [Self] = &[
        Kind::Request,
        Kind::Notification,
        Kind::Response,
        Kind::Error,
        Kind::Batch,
        Kind::NonJson,
        Kind::InvalidJson,
        Kind::NotJsonRpc,
        Kind::Incomplete,
    ];
    fn as_str(self) -> &'static str {
        Kind::as_str(self)
    }
}

impl Categorical for Direction {
    const VALUES: &'static [Self] = &[Direction::ClientToServer, Direction::ServerToClient];
    fn as_str(self) -> &'static str {
        Direction::as_str(self)
    }
}

impl Categorical for Transport {
    const VALUES: &'static [Self] = &[Transport::Stdio, Transport::Http, Transport::Sse, Transport::Hostlog, Transport::Jsonl, Transport::Log];
    fn as_str(self) -> &'static str {
        Transport::as_str(self)
    }
}

categorical_column!(Kind, Direction, Transport);

/// Declares one table: `pub struct Row: "name" { /// doc \n field: Type, ... }`. Exactly one
/// doc line per column; column order is field order.
macro_rules! table {
    (
        $(#[doc = $sdoc:literal])*
        $(#[derive($($derive:ident),*)])?
        $vis:vis struct $row:ident : $table:literal {
            $(#[doc = $doc:literal] $field:ident : $ty:ty),+ $(,)?
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Debug, Clone, PartialEq $($(, $derive)*)?)]
        $vis struct $row {
            $(#[doc = $doc] pub $field: $ty),+
        }

        impl $crate::model::schema::Table for $row {
            const NAME: &'static str = $table;

            fn columns() -> Vec<$crate::model::schema::ColumnDoc> {
                vec![$($crate::model::schema::ColumnDoc {
                    name: stringify!($field),
                    ty: <$ty as $crate::model::schema::ColumnType>::type_name(),
                    doc: $doc.trim(),
                }),+]
            }

            fn schema() -> polars::prelude::Schema {
                polars::prelude::Schema::from_iter([$(
                    polars::prelude::Field::new(stringify!($field).into(), <$ty as $crate::model::schema::ColumnType>::dtype())
                ),+])
            }

            type Builders = ($(<$ty as $crate::model::schema::ColumnType>::Builder,)+);

            fn builders(capacity: usize) -> Self::Builders {
                ($(<$ty as $crate::model::schema::ColumnType>::builder(stringify!($field), capacity),)+)
            }

            fn push(builders: &mut Self::Builders, row: &Self) {
                let ($($field,)+) = builders;
                $(<$ty as $crate::model::schema::ColumnType>::push($field, &row.$field);)+
            }

            fn finish(builders: Self::Builders) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
                let ($($field,)+) = builders;
                polars::prelude::DataFrame::new_infer_height(vec![$(
                    <$ty as $crate::model::schema::ColumnType>::finish($field)
                ),+])
            }

            fn rows_from_df(df: &polars::prelude::DataFrame) -> Result<Vec<Self>, $crate::model::schema::SchemaError> {
                let polars_err = |source| $crate::model::schema::SchemaError::Polars { table: $table, source };
                $(
                    let column = df.column(stringify!($field)).map_err(polars_err)?;
                    let mut $field = <$ty as $crate::model::schema::ColumnType>::from_column(column)
                        .map_err(|e| e.in_column($table, stringify!($field)))?
                        .into_iter();
                )+
                let mut rows = Vec::with_capacity(df.height());
                for _ in 0..df.height() {
                    rows.push($row { $($field: $field.next().expect("every column has the frame's height")),+ });
                }
                Ok(rows)
            }
        }
    };
}
pub(crate) use table;

/// The docs/tables.md reference of one table: a Markdown table with one line per column.
pub fn reference<T: Table>() -> String {
    let mut s = String::from("| column | type | meaning |\n|---|---|---|\n");
    for c in T::columns() {
        s.push_str(&format!("| `{}` | `{}` | {} |\n", c.name, c.ty.replace('|', "\\|"), c.doc.replace('|', "\\|")));
    }
    s
}
