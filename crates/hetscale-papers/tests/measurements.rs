//! The papers' published measurements (`papers/*.csv`) and the parsers of `measurements`:
//! the JPDC data agree with the paper's own arithmetic and with the `sunwulf` preset, and every
//! class of bad input gives its one-line message.

use std::collections::BTreeMap;

use hbsp::{NodeSet, Platform};
use hetscale_model::workload;
use hetscale_papers::measurements::{
    PublishedValue, Quantity, papers, parse_published, published, published_time_rows,
};
use hetscale_study::calibrate::runs::{MeasuredRun, parse_runs, read_runs};
use proptest::prelude::*;

fn jpdc() -> Vec<PublishedValue> {
    published("jpdc").expect("the embedded JPDC data parse")
}

fn rows_of(values: &[PublishedValue], quantity: Quantity) -> Vec<&PublishedValue> {
    values.iter().filter(|v| v.quantity == quantity).collect()
}

/// `(experiment, configuration)` -> the value of that configuration's row of `quantity`.
fn by_configuration(
    values: &[PublishedValue],
    quantity: Quantity,
) -> BTreeMap<(String, String), f64> {
    rows_of(values, quantity)
        .into_iter()
        .map(|v| ((v.experiment.clone(), v.configuration.clone()), v.value))
        .collect()
}

fn work(kernel: &str, n: f64) -> f64 {
    match kernel {
        "ge" => workload::ge(n),
        "mm" => workload::mm(n),
        "conv2d" => workload::conv2d(n),
        other => panic!("no workload for kernel {other}"),
    }
    .unwrap()
}

/// Half a unit in the last digit the CSV prints `value` with (`6.66e8` -> 5e5).
fn half_printed_unit(value: f64) -> f64 {
    let printed = format!("{value:e}");
    let (mantissa, exponent) = printed.split_once('e').unwrap();
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len());
    let exponent: i32 = exponent.parse().unwrap();
    0.5 * 10f64.powi(exponent - decimals as i32)
}

#[test]
fn jpdc_has_one_row_per_published_value_of_each_table() {
    let values = jpdc();
    let mut per_table: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &values {
        *per_table.entry(v.table.as_str()).or_default() += 1;
    }
    let expected: BTreeMap<&str, usize> = [
        ("3", 5),    // T, Cases 1.1-1.5
        ("4", 7),    // T, Cases 2.1-2.7
        ("text", 2), // E_s at N = 310 on C_2 and N = 480 on C_4 (section 4.4.1)
        ("5", 15),   // N, W and C of C_2..C_32
        ("6", 4),    // psi
        ("7", 5),    // C of C'_2..C'_32
        ("8", 10),   // N and W
        ("9", 4),    // psi
        ("10", 15),  // N, W and C
        ("11", 4),   // psi
        ("12", 4),   // N_predicted
        ("13", 4),   // psi_predicted
    ]
    .into();
    assert_eq!(per_table, expected);
    assert!(values.iter().all(|v| v.paper == "jpdc"));
    let mut keys: Vec<_> = values
        .iter()
        .map(|v| (&v.table, &v.configuration, v.quantity, v.n))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys.len(),
        values.len(),
        "a published value is listed twice"
    );
}

#[test]
fn jpdc_rows_cite_their_table_and_case_or_section() {
    for v in jpdc() {
        let cited = if v.table == "text" {
            "section 4.4.1, \"".to_owned()
        } else {
            format!("Table {}, ", v.table)
        };
        assert!(v.source.starts_with(&cited), "{v:?} does not cite {cited}");
    }
}

