//! `hetscale predict --runs FILE.csv`: the scaling model fitted to runs measured anywhere (a
//! program hetscale never ran, known by its work formula) predicts larger configurations:
//! on runs that follow a known law, it finds the law's N and T there.

mod common;

use common::{hetscale, hetscale_in, json_of, one_line_error, succeeded};

/// Eight nodes of four speeds, Mflop/s.
const SPEEDS: [f64; 8] = [100.0, 80.0, 60.0, 40.0, 100.0, 80.0, 60.0, 40.0];
/// The law's overhead, s: `K n^2 p`.
const K: f64 = 1e-5;

fn platform_toml() -> String {
    let mut text = String::from(
        "name = \"toy\"\nspeed_unit = \"Mflop/s\"\n[network]\ng_s_per_byte = 1e-8\nL = { base_s = 1e-4 }\n",
    );
    for (i, speed) in SPEEDS.iter().enumerate() {
        text.push_str(&format!(
            "\n[[node]]\nname = \"h{}\"\nkind = \"k{i}\"\nmarked_speed = {speed}\ncpus = 1\nr = 1.0\n",
            i + 1
        ));
    }
    text
}

/// The first `p` hosts, `h1,h2,...`, and their marked speed, flop/s.
fn hosts(p: usize) -> (String, f64) {
    let names: Vec<String> = (1..=p).map(|i| format!("h{i}")).collect();
    (names.join(","), SPEEDS[..p].iter().sum::<f64>() * 1e6)
}

/// The law's time of size `n` on the first `p` hosts: `W = 2 n^3` at their marked speed plus
/// `K n^2 p`.
fn law_time(n: f64, p: usize) -> f64 {
    2.0 * n.powi(3) / hosts(p).1 + K * n * n * p as f64
}

/// The runs of the law on 1, 2 and 3 hosts, 3 repetitions per size 2% apart.
fn runs_csv(program: &str) -> String {
    runs_of(program, law_time)
}

/// The runs of `time(n, p)` on 1, 2 and 3 hosts, 3 repetitions per size 2% apart.
fn runs_of(program: &str, time: impl Fn(f64, usize) -> f64) -> String {
    runs_on(1..=3, program, time)
}

/// The runs of `time(n, p)` on the first `p` hosts for each `p` of `counts`.
fn runs_on(
    counts: std::ops::RangeInclusive<usize>,
    program: &str,
    time: impl Fn(f64, usize) -> f64,
) -> String {
    let mut csv = String::from("configuration,nodes,kernel,n,time_s\n");
    for p in counts {
        for n in [200, 400, 800, 1200, 1600] {
            for repetition in [0.98, 1.0, 1.02] {
                let time = time(f64::from(n), p) * repetition;
                csv.push_str(&format!("C_{p},\"{}\",{program},{n},{time}\n", hosts(p).0));
            }
        }
    }
    csv
}

/// `predict` on the runs of [`dir_with`], a program of work `2 n^3`.
const PREDICT_RUNS: [&str; 7] = [
    "predict",
    "--runs",
    "runs.csv",
    "--work",
    "2*n^3",
    "--platform",
    "toy.toml",
];

/// The one-line error of `predict` (its `args`) given `option value`, asked about the first
/// 4 hosts at `target`.
fn refused_on_four_hosts(
    d: &std::path::Path,
    args: &[&str],
    option: &str,
    value: &str,
    target: &str,
) -> String {
    one_line_error(hetscale_in(d).args(args).args([
        option,
        value,
        "--nodes",
        "h1,h2,h3,h4",
        "--target",
        target,
    ]))
}

/// A directory holding the toy platform (`toy.toml`) and `runs` (`runs.csv`).
fn dir_with(runs: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toy.toml"), platform_toml()).unwrap();
    std::fs::write(dir.path().join("runs.csv"), runs).unwrap();
    dir
}

