//! Which columns of a scan's part files hold one value, read from their Parquet statistics
//! (every row group: no null, minimum equal to maximum, the same in every file). A query planned
//! on a piece of a dataset groups by such a column as an aggregate instead of a key
//! (`plan::aggregate_constant_keys`): a capture's client name and version, its server, often its
//! session. Grouping a fleet's tool calls by three string keys took polars about three times as
//! long as by one. polars-parquet reads the footer; mcpsift's part files are written by polars,
//! which keeps whole values in its statistics (no truncated minimum or maximum to mistake for
//! one value). Written by hand: no crate answers "is this column constant" from a footer.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use polars_parquet::parquet::read::read_metadata;
use polars_parquet::parquet::statistics::Statistics;

/// Footers read so far, by the files of a scan (a piece's part files are read once, not once per
/// rule); cleared past [`KEPT`] scans.
static KNOWN: LazyLock<Mutex<HashMap<Vec<String>, Columns>>> = LazyLock::new(Mutex::default);
/// Column names.
type Columns = Arc<BTreeSet<String>>;
const KEPT: usize = 4096;

/// The string columns that hold one value, the same, in every row of `files`; none when a
/// footer cannot be read or a file has no rows.
pub fn constant_columns(files: &[&str]) -> Columns {
    let key: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    if let Some(known) = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key) {
        return Arc::clone(known);
    }
    let found = Arc::new(read(files).unwrap_or_default());
    let mut known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if known.len() >= KEPT {
        known.clear();
    }
    known.insert(key, Arc::clone(&found));
    found
}

fn read(files: &[&str]) -> Option<BTreeSet<String>> {
    // Per column: its one value so far, or None once it has two (or a null, or no statistics).
    let mut values: Option<HashMap<String, Option<Vec<u8>>>> = None;
    for path in files {
        let meta = read_metadata(&mut std::fs::File::open(path).ok()?).ok()?;
        if meta.row_groups.is_empty() {
            return None;
        }
        let mut here: HashMap<String, Option<Vec<u8>>> = HashMap::new();
        for group in &meta.row_groups {
            for column in group.parquet_columns() {
                let [name] = column.descriptor().path_in_schema.as_slice() else { continue };
                let one = match column.statistics(&meta.footer_buf) {
                    Some(Ok(Statistics::Binary(s))) if s.null_count == Some(0) && s.min_value.is_some() && s.min_value == s.max_value => s.min_value,
                    _ => None,
                };
                let entry = here.entry(name.to_string()).or_insert_with(|| one.clone());
                if *entry != one {
                    *entry = None;
                }
            }
        }
        values = Some(match values {
            None => here,
            Some(mut so_far) => {
                for (name, value) in so_far.iter_mut() {
                    if here.get(name) != Some(value) {
                        *value = None;
                    }
                }
                so_far
            }
        });
    }
    Some(values?.into_iter().filter_map(|(name, value)| value.map(|_| name)).collect())
}