#[test]
fn every_node_set_gives_the_published_marked_speed_on_sunwulf() {
    let values = jpdc();
    let marked = by_configuration(&values, Quantity::MarkedSpeed);
    let sunwulf = Platform::load("sunwulf").unwrap();
    let mut checked = 0;
    for v in &values {
        let configurations: Vec<&str> = v.configuration.split('>').collect();
        let node_sets: Vec<&str> = v.nodes.split('>').collect();
        assert_eq!(configurations.len(), node_sets.len(), "{v:?}");
        for (configuration, nodes) in configurations.into_iter().zip(node_sets) {
            let published = marked[&(v.experiment.clone(), configuration.to_owned())];
            let machine = sunwulf.select(&nodes.parse::<NodeSet>().unwrap()).unwrap();
            assert!(
                (machine.cluster_speed() - published).abs() <= 0.01,
                "{configuration} = {nodes}: C = {} but the paper says {published}",
                machine.cluster_speed()
            );
            // The label's subscript is the paper's node count (the server counts once).
            let p: usize = configuration.rsplit('_').next().unwrap().parse().unwrap();
            assert_eq!(machine.p(), p, "{configuration} = {nodes}");
            checked += 1;
        }
    }
    assert_eq!(checked, 79 + 16, "psi rows check both configurations");
}

#[test]
fn c_4_is_the_server_with_two_cpus_and_hpc_40_to_42() {
    let values = jpdc();
    let sunwulf = Platform::load("sunwulf").unwrap();
    let c4 = values.iter().find(|v| v.configuration == "C_4").unwrap();
    let machine = sunwulf.select(&c4.nodes.parse().unwrap()).unwrap();
    let names: Vec<(&str, u32)> = machine
        .nodes()
        .iter()
        .map(|n| (n.name.as_str(), n.cpus_used))
        .collect();
    assert_eq!(
        names,
        [("sunwulf", 2), ("hpc-40", 1), ("hpc-41", 1), ("hpc-42", 1)]
    );
}

#[test]
fn published_workloads_agree_with_the_formulas_at_the_published_sizes() {
    let values = jpdc();
    let sizes = by_configuration(&values, Quantity::ProblemSize);
    let works = rows_of(&values, Quantity::Work);
    assert_eq!(works.len(), 15);
    for w in works {
        let n = w.n.unwrap();
        let key = (w.experiment.clone(), w.configuration.clone());
        assert_eq!(sizes[&key], n as f64, "{w:?}: W's N is not the table's N");
        let formula = work(&w.kernel, n as f64);
        assert!(
            (formula - w.value).abs() <= half_printed_unit(w.value),
            "{w:?}: W({n}) = {formula}"
        );
    }
    // Table 5, Case 1 is printed in full: W(310) = 19 811 638 exactly.
    assert_eq!(work("ge", 310.0).round(), 19_811_638.0);
}

/// `C' W(N) / (C W(N'))` for consecutive configurations, as section 4.4.1 computes psi.
fn psi_from(values: &[PublishedValue], experiment: &str, sizes: &[f64]) -> Vec<f64> {
    let speeds: Vec<f64> = rows_of(values, Quantity::MarkedSpeed)
        .into_iter()
        .filter(|v| v.experiment == experiment)
        .map(|v| v.value)
        .collect();
    (0..sizes.len() - 1)
        .map(|i| {
            speeds[i + 1] * work(experiment, sizes[i])
                / (speeds[i] * work(experiment, sizes[i + 1]))
        })
        .collect()
}

fn values_of(values: &[PublishedValue], experiment: &str, quantity: Quantity) -> Vec<f64> {
    rows_of(values, quantity)
        .into_iter()
        .filter(|v| v.experiment == experiment)
        .map(|v| v.value)
        .collect()
}

