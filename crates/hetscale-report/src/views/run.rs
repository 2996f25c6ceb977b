//! The report of one kernel run (`hetscale run --report DIR`): what ran and how fast, then its
//! spacetime diagram, average speed chart and task summary.

use hetscale_kernels::KernelRun;

use super::trace::trace_sections;
use crate::error::Result;
use crate::html::{Report, Section};
use crate::table::{Cell, Column, Table};
use crate::timeline::TraceOptions;

/// Id of the run's summary section.
pub const RUN_SUMMARY: &str = "run-summary";

/// A report of `run`; `backend` names the backend it ran on (e.g. `sim`).
pub fn run_report(run: &KernelRun, backend: &str, options: &TraceOptions) -> Result<Report> {
    let clock = if options.virtual_time {
        "virtual time on the platform's HBSP^1 model"
    } else {
        "measured wall-clock time"
    };
    let mut report = Report::new(format!(
        "hetscale run: {} with N = {} on {} nodes of {}",
        run.kernel, run.n, run.p, run.trace.platform
    ))
    .intro(format!(
        "One run of the {} kernel on the {backend} backend ({clock}). Open the Perfetto export (hetscale run --trace FILE.json) in ui.perfetto.dev to zoom into any superstep.",
        run.kernel
    ))
    .section(Section::new(RUN_SUMMARY, "Run").table(summary_table(run, backend)?));
    for section in trace_sections(&run.trace, options)? {
        report.push(section);
    }
    Ok(report)
}

fn summary_table(run: &KernelRun, backend: &str) -> Result<Table> {
    let mut table = Table::new(
        RUN_SUMMARY,
        "What ran and how fast",
        vec![
            Column::new("quantity"),
            Column::new("value"),
            Column::new("unit"),
        ],
    );
    let verified = match (run.verification.passed, run.verification.skipped) {
        (true, _) => "yes",
        (false, true) => "skipped (skeleton run)",
        (false, false) => "NO",
    };
    let rows: Vec<(&str, Cell, &str)> = vec![
        ("kernel", run.kernel.into(), ""),
        ("backend", backend.into(), ""),
        ("problem size N", run.n.into(), ""),
        ("nodes p", run.p.into(), ""),
        ("time T", run.time_s.into(), "s"),
        ("work W", run.work.into(), "flop"),
        ("speed S = W / T", (run.speed() / 1e6).into(), "Mflop/s"),
        (
            "cluster speed C",
            run.cluster_speed.into(),
            run.speed_unit.as_str(),
        ),
        ("speed-efficiency E_s", run.speed_efficiency().into(), ""),
        ("verified", verified.into(), ""),
    ];
    for (name, value, unit) in rows {
        table.push_row(vec![name.into(), value, unit.into()])?;
    }
    for (name, value) in &run.details {
        table.push_row(vec![name.as_str().into(), value.as_str().into(), "".into()])?;
    }
    Ok(table)
}
