//! The `table!` macro: one declaration per table (column, Rust type, one-line doc) that yields
//! the row struct, the polars schema, the column builders rows are pushed into, the reader back to rows and the
//! column docs. It declares no table itself (they are in `rows.rs`) and knows no MCP.

use std::sync::Arc;

use polars::prelude::*;
use polars_arrow::array::{DictionaryArray, MutableBinaryViewArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, IntegerType};

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
    /// Empty builders for about `capacity` rows bound for `target`.
    fn builders(capacity: usize, target: Target) -> Self::Builders;
    /// Appends one row to the builders (its strings are copied into the columns' buffers).
    fn push(builders: &mut Self::Builders, row: &Self);
    /// The table of the rows pushed.
    fn finish(builders: Self::Builders) -> PolarsResult<DataFrame>;
    /// The rows pushed as the Arrow arrays of a Parquet part's row group.
    fn finish_file(builders: Self::Builders) -> PolarsResult<FileChunk>;
    /// Builders for `target` with `rows` pushed.
    fn pushed(rows: &[&Self], target: Target) -> Self::Builders {
        let mut builders = Self::builders(rows.len(), target);
        for row in rows {
            Self::push(&mut builders, row);
        }
        builders
    }
    /// The table of some rows.
    fn to_df(rows: &[&Self]) -> PolarsResult<DataFrame> {
        Self::finish(Self::pushed(rows, Target::Memory))
    }
    /// Some rows as a Parquet part's row group.
    fn to_file_chunk(rows: &[&Self]) -> PolarsResult<FileChunk> {
        Self::finish_file(Self::pushed(rows, Target::File))
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
    fn builder(name: &str, capacity: usize, target: Target) -> Self::Builder;
    fn push(builder: &mut Self::Builder, value: &Self);
    fn finish(builder: Self::Builder) -> Column;
    /// The column as the Arrow array a Parquet part stores: the polars column's own array,
    /// unless the builder has a cheaper one (a dictionary of the texts it interned).
    fn finish_file(builder: Self::Builder) -> ArrayRef {
        column_array(&Self::finish(builder))
    }
    fn from_column(c: &Column) -> Result<Vec<Self>, CellError>;
}

/// What a table's builders are for: columns of the in-memory tables the rules join on (text
/// columns are strings), or the row groups of a Parquet part (text columns with few values
/// are dictionaries, which the part declares as strings: [`FileChunk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Memory,
    File,
}

/// One row group of a table bound for a Parquet part: the table's declared schema (text
/// columns are strings) and one Arrow array per column. A text column may be a dictionary
/// array; Parquet stores it as dictionary pages of strings either way (what polars' writer
/// makes of a string column after hashing every value to find the dictionary), so readers
/// (polars, DuckDB, Spark) see the declared strings.
pub struct FileChunk {
    pub schema: Schema,
    pub height: usize,
    pub arrays: Vec<ArrayRef>,
}

impl FileChunk {
    /// A table built in memory, as a row group.
    pub fn of_df(df: &DataFrame) -> Self {
        FileChunk { schema: (**df.schema()).clone(), height: df.height(), arrays: df.columns().iter().map(column_array).collect() }
    }
}

