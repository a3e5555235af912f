//! Command-line interface: subcommands and the options they share.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use mcpsift::ingest::formats::{self, Format};
use mcpsift::ingest::frame::DEFAULT_MAX_FRAME_BYTES;
use mcpsift::ingest::discover::PairSpec;
use mcpsift::model::limits::LimitOverride;
use mcpsift::report::export::{CheckFormat, DiffFormat, QueryFormat, ReportFormat, TableFileFormat, TimelineFormat};

/// `--input-format NAME`: a format the readers know.
fn input_format(name: &str) -> Result<Format, String> {
    Format::from_input_format_name(name).ok_or_else(|| format!("expected {}", formats::input_format_names()))
}

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
    /// Run every rule and print a summary of the findings (exit 1 with --fail-on).
    Check(CheckArgs),
    /// Write a report to attach to a postmortem: Markdown, self-contained HTML with charts, or JSON.
    Report(ReportArgs),
    /// Compare two captures, datasets or cohorts of calls per tool x client (exit 1 with --fail-on-regression).
    Diff(DiffArgs),
    /// Export the calls to other tools' formats (OTLP/JSON traces and metrics).
    #[command(subcommand)]
    Export(ExportCommand),
    /// Tell one session's story in order: its frames and events around a finding or a request id, with the findings where they happen.
    Timeline(TimelineArgs),
    /// Print one frame's bytes as on the wire (redacted by default), or pretty-printed.
    Frame(FrameArgs),
    /// Save each server's latest tool definitions to a file, for `check --baseline` to compare with.
    Baseline(BaselineArgs),
    /// List the captures the paths (or a listing of file paths) form, as JSON lines, without reading them: what a distributed job spreads over its tasks.
    Plan(PlanArgs),
}


/// When `timeline` colours its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// `mcpsift timeline`: one session's story.
#[derive(Debug, Clone, Args)]
pub struct TimelineArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The finding to tell the story of (its id, as `check` prints it).
    #[arg(long, conflicts_with = "session")]
    pub finding: Option<String>,
    /// The session to tell the story of (`sessions.session`).
    #[arg(long, required_unless_present = "finding")]
    pub session: Option<String>,
    /// The capture holding the session, when several hold one of that name.
    #[arg(long)]
    pub capture: Option<String>,
    /// Center on the frames of this request id (JSON text, as in `rpc_id`).
    #[arg(long, requires = "session")]
    pub around: Option<String>,
    /// Frames shown before the anchor (half as many after it); the rest are counted, not shown.
    #[arg(long, default_value_t = 20)]
    pub window: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TimelineFormat::Text)]
    pub format: TimelineFormat,
    /// Colour the text: on a terminal (auto), always or never.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Show secrets (Authorization headers, bearer tokens, api_key-like values) as they are.
    #[arg(long)]
    pub no_redact: bool,
    /// Folder of extra or replacement rule files (to find --finding among their findings).
    #[arg(long)]
    pub queries: Option<PathBuf>,
}

/// `mcpsift frame`: one frame's bytes.
#[derive(Debug, Clone, Args)]
pub struct FrameArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The frame's `seq` (arrival order in its capture).
    #[arg(long, required_unless_present = "rpc_id", conflicts_with = "rpc_id")]
    pub seq: Option<u64>,
    /// The request id (JSON text, as in `rpc_id`): its response, or with --request the request.
    #[arg(long)]
    pub rpc_id: Option<String>,
    /// With --rpc-id: print the request, not the response.
    #[arg(long)]
    pub request: bool,
    /// The session of the request id, when several sessions use it.
    #[arg(long)]
    pub session: Option<String>,
    /// The capture, when the paths hold several.
    #[arg(long)]
    pub capture: Option<String>,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
    /// Print at most this many bytes, then a marker saying how many were cut.
    #[arg(long)]
    pub max_bytes: Option<u64>,
    /// Print secrets as they are (the bytes exactly as on the wire).
    #[arg(long)]
    pub no_redact: bool,
}

/// `mcpsift plan`: the captures of some paths or of a listing.
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Files and folders (walked recursively), as every other command takes them.
    pub paths: Vec<PathBuf>,
    /// An explicit stdio tee pair, as every other command takes it.
    #[arg(long, value_name = "C2S:S2C")]
    pub pair: Vec<PairSpec>,
    /// Read a listing instead of walking: one file per line, `PATH` or `PATH<TAB>BYTES` (`-`: standard input). The files are not opened: paths may be URIs of a remote store.
    #[arg(long, value_name = "FILE")]
    pub from_list: Option<PathBuf>,
}

impl Command {
    /// `--jobs`, when given (it bounds the cores the whole run uses: `src/cores.rs`).
    pub fn jobs(&self) -> Option<u16> {
        match self {
            Command::Query(a) => a.input.jobs,
            Command::Tables(a) => a.input.jobs,
            Command::Check(a) => a.input.jobs,
            Command::Report(a) => a.input.jobs,
            Command::Diff(a) => a.jobs,
            Command::Export(ExportCommand::Otlp(a)) => a.input.jobs,
            Command::Plan(_) => None,
            Command::Timeline(a) => a.input.jobs,
            Command::Baseline(a) => a.input.jobs,
            Command::Frame(a) => a.input.jobs,
        }
    }
}