#[test]
fn published_psi_follows_from_the_published_sizes_and_marked_speeds() {
    let values = jpdc();
    for experiment in ["ge", "mm", "conv2d"] {
        let sizes = values_of(&values, experiment, Quantity::ProblemSize);
        let derived = psi_from(&values, experiment, &sizes);
        let published = values_of(&values, experiment, Quantity::Psi);
        assert_eq!(published.len(), 4);
        for (d, p) in derived.iter().zip(&published) {
            // Within one unit of the third printed decimal, not half: the paper prints MM's
            // psi(C'_8, C'_16) = 0.4437 (from its own N and C) as 0.443.
            assert!(
                (d - p).abs() < 1e-3,
                "{experiment}: psi {d} vs published {p}"
            );
        }
    }
    // Table 13 is Table 12's N' from the base case N = 310 on C_2.
    let mut predicted = vec![310.0];
    predicted.extend(values_of(&values, "ge", Quantity::PredictedProblemSize));
    let derived = psi_from(&values, "ge", &predicted);
    let published = values_of(&values, "ge", Quantity::PredictedPsi);
    for (d, p) in derived.iter().zip(&published) {
        assert!((d - p).abs() < 6e-4, "psi' {d} vs published {p}");
    }
}

#[test]
fn time_rows_are_the_papers_milliseconds_in_seconds_exactly() {
    let paper_ms = [
        ("3", 100, "260.770"),
        ("3", 200, "473.786"),
        ("3", 300, "925.242"),
        ("3", 400, "1587.725"),
        ("3", 500, "2657.918"),
        ("4", 200, "787.315"),
        ("4", 300, "1227.864"),
        ("4", 400, "1555.409"),
        ("4", 500, "2398.865"),
        ("4", 600, "3503.558"),
        ("4", 700, "4542.754"),
        ("4", 800, "6137.099"),
    ];
    let values = jpdc();
    let times = rows_of(&values, Quantity::Time);
    let got: Vec<(&str, u64, String)> = times
        .iter()
        .map(|v| {
            (
                v.table.as_str(),
                v.n.unwrap(),
                format!("{:.3}", v.value * 1e3),
            )
        })
        .collect();
    let expected: Vec<(&str, u64, String)> = paper_ms
        .iter()
        .map(|&(t, n, ms)| (t, n, ms.to_owned()))
        .collect();
    assert_eq!(got, expected);
    assert!(times.iter().all(|v| v.unit == "s"));
    assert_eq!(
        times.iter().find(|v| v.n == Some(100)).unwrap().value,
        0.26077
    );
}

#[test]
fn time_rows_become_runs() {
    let runs = published_time_rows(&jpdc());
    assert_eq!(runs.len(), 12);
    assert_eq!(
        runs[0],
        MeasuredRun {
            configuration: "C_2".into(),
            nodes: "server*2:1,sunblade:1".into(),
            kernel: "ge".into(),
            n: 100,
            time_s: 0.26077,
        }
    );
    assert_eq!(runs[11].configuration, "C_4");
    assert_eq!(runs[11].n, 800);
    assert_eq!(runs[11].time_s, 6.137099);
}

#[test]
fn targets_are_the_ones_the_papers_state() {
    let values = jpdc();
    for v in &values {
        let expected = match (v.quantity, v.experiment.as_str()) {
            (Quantity::Time | Quantity::SpeedEfficiency | Quantity::Work, _) => None,
            (Quantity::MarkedSpeed, _) => None,
            (_, "ge") => Some(0.3),
            (_, "mm") => Some(0.2),
            (_, _) => None,
        };
        assert_eq!(v.target_e_s, expected, "{v:?}");
    }
    let measured: Vec<(u64, f64)> = rows_of(&values, Quantity::SpeedEfficiency)
        .iter()
        .map(|v| (v.n.unwrap(), v.value))
        .collect();
    assert_eq!(measured, [(310, 0.312), (480, 0.288)]);
}

#[test]
fn an_unknown_paper_names_the_known_ones() {
    assert_eq!(papers(), ["jpdc", "tpds"]);
    let err = published("icpp").unwrap_err().to_string();
    assert_eq!(
        err,
        "no published data for paper \"icpp\": known papers are jpdc, tpds; give one of them"
    );
}