#[test]
fn a_programs_runs_from_a_file_predict_the_laws_size_and_time_on_more_hosts() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let target = 0.3;
    let (four, eight) = (hosts(4).0, hosts(8).0);
    let json = json_of(hetscale_in(d).args(PREDICT_RUNS).args([
        "--nodes", &four, "--nodes", &eight, "--target", "0.3", "--json",
    ]));
    assert_eq!(json["runs"], "runs.csv", "{json}");
    assert_eq!(json["fitted_on"].as_array().unwrap().len(), 3, "{json}");
    for (point, p) in json["points"].as_array().unwrap().iter().zip([4, 8]) {
        // E_s = 1 / (1 + K p C / (2 n)), so it holds the target at n = k E / (1 - E).
        let k = K * p as f64 * hosts(p).1 / 2.0;
        let exact = k * target / (1.0 - target);
        let n = point["n"].as_f64().unwrap();
        let [lo, hi] = [0, 1].map(|i| point["n_ci95"][i].as_f64().unwrap());
        assert!(
            (n / exact - 1.0).abs() < 0.05 && lo <= exact && exact <= hi,
            "p = {p}: N = {n} [{lo}, {hi}], the law's {exact:.0}"
        );
        let t = point["time_s"].as_f64().unwrap();
        let law = law_time(n, p);
        assert!(
            (t / law - 1.0).abs() < 0.05,
            "p = {p}: T = {t}, the law's {law} at N = {n}"
        );
    }
}

#[test]
fn a_configuration_no_size_in_the_range_reaches_is_named_and_the_others_answered() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let (four, eight) = (hosts(4).0, hosts(8).0);
    // The law holds E_s = 0.3 at N = 2400 on 4 hosts and 9600 on 8: --n-max 5000 is between.
    let asked = [
        "--nodes", &four, "--nodes", &eight, "--target", "0.3", "--n-max", "5000",
    ];
    let json = json_of(hetscale_in(d).args(PREDICT_RUNS).args(asked).arg("--json"));
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{json}");
    assert_eq!(points[0]["p"], 4, "{json}");
    let n = points[0]["n"].as_f64().unwrap();
    assert!((n / 2400.0 - 1.0).abs() < 0.05, "N = {n}, the law's 2400");
    let unreached = json["unreached"].as_array().unwrap();
    assert_eq!(unreached.len(), 1, "{json}");
    assert_eq!(unreached[0]["nodes"], eight.as_str(), "{json}");
    assert!(
        unreached[0]["reason"].as_str().unwrap().contains("--n-max"),
        "{json}"
    );
    let text = common::stdout_of(hetscale_in(d).args(PREDICT_RUNS).args(asked));
    let last = text.lines().last().unwrap();
    assert!(
        text.contains(&format!("not reached on {eight} (p = 8): "))
            && last.contains("on 4 nodes N must grow to")
            && last.ends_with(&format!(
                "no size in the range holds it on {eight} (see the reason given for it)"
            )),
        "{text}"
    );
    // Asked about 8 hosts alone, the answer is the reason, one line.
    let err = one_line_error(
        hetscale_in(d)
            .args(PREDICT_RUNS)
            .args(["--nodes", &eight, "--target", "0.3", "--n-max", "5000"]),
    );
    assert!(err.contains("--n-max"), "{err}");
}

