//! `mcpsift baseline`: each server's latest tool definitions, saved as JSON for
//! `check --baseline` (a daily audit's "what changed since the last good day").

use anyhow::Context as _;

use crate::cli::BaselineArgs;
use mcpsift::model::tool_changes::{BASELINE_FORMAT, Baseline, latest_per_server, server_tools};
use mcpsift::query::TableSource as _;

pub fn run(args: &BaselineArgs) -> anyhow::Result<u8> {
    let audit = super::inputs::open_inputs(&args.input)?;
    let listed = server_tools(audit.source.table("tools")?, audit.source.table("sessions")?, audit.source.table("pages")?)?;
    let servers = latest_per_server(listed);
    let baseline = Baseline { mcpsift_baseline: BASELINE_FORMAT, created_by: format!("mcpsift {}", env!("CARGO_PKG_VERSION")), servers };
    let text = serde_json::to_string_pretty(&baseline)? + "\n";
    std::fs::write(&args.out, text).with_context(|| format!("{}: cannot write the baseline", args.out.display()))?;
    if !args.input.quiet {
        let tools: usize = baseline.servers.iter().map(|s| s.tools.len()).sum();
        eprintln!("mcpsift: {} server(s), {tools} tool(s) saved to {}", baseline.servers.len(), args.out.display());
    }
    Ok(0)
}
