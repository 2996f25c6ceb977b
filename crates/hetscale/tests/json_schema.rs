//! Every command's `--json` follows the one convention docs/commands.md's "JSON output"
//! states: one object with `kind` (the command) and `version`; snake_case keys; every number
//! either names its SI unit in its key (a suffix from `UNIT_SUFFIXES`, also for every number
//! under such a key, as a statistics object `time_stats_s`) or is one of the documented
//! dimensionless quantities and counts; every interval `<name>_ci95` is `[low, high]` with
//! low <= high, within its quantity's domain (`high` null where it is open); `n` and counts are integers; `nodes` a node-set
//! string beside the count `p`; psi a full square matrix; the inputs echoed.

mod common;

use common::{PLANNED_STUDY, SMALL_GE, hetscale_in, json_of, spec_dir, write_planned_study};
use hetscale_study::json::{SCHEMA_VERSION, UNIT_SUFFIXES};
use serde_json::Value;

/// Keys of the old, mixed schema that must not come back.
const RETIRED: &[&str] = &[
    "cluster_speed",
    "cluster_speed_flops",
    "marked_speed",
    "work",
    "rate_mflops",
    "n_kb",
    "work_ci95_flop",
    "mean_ci",
    "speed_efficiency_ci",
    "rel_err",
    "time",
];

/// The numbers that carry no unit, each documented in docs/commands.md: ratios and factors,
/// sizes and counts. A number under one of these keys (psi's matrix, a fitted factor's
/// estimate) is one too.
const DIMENSIONLESS: &[&str] = &[
    // speed-efficiency, its target and levels, and the isospeed-efficiency scalability psi
    "speed_efficiency",
    "target",
    "tolerance",
    "level",
    "psi",
    "psi_from_first",
    "psi_from_previous",
    "psi_from_base",
    // ratios and factors of speeds, times and works
    "r",
    "share",
    "a",
    "compute_factor",
    "overhead_factor",
    "rate_fraction",
    "collective_scale",
    "jitter",
    "max_relative_ci",
    "trend",
    // the quality of the trend line of E_s (`model_quality`'s are `rmse_s`, `loo_cv_rmse_s`)
    "r_squared",
    "adjusted_r_squared",
    "rmse",
    "loo_cv_rmse",
    // a kernel's check of its result: its error measure and tolerance
    "error",
    // problem sizes: integers, or the real root (`n_root`) an integer was rounded from
    "n",
    "n_root",
    "n_trend",
    "n_min",
    "n_max",
    "n_measured",
    "n_computed",
    "n_predicted",
    "n_reference",
    "n_from",
    "gemm_n",
    "lu_n",
    "fft_len",
    "triad_len",
    // counts
    "p",
    "cores",
    "cpus",
    "cpus_used",
    "samples",
    "repetitions",
    "max_repetitions",
    "repetition",
    "warmup",
    "rounds",
    "outliers",
    "replicate",
    "seed",
    "overhead_degree",
    "fitted_nodes",
    "predicted_nodes",
    "n_sharp_from_nodes",
    // the predictive distribution: log factors and their spreads, rates per doubling, the
    // divergence and the bagged point's factor (logs) and the constants' scales
    "compute_fit_spread",
    "overhead_fit_spread",
    "compute_rate",
    "overhead_rate",
    "compute_error",
    "overhead_error",
    "half_width",
    "doublings",
    "fold_overhead_rate",
    "compute_divergence",
    "overhead_divergence",
    "bagging",
    "compute_fit_scale",
    "overhead_fit_scale",
    "overhead_fit_growth",
    "fold_scale",
    "divergence_scale",
    // a planned study: log widths of intervals (`ln(hi/lo)`), their ratios, and its counts
    "width",
    "width_before",
    "width_after",
    "width_expected",
    "expected_gain",
    "hi_over_lo",
    "runs",
    "step",
    // a kernel option (Burg's order, SUMMA's block)
    "order",
    "nb",
];

