//! `mcpsift timeline`: one session's story, around a finding or a request id.

use std::io::{IsTerminal, Write as _};

use anyhow::Context as _;

use crate::cli::{ColorWhen, TimelineArgs};
use mcpsift::query::rules::{load_rules, run_rules};
use mcpsift::report::findings::findings_from;
use mcpsift::report::timeline::{TimelineRequest, timeline};

pub fn run(args: &TimelineArgs) -> anyhow::Result<u8> {
    let audit = super::inputs::open_inputs(&args.input)?;
    let rules = load_rules(args.queries.as_deref())?;
    let findings = findings_from(&run_rules(&audit.source, &rules)?, !args.no_redact)?;
    let req = match &args.finding {
        Some(id) => {
            let f = findings.iter().find(|f| f.id.eq_ignore_ascii_case(id)).with_context(|| {
                let some: Vec<&str> = findings.iter().take(8).map(|f| f.id.as_str()).collect();
                format!("no finding {id} in these inputs ({} finding(s); `mcpsift check` lists their ids{})", findings.len(), if some.is_empty() { String::new() } else { format!(", e.g. {}", some.join(", ")) })
            })?;
            let session = f.session.clone().with_context(|| format!("finding {id} ({} on {}) is about no single session: use --session", f.rule, f.capture))?;
            TimelineRequest { capture: Some(f.capture.clone()), session, around: f.rpc_id.clone(), window: args.window, redact: !args.no_redact }
        }
        None => TimelineRequest {
            capture: args.capture.clone(),
            session: args.session.clone().context("--session or --finding")?,
            around: args.around.clone(),
            window: args.window,
            redact: !args.no_redact,
        },
    };
    let t = timeline(&audit.source, &req, &findings)?;
    let stdout = std::io::stdout();
    let color = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let mut out = stdout.lock();
    let exporter = args.format.exporter(color);
    exporter.export(&t, &mut out)?;
    out.flush()?;
    Ok(0)
}