#[test]
fn the_tpds_data_hold_tables_ii_v_vii_viii_ix_x_xi_on_the_ncube_and_the_maspar() {
    let tpds = published("tpds").expect("the embedded TPDS data parse");
    let count = |experiment: &str, q: Quantity| {
        tpds.iter()
            .filter(|v| v.experiment == experiment && v.quantity == q)
            .count()
    };
    assert_eq!(count("burg-ncube", Quantity::IsospeedTime), 8, "Table II");
    assert_eq!(
        count("burg-ncube", Quantity::Psi),
        28,
        "Table V: 8 * 7 / 2 pairs"
    );
    assert_eq!(
        count("burg-ncube", Quantity::ProblemSize),
        2,
        "section IV-C"
    );
    assert_eq!(count("burg-maspar", Quantity::IsospeedTime), 4, "Table IX");
    assert_eq!(count("burg-maspar", Quantity::Psi), 6, "Table VIII");
    assert_eq!(count("slalom-ncube", Quantity::Psi), 6, "Table VII");
    assert_eq!(
        count("slalom-ncube", Quantity::ProblemSize),
        2,
        "section IV-C, Figs. 9-10"
    );
    assert_eq!(
        count("slalom-maspar", Quantity::IsospeedTime),
        4,
        "Table XI"
    );
    assert_eq!(count("slalom-maspar", Quantity::Psi), 6, "Table X");
    // Half the asymptotic speed, over the preset's marked speed (Burg's): 1.7 Mflop/s on the
    // nCUBE 2 and 41 Kflop/s on the MasPar; SLALOM's are 1.5 and 18 (sections IV-C, IV-D).
    for v in &tpds {
        let expected = match v.experiment.as_str() {
            "slalom-ncube" => 0.4412,
            "slalom-maspar" => 0.2195,
            _ => 0.5,
        };
        assert_eq!(v.target_e_s, Some(expected), "{}", v.source);
    }
    assert!(
        tpds.iter()
            .filter(|v| v.quantity == Quantity::IsospeedTime)
            .all(|v| v.n.is_none())
    );
    // Scalability chains: psi(1, 4) ~ psi(1, 2) psi(2, 4) (Sun & Rover, after Table II),
    // within three printed digits and measurement.
    let value = |c: &str| tpds.iter().find(|v| v.configuration == c).unwrap().value;
    assert!((value("1>4") - value("1>2") * value("2>4")).abs() < 0.01);
    // Every label is its system size on its preset (`2K` is 2048 processors).
    let ncube = Platform::load("ncube2").unwrap();
    let maspar = Platform::load("maspar").unwrap();
    for v in &tpds {
        let platform = if v.experiment.ends_with("-ncube") {
            &ncube
        } else {
            &maspar
        };
        for (label, nodes) in v.configuration.split('>').zip(v.nodes.split('>')) {
            let machine = platform.select(&nodes.parse::<NodeSet>().unwrap()).unwrap();
            let p = match label.strip_suffix('K') {
                Some(k) => k.parse::<usize>().unwrap() * 1024,
                None => label.parse().unwrap(),
            };
            assert_eq!(machine.p(), p, "{}", v.source);
        }
    }
}

#[test]
fn runs_take_columns_in_any_order_comments_extra_columns_and_spaces() {
    let text = "# runs of my cluster\n\
                time_s , n, kernel,note, nodes ,configuration\n\
                0.25, 310 , ge ,first,\"server*2:1, sunblade:1\", C_2\n\
                # a comment between rows\n\
                \n\
                1.5e0,480,ge,,\"server*2:1,sunblade:3\",C_4\n";
    let runs = parse_runs(text, "runs.csv").unwrap().runs;
    assert_eq!(
        runs,
        [
            MeasuredRun {
                configuration: "C_2".into(),
                nodes: "server*2:1, sunblade:1".into(),
                kernel: "ge".into(),
                n: 310,
                time_s: 0.25,
            },
            MeasuredRun {
                configuration: "C_4".into(),
                nodes: "server*2:1,sunblade:3".into(),
                kernel: "ge".into(),
                n: 480,
                time_s: 1.5,
            },
        ]
    );
}

