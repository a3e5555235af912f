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
use std::time::SystemTime;

use polars_parquet::parquet::read::read_metadata;
use polars_parquet::parquet::statistics::Statistics;

/// Footers read so far, by the files of a scan with each file's length and modification time (a
/// piece's part files are read once, not once per rule; a file written again under its name is
/// read again); cleared past [`KEPT`] scans.
static KNOWN: LazyLock<Mutex<HashMap<Vec<Stamp>, Columns>>> = LazyLock::new(Mutex::default);
/// A file's path, length and modification time.
type Stamp = (String, u64, Option<SystemTime>);
/// Column names.
type Columns = Arc<BTreeSet<String>>;
const KEPT: usize = 4096;

/// The string columns that hold one value, the same, in every row of `files`; none when a
/// file or its footer cannot be read or a file has no rows.
pub fn constant_columns(files: &[&str]) -> Columns {
    let stamped: Option<Vec<Stamp>> =
        files.iter().map(|f| std::fs::metadata(f).ok().map(|m| (f.to_string(), m.len(), m.modified().ok()))).collect();
    let Some(key) = stamped else { return Columns::default() };
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

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::*;

    fn write(path: &std::path::Path, clients: &[&str]) {
        let mut df = df!("client_name" => clients, "n" => (0..clients.len() as i64).collect::<Vec<_>>()).expect("frame");
        ParquetWriter::new(std::fs::File::create(path).expect("file")).finish(&mut df).expect("parquet");
    }

    #[test]
    fn a_column_holds_one_value_until_its_file_is_written_again_with_two() {
        let dir = std::env::temp_dir().join(format!("mcpsift-constant-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("calls.parquet");
        let name = path.display().to_string();
        write(&path, &["c1", "c1", "c1"]);
        assert_eq!(constant_columns(&[&name]).iter().collect::<Vec<_>>(), ["client_name"], "n differs row to row");
        write(&path, &["c1", "c2", "c1", "c1"]);
        assert!(constant_columns(&[&name]).is_empty(), "the file was written again: read again");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