/// Numbers whose unit their object names in a sibling (`unit`, a paper row's `label`), and a
/// kernel's `details`, named by the kernel.
const UNIT_NAMED_BESIDE: [&str; 5] = [
    "published",
    "computed",
    "tool",
    "marked_speed_index",
    "details",
];

/// Keys whose numbers are integers wherever they appear.
const INTEGERS: [&str; 13] = [
    "n",
    "p",
    "n_min",
    "n_max",
    "n_measured",
    "n_computed",
    "n_reference",
    "samples",
    "repetitions",
    "repetition",
    "cores",
    "rounds",
    "version",
];

/// Whether `key` names its unit: one of the SI suffixes, or an interval of such a quantity.
fn has_unit(key: &str) -> bool {
    let quantity = key.strip_suffix("_ci95").unwrap_or(key);
    UNIT_SUFFIXES.iter().any(|unit| quantity.ends_with(unit))
}

/// Whether the numbers under `key` need no unit in their own keys.
fn covers(key: &str) -> bool {
    let quantity = key.strip_suffix("_ci95").unwrap_or(key);
    has_unit(key) || DIMENSIONLESS.contains(&quantity) || UNIT_NAMED_BESIDE.contains(&quantity)
}

/// Checks a whole `--json` document: an object with `kind` and `version` at its top.
fn document_violations(value: &Value, kind: &str) -> Vec<String> {
    let mut found = violations(value, kind, false);
    if value["kind"] != kind {
        found.push(format!("{kind}: kind is {}, not {kind:?}", value["kind"]));
    }
    if value["version"] != SCHEMA_VERSION {
        found.push(format!("{kind}: version is {}", value["version"]));
    }
    found
}

/// Checks `value` (at `path`) against the schema; returns the violations. `covered`: an
/// enclosing key names the unit (or the lack of one) of every number below it.
fn violations(value: &Value, path: &str, covered: bool) -> Vec<String> {
    let mut found = Vec::new();
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let at = format!("{path}.{key}");
                found.extend(key_violations(key, v, &at));
                let covered = covered || covers(key);
                if v.is_number() && !covered && key != "version" {
                    found.push(format!("{at}: a number with no unit suffix ({UNIT_SUFFIXES:?}) and not a documented dimensionless name"));
                }
                found.extend(violations(v, &at, covered));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                if v.is_number() && !covered {
                    found.push(format!("{path}[{i}]: a number with no unit"));
                }
                found.extend(violations(v, &format!("{path}[{i}]"), covered));
            }
        }
        _ => {}
    }
    found
}

/// The checks of one key and its value.
fn key_violations(key: &str, v: &Value, at: &str) -> Vec<String> {
    let mut found = Vec::new();
    let snake = key
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && key.starts_with(|c: char| c.is_ascii_lowercase());
    if !snake {
        found.push(format!("{at}: key not snake_case"));
    }
    if RETIRED.contains(&key) {
        found.push(format!("{at}: retired key"));
    }
    let speed_keys = ["marked_speed_flops", "marked_speed_index"];
    if key.contains("marked_speed") && !speed_keys.iter().any(|k| key.starts_with(k)) {
        found.push(format!(
            "{at}: a marked speed is marked_speed_flops (or marked_speed_index)"
        ));
    }
    let interval = key.ends_with("_ci") && !DIMENSIONLESS.contains(&key);
    if interval || key == "ci95" || key.contains("_ci95_") {
        found.push(format!("{at}: an interval is <name>_ci95"));
    }
    if INTEGERS.contains(&key) && v.is_number() && !v.is_u64() {
        found.push(format!("{at}: {key} is an integer, not {v}"));
    }
    match key {
        "nodes"
            if !(v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string))) =>
        {
            found.push(format!("{at}: nodes is a node-set string, not {v}"));
        }
        "psi" | "psi_ci95" if !v.is_null() => found.extend(square(v, at)),
        "details" => found.extend(numbers_as_numbers(v, at)),
        _ if key.ends_with("_ci95") => found.extend(intervals(v, key, at)),
        _ => {}
    }
    found
}

