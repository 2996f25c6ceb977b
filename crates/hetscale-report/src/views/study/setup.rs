//! A study's setup: what ran where (the configurations), and the facts the approaches rest
//! on: approach 3's calibration and the run verified with real compute.

use hetscale_study::spec::StudySpec;
use hetscale_study::study::StudyResult;

use super::common::{SETUP, marked_speed_unit};
use crate::error::Result;
use crate::html::Section;
use crate::table::{Cell, Column, Table};

/// The study's spec in words, a table of its configurations (label, node set, p, C) and one
/// of the calibration and verification facts.
pub fn setup_section(result: &StudyResult, prefix: &str) -> Result<Section> {
    let spec = &result.spec;
    let approaches: Vec<&str> = spec.approaches.iter().map(|a| a.name()).collect();
    let text = format!(
        "The {} kernel on the {} backend with platform {}{}. Target speed-efficiency E_s = {} (a measured E_s within {}% of it counts as a hit); sizes N searched in [{}, {}]; {} run(s) per size; approaches: {}. The computed approach samples {} sizes per configuration and fits an overhead polynomial of degree {}.",
        spec.kernel,
        spec.backend,
        spec.platform,
        if spec.skeleton {
            " (skeleton runs: compute is charged, not executed, except in the verified run)"
        } else {
            ""
        },
        spec.target,
        100.0 * spec.tolerance,
        spec.n_min,
        spec.n_max,
        spec.repetitions,
        approaches.join(", "),
        spec.samples,
        spec.overhead_degree,
    );
    Ok(
        Section::new(format!("{prefix}-{SETUP}"), format!("Study {}", spec.name))
            .text(text)
            .table(configurations_table(result, prefix)?)
            .table(facts_table(result, prefix)?),
    )
}

/// The study's kernel as a figure's title names it (`GE`, `2-D convolution`): what a paper
/// prints, where the study's name is an id (`jpdc-ge`).
pub(super) fn kernel_in_words(spec: &StudySpec) -> String {
    match spec.kernel.as_str() {
        "ge" => "GE".into(),
        "mm" => "MM".into(),
        "conv2d" => "2-D convolution".into(),
        "burg" => "Burg".into(),
        "slalom" => "SLALOM".into(),
        "summa" => "SUMMA".into(),
        "command" => "The command".into(),
        other => other.into(),
    }
}

fn configurations_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let (unit, per_flops) = marked_speed_unit(result);
    let mut table = Table::new(
        format!("{prefix}-configurations"),
        "Configurations: node sets of the platform and their marked speed C = sum C_i",
        vec![
            Column::new("configuration"),
            Column::new("node set"),
            Column::new("nodes p"),
            Column::with_unit("marked speed C", unit),
        ],
    );
    for c in &result.configurations {
        table.push_row(vec![
            c.label.as_str().into(),
            c.nodes.as_str().into(),
            c.p.into(),
            (c.marked_speed * per_flops).into(),
        ])?;
    }
    Ok(table)
}

/// One row per fact: approach 3's calibration, then the verified run.
fn facts_table(result: &StudyResult, prefix: &str) -> Result<Table> {
    let mut table = Table::new(
        format!("{prefix}-facts"),
        "Calibration and verification",
        vec![
            Column::new("fact"),
            Column::new("value"),
            Column::new("unit"),
        ],
    );
    let mut rows: Vec<(&str, Cell, &str)> = Vec::new();
    match &result.calibration {
        Some(c) => rows.extend([
            (
                "approach 3 calibrated on",
                c.configuration.as_str().into(),
                "",
            ),
            ("calibration size N", c.n.into(), ""),
            ("measured time T there", c.measured_time_s.into(), "s"),
            ("model compute time there", c.model_compute_s.into(), "s"),
            ("model overhead time there", c.model_overhead_s.into(), "s"),
            ("fitted compute factor a", c.model.compute_factor.into(), ""),
        ]),
        None => rows.push((
            "approach 3 calibration",
            "none (approach 3 not run, or no size on the first configuration)".into(),
            "",
        )),
    }
    match &result.verification {
        Some(v) => rows.extend([
            ("verified run on", v.configuration.as_str().into(), ""),
            ("verified run size N", v.n.into(), ""),
            ("verified run time T", v.time_s.into(), "s"),
            ("verified run E_s", v.speed_efficiency.into(), ""),
            (
                "result checked against the sequential reference",
                if v.verified { "passed" } else { "FAILED" }.into(),
                "",
            ),
            ("host", v.host.as_str().into(), ""),
            ("hetscale version", v.version.as_str().into(), ""),
        ]),
        None => rows.push((
            "verified run",
            "none (no size found to verify at)".into(),
            "",
        )),
    }
    rows.extend(
        result
            .warnings
            .iter()
            .map(|w| ("warning", w.as_str().into(), "")),
    );
    for (fact, value, unit) in rows {
        table.push_row(vec![fact.into(), value, unit.into()])?;
    }
    Ok(table)
}
