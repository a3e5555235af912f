//! `mcpsift diff A [B]`: two sides (captures, datasets or cohorts of calls), compared per
//! tool x client; exit 1 with `--fail-on-regression` when a measure regressed.

use std::io::Write as _;

use crate::cli::{DiffArgs, DiffBy, InputArgs};
use mcpsift::report::diff::{DiffKey, SideLabel, Thresholds, compare, side};


/// The input options of one side: the defaults every other command has.
fn inputs(path: &std::path::Path, args: &DiffArgs) -> InputArgs {
    InputArgs {
        paths: vec![path.to_path_buf()],
        pair: Vec::new(),
        input_format: None,
        max_frame_bytes: mcpsift::ingest::frame::DEFAULT_MAX_FRAME_BYTES,
        port: Vec::new(),
        limit: Vec::new(),
        truncation_marker: Vec::new(),
        jobs: args.jobs,
        stats: false,
        quiet: args.quiet,
        allow_empty: false,
    }
}

pub fn run(args: &DiffArgs) -> anyhow::Result<u8> {
    let b_path = args.b.clone().unwrap_or_else(|| args.a.clone());
    if args.b.is_none() && args.where_a.is_none() && args.where_b.is_none() {
        anyhow::bail!("give two inputs, or one input with --where-a and --where-b (cohorts of its calls)");
    }
    let by = match args.by {
        DiffBy::Version => DiffKey::Version,
        DiffBy::Client => DiffKey::Client,
        DiffBy::Tool => DiffKey::Tool,
    };
    let audit_a = super::inputs::open_inputs(&inputs(&args.a, args))?;
    let groups_a = side(&audit_a.source, args.where_a.as_deref(), by)?;
    drop(audit_a);
    let audit_b = super::inputs::open_inputs(&inputs(&b_path, args))?;
    let groups_b = side(&audit_b.source, args.where_b.as_deref(), by)?;
    let label = |p: &std::path::Path, w: &Option<String>| SideLabel { inputs: vec![p.display().to_string()], filter: w.clone() };
    let thresholds = Thresholds {
        rate_ratio: args.rate_ratio,
        min_more: args.min_more,
        alpha: args.alpha,
        latency_ratio: args.latency_ratio,
        latency_min_ms: args.latency_min_ms,
        min_timed: args.min_timed,
    };
    let diff = compare(label(&args.a, &args.where_a), label(&b_path, &args.where_b), by, thresholds, groups_a, groups_b);
    let exporter = args.format.exporter();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    exporter.export(&diff, &mut out)?;
    out.flush()?;
    Ok(u8::from(args.fail_on_regression && diff.regressed()))
}