#[test]
fn a_spreadsheets_byte_order_mark_is_not_part_of_the_first_column() {
    let text = "\u{feff}configuration,nodes,kernel,n,time_s\nC_2,2,ge,10,0.5\n";
    assert_eq!(
        parse_runs(text, "runs.csv").unwrap().runs[0].configuration,
        "C_2"
    );
}

const HEADER: &str = "configuration,nodes,kernel,n,time_s\n";

fn runs_error(text: &str) -> String {
    let err = parse_runs(text, "runs.csv").unwrap_err().to_string();
    assert!(!err.contains('\n'), "not one line: {err}");
    err
}

fn with_row(row: &str) -> String {
    format!("{HEADER}C_2,2,ge,10,0.5\nC_4,4,ge,20,0.75\n{row}\n")
}

#[test]
fn bad_runs_give_one_line_naming_file_line_and_field() {
    let max = hetscale_kernels::MAX_N;
    let cases: Vec<(String, String)> = vec![
        (
            with_row("C_2,2,ge,10,abc"),
            "runs.csv line 4, field time_s: \"abc\" is not a number; give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,2,ge,10,NaN"),
            "runs.csv line 4, field time_s: NaN is not a finite number; give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,2,ge,10,inf"),
            "runs.csv line 4, field time_s: inf is not a finite number; give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,2,ge,10,1e999"),
            "runs.csv line 4, field time_s: 1e999 is not a finite number; give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,2,ge,10,0"),
            "runs.csv line 4, field time_s: 0 is not positive; give seconds, e.g. 0.25".into(),
        ),
        (
            with_row("C_2,2,ge,10,-0.5"),
            "runs.csv line 4, field time_s: -0.5 is not positive; give seconds, e.g. 0.25".into(),
        ),
        (
            with_row("C_2,2,ge,10,"),
            "runs.csv line 4, field time_s: empty; give seconds, e.g. 0.25".into(),
        ),
        (
            // Its weight 1 / T would be inf.
            with_row("C_2,2,ge,10,1e-320"),
            "runs.csv line 4, field time_s: 1e-320 s is shorter than any measured run (1e-9 s); \
             give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,2,ge,10,1e308"),
            "runs.csv line 4, field time_s: 1e308 s is longer than any measured run (1e9 s, 31 \
             years); give seconds, e.g. 0.25"
                .into(),
        ),
        (
            with_row("C_2,3,ge,10,0.5"),
            "runs.csv line 4, field nodes: configuration \"C_2\" was \"2\" on an earlier row and \
             is \"3\" here; a label names one node-set: give this one another label"
                .into(),
        ),
        (
            with_row("C\u{1b}]0;x\u{7},2,ge,10,0.5"),
            "runs.csv line 4, field configuration: \"C\\u{1b}]0;x\\u{7}\" contains the control \
             character '\\u{1b}': remove it"
                .into(),
        ),
        (
            with_row("C_2,2,ge,0,0.5"),
            "runs.csv line 4, field n: 0 is no problem size; give a whole number from 1, e.g. 310"
                .into(),
        ),
        (
            with_row("C_2,2,ge,3.5,0.5"),
            "runs.csv line 4, field n: \"3.5\" is not a whole number; give a problem size from 1, e.g. 310"
                .into(),
        ),
        (
            with_row("C_2,2,ge,-3,0.5"),
            "runs.csv line 4, field n: -3 is negative; a problem size is at least 1, e.g. 310"
                .into(),
        ),
        (
            with_row(&format!("C_2,2,ge,{},0.5", max + 1)),
            format!(
                "runs.csv line 4, field n: {} is above the largest problem size, {max} (2^53); give a smaller n",
                max + 1
            ),
        ),
        (
            with_row("C_2,2,ge,99999999999999999999999,0.5"),
            format!(
                "runs.csv line 4, field n: 99999999999999999999999 is above the largest problem size, {max} (2^53); give a smaller n"
            ),
        ),
        (
            with_row("C_2,  ,ge,10,0.5"),
            "runs.csv line 4, field nodes: empty; give a node-set, e.g. \"server*2:1,sunblade:1\""
                .into(),
        ),
        (
            with_row("C_2,2,,10,0.5"),
            "runs.csv line 4, field kernel: empty; give a kernel name, e.g. ge".into(),
        ),
        (
            with_row(",2,ge,10,0.5"),
            "runs.csv line 4, field configuration: empty; give the configuration's label, e.g. C_2"
                .into(),
        ),
        (
            with_row("C_2,server:1,sunfire:1,ge,10,0.5"),
            "runs.csv line 4: 6 fields where the header has 5; quote a field that holds commas, e.g. \"server:1,sunfire:1\""
                .into(),
        ),
        (
            with_row("C_2,2,ge,10"),
            "runs.csv line 4: 4 fields where the header has 5; quote a field that holds commas, e.g. \"server:1,sunfire:1\""
                .into(),
        ),
        (
            "configuration,nodes,kernel\nC_2,2,ge\n".into(),
            "runs.csv line 1: the header lacks column(s) n, time_s; it must name configuration, nodes, kernel, n, time_s (in any order)"
                .into(),
        ),
        (
            "configuration,nodes,kernel,n,time_s,n\nC_2,2,ge,10,0.5,10\n".into(),
            "runs.csv line 1: the header names column n twice; keep one".into(),
        ),
        (
            "".into(),
            "runs.csv: the file is empty; write the header configuration,nodes,kernel,n,time_s and one run per line"
                .into(),
        ),
        (
            "# only a comment\n\n".into(),
            "runs.csv: the file is empty; write the header configuration,nodes,kernel,n,time_s and one run per line"
                .into(),
        ),
        (
            HEADER.into(),
            "runs.csv: no rows after the header; write one run per line, e.g. C_2,\"server*2:1,sunblade:1\",ge,310,0.95"
                .into(),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(runs_error(&text), expected, "for input {text:?}");
    }
}

