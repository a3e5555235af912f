//! `mcpsift tables`: every table written to a folder as Parquet or CSV.

use anyhow::Context as _;

use crate::cli::TablesArgs;
use mcpsift::report::table_out::write_table_file;

pub fn run(args: &TablesArgs) -> anyhow::Result<u8> {
    let loaded = super::load_inputs(&args.input)?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("{}: cannot create", args.out.display()))?;

    let tables = loaded.tables;
    for (name, df) in tables.named() {
        let mut df = df.clone();
        let path = write_table_file(&mut df, &args.out, name, args.format)?;
        println!("{}\t{} rows", path.display(), df.height());

    }
    Ok(0)
}
