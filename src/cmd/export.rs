//! `mcpsift export otlp PATHS -o FILE`: the calls as OTLP/JSON traces and metrics.

use std::io::Write as _;

use anyhow::Context as _;

use crate::cli::ExportCommand;
use mcpsift::report::export::{Exporter, otlp::Otlp};
use mcpsift::report::telemetry::gather;

pub fn run(command: &ExportCommand) -> anyhow::Result<u8> {
    match command {
        ExportCommand::Otlp(args) => {
            let audit = super::inputs::open_inputs(&args.input)?;
            let telemetry = gather(&audit.source)?;
            let mut buf = Vec::new();
            Otlp.export(&telemetry, &mut buf)?;
            if args.output.as_os_str() == "-" {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                out.write_all(&buf)?;
                out.flush()?;
            } else {
                std::fs::write(&args.output, &buf).with_context(|| format!("{}: cannot write", args.output.display()))?;
                if !args.input.quiet {
                    eprintln!("mcpsift: {}: {} span(s), {} duration data point(s)", args.output.display(), telemetry.spans.len(), telemetry.durations.values().map(|m| m.len()).sum::<usize>());
                }
            }
            Ok(0)
        }
    }
}
