//! The `mcpsift` binary: parse arguments, run one subcommand, map errors to exit codes
//! (0 ok, 1 findings at or above --fail-on, 2 usage or I/O error).

mod cli;
mod cmd;
mod cores;
mod progress;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of glibc's allocator: the model allocates and frees a few small strings
/// per message on several threads, and glibc's malloc and free were a fifth of the CPU time
/// of `tables` on a log of small messages (bench `small.log`); see bench/README.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`, `mi_option_arena_purge_mult` and `mi_option_allow_thp`
/// (`mimalloc.h` of the bundled v3; libmimalloc-sys names only the older options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_ARENA_PURGE_MULT: libmimalloc_sys::mi_option_t = 24;
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// No transparent huge pages, and freed memory goes back to the system after 40 ms (arenas
/// 80 ms) instead of v3's 1 s, which kept over 200 MB resident on `small.log`. 40 ms outlasts
/// the gap between two 16,384-row chunks of calls on small messages (about 75 ms a chunk, so
/// arenas hold them), whose column buffers were purged and faulted in again for every chunk at
/// 10 ms: `small.log` page faults 137 K -> 93 K, CPU about 6% lower, peak RSS 154 -> 163-176
/// MB (bound 200), `big.pcap` 136-138 -> 152-164 MB (bound 225); bench/README.md. mimalloc advises
/// its arenas as huge pages, so every purge and re-use faulted in and zeroed 2 MiB at a time: a
/// tenth of `tables`' time on `small.log` was the kernel clearing pages. In turns against huge
/// pages with a 5 ms purge delay: `small.log` 3.73 -> 3.50 s and 169 -> 139 MB, `big.pcap`
/// 1.34 -> 1.18 s and 198 -> 173 MB. mimalloc reads its own `allow_thp` option when it starts,
/// before `main`, hence also the `prctl` (what mimalloc itself does for `MIMALLOC_ALLOW_THP=0`).
/// A user's `MIMALLOC_ALLOW_THP`, `MIMALLOC_PURGE_DELAY` or `MIMALLOC_ARENA_PURGE_MULT` wins.
fn tune_allocator() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        use std::os::raw::{c_int, c_ulong};
        unsafe extern "C" {
            fn prctl(option: c_int, ...) -> c_int;
        }
        const PR_SET_THP_DISABLE: c_int = 41;
        // SAFETY: PR_SET_THP_DISABLE takes one integer flag and changes only this process's
        // page faults from now on; an error (an old kernel) leaves huge pages on, nothing else.
        unsafe { prctl(PR_SET_THP_DISABLE, 1 as c_ulong, 0 as c_ulong, 0 as c_ulong, 0 as c_ulong) };
        // SAFETY: sets one of mimalloc's integer options; arenas reserved from now on are not
        // advised as huge either.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) };
    }
    for (var, option, value) in [("MIMALLOC_PURGE_DELAY", MI_OPTION_PURGE_DELAY, 40), ("MIMALLOC_ARENA_PURGE_MULT", MI_OPTION_ARENA_PURGE_MULT, 2)] {
        if std::env::var_os(var).is_none() {
            // SAFETY: sets one of mimalloc's integer options; any value is valid for these two.
            unsafe { libmimalloc_sys::mi_option_set(option, value) };
        }
    }
}

/// The query phase (rules and SQL over a dataset's parts) allocates and frees column buffers of
/// many MiB: with ingest's 10 ms purge delay (now 40 ms) the kernel unmapped, faulted in and zeroed them
/// again and again. `check` over a dataset of ten 300 MB logs (8.8 M messages), in turns:
/// 18.2 s with 10.2 s of system time at 10 ms, 10.8 s with 1.3 s at 1 s, peak RSS 402 -> 604 MB.
/// Called once the inputs are read; a user's `MIMALLOC_PURGE_DELAY` wins.
pub fn allocator_for_queries() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's integer options; read when it next purges.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    }
}

/// Sets an environment variable unless the user already did. Only before any thread exists
/// (the start of main, `cores::limit`).
fn set_default_env(key: &str, value: &str) {
    if std::env::var_os(key).is_none() {
        // SAFETY: called at the start of main, before any thread exists; polars reads these
        // (table printing, its pool's size) when it first needs them.
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
    if let Some(jobs) = cli.command.jobs() {
        cores::limit(jobs);
    }
    let result = match &cli.command {
        cli::Command::Query(a) => cmd::query::run(a),
        cli::Command::Tables(a) => cmd::tables::run(a),
        cli::Command::Check(a) => cmd::check::run(a),
        cli::Command::Report(a) => cmd::report::run(a),
        cli::Command::Diff(a) => cmd::diff::run(a),
        cli::Command::Export(c) => cmd::export::run(c),
        cli::Command::Plan(a) => cmd::plan::run(a),
        cli::Command::Timeline(a) => cmd::timeline::run(a),
        cli::Command::Frame(a) => cmd::frame::run(a),
        cli::Command::Baseline(a) => cmd::baseline::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // A reader that stopped early (`| head`): nothing is wrong, and stderr may be gone
            // too (eprintln would panic). The io error usually arrives wrapped in context.
            if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) {
                return ExitCode::SUCCESS;
            }
            eprintln!("mcpsift: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}