#[test]
fn a_comment_line_counts_in_the_line_numbers() {
    let text = format!("# header next\n{HEADER}# a run\nC_2,2,ge,10,x\n");
    assert_eq!(
        runs_error(&text),
        "runs.csv line 4, field time_s: \"x\" is not a number; give seconds, e.g. 0.25"
    );
    let text = format!("{HEADER}C_2,2,ge,10,0.5\n\n\n   \nC_2,2,ge,10,x\n");
    assert_eq!(
        runs_error(&text),
        "runs.csv line 5: 1 field where the header has 5; quote a field that holds commas, e.g. \"server:1,sunfire:1\""
    );
    let text = format!("{HEADER}C_2,2,ge,10,0.5\n\n# gap\n\nC_2,2,ge,10,x\n");
    assert!(runs_error(&text).starts_with("runs.csv line 6, field time_s:"));
    let text = "configuration,nodes,kernel,n,time_s\r\nC_2,2,ge,10,0.5\r\n\r\nC_2,2,ge,0,1\r\n";
    assert!(runs_error(text).starts_with("runs.csv line 4, field n:"));
    // A quoted field may span lines (a note; a label refuses the line end, a control
    // character).
    let text = "configuration,nodes,kernel,n,time_s,note\nC_2,2,ge,10,0.5,\"first\nsecond line\"\n\
                C_2,2,ge,0,1,\n";
    assert!(runs_error(text).starts_with("runs.csv line 4, field n:"));
    let text =
        "configuration,nodes,kernel,n,time_s\n\"C_2\nsecond line\",2,ge,10,0.5\nC_2,2,ge,0,1\n";
    assert!(
        runs_error(text).starts_with("runs.csv line 2, field configuration:")
            && runs_error(text).contains("contains the control character '\\n'"),
        "{}",
        runs_error(text)
    );
    let text = "# header next\nconfiguration,kernel\nC_2,ge\n";
    assert!(
        runs_error(text)
            .starts_with("runs.csv line 2: the header lacks column(s) nodes, n, time_s;")
    );
}