/// A column's values as one Arrow array (the types Parquet parts take: views for strings).
fn column_array(c: &Column) -> ArrayRef {
    c.as_materialized_series().rechunk().to_arrow(0, CompatLevel::newest())
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
            fn builder(name: &str, capacity: usize, _target: Target) -> Values<$t> {
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
            fn builder(name: &str, capacity: usize, _target: Target) -> Values<Option<$t>> {
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
    fn builder(name: &str, capacity: usize, _target: Target) -> StringChunkedBuilder {
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

/// Optional owned text (error messages, notes, cursors: mostly distinct values, and in most
/// captures mostly null): pushed as they come, for memory and files alike ([`Texts`]).
impl ColumnType for Option<String> {
    type Builder = Texts;
    fn dtype() -> DataType {
        DataType::String
    }
    fn type_name() -> String {
        "string?".into()
    }
    fn builder(name: &str, capacity: usize, _target: Target) -> Texts {
        Texts { name: name.into(), capacity, nulls: 0, texts: None }
    }
    fn push(builder: &mut Texts, value: &Option<String>) {
        builder.push(value.as_deref());
    }
    fn finish(builder: Texts) -> Column {
        match builder.texts {
            Some(b) => b.finish().into_column(),
            None => StringChunked::full_null(builder.name, builder.nulls).into_column(),
        }
    }
    fn finish_file(builder: Texts) -> ArrayRef {
        match builder.texts {
            Some(b) => column_array(&b.finish().into_column()),
            // No text: the dictionary of none, every row null (what polars' writer makes of a
            // column of nulls after hashing it).
            None => text_dictionary(std::iter::empty(), vec![0; builder.nulls], Some(Bitmap::new_zeroed(builder.nulls))),
        }
    }
    fn from_column(c: &Column) -> Result<Vec<Option<String>>, CellError> {
        Ok(c.str()?.iter().map(|v| v.map(String::from)).collect())
    }
}

/// The builder of an optional owned-text column: the nulls before its first text are counted,
/// not pushed (eleven of the frames' columns are null in every row of a stdio capture).
pub struct Texts {
    name: PlSmallStr,
    capacity: usize,
    nulls: usize,
    texts: Option<StringChunkedBuilder>,
}

impl Texts {
    fn push(&mut self, value: Option<&str>) {
        match (&mut self.texts, value) {
            (Some(b), v) => b.append_option(v),
            (None, None) => self.nulls += 1,
            (None, Some(v)) => {
                let mut b = StringChunkedBuilder::new(self.name.clone(), self.capacity.max(self.nulls + 1));
                for _ in 0..self.nulls {
                    b.append_null();
                }
                b.append_value(v);
                self.texts = Some(b);
            }
        }
    }
}

/// Optional shared text (`Arc<str>`: method and tool names, block types, ids, and the texts a
/// session shares with each of its calls, its client and server names and versions: the call
/// holds the session's text, not a copy, which was a fifth of all allocations on `small.log`).
/// For memory the texts are copied into a string column as they come; for a file each row
/// is an index among the texts seen ([`Interned`]).
impl ColumnType for Option<Arc<str>> {
    type Builder = Names;
    fn dtype() -> DataType {
        DataType::String
    }
    fn type_name() -> String {
        "string?".into()
    }
    fn builder(name: &str, capacity: usize, target: Target) -> Names {
        match target {
            Target::Memory => Names::Memory(StringChunkedBuilder::new(name.into(), capacity)),
            Target::File => Names::File(Interned::new(name, capacity)),
        }
    }
    fn push(builder: &mut Names, value: &Option<Arc<str>>) {
        match builder {
            Names::Memory(b) => b.append_option(value.as_deref()),
            Names::File(b) if b.too_many() => {
                let mut strings = std::mem::replace(b, Interned::new("", 0)).into_builder();
                strings.append_option(value.as_deref());
                *builder = Names::Memory(strings);
            }
            Names::File(b) => b.push(value.as_ref()),
        }
    }
    fn finish(builder: Names) -> Column {
        match builder {
            Names::Memory(b) => b.finish().into_column(),
            Names::File(b) => b.finish(),
        }
    }
    fn finish_file(builder: Names) -> ArrayRef {
        match builder {
            Names::Memory(b) => column_array(&b.finish().into_column()),
            Names::File(b) => b.finish_file(),
        }
    }
    fn from_column(c: &Column) -> Result<Vec<Option<Arc<str>>>, CellError> {
        Ok(c.str()?.iter().map(|v| v.map(Arc::from)).collect())
    }
}

/// The builder of an optional shared-text column (see [`Target`]).
pub enum Names {
    Memory(StringChunkedBuilder),
    File(Interned),
}

/// Shared texts of a column bound for a file, each kept once: rows are indices among them.
/// A text is recognised by its allocation (the model shares one `Arc` per name and thread),
/// so a row costs a pointer lookup, not a hash of its text; texts seen under two allocations
/// are merged when the column is finished.
pub struct Interned {
    name: PlSmallStr,
    /// Allocation address to index in `texts`; the `Arc`s in `texts` keep the addresses taken.
    index: PlHashMap<usize, u32>,
    texts: Vec<Arc<str>>,
    keys: Vec<u32>,
    valid: Vec<bool>,
    /// The last allocation seen and its index (consecutive rows often share a text).
    last: (usize, u32),
}

impl Interned {
    fn new(name: &str, capacity: usize) -> Self {
        Interned { name: name.into(), index: PlHashMap::default(), texts: Vec::new(), keys: Vec::with_capacity(capacity), valid: Vec::with_capacity(capacity), last: (0, 0) }
    }

    fn push(&mut self, value: Option<&Arc<str>>) {
        let Some(text) = value else {
            self.keys.push(0);
            self.valid.push(false);
            return;
        };
        let at = Arc::as_ptr(text) as *const u8 as usize;
        let key = if at == self.last.0 {
            self.last.1
        } else {
            let texts = &mut self.texts;
            let key = *self.index.entry(at).or_insert_with(|| {
                texts.push(Arc::clone(text));
                (texts.len() - 1) as u32
            });
            self.last = (at, key);
            key
        };
        self.keys.push(key);
        self.valid.push(true);
    }

    /// Whether the texts are too many for a dictionary to pay: more than one row in four of
    /// the first 256 or more differs (ids). The column is then pushed as strings.
    fn too_many(&self) -> bool {
        self.keys.len() >= 256 && self.texts.len() * 4 > self.keys.len()
    }

    /// The rows so far in a string builder (for the rows to come too).
    fn into_builder(self) -> StringChunkedBuilder {
        let mut b = StringChunkedBuilder::new(self.name, self.keys.capacity().max(self.keys.len() + 1));
        for (k, v) in self.keys.iter().zip(&self.valid) {
            b.append_option(v.then(|| &*self.texts[*k as usize]));
        }
        b
    }

    /// The rows as a string column.
    fn finish(self) -> Column {
        self.into_builder().finish().into_column()
    }

    /// The rows as a dictionary of their distinct texts, or as strings when nearly every row
    /// differs (then a dictionary page would only add to the file, as polars' writer decides).
    fn finish_file(self) -> ArrayRef {
        let valid = (self.valid.iter().any(|v| !v)).then(|| Bitmap::from_iter(self.valid.iter().copied()));
        text_dictionary(self.texts.iter().map(|t| &**t), self.keys, valid)
    }
}

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
    fn builder(name: &str, _capacity: usize, _target: Target) -> Runs {
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
    fn finish_file(builder: Runs) -> ArrayRef {
        let rows: usize = builder.runs.iter().map(|(_, n)| n).sum();
        let mut keys = Vec::with_capacity(rows);
        for (i, (_, n)) in builder.runs.iter().enumerate() {
            keys.extend(std::iter::repeat_n(i as u32, *n));
        }
        text_dictionary(builder.runs.iter().map(|(t, _)| &**t), keys, None)
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

/// A text column bound for a Parquet part: rows given as `keys` into `texts` (which may hold
/// one text more than once), `valid` false for nulls. A dictionary of the distinct texts in
/// order of first use (the dictionary polars' writer builds from a string column, so the
/// pages are the same), or, when more than three rows in four of a column over 128 rows
/// differ, the strings themselves (where polars' writer gives up on a dictionary).
fn text_dictionary<'a>(texts: impl Iterator<Item = &'a str>, mut keys: Vec<u32>, valid: Option<Bitmap>) -> ArrayRef {
    let texts: Vec<&str> = texts.collect();
    let rows = keys.len();
    let is_valid = |row: usize| valid.as_ref().is_none_or(|v| v.get_bit(row));
    // Distinct texts in order of first use by a valid row, and each text's new key; given up
    // as soon as they are too many for a dictionary.
    let mut distinct: PlHashMap<&str, u32> = PlHashMap::default();
    let mut values: Vec<&str> = Vec::new();
    let mut remap: Vec<u32> = vec![u32::MAX; texts.len()];
    let too_many = |n: usize| rows > 128 && n * 4 > rows * 3;
    for (row, key) in keys.iter().enumerate() {
        let old = *key as usize;
        if !is_valid(row) || remap[old] != u32::MAX {
            continue;
        }
        remap[old] = *distinct.entry(texts[old]).or_insert_with(|| {
            values.push(texts[old]);
            (values.len() - 1) as u32
        });
        if too_many(values.len()) {
            let mut strings = MutableBinaryViewArray::<str>::with_capacity(rows);
            for (row, key) in keys.iter().enumerate() {
                if is_valid(row) {
                    strings.push_value(texts[*key as usize]);
                } else {
                    strings.push_null();
                }
            }
            return strings.freeze().boxed();
        }
    }
    for (row, key) in keys.iter_mut().enumerate() {
        *key = if is_valid(row) { remap[*key as usize] } else { 0 };
    }
    let values = Utf8ViewArray::from_slice_values(&values).boxed();
    let keys = PrimitiveArray::<u32>::new(ArrowDataType::UInt32, keys.into(), valid);
    let dtype = ArrowDataType::Dictionary(IntegerType::UInt32, Box::new(ArrowDataType::Utf8View), false);
    // Every key indexes `values`: valid rows were remapped into it, null rows point at 0.
    DictionaryArray::try_new(dtype, keys, values).expect("keys index the distinct texts").boxed()
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

    /// The rows as a dictionary of the texts seen.
    pub fn finish_file(self) -> ArrayRef {
        text_dictionary(self.texts.into_iter(), self.rows, None)
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
            fn builder(name: &str, capacity: usize, _target: $crate::model::schema::Target) -> $crate::model::schema::Choices {
                $crate::model::schema::Choices::new(name, capacity)
            }
            fn push(builder: &mut $crate::model::schema::Choices, value: &$t) {
                builder.push($crate::model::schema::Categorical::as_str(*value));
            }
            fn finish(builder: $crate::model::schema::Choices) -> polars::prelude::Column {
                builder.finish()
            }
            fn finish_file(builder: $crate::model::schema::Choices) -> polars::prelude::ArrayRef {
                builder.finish_file()
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

            fn builders(capacity: usize, target: $crate::model::schema::Target) -> Self::Builders {
                ($(<$ty as $crate::model::schema::ColumnType>::builder(stringify!($field), capacity, target),)+)
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

            fn finish_file(builders: Self::Builders) -> polars::prelude::PolarsResult<$crate::model::schema::FileChunk> {
                let ($($field,)+) = builders;
                let arrays = vec![$(
                    <$ty as $crate::model::schema::ColumnType>::finish_file($field)
                ),+];
                let height = arrays.first().map_or(0, |a| a.len());
                if let Some(a) = arrays.iter().find(|a| a.len() != height) {
                    polars::prelude::polars_bail!(ShapeMismatch: "table {}: a column of {} rows in a chunk of {height}", $table, a.len());
                }
                Ok($crate::model::schema::FileChunk { schema: <Self as $crate::model::schema::Table>::schema(), height, arrays })
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
