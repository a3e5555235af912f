//! `mcpsift tables`: every table written to a folder as Parquet or CSV. With Parquet, the
//! `frames` and `calls` chunks are written while the captures are read, so memory stays
//! bounded by the chunks in flight rather than by the row count.

use std::io::Write as _;
use std::sync::Arc;

use anyhow::Context as _;

use crate::cli::TablesArgs;
use mcpsift::model::capture::ChunkSink;
use mcpsift::report::export::parquet::ParquetSpill;
use mcpsift::report::table_out::{TableFileFormat, write_table_file};

pub fn run(args: &TablesArgs) -> anyhow::Result<u8> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("{}: cannot create", args.out.display()))?;
    let spill = (args.format == TableFileFormat::Parquet).then(|| Arc::new(ParquetSpill::new(&args.out)));
    let sink = spill.clone().map(|s| s as Arc<dyn ChunkSink>);
    let loaded = super::load_inputs_streaming(&args.input, sink)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (name, df) in loaded.tables.named() {
        let streamed = spill.as_ref().and_then(|s| s.writer(name));
        let (path, rows) = match streamed {
            // Chunks went out during reading: add what was left, then close the file.
            Some(stream) => stream.finish(df)?,
            None => {
                let path = write_table_file(df, &args.out, name, args.format)?;
                (path, df.height() as u64)
            }
        };
        writeln!(out, "{}\t{} rows", path.display(), rows)?;
    }
    Ok(0)
}