#[test]
fn a_long_file_gives_the_line_of_its_last_row() {
    let mut text = HEADER.to_owned();
    for n in 1..=50_000 {
        text.push_str(&format!(
            "C_2,\"server*2:1,sunblade:1\",ge,{n},0.5\n# run {n}\n"
        ));
    }
    assert_eq!(parse_runs(&text, "long.csv").unwrap().runs.len(), 50_000);
    text.push_str("C_2,2,ge,10,late\n");
    assert_eq!(
        runs_error(&text).replace("runs.csv", "long.csv"),
        "long.csv line 100002, field time_s: \"late\" is not a number; give seconds, e.g. 0.25"
    );
}

#[test]
fn read_runs_names_the_file_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.csv");
    std::fs::write(&good, format!("{HEADER}C_2,2,ge,10,0.5\n")).unwrap();
    assert_eq!(read_runs(&good).unwrap().runs[0].time_s, 0.5);

    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, format!("{HEADER}C_2,2,ge,10,slow\n")).unwrap();
    assert_eq!(
        read_runs(&bad).unwrap_err().to_string(),
        format!(
            "{} line 2, field time_s: \"slow\" is not a number; give seconds, e.g. 0.25",
            bad.display()
        )
    );

    let missing = dir.path().join("missing.csv");
    let err = read_runs(&missing).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}: cannot read it (", missing.display())),
        "{err}"
    );
    assert!(
        err.ends_with("); give the path of a CSV file of runs"),
        "{err}"
    );

    let binary = dir.path().join("binary.csv");
    let mut bytes = format!("{HEADER}C_2,2,ge,10,0.5\nC_2,2,").into_bytes();
    bytes.extend([0xff, 0xfe, b',', b'1', b'\n']);
    std::fs::write(&binary, bytes).unwrap();
    assert_eq!(
        read_runs(&binary).unwrap_err().to_string(),
        format!(
            "{} line 3: not UTF-8 text; save it as UTF-8 CSV",
            binary.display()
        )
    );
}

const PUBLISHED_HEADER: &str =
    "paper,table,source,experiment,configuration,nodes,kernel,quantity,n,value,unit,target_e_s\n";

fn published_error(row: &str) -> String {
    let text = format!(
        "{PUBLISHED_HEADER}jpdc,3,\"Table 3, Case 1.1\",ge,C_2,\"server*2:1,sunblade:1\",ge,T,100,0.26077,s,\n{row}\n"
    );
    let err = parse_published(&text, "my.csv").unwrap_err().to_string();
    assert!(!err.contains('\n'), "not one line: {err}");
    err
}