/// Inputs and ingest options shared by every command.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// Files and folders (walked recursively). Every file, or stdio tee pair, is one capture.
    pub paths: Vec<PathBuf>,
    /// An explicit stdio tee pair: client→server file, then server→client file. When a path
    /// holds a colon, the split where both files exist is taken.
    #[arg(long, value_name = "C2S:S2C")]
    pub pair: Vec<PairSpec>,
    #[arg(long, value_name = "FORMAT", value_parser = input_format, help = format!("Read every input as this format instead of sniffing (program source files are then read too): {}", formats::input_format_names()), long_help = formats::input_format_help())]
    pub input_format: Option<Format>,
    /// Frames longer than this are kept cut and marked incomplete.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME_BYTES)]
    pub max_frame_bytes: usize,
    /// Only analyse TCP streams on these ports (packet captures).
    #[arg(long, value_name = "PORT")]
    pub port: Vec<u16>,
    /// Override or add a reader budget: NAME=BYTES[:WARN_RATIO] (e.g. ts_sdk_stdio=10485760:0.9).
    #[arg(long, value_name = "NAME=BYTES[:RATIO]")]
    pub limit: Vec<LimitOverride>,
    /// An extra truncation marker (regular expression) looked for at the end of results.
    #[arg(long, value_name = "REGEX")]
    pub truncation_marker: Vec<String>,
    /// Cores to use: at most N captures read at once, the whole run confined to N cores (default: all).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Print the byte accounting of each input to stderr.
    #[arg(long)]
    pub stats: bool,
    /// No diagnostics on stderr (the accounting in --stats still counts them).
    #[arg(long, short)]
    pub quiet: bool,
    /// Carry on when no input is a capture or log mcpsift reads (otherwise an error, exit 2).
    #[arg(long)]
    pub allow_empty: bool,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// SQL to run (several statements separated by `;`: the last one's rows are printed).
    /// Without --sql or --file, the last PATH may name a rule (e.g. `validation_errors`).
    #[arg(long, conflicts_with = "file")]
    pub sql: Option<String>,
    /// File holding the SQL.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    pub format: QueryFormat,
    /// Folder of extra rule files (*.sql); a file named like a built-in rule replaces it.
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TablesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder to write the tables into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// File format of the tables: a Parquet dataset (refreshed incrementally) or CSV files.
    #[arg(long, value_enum, default_value_t = TableFileFormat::Parquet)]
    pub format: TableFileFormat,
    /// Drop the parts of inputs the dataset holds that were not given this time (or are gone).
    #[arg(long)]
    pub prune: bool,
}


/// Severities `--fail-on` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum FailOn {
    Warn,
    Error,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Run only these rules (repeatable).
    #[arg(long, value_name = "NAME")]
    pub rule: Vec<String>,
    /// Exit 1 when a finding at or above this severity exists (for CI gates).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Folder of extra rule files (*.sql); a file named like a built-in rule replaces it.
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Show secrets (Authorization headers, tokens, api keys) instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
    /// Compare the servers' tool definitions with this baseline (written by `mcpsift baseline`):
    /// `tool_definition_changed` reports tools added, removed or changed since.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// `mcpsift baseline`: the servers' tool definitions, saved to compare with later.
#[derive(Debug, Clone, Args)]
pub struct BaselineArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The baseline file to write (JSON).
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
}


#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// File to write (`-` or absent: stdout). Its extension chooses the format: .md, .html, .json.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the --output extension, else md).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Folder of extra rule files (*.sql); a file named like a built-in rule replaces it.
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// Show secrets (Authorization headers, tokens, api keys) instead of redacting them.
    #[arg(long)]
    pub no_redact: bool,
}


/// What a `diff` row is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffBy {
    /// tool x client name x client version
    Version,
    /// tool x client name (cohorts split by client version)
    Client,
    /// tool (cohorts split by client)
    Tool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Side A: a capture file, a folder of captures, or a dataset (`mcpsift tables` output).
    pub a: PathBuf,
    /// Side B (default: A again, for cohorts of one input split by --where-a / --where-b).
    pub b: Option<PathBuf>,
    /// Cohort A: a SQL condition on `calls` columns, e.g. "client_version = '2.1.0'".
    #[arg(long, value_name = "SQL")]
    pub where_a: Option<String>,
    /// Cohort B: a SQL condition on `calls` columns.
    #[arg(long, value_name = "SQL")]
    pub where_b: Option<String>,
    /// Rows per tool x client name x client version (version), x client name (client) or tool.
    #[arg(long, value_enum, default_value_t = DiffBy::Version)]
    pub by: DiffBy,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// Exit 1 when a measure regressed from A to B under the thresholds below.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// A rate (truncation, errors, validation errors) regresses at this many times A's rate ...
    #[arg(long, value_name = "X", default_value_t = 2.0)]
    pub rate_ratio: f64,
    /// ... with at least this many more such calls in B than A's rate predicts ...
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub min_more: u64,
    /// ... and a one-sided binomial p-value (B's count under A's rate) below this.
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub alpha: f64,
    /// p95 latency regresses at this many times A's p95 ...
    #[arg(long, value_name = "X", default_value_t = 2.0)]
    pub latency_ratio: f64,
    /// ... and at least this many milliseconds slower ...
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    pub latency_min_ms: f64,
    /// ... with at least this many timed calls on each side.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub min_timed: u64,
    /// Cores to use: at most N captures read at once, the whole run confined to N cores (default: all).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// No diagnostics on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `mcpsift export FORMAT`.
#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// OTLP/JSON: one client span per request (OpenTelemetry MCP semantic conventions) and the
    /// mcp.client.operation.duration histogram, one JSON line each.
    Otlp(OtlpArgs),
}

#[derive(Debug, Args)]
pub struct OtlpArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// File to write (`-`: stdout): a traces line, then a metrics line.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
}
