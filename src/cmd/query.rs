//! `mcpsift query`: SQL over the tables, printed as a table, CSV, JSON or JSON Lines.

use std::io::Write;

use anyhow::Context as _;

use crate::cli::QueryArgs;
use mcpsift::query::rules::load_rules;
use mcpsift::query::run_sql;
use mcpsift::report::table_out::write_table;

pub fn run(args: &QueryArgs) -> anyhow::Result<u8> {
    let mut input = args.input.clone();
    let sql = match (&args.sql, &args.file) {
        (Some(s), _) => s.clone(),
        (None, Some(f)) => std::fs::read_to_string(f).with_context(|| format!("{}: cannot read", f.display()))?,
        (None, None) => {
            // `mcpsift query PATHS RULE_NAME`: the last path names a rule.
            let rules = load_rules(args.queries.as_deref())?;
            let name = input.paths.pop().map(|p| p.display().to_string()).unwrap_or_default();
            let known: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            match rules.iter().find(|r| r.name == name) {
                Some(rule) => rule.sql.clone(),
                None => anyhow::bail!("give --sql, --file, or a rule name as the last argument (rules: {})", known.join(", ")),
            }
        }
    };
    let audit = super::inputs::open_inputs(&input)?;
    let mut df = run_sql(&audit.source, &sql)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write_table(&mut df, args.format, &mut out)?;
    out.flush()?;
    Ok(0)
}