/// Every `[low, high]` pair in an interval value (one, a list of them, or psi's matrix): low
/// <= high, and not below 0 for a quantity that cannot be negative (a time, a size, a work, a
/// speed, an efficiency, psi, a problem size).
fn intervals(v: &Value, key: &str, at: &str) -> Vec<String> {
    let signed = key.contains("_percent");
    let mut found = Vec::new();
    match v {
        // An open upper end: no size up to the bound holds the target at the interval's end.
        Value::Array(items) if items.len() == 2 && items[0].is_number() && items[1].is_null() => {
            if items[0].as_f64().unwrap() < 0.0 && !signed {
                found.push(format!("{at}: interval {v} reaches below 0"));
            }
        }
        Value::Array(items) if items.len() == 2 && items.iter().all(Value::is_number) => {
            let (lo, hi) = (items[0].as_f64().unwrap(), items[1].as_f64().unwrap());
            if lo > hi {
                found.push(format!("{at}: interval {v} has low > high"));
            }
            if lo < 0.0 && !signed {
                found.push(format!("{at}: interval {v} reaches below 0"));
            }
        }
        Value::Array(items) => {
            for item in items.iter().filter(|i| !i.is_null()) {
                found.extend(intervals(item, key, at));
            }
        }
        Value::Object(map) if key == "psi_ci95" => {
            found.extend(
                map.get("values")
                    .map(|values| intervals(values, key, at))
                    .unwrap_or_default(),
            );
        }
        Value::Null => {}
        other => found.push(format!("{at}: an interval is [low, high], not {other}")),
    }
    found
}

/// A psi matrix: `labels` and a square `values` of as many rows.
fn square(psi: &Value, at: &str) -> Vec<String> {
    let k = psi["labels"].as_array().map_or(0, Vec::len);
    let rows = psi["values"].as_array().cloned().unwrap_or_default();
    let full = rows.len() == k
        && rows
            .iter()
            .all(|r| r.as_array().is_some_and(|r| r.len() == k));
    if full {
        vec![]
    } else {
        vec![format!("{at}: psi is a full {k} x {k} matrix, not {psi}")]
    }
}

fn numbers_as_numbers(details: &Value, at: &str) -> Vec<String> {
    details
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.as_str().is_some_and(|s| s.trim().parse::<f64>().is_ok()))
        .map(|(k, v)| format!("{at}.{k}: the number {v} is a string"))
        .collect()
}

