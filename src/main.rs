//! The `mcpsift` binary: parse arguments, run one subcommand, map errors to exit codes
//! (0 ok, 1 findings at or above --fail-on, 2 usage or I/O error).

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: set before any thread exists; polars reads these when printing tables.
    unsafe {
        std::env::set_var("POLARS_FMT_MAX_ROWS", std::env::var("POLARS_FMT_MAX_ROWS").unwrap_or_else(|_| "100".into()));
        std::env::set_var("POLARS_FMT_STR_LEN", std::env::var("POLARS_FMT_STR_LEN").unwrap_or_else(|_| "60".into()));
    }
    let cli = cli::Cli::parse();
    let result = match &cli.command {
        cli::Command::Query(a) => cmd::query::run(a),
        cli::Command::Tables(a) => cmd::tables::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            eprintln!("mcpsift: {e:#}");
            ExitCode::from(2)
        }
    }
}
