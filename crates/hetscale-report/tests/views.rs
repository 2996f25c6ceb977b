//! The views on unusual input: many nodes, no declared work, empty data.

mod common;

use hbsp::{Backend, HbspError};
use hetscale_report::views::collectives::collective_section;
use hetscale_report::views::summa::summa_section;
use hetscale_report::views::trace::{average_speed_section, spacetime_section, trace_sections};
use hetscale_report::{Block, Report, TraceOptions};

fn text_of(section: &hetscale_report::Section) -> String {
    section
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.clone(),
            Block::Figure(f) => f.caption.clone(),
            Block::Table(t) => t.title.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_hundred_nodes_are_cut_to_what_can_be_read() {
    let big = common::uneven_machine(100);
    let output = hbsp::run(&Backend::sim_declared(), &big, |ctx| {
        ctx.charge_work(1e6 * (1 + ctx.pid()) as f64)?;
        ctx.send((ctx.pid() + 1) % ctx.nprocs(), 0, &[1u8; 64])?;
        ctx.sync()?;
        Ok::<_, HbspError>(())
    })
    .unwrap();
    let options = TraceOptions::for_machine(&big, true);
    let spacetime = spacetime_section(&output.trace, &options).unwrap();
    assert!(text_of(&spacetime).contains("Only the first 64 of 100 nodes are drawn"));
    let sections = trace_sections(&output.trace, &options).unwrap();
    let written = Report::new("big").section(sections[2].clone());
    let dir = tempfile::tempdir().unwrap();
    written.write(dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("tables/task-summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 101, "the table has every node");
}

#[test]
fn a_run_without_declared_work_says_so() {
    let machine = common::machine(2);
    let output = hbsp::run(&Backend::threads(), &machine, |ctx| {
        ctx.sync()?;
        Ok::<_, HbspError>(())
    })
    .unwrap();
    let section = average_speed_section(&output.trace, &TraceOptions::default()).unwrap();
    assert!(text_of(&section).contains("No node declared work"));
}

#[test]
fn empty_data_is_an_error_that_says_what_to_do() {
    let err = collective_section(&[], "sim").unwrap_err().to_string();
    assert!(err.contains("hetscale collectives"), "{err}");
    let err = summa_section(&[], "").unwrap_err().to_string();
    assert!(err.contains("strategy_efficiency"), "{err}");
}

#[test]
fn summa_view_has_a_column_per_strategy_and_a_row_per_p() {
    let section = summa_section(&common::strategy_points(), "test").unwrap();
    let table = section
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(table.columns.len(), 5);
    assert_eq!(table.rows.len(), 5);
}

#[test]
fn every_figure_of_the_sample_report_prints_legibly_at_one_column_width() {
    let report = common::sample_report();
    for figure in report.figures() {
        let smallest = figure.svg.smallest_text_pt().unwrap();
        assert!(
            smallest >= hetscale_report::MIN_TEXT_PT,
            "{}: smallest text {smallest:.1} pt at one-column width",
            figure.id
        );
    }
}

#[test]
fn the_barrier_has_its_own_colour_in_the_spacetime_view() {
    let (trace, options) = common::ge_run();
    let section = spacetime_section(&trace, &options).unwrap();
    let svg = match &section.blocks[1] {
        Block::Figure(f) => f.svg.as_str().to_owned(),
        other => panic!("expected the figure, got {other:?}"),
    };
    let purple = "#CC79A7";
    assert!(svg.contains(purple), "no barrier slice drawn");
    assert!(
        svg.contains(">barrier<") || svg.contains("\nbarrier\n"),
        "the key names the barrier"
    );
    assert!(text_of(&section).contains("purple: in the barrier after the exchange"));
}