/// Asserts that `value`, the `--json` of the command `kind`, follows the convention.
fn assert_schema(kind: &str, value: &Value) {
    let found = document_violations(value, kind);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Asserts that `value` echoes each `(key, value)` input.
fn assert_echoes(value: &Value, inputs: &[(&str, &str)]) {
    for (key, expected) in inputs {
        assert_eq!(value[key], *expected, "{key} not echoed in {value}");
    }
}

const STEP: &str = "echo \"time: 0.5\"\n";

#[test]
fn every_commands_json_follows_the_one_schema() {
    let dir = spec_dir(SMALL_GE);
    let d = dir.path();
    std::fs::write(d.join("step.sh"), STEP).unwrap();

    let run = json_of(hetscale_in(d).args([
        "run",
        "ge",
        "--n",
        "32",
        "--backend",
        "sim",
        "--nodes",
        "2",
        "--json",
    ]));
    assert_schema("run", &run);
    let inputs = [("kernel", "ge"), ("backend", "sim"), ("platform", "local")];
    assert_echoes(&run, &inputs);
    assert_eq!(run["nodes"], "2", "{run}");
    assert_eq!(run["p"], 2);
    assert_eq!(
        run["marked_speed_flops"], 2e9,
        "two local cores at 1000 Mflop/s"
    );
    assert!(run["details"]["layout_efficiency"].is_f64(), "{run}");
    assert_eq!(run["time_stats_s"]["median"], run["time_s"], "{run}");

    let command = [
        "run",
        "--command",
        "sh step.sh {n}",
        "--work",
        "1e6*n",
        "--time-regex",
        "time: (\\S+)",
        "--n",
        "10",
        "--nodes",
        "1",
        "--runs",
        "3",
        "--json",
    ];
    let command = json_of(hetscale_in(d).args(command));
    assert_schema("run", &command);
    let inputs = [
        ("command", "sh step.sh {n}"),
        ("backend", "external"),
        ("platform", "local"),
        ("nodes", "1"),
    ];
    assert_echoes(&command, &inputs);
    assert_eq!(command["marked_speed_flops"], 1e9, "{command}");

    let predict = json_of(hetscale_in(d).args([
        "predict",
        "mm",
        "--nodes",
        "sunblade:2",
        "--nodes",
        "sunblade:8",
        "--target",
        "0.2",
        "--json",
    ]));
    assert_schema("predict", &predict);
    assert_echoes(&predict, &[("kernel", "mm"), ("platform", "sunwulf")]);
    assert_eq!(
        predict["nodes"],
        serde_json::json!(["sunblade:2", "sunblade:8"])
    );
    let point = &predict["points"][1];
    let root = point["n_root"].as_f64().unwrap();
    assert_eq!(point["n"].as_u64(), Some(root.round() as u64), "{point}");
    assert_eq!(
        predict["psi"]["values"][1][0],
        Value::Null,
        "below the diagonal"
    );

    let bench = json_of(hetscale_in(d).args(["bench", "--quick", "--json"]));
    assert_schema("bench", &bench);
    let speed = bench["marked_speed_flops"].as_f64().unwrap();
    assert!(speed > 1e6, "{bench}");
    // Each kernel's rate is in flop/s too: the marked speed is their medians' mean.
    let medians: f64 = (0..4)
        .map(|k| {
            bench["kernels"][k]["rate_stats_flops"]["median"]
                .as_f64()
                .unwrap()
        })
        .sum();
    assert!((medians / 4.0 - speed).abs() < 1e-6 * speed, "{bench}");

    let study =
        json_of(hetscale_in(d).args(["study", "spec.toml", "--out", "out", "--json", "--quiet"]));
    assert_schema("study", &study);
    let spec = &study["studies"][0]["spec"];
    assert_echoes(
        spec,
        &[
            ("kernel", "ge"),
            ("backend", "sim"),
            ("platform", "sunwulf"),
        ],
    );
    let fit = &study["studies"][0]["fits"][0];
    let time_errors = &fit["model_quality"];
    assert!(
        time_errors["rmse_s"].is_f64() && time_errors.get("rmse").is_none(),
        "{fit}"
    );
    let configuration = &study["studies"][0]["configurations"][0];
    assert!(
        configuration["nodes"].is_string() && configuration["p"].is_u64(),
        "{configuration}"
    );

    let from = json_of(hetscale_in(d).args([
        "predict",
        "--from",
        "out/study.db",
        "--nodes",
        "sunblade:16",
        "--json",
    ]));
    assert_schema("predict", &from);
    assert_echoes(
        &from,
        &[
            ("from", "out/study.db"),
            ("study", "small ge"),
            ("platform", "sunwulf"),
        ],
    );
    assert_eq!(from["nodes"], serde_json::json!(["sunblade:16"]));
    assert_eq!(
        (&from["replicate"], &from["target"]),
        (&1.into(), &0.3.into())
    );
    let point = &from["points"][0];
    assert!(
        point["n"].is_u64() && point["n_ci95"][0].is_u64() && point["p"] == 16,
        "{point}"
    );

    let export = json_of(hetscale_in(d).args(["export", "out/study.db", "--format", "json"]));
    assert_schema("export", &export);
    let run = &export["runs"][0];
    assert!(run["nodes"].is_string() && run["p"].is_u64(), "{run}");
    assert_echoes(
        run,
        &[
            ("kernel", "ge"),
            ("backend", "sim"),
            ("platform", "sunwulf"),
        ],
    );
}

#[test]
fn the_check_finds_each_kind_of_violation() {
    let bad = serde_json::json!({
        "kind": "run",
        "version": SCHEMA_VERSION,
        "Bad Key": 1,
        "cluster_speed": 1000.0,
        "marked_speed_mflops": 1.0,
        "n": 34.5,
        "nodes": 2,
        "psi": {"labels": ["a", "b"], "values": [[1.0, 0.5], [1.0]]},
        "details": {"layout_efficiency": "0.98"},
        "rate": 3.0,
        "time_stats_s": {"mean": 1.0, "mean_ci95": [-0.5, 2.5]},
        "work_flop_ci95": [3.0, 2.0],
        "mean_ci": [1.0, 2.0],
        "counts": [1, 2],
        "speed_efficiency": 0.5,
        "speed_efficiency_ci95": [0.4, 0.6],
        "samples": 3.0,
    });
    let found = document_violations(&bad, "run");
    let expected = [
        "run.Bad Key: key not snake_case",
        "run.cluster_speed: retired key",
        "run.marked_speed_mflops: a marked speed is marked_speed_flops (or marked_speed_index)",
        "run.n: n is an integer, not 34.5",
        "run.nodes: nodes is a node-set string, not 2",
        "run.details.layout_efficiency: the number \"0.98\" is a string",
        "run.time_stats_s.mean_ci95: interval [-0.5,2.5] reaches below 0",
        "run.work_flop_ci95: interval [3.0,2.0] has low > high",
        "run.mean_ci: an interval is <name>_ci95",
        "run.counts[0]: a number with no unit",
        "run.samples: samples is an integer, not 3.0",
    ];
    for expected in expected {
        assert!(
            found.iter().any(|f| f == expected),
            "{expected} not in {found:?}"
        );
    }
    let at = |prefix: &str| found.iter().filter(|f| f.starts_with(prefix)).count();
    assert_eq!(at("run.psi: psi is a full 2 x 2"), 1, "{found:?}");
    assert_eq!(at("run.rate: a number with no unit suffix"), 1, "{found:?}");
    // Dimensionless names, units in suffixes and statistics under a unit pass.
    assert_eq!(at("run.speed_efficiency"), 0, "{found:?}");
    assert_eq!(at("run.time_stats_s.mean:"), 0, "{found:?}");

    let array = document_violations(&serde_json::json!([{"n": 1}]), "study");
    assert!(
        array.iter().any(|f| f.starts_with("study: kind is null")),
        "{array:?}"
    );
}

/// A calibration CSV: GE on two sunwulf configurations at three sizes, some 10% above what the
/// sunwulf preset's model gives.
const CALIBRATION_RUNS: &str = "configuration,nodes,kernel,n,time_s
C_2,\"server*2:1,sunblade:1\",ge,200,0.60
C_2,\"server*2:1,sunblade:1\",ge,300,1.05
C_2,\"server*2:1,sunblade:1\",ge,400,1.75
C_4,\"server*2:1,sunblade:3\",ge,200,1.05
C_4,\"server*2:1,sunblade:3\",ge,300,1.70
C_4,\"server*2:1,sunblade:3\",ge,400,2.45
";

#[test]
fn the_other_commands_json_follows_the_one_schema_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("runs.csv"), CALIBRATION_RUNS).unwrap();
    let json = |command: &str| {
        let args: Vec<&str> = command.split_whitespace().collect();
        let value = json_of(hetscale_in(d).args(&args));
        assert_schema(args[0], &value);
        value
    };
    json("paper --json");
    let reproduce = json("reproduce --only tpds-burg --json");
    let value = &reproduce["values"][0];
    let (tool, published) = (
        value["tool"].as_f64().unwrap(),
        value["published"].as_f64().unwrap(),
    );
    let percent = value["rel_err_percent"].as_f64().unwrap();
    assert!(
        (percent - 100.0 * (tool - published) / published).abs() < 1e-9,
        "{value}"
    );
    json("calibrate --runs runs.csv --platform sunwulf --json");
    json("calibrate --runs runs.csv --platform sunwulf --fit auto --json");
    let collectives = json("collectives --backend sim --platform ucf-cluster --json");
    assert_echoes(
        &collectives,
        &[("backend", "sim"), ("platform", "ucf-cluster")],
    );
    let sizes = collectives["rows"].as_array().unwrap();
    assert!(
        sizes
            .iter()
            .all(|r| r["size_bytes"].as_u64().is_some_and(|b| b % 1024 == 0))
    );
    let probe =
        json("probe --backend sim --platform sunwulf --nodes 8 --collectives --quick --json");
    assert_echoes(
        &probe,
        &[("backend", "sim"), ("platform", "sunwulf"), ("nodes", "8")],
    );
    json("platform list --json");
}

