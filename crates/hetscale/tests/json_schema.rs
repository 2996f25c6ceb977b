//! Every command's `--json` follows the one schema the README's "JSON output" section states:
//! snake_case keys, units in the key names (`marked_speed_flops` in flop/s, `time_s`,
//! `work_flop`), numbers as numbers, `nodes` a node-set string beside the count `p`, `n` an
//! integer, psi a full square matrix.

mod common;

use common::{SMALL_GE, hetscale_in, json_of, spec_dir};
use serde_json::Value;

/// Keys of the old, mixed schema that must not come back.
const RETIRED: [&str; 4] = [
    "cluster_speed",
    "cluster_speed_flops",
    "marked_speed",
    "work",
];

/// Checks `value` (at `path`) against the schema; returns the violations.
fn violations(value: &Value, path: &str) -> Vec<String> {
    let mut found = Vec::new();
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let at = format!("{path}.{key}");
                let snake = key
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    && key.starts_with(|c: char| c.is_ascii_lowercase());
                if !snake {
                    found.push(format!("{at}: key not snake_case"));
                }
                if RETIRED.contains(&key.as_str()) {
                    found.push(format!("{at}: retired key"));
                }
                let speed_keys = ["marked_speed_flops", "marked_speed_index"];
                if key.contains("marked_speed") && !speed_keys.iter().any(|k| key.starts_with(k)) {
                    found.push(format!(
                        "{at}: a marked speed is marked_speed_flops (or marked_speed_index)"
                    ));
                }
                match key.as_str() {
                    "n" if !(v.is_u64() || v.is_null()) => {
                        found.push(format!("{at}: n is an integer, not {v}"));
                    }
                    "nodes" if !v.is_string() => {
                        found.push(format!("{at}: nodes is a node-set string, not {v}"));
                    }
                    "p" if !v.is_u64() => found.push(format!("{at}: p is a count, not {v}")),
                    "psi" | "psi_ci95" if !v.is_null() => found.extend(square(v, &at)),
                    "details" => found.extend(numbers_as_numbers(v, &at)),
                    _ => {}
                }
                found.extend(violations(v, &at));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                found.extend(violations(v, &format!("{path}[{i}]")));
            }
        }
        _ => {}
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

fn assert_schema(what: &str, value: &Value) {
    let found = violations(value, what);
    assert!(found.is_empty(), "{}", found.join("\n"));
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
    assert_eq!(run["nodes"], "2", "{run}");
    assert_eq!(run["p"], 2);
    assert_eq!(
        run["marked_speed_flops"], 2e9,
        "two local cores at 1000 Mflop/s"
    );
    assert!(run["details"]["layout_efficiency"].is_f64(), "{run}");

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
        "--json",
    ];
    let command = json_of(hetscale_in(d).args(command));
    assert_schema("run --command", &command);
    assert_eq!(command["marked_speed_flops"], 1e9, "{command}");
    assert_eq!(command["nodes"], "1");

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
    assert!(
        bench["marked_speed_flops"].as_f64().unwrap() > 1e6,
        "{bench}"
    );

    let study =
        json_of(hetscale_in(d).args(["study", "spec.toml", "--out", "out", "--json", "--quiet"]));
    assert_schema("study", &study);
    let configuration = &study[0]["configurations"][0];
    assert!(
        configuration["nodes"].is_string() && configuration["p"].is_u64(),
        "{configuration}"
    );

    let export = json_of(hetscale_in(d).args(["export", "out/study.db", "--format", "json"]));
    assert_schema("export", &export);
    assert!(
        export[0]["nodes"].is_string() && export[0]["p"].is_u64(),
        "{}",
        export[0]
    );
}

#[test]
fn the_check_finds_each_kind_of_violation() {
    let bad = serde_json::json!({
        "Bad Key": 1,
        "cluster_speed": 1000.0,
        "marked_speed_mflops": 1.0,
        "n": 34.5,
        "nodes": 2,
        "psi": {"labels": ["a", "b"], "values": [[1.0, 0.5], [1.0]]},
        "details": {"layout_efficiency": "0.98"},
    });
    let found = violations(&bad, "x");
    for expected in [
        "x.Bad Key: key not snake_case",
        "x.cluster_speed: retired key",
        "x.marked_speed_mflops: a marked speed is marked_speed_flops (or marked_speed_index)",
        "x.n: n is an integer, not 34.5",
        "x.nodes: nodes is a node-set string, not 2",
        "x.details.layout_efficiency: the number \"0.98\" is a string",
    ] {
        assert!(
            found.iter().any(|f| f == expected),
            "{expected} not in {found:?}"
        );
    }
    assert!(
        found
            .iter()
            .any(|f| f.starts_with("x.psi: psi is a full 2 x 2")),
        "{found:?}"
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
    for command in [
        "paper --json",
        "reproduce --only tpds-burg --json",
        "calibrate --runs runs.csv --platform sunwulf --json",
        "calibrate --runs runs.csv --platform sunwulf --fit auto --json",
        "collectives --backend sim --platform ucf-cluster --json",
        "probe --backend sim --platform sunwulf --nodes 8 --collectives --quick --json",
        "platform list --json",
    ] {
        let args: Vec<&str> = command.split_whitespace().collect();
        assert_schema(command, &json_of(hetscale_in(d).args(&args)));
    }
}

#[test]
fn platform_json_gives_marked_speeds_in_flops_or_names_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = |args: &[&str]| {
        let value = json_of(hetscale_in(d).args(args));
        assert_schema(&args.join(" "), &value);
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
