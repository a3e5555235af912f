//! Reading a dataset: the manifest checked (format, schema version), every part checked
//! (present, of the size recorded, ending in Parquet's footer magic), the captures' accounting
//! read back, and each table offered as one lazy scan over its parts in manifest order.

use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::manifest::{InputEntry, Manifest, Part};
use super::error::DatasetError;
use crate::model::schema::Table as _;
use crate::model::rows::FrameRow;
use crate::model::tables::{ReaderLimit, schema_of};
use crate::model::loaded::LoadedCapture;
use crate::query::TableSource;
use crate::query::source::unknown;

/// An opened, checked dataset.
pub struct Dataset {
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl Dataset {
    /// Opens `dir`, checking the manifest and every part it names.
    pub fn open(dir: &Path) -> Result<Dataset, DatasetError> {
        let manifest = Manifest::read(dir)?.ok_or_else(|| DatasetError::NotADataset { dir: dir.to_path_buf() })?;
        if !manifest.same_schema() {
            return Err(DatasetError::Schema {
                dir: dir.to_path_buf(),
                found: manifest.schema_version.clone(),
                version: manifest.mcpsift_version.clone(),
                expected: super::manifest::schema_version(),
                rebuild: rebuild_command(&manifest.inputs, dir),
            });
        }
        for entry in &manifest.inputs {
            for part in entry.all_parts() {
                if let Some(problem) = part_problem(dir, part) {
                    return Err(DatasetError::Part { dir: dir.to_path_buf(), capture: entry.capture.clone(), file: part.file.clone(), problem, rebuild: rebuild_command([entry], dir) });
                }
            }
        }
        Ok(Dataset { dir: dir.to_path_buf(), manifest })
    }

    /// The captures as a reading command sees them (accounting, no rows), in reading order.
    pub fn captures(&self) -> Vec<LoadedCapture> {
        self.manifest.inputs.iter().map(|e| e.summary.to_capture(&e.capture)).collect()
    }

    /// The tables of the dataset, with `limits` (the reading command's own) as the limits table.
    pub fn source(&self, limits: &[ReaderLimit]) -> PolarsResult<DatasetSource> {
        Ok(DatasetSource {
            dir: self.dir.clone(),
            inputs: self.manifest.inputs.clone(),
            limits: crate::model::schema::Table::to_df(&limits.iter().collect::<Vec<_>>())?,
            piece_frames: PIECE_FRAMES,
            tool_changes: match &self.manifest.tool_changes {
                _ if self.manifest.tool_changes_over != Some(self.manifest.inputs_key()) => None,
                Some(part) if part_problem(&self.dir, part).is_some() => None,
                part => Some(part.clone()),
            },
        })
    }
}

/// Why a part cannot be read, if it cannot.
pub(crate) fn part_problem(dir: &Path, part: &Part) -> Option<String> {
    let path = dir.join(&part.file);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some("missing".into()),
        Err(e) => return Some(format!("unreadable ({e})")),
    };
    if meta.len() != part.bytes {
        return Some(format!("corrupt ({} bytes, the manifest says {})", meta.len(), part.bytes));
    }
    let mut tail = [0u8; 4];
    let ok = (|| -> std::io::Result<bool> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(&path)?;
        f.seek(SeekFrom::End(-4))?;
        f.read_exact(&mut tail)?;
        Ok(&tail == b"PAR1")
    })();
    match ok {
        Ok(true) => None,
        Ok(false) => Some("corrupt (no Parquet footer)".into()),
        Err(e) => Some(format!("unreadable ({e})")),
    }
}

/// A dataset's tables as lazy scans.
pub struct DatasetSource {
    dir: PathBuf,
    inputs: Vec<InputEntry>,
    limits: DataFrame,
    /// Consecutive captures are queried together up to this many frames ([`PIECE_FRAMES`]).
    piece_frames: u64,
    /// The `tool_changes` table the writer stored over every capture (`Some(None)`: stored
    /// with no rows, so no part), when it did and its part is readable.
    tool_changes: Option<Option<Part>>,
}

/// Some whole captures' tables of a dataset.
struct CaptureSource<'a> {
    dir: &'a Path,
    inputs: &'a [InputEntry],
    limits: &'a DataFrame,
}

/// Consecutive captures are queried together up to this many frames (a larger capture is a
/// piece of its own): memory is bounded by a piece, and thousands of small captures do not
/// each pay a query's fixed cost. At 1 M frames a piece of 50 MB logs took 450-530 MB in
/// `check`; at 256 K, 260 MB, in the same time (bench/README.md).
const PIECE_FRAMES: u64 = 1 << 18;