#[test]
fn the_time_at_a_fixed_size_is_the_laws_with_an_interval_that_holds_it() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let (four, eight) = (hosts(4).0, hosts(8).0);
    let json = json_of(hetscale_in(d).args(PREDICT_RUNS).args([
        "--nodes",
        &four,
        "--nodes",
        &eight,
        "--time-at",
        "1000",
        "--json",
    ]));
    assert_eq!(json["n"], 1000, "{json}");
    for (point, p) in json["points"].as_array().unwrap().iter().zip([4, 8]) {
        let law = law_time(1000.0, p);
        let t = point["time_s"].as_f64().unwrap();
        let [lo, hi] = [0, 1].map(|i| point["time_s_ci95"][i].as_f64().unwrap());
        assert!(
            (t / law - 1.0).abs() < 0.05 && lo <= law && law <= hi,
            "p = {p}: T = {t} [{lo}, {hi}], the law's {law}"
        );
        let e_s = point["speed_efficiency"].as_f64().unwrap();
        assert!((e_s - 2e9 / (t * hosts(p).1)).abs() < 1e-9, "{point}");
    }
    let text = common::stdout_of(hetscale_in(d).args(PREDICT_RUNS).args([
        "--nodes",
        &four,
        "--time-at",
        "1000",
    ]));
    assert!(
        text.contains("T at N = 1000") && text.contains("h1,h2,h3,h4"),
        "{text}"
    );
    // Far beyond the sizes run (1600 at most), the interval says so.
    let far = common::stdout_of(hetscale_in(d).args(PREDICT_RUNS).args([
        "--nodes",
        &four,
        "--time-at",
        "100000",
    ]));
    assert!(far.contains("caution") && far.contains("1600"), "{far}");
    // A size that is none, and a kernel's model, which is not fitted to runs.
    let err = one_line_error(hetscale_in(d).args(PREDICT_RUNS).args([
        "--nodes",
        &four,
        "--time-at",
        "0",
    ]));
    assert!(err.contains("--time-at 0 is not a problem size"), "{err}");
    let err =
        one_line_error(hetscale_in(d).args(["predict", "mm", "--nodes", "4", "--time-at", "64"]));
    assert!(err.contains("--time-at asks the scaling model"), "{err}");
}

#[test]
fn a_time_far_below_the_sizes_run_is_cautioned_as_far_above_them_is() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let time_at = |n: &str| {
        json_of(hetscale_in(d).args(PREDICT_RUNS).args([
            "--nodes",
            &hosts(4).0,
            "--time-at",
            n,
            "--json",
        ]))["points"][0]["cautions"]
            .to_string()
    };
    // The runs' sizes are 200 to 1600: 100 is within 8x of them, 1 is 200x below.
    assert!(!time_at("100").contains("smallest fitted size"));
    let below = time_at("1");
    assert!(
        below.contains(
            "N = 1 is 200x below the smallest fitted size (200), beyond 8x: the overhead's form in n is extrapolated downwards"
        ),
        "{below}"
    );
}

/// The law's time with an overhead that turns negative past 5 hosts, `1e-5 n^2 p (5 - p)`.
fn turning_negative_time(n: f64, p: usize) -> f64 {
    let p = p as f64;
    2.0 * n.powi(3) / hosts(p as usize).1 + 1e-5 * n * n * p * (5.0 - p)
}

#[test]
fn an_overhead_that_turns_negative_is_named_with_runs_as_without_them() {
    let overhead = ["--overhead", "1e-5*n^2*p*(5-p)"];
    let eight = hosts(8).0;
    // Runs that follow the overhead (its term is chosen) and runs that do not (it is only a
    // runner-up): either way the declared model is the user's and wrong on 8 hosts.
    for runs in [runs_of("solver", turning_negative_time), runs_csv("solver")] {
        let dir = dir_with(&runs);
        let d = dir.path();
        for question in [["--target", "0.3"], ["--time-at", "1000"]] {
            let error = |with_runs: bool| {
                let mut command = hetscale_in(d);
                if with_runs {
                    command.args(PREDICT_RUNS);
                } else {
                    command.args(["predict", "--work", "2*n^3", "--platform", "toy.toml"]);
                }
                one_line_error(
                    command
                        .args(overhead)
                        .args(["--nodes", &eight])
                        .args(question),
                )
            };
            let without = error(false);
            assert!(
                without.contains("overhead \"1e-5*n^2*p*(5-p)\" is -")
                    && without.contains("p = 8: it must be finite and not negative"),
                "{without}"
            );
            assert_eq!(error(true), without, "{question:?}");
        }
    }
}