#[test]
fn bad_published_rows_give_one_line_naming_file_line_and_field() {
    let cases = [
        (
            "jpdc,3,Table 3,ge,C_2,2,ge,Tms,100,0.26,s,",
            "my.csv line 3, field quantity: \"Tms\" is no quantity; write one of T, N, E_s, psi, N_predicted, psi_predicted, C, W, T_iso",
        ),
        (
            "jpdc,3,Table 3,ge,C_2,2,ge,T,100,260.77,ms,",
            "my.csv line 3, field unit: T is in s, not \"ms\"; convert the value to s and write s",
        ),
        (
            "jpdc,3,Table 3,ge,C_2,2,ge,T,,0.26,s,",
            "my.csv line 3, field n: empty, but T rows need the problem size they belong to; give it, e.g. 310",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,310,310,1,0.3",
            "my.csv line 3, field n: N rows belong to no single problem size; leave n empty",
        ),
        (
            "jpdc,6,Table 6,ge,C_2,2,ge,psi,,0.445,1,0.3",
            "my.csv line 3, field configuration: \"C_2\" names one configuration; psi rows name two as FROM>TO, e.g. C_2>C_4",
        ),
        (
            "jpdc,6,Table 6,ge,C_2>C_4,2,ge,psi,,0.445,1,0.3",
            "my.csv line 3, field nodes: \"2\" names one node-set; psi rows name two as FROM>TO, e.g. \"server*2:1,sunblade:1>server*2:1,sunblade:3\"",
        ),
        (
            "jpdc,5,Table 5,ge,C_2>C_4,2>4,ge,N,,310,1,0.3",
            "my.csv line 3, field configuration: \"C_2>C_4\" names more than one configuration; only psi and psi_predicted rows do",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,,-310,1,0.3",
            "my.csv line 3, field value: -310 is not positive; give the published value in 1",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,,NaN,1,0.3",
            "my.csv line 3, field value: NaN is not a finite number; give the published value in 1",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,,310,1,1.5",
            "my.csv line 3, field target_e_s: 1.5 is above 1; give the target speed-efficiency, e.g. 0.3, or leave it empty",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,,310,1,zero",
            "my.csv line 3, field target_e_s: \"zero\" is not a number; give the target speed-efficiency, e.g. 0.3, or leave it empty",
        ),
        (
            "jpdc,5,,ge,C_2,2,ge,N,,310,1,0.3",
            "my.csv line 3, field source: empty; give where the paper prints the value, e.g. \"Table 3, Case 1.2\"",
        ),
        (
            "jpdc,5,Table 5,ge,C_2,2,ge,N,,310,1",
            "my.csv line 3: 11 fields where the header has 12; quote a field that holds commas, e.g. \"server:1,sunfire:1\"",
        ),
    ];
    for (row, expected) in cases {
        assert_eq!(published_error(row), expected, "for row {row:?}");
    }
    assert_eq!(
        parse_published("paper,table,source\n", "my.csv")
            .unwrap_err()
            .to_string(),
        "my.csv line 1: the header lacks column(s) experiment, configuration, nodes, kernel, quantity, n, value, unit, target_e_s; it must name paper, table, source, experiment, configuration, nodes, kernel, quantity, n, value, unit, target_e_s (in any order)"
    );
}

#[test]
fn quantities_spell_as_the_csv_writes_them() {
    let spelled: Vec<String> = Quantity::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(
        spelled,
        [
            "T",
            "N",
            "E_s",
            "psi",
            "N_predicted",
            "psi_predicted",
            "C",
            "W",
            "T_iso"
        ]
    );
    for q in Quantity::ALL {
        assert_eq!(q.to_string().parse::<Quantity>(), Ok(q));
    }
    assert_eq!(Quantity::Time.unit(), "s");
    assert_eq!(Quantity::MarkedSpeed.unit(), "Mflop/s");
    assert_eq!(Quantity::Psi.unit(), "1");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn runs_parser_never_panics_and_errors_are_one_line(
        rows in proptest::collection::vec("[a-z0-9_ ,.\"#*:>-]{0,30}", 0..5)
    ) {
        let text = format!("{HEADER}{}", rows.join("\n"));
        if let Err(e) = parse_runs(&text, "fuzz.csv") {
            let message = e.to_string();
            prop_assert!(!message.contains('\n'));
            prop_assert!(message.starts_with("fuzz.csv"));
        }
    }

    #[test]
    fn published_parser_never_panics_and_errors_are_one_line(
        rows in proptest::collection::vec("[a-zA-Z0-9_ ,.\"#*:>'-]{0,60}", 0..5)
    ) {
        let text = format!("{PUBLISHED_HEADER}{}", rows.join("\n"));
        if let Err(e) = parse_published(&text, "fuzz.csv") {
            let message = e.to_string();
            prop_assert!(!message.contains('\n'));
            prop_assert!(message.starts_with("fuzz.csv"));
        }
    }
}