impl DatasetSource {
    /// The same tables, split into pieces of up to `frames` frames (at least one capture each):
    /// what a piece-by-piece query must not notice, in the tests.
    pub fn with_piece_frames(self, frames: u64) -> Self {
        DatasetSource { piece_frames: frames, ..self }
    }
}

impl TableSource for DatasetSource {
    fn table(&self, name: &str) -> PolarsResult<LazyFrame> {
        scan(&self.dir, &self.inputs, &self.limits, name)
    }

    fn stored(&self, name: &str) -> Option<LazyFrame> {
        let stored = self.tool_changes.as_ref().filter(|_| name == super::write::TOOL_CHANGES)?;
        let Some(part) = stored else { return crate::model::tool_changes::tool_changes(&[], None).ok().map(DataFrame::lazy) };
        let path = PlRefPath::new(self.dir.join(&part.file).display().to_string());
        LazyFrame::scan_parquet_files(std::iter::once(path).collect(), ScanArgsParquet { glob: false, ..ScanArgsParquet::default() }).ok()
    }

    fn by_capture(&self) -> Option<Vec<Box<dyn TableSource + '_>>> {
        let mut pieces: Vec<Box<dyn TableSource + '_>> = Vec::new();
        let (mut start, mut frames) = (0, 0u64);
        for (i, entry) in self.inputs.iter().enumerate() {
            let rows: u64 = entry.parts.get(FrameRow::NAME).into_iter().flatten().map(|p| p.rows).sum();
            if i > start && frames + rows > self.piece_frames {
                pieces.push(Box::new(CaptureSource { dir: &self.dir, inputs: &self.inputs[start..i], limits: &self.limits }));
                (start, frames) = (i, 0);
            }
            frames += rows;
        }
        if start < self.inputs.len() {
            pieces.push(Box::new(CaptureSource { dir: &self.dir, inputs: &self.inputs[start..], limits: &self.limits }));
        }
        Some(pieces)
    }
}

impl TableSource for CaptureSource<'_> {
    fn table(&self, name: &str) -> PolarsResult<LazyFrame> {
        scan(self.dir, self.inputs, self.limits, name)
    }
    fn one_capture(&self) -> bool {
        self.inputs.len() == 1
    }
}

/// The table `name` of `inputs`: their parts in order, or an empty table with the columns.
pub(crate) fn scan(dir: &Path, inputs: &[InputEntry], limits: &DataFrame, name: &str) -> PolarsResult<LazyFrame> {
    {
        if name == ReaderLimit::NAME {
            return Ok(limits.clone().lazy());
        }
        let schema = schema_of(name).ok_or_else(|| unknown(name))?;
        let paths: Vec<PlRefPath> = inputs.iter().flat_map(|e| e.parts.get(name).into_iter().flatten()).map(|p| PlRefPath::new(dir.join(&p.file).display().to_string())).collect();
        if paths.is_empty() {
            return Ok(DataFrame::empty_with_schema(&schema).lazy());
        }
        let args = ScanArgsParquet { schema: Some(std::sync::Arc::new(schema)), glob: false, ..ScanArgsParquet::default() };
        LazyFrame::scan_parquet_files(paths.into_iter().collect(), args)
    }
}

/// The command that writes (or rewrites) `dir` from the inputs of `entries`: a file by its
/// path, a stdio pair as `--pair C2S:S2C`.
fn rebuild_command<'a>(entries: impl IntoIterator<Item = &'a InputEntry>, dir: &Path) -> String {
    let inputs: Vec<String> = entries
        .into_iter()
        .map(|e| match e.files.as_slice() {
            [c2s, s2c] => format!("--pair {}", shell_word(&format!("{}:{}", c2s.path, s2c.path))),
            files => files.iter().map(|f| shell_word(&f.path)).collect::<Vec<_>>().join(" "),
        })
        .collect();
    let shown: Vec<&str> = inputs.iter().take(3).map(String::as_str).collect();
    let more = if inputs.len() > 3 { format!(" … ({} inputs)", inputs.len()) } else { String::new() };
    format!("mcpsift tables {}{more} --out {}", shown.join(" "), shell_word(&dir.display().to_string()))
}

fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@,".contains(&b)) { s.to_string() } else { format!("'{}'", s.replace('\'', "'\\''")) }
}