#[test]
fn a_target_the_largest_run_configuration_never_holds_still_predicts_the_others_without_psi() {
    // Half the slowest node's excess share as well: E_s on 3 hosts tends to 0.86, on one to 1.
    let imbalanced = |n: f64, p: usize| {
        let (w, c) = (2.0 * n.powi(3), hosts(p).1);
        let slowest = SPEEDS[..p].iter().fold(f64::INFINITY, |a, &b| a.min(b)) * 1e6;
        law_time(n, p) + 0.5 * (w / (p as f64 * slowest) - w / c)
    };
    let dir = dir_with(&runs_of("solver", imbalanced));
    let d = dir.path();
    let args = ["--nodes", "h1", "--target", "0.9"];
    let json = json_of(hetscale_in(d).args(PREDICT_RUNS).args(args).arg("--json"));
    assert!(json["base"]["n_reference"].is_null(), "{json}");
    let point = &json["points"][0];
    assert!(point["psi_from_base"].is_null(), "{point}");
    // On one host E_s = 1 / (1 + K C / (2 n)) holds 0.9 at n = 9 K C / 2.
    let exact = 9.0 * K * hosts(1).1 / 2.0;
    let n = point["n"].as_f64().unwrap();
    assert!(
        (n / exact - 1.0).abs() < 0.05,
        "N = {n}, the law's {exact:.0}"
    );
    let text = common::stdout_of(hetscale_in(d).args(PREDICT_RUNS).args(args));
    assert!(
        text.contains("no psi: the model holds E_s = 0.9 at no size on the largest measured configuration, C_3"),
        "{text}"
    );
}

/// A halo exchange's law: `W = 100 n^2` at the marked speed plus 500 exchanges of a row of
/// `n` doubles with each neighbour on the toy network (`g` 1e-8 s/byte, `L` 1e-4 s, no `o`):
/// `500 (g 8 n min(p - 1, 2) + L)`, which grows with `p` only up to 3 hosts.
fn halo_time(n: f64, p: usize) -> f64 {
    let h = 8.0 * n * (p.saturating_sub(1).min(2)) as f64;
    100.0 * n * n / hosts(p).1 + 500.0 * (1e-8 * h + 1e-4)
}

#[test]
fn a_declared_communication_carries_runs_on_one_and_two_hosts_to_four_and_eight() {
    let dir = dir_with(&runs_on(1..=2, "jacobi", halo_time));
    let d = dir.path();
    let target = 0.8;
    let predict = ["predict", "--runs", "runs.csv", "--platform", "toy.toml"];
    let json = json_of(hetscale_in(d).args(predict).args([
        "--work",
        "100*n^2",
        "--communication",
        "500*neighbours(8*n)",
        "--nodes",
        &hosts(4).0,
        "--nodes",
        &hosts(8).0,
        "--target",
        "0.8",
        "--json",
    ]));
    assert!(
        json["model"]["formula"]
            .as_str()
            .unwrap()
            .contains("T_o,spec"),
        "{json}"
    );
    for (point, p) in json["points"].as_array().unwrap().iter().zip([4, 8]) {
        // The law's N: E_s = 100 n^2 / (T C) rises with n; bisect for the target.
        let e_s = |n: f64| 100.0 * n * n / (halo_time(n, p) * hosts(p).1);
        let (mut lo, mut hi) = (1.0_f64, 1e7_f64);
        while hi / lo > 1.0 + 1e-9 {
            let mid = (lo * hi).sqrt();
            if e_s(mid) < target {
                lo = mid
            } else {
                hi = mid
            }
        }
        let n = point["n"].as_f64().unwrap();
        assert!(
            (n / hi - 1.0).abs() < 0.05,
            "p = {p}: N = {n}, the law's {hi:.0}"
        );
        let t = point["time_s"].as_f64().unwrap();
        let law = halo_time(n, p);
        assert!(
            (t / law - 1.0).abs() < 0.05,
            "p = {p}: T = {t}, the law's {law}"
        );
    }
    // A declaration that is not one is refused in one line.
    let err = refused_on_four_hosts(d, &PREDICT_RUNS, "--communication", "500*halo(8*n)", "0.8");
    assert!(
        err.contains("\"halo\" at character 5 is no pattern") && err.contains("neighbours"),
        "{err}"
    );
    // Bytes that are no size on the runs: an error, not a hypothesis left out.
    let err = refused_on_four_hosts(
        d,
        &PREDICT_RUNS,
        "--communication",
        "500*neighbours(8*(1000-n))",
        "0.8",
    );
    assert!(
        err.contains("the bytes of neighbours") && err.contains("not negative"),
        "{err}"
    );
}