#[test]
fn a_planned_study_and_its_plan_follow_the_one_schema_too() {
    let dir = tempfile::tempdir().unwrap();
    write_planned_study(dir.path());
    let planned = json_of(
        hetscale_in(dir.path())
            .args(PLANNED_STUDY)
            .args(["--budget-s", "5"]),
    );
    assert_schema("study", &planned);
    let study = &planned["planned"][0];
    for key in [
        "cost_s",
        "precision_reached",
        "predicted",
        "steps",
        "width_by_cost",
    ] {
        assert!(!study[key].is_null(), "{key} in {study:#}");
    }
    for key in ["nodes", "p", "n", "n_ci95"] {
        assert!(
            study["predicted"][0].get(key).is_some(),
            "{key} in {study:#}"
        );
    }
    let plan = json_of(hetscale_in(dir.path()).args([
        "plan",
        "--from",
        "out/study.db",
        "--nodes",
        "16",
        "--precision",
        "0.1",
        "--json",
    ]));
    assert_schema("plan", &plan);
    assert!(
        plan["next"][0]["expected_gain"].as_f64().unwrap() > 0.0,
        "{plan:#}"
    );
}

#[test]
fn platform_json_gives_marked_speeds_in_flops_or_names_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = |args: &[&str]| {
        let value = json_of(hetscale_in(d).args(args));
        assert_schema("platform", &value);
        value
    };
    // Sunwulf's nodes are rated in Mflop/s: JPDC's C_2 (the server's two CPUs and a SunBlade)
    // is 62.05 Mflop/s.
    let machine = json(&[
        "platform",
        "show",
        "sunwulf",
        "--nodes",
        "server*2:1,sunblade:1",
        "--json",
    ]);
    assert_eq!(machine["nodes"], "server*2:1,sunblade:1", "{machine}");
    assert_eq!(machine["p"], 2);
    let flops = |v: &Value| v["marked_speed_flops"].as_f64().unwrap();
    assert!((flops(&machine) - 62.05e6).abs() < 1e3, "{machine}");
    let (server, sunblade) = (&machine["node"][0], &machine["node"][1]);
    assert_eq!(
        flops(server) + flops(sunblade),
        flops(&machine),
        "{machine}"
    );
    let share = server["share"].as_f64().unwrap();
    assert!(
        (share - flops(server) / flops(&machine)).abs() < 1e-12,
        "{machine}"
    );
    let platform = json(&["platform", "show", "sunwulf", "--json"]);
    assert_eq!(
        2.0 * flops(&platform["node"][0]),
        flops(server),
        "{platform}"
    );
    let summary = json(&["platform", "validate", "sunwulf", "--json"]);
    assert_eq!(summary["speed_unit"], "Mflop/s");
    assert!(
        summary["marked_speed_flops"].as_f64().unwrap() > 1e9,
        "{summary}"
    );

    // The UCF cluster's speeds are BYTEmark indices, not a rate: no flop/s to give.
    let machine = json(&[
        "platform",
        "show",
        "ucf-cluster",
        "--nodes",
        "all",
        "--json",
    ]);
    assert_eq!(machine["speed_unit"], "BYTEmark Integer index");
    assert!(
        machine["marked_speed_index"].as_f64().unwrap() > 0.0,
        "{machine}"
    );
    assert!(machine.get("marked_speed_flops").is_none(), "{machine}");
    let platform = json(&["platform", "show", "ucf-cluster", "--json"]);
    assert!(
        platform["node"][0]["marked_speed_index"].as_f64().unwrap() > 0.0,
        "{platform}"
    );
}
