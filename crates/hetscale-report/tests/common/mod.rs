//! A report with every view, from small deterministic runs on the sim backend (shared by the
//! tests and the `sample_report` example).

#![allow(dead_code)]

use hbsp::{Backend, BarrierCost, Machine, Network, Node, Platform, Trace};
use hetscale_kernels::Kernel;
use hetscale_kernels::ge::GeKernel;
use hetscale_model::summa::{Processors, Strategy, SummaNetwork, strategy_efficiency};
use hetscale_papers::wp::experiments::{improvements, run_experiments};
use hetscale_report::views::collectives::{ImprovementPoint, collective_section};
use hetscale_report::views::summa::{StrategyEfficiency, summa_section};
use hetscale_report::views::{ids, trace::trace_sections};
use hetscale_report::{
    Axes, Axis, ColorScale, Column, Figure, HeatMap, Report, Section, Series, Table, TraceOptions,
    heat_map, line_chart,
};
use hetscale_study::runner::Silent;
use hetscale_study::spec::example_specs::example_specs;
use hetscale_study::store::Store;
use hetscale_study::study::{StudyResult, run_study};

/// Every view id the sample report must show.
pub const VIEW_IDS: [&str; 7] = [
    ids::SPACETIME,
    ids::AVERAGE_SPEED,
    ids::TASK_SUMMARY,
    ids::COLLECTIVE_IMPROVEMENTS,
    ids::SUMMA_EFFICIENCY,
    "chart-gallery",
    "psi-matrix",
];

/// A machine of `p` Sunwulf nodes (mixed speeds).
pub fn machine(p: usize) -> Machine {
    Platform::load("sunwulf")
        .expect("sunwulf preset")
        .select(&p.to_string().parse().expect("node count"))
        .expect("sunwulf has the nodes")
}

/// `p` nodes of speeds 10, 20, 30 and 40 Mflop/s in turn, on a gigabit-class network.
pub fn uneven_machine(p: usize) -> Machine {
    Platform {
        name: "uneven".into(),
        description: String::new(),
        speed_unit: "Mflop/s".into(),
        nodes: (0..p)
            .map(|j| Node::new(format!("n{j}"), 10.0 * (1 + j % 4) as f64))
            .collect(),
        network: Network::new(1e-8, BarrierCost::constant(1e-4)),
        machine: None,
    }
    .all()
    .expect("a valid platform")
}

/// Gaussian elimination (N = 160) on 4 Sunwulf nodes, sim backend: supersteps, phases,
/// broadcasts and a gather, deterministic.
pub fn ge_run() -> (Trace, TraceOptions) {
    let machine = machine(4);
    let kernel = GeKernel {
        pivoting: "partial".parse().expect("pivoting"),
        ..GeKernel::default()
    };
    let inputs = kernel.generate(160, 1).expect("inputs");
    let run = kernel
        .run(&inputs, &Backend::sim_declared(), &machine)
        .expect("GE runs");
    (run.trace, TraceOptions::for_machine(&machine, true))
}

/// The collective experiments at p = 2, 4 and two sizes on the UCF cluster's model.
pub fn improvement_points() -> Vec<ImprovementPoint> {
    let platform = Platform::load("ucf-cluster").expect("ucf preset");
    let machines: Vec<Machine> = [2, 4]
        .iter()
        .map(|p| platform.select(&p.to_string().parse().unwrap()).unwrap())
        .collect();
    let rows =
        run_experiments(&Backend::sim_declared(), &machines, &[10, 20], 1).expect("experiments");
    improvements(&rows)
        .iter()
        .map(ImprovementPoint::from)
        .collect()
}

/// Kalinov's four strategies at p = 4 .. 1024, alternating fast and slow processors.
pub fn strategy_points() -> Vec<StrategyEfficiency> {
    let net = SummaNetwork::new(50e-6, 6.4e-8).unwrap();
    let mut out = Vec::new();
    for strategy in Strategy::ALL {
        for p in [4usize, 16, 64, 256, 1024] {
            let speeds = (0..p)
                .map(|i| if i % 2 == 0 { 1e9 } else { 2.5e8 })
                .collect();
            let procs = Processors::new(speeds).unwrap();
            let e = strategy_efficiency(strategy, (1e6 * p as f64).sqrt(), &procs, net).unwrap();
            out.push(StrategyEfficiency {
                strategy: strategy.name().into(),
                p,
                efficiency: e,
            });
        }
    }
    out
}

