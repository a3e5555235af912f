//! The `mcpsift` binary: parse arguments, run one subcommand, map errors to exit codes
//! (0 ok, 1 findings at or above --fail-on, 2 usage or I/O error).

mod cli;
mod cmd;
mod progress;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's allocator: the model allocates and frees a few small strings
/// per message on several threads, and glibc's malloc and free were a fifth of the CPU time
/// of `tables` on a log of small messages (bench `small.log`); see bench/README.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` and `mi_option_arena_purge_mult` (`mimalloc.h` of the
/// bundled v3; libmimalloc-sys names only the older options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_ARENA_PURGE_MULT: libmimalloc_sys::mi_option_t = 24;

/// Freed memory goes back to the system after 5 ms instead of mimalloc's 10 (and arenas' 100):
/// `tables` on `small.log` peaks at about 190 MB instead of 250 MB for a few percent more system
/// time. A user's `MIMALLOC_PURGE_DELAY` or `MIMALLOC_ARENA_PURGE_MULT` wins.
fn tune_allocator() {
    for (var, option, value) in [("MIMALLOC_PURGE_DELAY", MI_OPTION_PURGE_DELAY, 5), ("MIMALLOC_ARENA_PURGE_MULT", MI_OPTION_ARENA_PURGE_MULT, 2)] {
        if std::env::var_os(var).is_none() {
            // SAFETY: sets one of mimalloc's integer options; any value is valid for these two.
            unsafe { libmimalloc_sys::mi_option_set(option, value) };
        }
    }
}

/// Sets an environment variable unless the user already did.
fn set_default_env(key: &str, value: &str) {
    if std::env::var_os(key).is_none() {
        // SAFETY: called at the start of main, before any thread exists; polars reads these
        // when printing tables.
        unsafe { std::env::set_var(key, value) };
    }
}

/// The error and its causes on one line, each said once: library errors often repeat their
/// source in their own message (`{path}: {source}`), which `{:#}` would print twice.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn main() -> ExitCode {
    tune_allocator();
    // Terminal table defaults (the user's own POLARS_FMT_* settings win).
    for (key, value) in [
        ("POLARS_FMT_MAX_ROWS", "200"),
        ("POLARS_FMT_STR_LEN", "60"),
        ("POLARS_FMT_MAX_COLS", "64"),
        ("POLARS_FMT_TABLE_HIDE_COLUMN_DATA_TYPES", "1"),
        ("POLARS_FMT_TABLE_HIDE_COLUMN_SEPARATOR", "1"),
        ("POLARS_FMT_TABLE_ROUNDED_CORNERS", "1"),
    ] {
        set_default_env(key, value);
    }
    // Piped output has no terminal width: do not squeeze columns into 100 characters.
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        set_default_env("POLARS_TABLE_WIDTH", "250");
    }
    let cli = cli::Cli::parse();
    let result = match &cli.command {
        cli::Command::Query(a) => cmd::query::run(a),
        cli::Command::Tables(a) => cmd::tables::run(a),
        cli::Command::Check(a) => cmd::check::run(a),
        cli::Command::Report(a) => cmd::report::run(a),
        cli::Command::Diff(a) => cmd::diff::run(a),
        cli::Command::Export(c) => cmd::export::run(c),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
                return ExitCode::SUCCESS;
            }
            eprintln!("mcpsift: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}