/// [`halo_time`]'s exchanges with the work split equally: every host gets `W/p`, so the
/// slowest sets the compute, `W/(p C_min)`, at a third of the marked speed.
fn equal_split_time(n: f64, p: usize) -> f64 {
    let slowest = SPEEDS[..p].iter().copied().fold(f64::INFINITY, f64::min) * 1e6;
    let h = 8.0 * n * (p.saturating_sub(1).min(2)) as f64;
    3.0 * 100.0 * n * n / (p as f64 * slowest) + 500.0 * (1e-8 * h + 1e-4)
}

/// `predict --runs` of [`equal_split_time`]'s runs on 1 and 2 hosts, T at N = 1000 on 4 and 8,
/// with `extra` arguments: the predicted times.
fn equal_split_times(d: &std::path::Path, extra: &[&str]) -> Vec<f64> {
    let json = json_of(hetscale_in(d).args(PREDICT_RUNS_100).args(extra).args([
        "--communication",
        "500*neighbours(8*n)",
        "--nodes",
        &hosts(4).0,
        "--nodes",
        &hosts(8).0,
        "--time-at",
        "1000",
        "--json",
    ]));
    json["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| point["time_s"].as_f64().unwrap())
        .collect()
}

/// `predict` on runs of a program of work `100 n^2`.
const PREDICT_RUNS_100: [&str; 7] = [
    "predict",
    "--runs",
    "runs.csv",
    "--work",
    "100*n^2",
    "--platform",
    "toy.toml",
];

#[test]
fn a_declared_equal_partition_carries_the_slowest_host_to_four_and_eight() {
    // Hosts of 100 and 80 Mflop/s in the runs, down to 40 on 4 and 8: an equal split's
    // compute grows from 1.125 W/C to 1.75 W/C.
    let dir = dir_with(&runs_on(1..=2, "jacobi", equal_split_time));
    let d = dir.path();
    let declared = equal_split_times(d, &["--partition", "equal"]);
    for (t, p) in declared.iter().zip([4, 8]) {
        let law = equal_split_time(1000.0, p);
        assert!(
            (t / law - 1.0).abs() < 0.05,
            "p = {p}: T = {t}, the law's {law}"
        );
    }
    let err = refused_on_four_hosts(d, &PREDICT_RUNS_100, "--partition", "rows", "0.5");
    assert!(
        err.contains("partition \"rows\"") && err.contains("\"equal\""),
        "{err}"
    );
}

#[test]
fn a_declared_programs_calibrated_model_predicts_four_and_eight_hosts() {
    // The equal split at a third of the marked speed, its halo exchange and a start-up of
    // 0.05 s: calibrate fits the rate and the start-up to the runs on 1 and 2 hosts, and
    // approach 3 on the calibrated platform charges the halo on 4 and 8.
    let law = |n: f64, p: usize| equal_split_time(n, p) + 0.05;
    let dir = dir_with(&runs_on(1..=2, "jacobi", law));
    let d = dir.path();
    let declared = [
        "--work",
        "100*n^2",
        "--communication",
        "500*neighbours(8*n)",
        "--partition",
        "equal",
    ];
    let calibrate = hetscale_in(d)
        .args(["calibrate", "--runs", "runs.csv", "--platform", "toy.toml"])
        .args(declared)
        .args(["--write-platform", "calibrated.toml", "--json"])
        .output()
        .unwrap();
    assert!(calibrate.status.success(), "{calibrate:?}");
    let calibrated = std::fs::read_to_string(d.join("calibrated.toml")).unwrap();
    assert!(calibrated.contains("declared = true"), "{calibrated}");
    let json = json_of(
        hetscale_in(d)
            .args(["predict", "--program", "jacobi"])
            .args(declared)
            .args([
                "--platform",
                "calibrated.toml",
                "--nodes",
                &hosts(4).0,
                "--nodes",
                &hosts(8).0,
                "--time-at",
                "1000",
                "--json",
            ]),
    );
    for (point, p) in json["points"].as_array().unwrap().iter().zip([4, 8]) {
        let t = point["time_s"].as_f64().unwrap();
        let truth = law(1000.0, p);
        assert!(
            (t / truth - 1.0).abs() < 0.03,
            "p = {p}: T = {t}, the law's {truth}"
        );
        let [lo, hi] = [0, 1].map(|i| point["time_s_ci95"][i].as_f64().unwrap());
        assert!(lo <= t && t <= hi, "{point}");
    }
    // Approach 3's N on the calibrated platform: the law holds the target there.
    let json = json_of(
        hetscale_in(d)
            .args(["predict", "--program", "jacobi"])
            .args(declared)
            .args([
                "--platform",
                "calibrated.toml",
                "--nodes",
                &hosts(4).0,
                "--target",
                "0.1",
                "--json",
            ]),
    );
    let n = json["points"][0]["n"].as_f64().unwrap();
    let e_s = 100.0 * n * n / (law(n, 4) * hosts(4).1);
    assert!(
        (e_s / 0.1 - 1.0).abs() < 0.03,
        "N = {n}: the law's E_s there is {e_s}"
    );
    // Another model under the calibrated name is refused: the rate belongs to the declared one.
    let err = one_line_error(hetscale_in(d).args([
        "predict",
        "--program",
        "jacobi",
        "--work",
        "n",
        "--overhead",
        "0",
        "--platform",
        "calibrated.toml",
        "--nodes",
        &hosts(4).0,
        "--time-at",
        "1000",
    ]));
    assert!(
        err.contains("was calibrated on platform")
            && err
                .contains("work = 100*n^2; communication = 500*neighbours(8*n); partition = equal")
            && err.contains("not work = n; partition = speed"),
        "{err}"
    );
    // A name the platform holds no calibration of is refused, not taken at the marked speed.
    let err = one_line_error(
        hetscale_in(d)
            .args(["predict", "--program", "jacobi"])
            .args(declared)
            .args([
                "--platform",
                "toy.toml",
                "--nodes",
                "h1,h2",
                "--time-at",
                "1000",
            ]),
    );
    assert!(
        err.contains("program \"jacobi\"") && err.contains("calibrate"),
        "{err}"
    );
    // So is a study's, before it runs anything.
    let err = one_line_error(hetscale_in(d).args([
        "study",
        "--command",
        "echo elapsed: 1 s",
        "--work",
        "n",
        "--overhead",
        "0",
        "--program",
        "jacobi",
        "--platform",
        "toy.toml",
        "--nodes",
        "h1",
        "--target",
        "0.5",
        "--n-max",
        "100",
        "--out",
        "refused",
    ]));
    assert!(
        err.contains("program \"jacobi\": platform toy has no compute entry"),
        "{err}"
    );
    // It leaves nothing behind: not the database it opened, nor the --out it made.
    assert!(!d.join("refused").exists(), "refused/ was left behind");
    // A kernel's parameter is refused for a declared program, in one line.
    let err = one_line_error(
        hetscale_in(d)
            .args(["calibrate", "--runs", "runs.csv", "--platform", "toy.toml"])
            .args(declared)
            .args(["--fit", "rate_fraction,half_work"]),
    );
    assert!(
        err.contains("half_work") && err.contains("declared program"),
        "{err}"
    );
}

#[test]
fn a_formula_error_says_what_is_wrong_where_and_an_example_of_its_own_kind() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let refused = |declared: &[&str]| {
        one_line_error(
            hetscale_in(d)
                .args(["predict", "--platform", "toy.toml", "--nodes", "h1,h2"])
                .args(["--target", "0.3"])
                .args(declared),
        )
    };
    let work = refused(&["--work", "foo(n)", "--overhead", "0"]);
    assert!(
        work.starts_with(
            "hetscale: --work \"foo(n)\": \"foo\" at character 1 is no function (the functions are abs, "
        ) && work.ends_with("write the work in flop in n and p, e.g. 2*n^3 + 4*p*n^2"),
        "{work}"
    );
    let overhead = refused(&["--work", "2*n^3", "--overhead", "1e-4*p*log2(p"]);
    assert!(
        overhead.starts_with(
            "hetscale: --overhead \"1e-4*p*log2(p\": \"(\" at character 12 is never closed"
        ) && overhead.ends_with("write the overhead in seconds in n and p, e.g. 1e-4*p*log2(p)"),
        "{overhead}"
    );
    let pattern = refused(&["--work", "2*n^3", "--overhead", "neighbours(8)"]);
    assert!(
        pattern.starts_with("hetscale: --overhead \"neighbours(8)\": \"neighbours\" at character 1 is a communication pattern")
            && pattern.contains("e.g. 100*neighbours(8*n)"),
        "{pattern}"
    );
    let steps = "neighbours(8*n) allreduce(8)";
    let communication = refused(&["--work", "2*n^3", "--communication", steps]);
    assert!(
        communication.starts_with(&format!(
            "hetscale: --communication \"{steps}\": \"allreduce(8)\" at character 17 follows the bytes of neighbours(...) with no ; between the steps"
        )) && communication.contains("e.g. 100*neighbours(8*n); allreduce(8)"),
        "{communication}"
    );
    for err in [&work, &overhead, &pattern, &communication] {
        assert!(!err.contains("wlog") && !err.contains("left:"), "{err}");
    }
    for err in [&overhead, &pattern, &communication] {
        assert!(
            !err.contains("2*n^3 + 4*p*n^2"),
            "the work's example: {err}"
        );
    }
}

