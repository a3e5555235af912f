//! `mcpsift query`: SQL over the tables, printed as a table, CSV, JSON or JSON Lines.

use std::io::Write;

use anyhow::Context as _;

use crate::cli::QueryArgs;
use mcpsift::query::run_sql;
use mcpsift::report::table_out::write_table;

pub fn run(args: &QueryArgs) -> anyhow::Result<()> {
    let sql = match (&args.sql, &args.file) {
        (Some(s), _) => s.clone(),
        (None, Some(f)) => std::fs::read_to_string(f).with_context(|| format!("{}: cannot read", f.display()))?,
        (None, None) => anyhow::bail!("give --sql or --file"),
    };
    let loaded = super::load_inputs(&args.input)?;
    let mut df = run_sql(&loaded.tables, &sql)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write_table(&mut df, args.format, &mut out)?;
    out.flush()?;
    Ok(())
}
