//! Command-line interface: subcommands and the options they share.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use mcpsift::report::table_out::{OutputFormat, TableFileFormat};

/// Postmortems of Model Context Protocol traffic: captures and logs in, numbers out.
#[derive(Debug, Parser)]
#[command(name = "mcpsift", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run polars SQL over the tables (frames, calls, sessions, tools, events, limits).
    Query(QueryArgs),
    /// Write every table to a folder as Parquet or CSV.
    Tables(TablesArgs),
}

/// Inputs and ingest options shared by every command.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Files and folders (walked recursively). Every file, or stdio tee pair, is one capture.
    pub paths: Vec<PathBuf>,
    /// An explicit stdio tee pair: client→server file, then server→client file.
    #[arg(long, value_name = "C2S:S2C")]
    pub pair: Vec<String>,
    /// Read every input as this format instead of sniffing: stdio, hostlog, jsonl, pcap.
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Frames longer than this are kept cut and marked incomplete.
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    pub max_frame_bytes: usize,
    /// Only analyse TCP streams on these ports (packet captures).
    #[arg(long, value_name = "PORT")]
    pub port: Vec<u16>,
    /// Print the byte accounting of each input to stderr.
    #[arg(long)]
    pub stats: bool,
    /// No diagnostics on stderr (the accounting in --stats still counts them).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// SQL to run (several statements separated by `;`: the last one's rows are printed).
    #[arg(long, conflicts_with = "file", required_unless_present = "file")]
    pub sql: Option<String>,
    /// File holding the SQL.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct TablesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder to write the tables into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// File format of the tables.
    #[arg(long, value_enum, default_value_t = TableFileFormat::Parquet)]
    pub format: TableFileFormat,
}