#[test]
fn calibrating_a_declared_program_checks_its_node_sets_then_asks_for_its_overhead_in_options() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let calibrate = ["calibrate", "--runs", "runs.csv", "--platform", "toy.toml"];
    let err = one_line_error(hetscale_in(d).args(calibrate).args(["--work", "2*n^3"]));
    assert!(
        err.contains("give --overhead FORMULA") && err.contains("--communication STEPS"),
        "{err}"
    );
    assert!(
        !err.contains("[command]") && !err.contains("overhead = "),
        "{err}"
    );
    // A node set the platform lacks, on a configuration after good ones, is reported first.
    let mut runs = runs_csv("solver");
    runs.push_str("C_9,h9,solver,300,0.5\n");
    std::fs::write(d.join("runs.csv"), runs).unwrap();
    let err = one_line_error(hetscale_in(d).args(calibrate).args(["--work", "2*n^3"]));
    assert!(err.contains("configuration C_9: nodes \"h9\""), "{err}");
    // The synopsis says --work needs --overhead or --communication.
    let help = common::stdout_of(hetscale().args(["calibrate", "--help"]));
    assert!(
        help.contains(
            "hetscale calibrate --runs <FILE.csv> --work <FORMULA> <--overhead <FORMULA> | --communication <STEPS>>"
        ),
        "{help}"
    );
}

