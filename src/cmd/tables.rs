//! `mcpsift tables`: the tables as a Parquet dataset (`DIR/TABLE/part-*.parquet` and
//! `DIR/manifest.json`, refreshed incrementally: only new or changed inputs are read), or as
//! one CSV file per table for spreadsheets.

use std::io::Write as _;

use crate::cli::TablesArgs;
use mcpsift::dataset::manifest::options_fingerprint;
use mcpsift::dataset::{WriteOptions, Writer};
use mcpsift::report::export::TableFileFormat;
use mcpsift::report::table_out::write_table_file;

pub fn run(args: &TablesArgs) -> anyhow::Result<u8> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.format == TableFileFormat::Csv {
        std::fs::create_dir_all(&args.out).map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", args.out.display()))?;
        let loaded = super::inputs::load_inputs(&args.input)?;
        for (name, df) in loaded.tables.named() {
            let path = write_table_file(df, &args.out, name, args.format)?;
            writeln!(out, "{}\t{} rows", path.display(), df.height())?;
        }
        return Ok(0);
    }
    let mut request = super::inputs::request(&args.input, None)?;
    // The manifest records each new input's blake3, taken as the input is read.
    request.ingest.hash_files = true;
    let writer = Writer::open(&args.out, options_fingerprint(&request.ingest, &request.model), WriteOptions { prune: args.prune, incremental: true })?;
    let stored = mcpsift::pipeline::run_into(&request, &crate::progress::Bar::stderr(args.input.quiet), &writer)?;
    let summary = writer.finish(&stored, &request.limits)?;
    let captures: Vec<_> = stored.read.into_iter().flatten().collect();
    super::inputs::tell_only(&args.input, &captures, &stored.symlink_loops);
    // Inputs left unchanged are in the dataset already, captures or not as they were.
    super::inputs::require_captures(&args.input, &captures, summary.unchanged > 0)?;
    for (table, rows, parts) in &summary.tables {
        writeln!(out, "{}\t{rows} rows\t{parts} parts", args.out.join(table).display())?;
    }
    if !args.input.quiet {
        if let Some(why) = &summary.rebuilt {
            eprintln!("mcpsift: {}: every input read again: the dataset was {why}", args.out.display());
        }
        eprintln!("mcpsift: {}: {} input(s) read, {} unchanged", args.out.display(), summary.read, summary.unchanged);
        if !summary.missing.is_empty() {
            let what = if summary.pruned { "dropped (--prune)" } else { "kept (--prune drops them)" };
            eprintln!("mcpsift: {}: {} input(s) of the dataset not given or gone: {what}: {}", args.out.display(), summary.missing.len(), summary.missing.join(", "));
        }
    }
    Ok(0)
}