/// Generic charts as the study views will use them: E_s versus N with a target line, and a
/// psi matrix.
fn chart_gallery() -> Vec<Section> {
    let axes = Axes::new(
        Axis::new("problem size N").log(),
        Axis::new("speed-efficiency E_s"),
    );
    let series = vec![
        Series::line(
            "2 nodes",
            vec![(64.0, 0.1), (128.0, 0.19), (256.0, 0.27), (512.0, 0.33)],
        ),
        Series::line(
            "4 nodes",
            vec![(64.0, 0.05), (128.0, 0.11), (256.0, 0.2), (512.0, 0.28)],
        ),
        Series::horizontal("target E_s = 0.3", 0.3, 64.0, 512.0),
    ];
    let es = line_chart("E_s versus N", &axes, &series).unwrap();
    let psi = heat_map(&HeatMap {
        title: "Isospeed-efficiency scalability psi(C, C')".into(),
        x: Axis::new("to configuration C'"),
        y: Axis::new("from configuration C"),
        column_labels: vec!["2".into(), "4".into(), "8".into()],
        row_labels: vec!["2".into(), "4".into(), "8".into()],
        values: vec![
            vec![None, Some(0.91), Some(0.8)],
            vec![None, None, Some(0.88)],
            vec![None, None, None],
        ],
        value_label: "psi".into(),
        value_range: Some((0.0, 1.0)),
        colors: ColorScale::Viridis,
    })
    .unwrap();
    let mut table = Table::new(
        "psi",
        "psi(C, C')",
        vec![Column::new("C"), Column::new("C'"), Column::new("psi")],
    );
    table
        .push_row(vec!["2".into(), "4".into(), 0.91.into()])
        .unwrap();
    vec![
        Section::new("chart-gallery", "E_s versus N")
            .text("A generic line chart on a log axis with a dashed target.")
            .figure(Figure::new(
                "chart-gallery-figure",
                "E_s versus N per configuration.",
                es,
            )),
        Section::new("psi-matrix", "psi matrix")
            .figure(Figure::new(
                "psi-matrix-figure",
                "psi between configurations.",
                psi,
            ))
            .table(table),
    ]
}

/// The report with every view.
pub fn sample_report() -> Report {
    let (trace, options) = ge_run();
    let mut report = Report::new("hetscale report: every view")
        .intro("Sample report built by the hetscale-report tests from sim runs.");
    for section in trace_sections(&trace, &options).expect("trace views") {
        report.push(section);
    }
    report.push(
        collective_section(&improvement_points(), "sim backend, virtual time")
            .expect("collective view"),
    );
    report.push(
        summa_section(
            &strategy_points(),
            "H = 4, a = 50 us, b = 64 ns per element, n = sqrt(1e6 p)",
        )
        .expect("summa view"),
    );
    for section in chart_gallery() {
        report.push(section);
    }
    report
}

/// The example study's results (`example_specs`: GE and MM on simulated Sunwulf, all three
/// approaches), run
/// in memory. Debug builds keep the first 3 configurations of each spec (the whole study
/// takes ~10 s only with optimisations); 3 still give a held-out check.
pub fn example_study_results() -> Vec<StudyResult> {
    let store = Store::open_in_memory().expect("an in-memory store");
    example_specs()
        .expect("the example specs")
        .into_iter()
        .map(|mut spec| {
            if cfg!(debug_assertions) {
                spec.configurations.truncate(3);
            }
            run_study(&spec, &store, &Silent).expect("the example study runs")
        })
        .collect()
}

/// The example study's GE part on its first configuration alone: the degenerate study.
pub fn one_configuration_result() -> StudyResult {
    let store = Store::open_in_memory().expect("an in-memory store");
    let mut spec = example_specs().expect("the example specs").remove(0);
    spec.configurations.truncate(1);
    run_study(&spec, &store, &Silent).expect("a one-configuration study runs")
}

/// How many of `result`'s approaches settled two or more configurations (a psi heat map each).
pub fn approaches_with_psi(result: &StudyResult) -> usize {
    [&result.measured, &result.computed, &result.predicted]
        .into_iter()
        .flatten()
        .filter(|a| a.psi.as_ref().is_some_and(|m| m.len() >= 2))
        .count()
}

/// Every configuration an approach of `result` could not settle, with its reason, as the
/// report words it.
pub fn failures(result: &StudyResult) -> Vec<String> {
    [&result.measured, &result.computed, &result.predicted]
        .into_iter()
        .flatten()
        .flat_map(|a| {
            a.failures.iter().map(|f| {
                format!(
                    "The {} approach did not settle {}: {}",
                    a.approach.name(),
                    f.configuration,
                    f.message
                )
            })
        })
        .collect()
}