#[test]
fn runs_from_a_file_name_their_program_or_are_refused_in_one_line() {
    let dir = dir_with(&runs_csv("solver"));
    let d = dir.path();
    let args = |extra: &[&str]| {
        let mut all = vec![
            "predict",
            "--runs",
            "runs.csv",
            "--platform",
            "toy.toml",
            "--nodes",
            "h1,h2,h3,h4",
            "--target",
            "0.3",
        ];
        all.extend_from_slice(extra);
        all.into_iter().map(String::from).collect::<Vec<_>>()
    };
    // Not a kernel, and no work formula.
    let err = one_line_error(hetscale_in(d).args(args(&[])));
    assert!(
        err.contains("solver") && err.contains("--work FORMULA"),
        "{err}"
    );
    // Two programs in one file.
    let mut mixed = runs_csv("solver");
    mixed.push_str("C_1,h1,other,300,0.5\n");
    std::fs::write(d.join("runs.csv"), mixed).unwrap();
    let err = one_line_error(hetscale_in(d).args(args(&["--work", "2*n^3"])));
    assert!(err.contains("several programs (other, solver)"), "{err}");
    // A work formula that is not one.
    std::fs::write(d.join("runs.csv"), runs_csv("solver")).unwrap();
    let err = one_line_error(hetscale_in(d).args(args(&["--work", "2*n^"])));
    assert!(
        err.contains(": --work \"2*n^\": \"^\" at character 4 has nothing after it"),
        "{err}"
    );
    // A node set the platform does not have.
    std::fs::write(
        d.join("runs.csv"),
        "configuration,nodes,kernel,n,time_s\nC_1,h9,s,300,0.5\n",
    )
    .unwrap();
    let err = one_line_error(hetscale_in(d).args(args(&["--work", "2*n^3"])));
    assert!(err.contains("h9"), "{err}");
    // A tolerance that is not one.
    let err = one_line_error(hetscale_in(d).args(args(&["--work", "2*n^3", "--tolerance", "nan"])));
    assert!(
        err.contains("--tolerance NaN is not a relative tolerance"),
        "{err}"
    );
}

#[test]
fn rows_that_repeat_an_earlier_row_field_for_field_are_counted_once_and_said_so() {
    // The law's runs, and three repetitions below the noise floor that timed the same, told
    // apart by their numbers (as `hetscale export` writes them): three runs, not copies.
    let mut runs = String::from("configuration,nodes,kernel,n,time_s,repetition\n");
    for line in runs_csv("solver").lines().skip(1) {
        runs.push_str(&format!("{line},0\n"));
    }
    for repetition in 0..3 {
        runs.push_str(&format!("C_1,h1,solver,10,0.001,{repetition}\n"));
    }
    let rows = runs.lines().count() - 1;
    let predict = |runs: &str| {
        let dir = dir_with(runs);
        let out = succeeded(hetscale_in(dir.path()).args(PREDICT_RUNS).args([
            "--nodes",
            &hosts(4).0,
            "--target",
            "0.3",
            "--json",
        ]));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (json, String::from_utf8(out.stderr).unwrap())
    };
    let (once, said) = predict(&runs);
    assert!(!said.contains("cop"), "{said}");
    assert_eq!(once["excluded"].as_array().unwrap().len(), 3, "{once}");
    // The file concatenated with itself: every run twice.
    let twice = runs.clone() + runs.split_once('\n').unwrap().1;
    let (json, said) = predict(&twice);
    let warning = format!(
        "warning: runs.csv: {rows} rows of {} were copies of an earlier row, every field the same, and counted once",
        2 * rows
    );
    assert!(
        said.lines().filter(|l| l.contains("cop")).count() == 1 && said.contains(&warning),
        "{said}"
    );
    assert_eq!(json["excluded"], once["excluded"], "{json}");
    assert_eq!(json["points"], once["points"], "{json}");
    assert_eq!(json["model"], once["model"], "{json}");
}
