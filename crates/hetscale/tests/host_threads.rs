//! Real heterogeneous runs on this host, the quick form of the studies
//! `crates/hetscale-study/studies/host-threads-{mm,ge}.toml`: `mm` and `ge` computed for real
//! and verified on the `threads` backend with emulated speeds (one node at a core's speed, one
//! or two at half of it, so every configuration fits 2 cores), `hetscale calibrate` on the 1-
//! and 2-node runs, and the 3-node configuration predicted (`sim` on the calibrated platform)
//! and measured. The predicted approach takes the machine's `g`, `o` and `L(p)` from
//! `hetscale probe` on each configuration's nodes (a microbenchmark, no kernel run), and the
//! kernel's compute rate from the calibration.
//!
//! What these tests check is that the pipeline works end to end on real, verified runs: the
//! calibration reads the runs it was given, the platform it writes reproduces the model times
//! it reports, and the held-out prediction is a finite positive time. How close the
//! prediction comes (the held-out error) is printed, not asserted: on a shared 2-core host it
//! is a timing (under load, -60% to -85% whatever the model), and its accuracy target belongs
//! to a benchmark on a quiet machine, not to a test.

mod common;

use std::path::{Path, PathBuf};

use common::hetscale;
use serde_json::Value;

/// The platform of the host studies: `full` at a core's speed, `half` at half of it.
fn platform() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../hetscale-study/studies/host-threads.platform.toml")
}

/// The configurations calibrated on, and the one held out.
const CALIBRATION: [(&str, &str); 2] = [("C_1", "full:1"), ("C_2", "full:1,half:1")];
const HELD_OUT: (&str, &str) = ("C_3", "full:1,half:2");
/// Sizes of the quick form per kernel: runs of a few to a few tens of milliseconds, long
/// next to a thread's start-up, a few seconds in all.
fn sizes(kernel: &str) -> [usize; 3] {
    match kernel {
        "mm" => [256, 320, 384],
        _ => [192, 256, 320],
    }
}
/// Runs per calibration size; like the held-out configuration's, summarised by their median.
const REPETITIONS: usize = 3;
/// One kernel's check at a time: the configurations are sized to this host's 2 cores, and two
/// checks at once would measure each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// Runs of the held-out configuration: five give a 94% order-statistic interval of the
/// median, from the smallest to the largest.
const HELD_OUT_RUNS: usize = 5;

/// The median of `times` (an odd count).
fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// `hetscale ARGS` that must succeed, as JSON.
fn json_of(args: &[&str]) -> Value {
    common::json_of(hetscale().args(args))
}

/// `hetscale run KERNEL --platform PLATFORM --nodes NODES --n N --json` on the backend that
/// `backend` chooses (with its options).
fn run_json(kernel: &str, backend: &[&str], platform: &Path, nodes: &str, n: usize) -> Value {
    let n = n.to_string();
    let mut args = vec!["run", kernel];
    args.extend(backend);
    args.extend(["--platform", platform.to_str().unwrap(), "--nodes", nodes]);
    args.extend(["--n", &n, "--json"]);
    json_of(&args)
}

/// One verified run on `threads` with emulated speeds; its time, s.
fn measured_time(kernel: &str, platform: &Path, nodes: &str, n: usize) -> f64 {
    let backend = ["--backend", "threads", "--emulate-speeds"];
    let run = run_json(kernel, &backend, platform, nodes, n);
    assert_eq!(
        run["verification"]["passed"], true,
        "{kernel} on {nodes}, N = {n}: the result must verify: {run}"
    );
    run["time_s"].as_f64().unwrap()
}

/// The time `sim` predicts on the calibrated platform, s.
fn predicted_time(kernel: &str, platform: &Path, nodes: &str, n: usize) -> f64 {
    let backend = ["--backend", "sim", "--skip-compute"];
    run_json(kernel, &backend, platform, nodes, n)["time_s"]
        .as_f64()
        .unwrap()
}

/// The calibration runs as `hetscale calibrate` reads them: per configuration and size the
/// median of the repetitions, the statistic the held-out check compares with (and the one
/// studies and `hetscale run --runs` report). The fastest run would calibrate a model of an
/// unloaded host, then judge it against loaded medians: a gap the statistics make, not the
/// model.
fn calibration_runs(kernel: &str, platform: &Path) -> String {
    let mut csv = String::from("configuration,nodes,kernel,n,time_s\n");
    for (label, nodes) in CALIBRATION {
        for n in sizes(kernel) {
            let t = median(
                (0..REPETITIONS)
                    .map(|_| measured_time(kernel, platform, nodes, n))
                    .collect(),
            );
            csv += &format!("{label},\"{nodes}\",{kernel},{n},{t}\n");
        }
    }
    csv
}

/// The platform with this host's `g`, `o` and `L(p)` as `hetscale probe` measures them at
/// each configuration's `p`: the HBSP^1 parameters the predicted approach takes from the
/// machine (no kernel run of the held-out configuration). `L(3)` is what three node threads
/// on two cores pay per superstep, tens of microseconds against well under one at p = 2.
fn probed_platform(platform: &Path, dir: &Path) -> PathBuf {
    let probed = dir.join("probed.toml");
    for (_, nodes) in CALIBRATION.iter().chain([&HELD_OUT]) {
        let args = [
            "probe",
            "--platform",
            platform.to_str().unwrap(),
            "--nodes",
            nodes,
        ];
        let write = ["--write-platform", probed.to_str().unwrap(), "--json"];
        json_of(&[&args[..], &write[..]].concat());
    }
    probed
}

/// The largest relative error of the calibrated model on the runs it was fitted on, a fraction.
fn largest_residual(fit: &Value) -> f64 {
    fit["kernels"][0]["residuals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rel_err_percent"].as_f64().unwrap().abs() / 100.0)
        .fold(0.0, f64::max)
}

/// The calibration's leave-one-out error (each calibration run predicted by the fit of the
/// others), as `rms X%, largest Y%`, or why there is none.
fn leave_one_out(fit: &Value) -> String {
    let cv = &fit["kernels"][0]["cross_validation"];
    match (cv["rms_percent"].as_f64(), cv["max_abs_percent"].as_f64()) {
        (Some(rms), Some(largest)) => format!("rms {rms:.1}%, largest {largest:.1}%"),
        _ => "none (no run to spare)".into(),
    }
}

/// `hetscale calibrate` on `runs` from `platform`, written to `fitted`; the fit as JSON.
fn calibrate(runs: &Path, platform: &Path, fitted: &Path) -> Value {
    json_of(&[
        "calibrate",
        "--runs",
        runs.to_str().unwrap(),
        "--platform",
        platform.to_str().unwrap(),
        "--write-platform",
        fitted.to_str().unwrap(),
        "--json",
    ])
}

/// Checks that the calibration read `csv`'s runs and that the platform it wrote to `fitted`
/// reproduces, on `sim`, the model time it reported for each of them: the fit, the file and
/// the prediction are one model. Deterministic: no time is judged.
fn check_calibration_is_its_platform(kernel: &str, csv: &str, fit: &Value, fitted: &Path) {
    let residuals = fit["kernels"][0]["residuals"].as_array().unwrap();
    assert_eq!(residuals.len(), csv.lines().count() - 1, "{fit}");
    for (row, residual) in csv.lines().skip(1).zip(residuals) {
        let time: f64 = row.rsplit(',').next().unwrap().parse().unwrap();
        assert_eq!(
            residual["measured_s"].as_f64(),
            Some(time),
            "{row}: {residual}"
        );
        let (label, n) = (
            residual["configuration"].as_str().unwrap(),
            residual["n"].as_u64().unwrap(),
        );
        let nodes = CALIBRATION.iter().find(|(l, _)| *l == label).unwrap().1;
        let model = residual["model_s"].as_f64().unwrap();
        let replayed = predicted_time(kernel, fitted, nodes, n as usize);
        assert!(
            model.is_finite() && model > 0.0 && (replayed / model - 1.0).abs() < 1e-6,
            "{kernel} on {label}, N = {n}: calibrate reported {model} s, its platform gives {replayed} s"
        );
    }
}

/// Runs the held-out pipeline of one kernel and prints its held-out error: the prediction
/// from the probed platform and, beside it, from the platform as written (its network a
/// guess), each against C_3's measured median. Asserts what the pipeline must do, not how
/// close it comes (see the module's doc).
fn held_out_pipeline(kernel: &str) {
    let _alone = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let platform = platform();
    let runs = dir.path().join("runs.csv");
    let csv = calibration_runs(kernel, &platform);
    std::fs::write(&runs, &csv).unwrap();
    let probed = probed_platform(&platform, dir.path());
    let fitted = dir.path().join("fit.toml");
    let fit = calibrate(&runs, &probed, &fitted);
    check_calibration_is_its_platform(kernel, &csv, &fit, &fitted);
    let unprobed = dir.path().join("fit-as-written.toml");
    calibrate(&runs, &platform, &unprobed);
    let n = *sizes(kernel).last().unwrap();
    let mut times: Vec<f64> = (0..HELD_OUT_RUNS)
        .map(|_| measured_time(kernel, &platform, HELD_OUT.1, n))
        .collect();
    times.sort_by(f64::total_cmp);
    let median = median(times.clone());
    let (fastest, slowest) = (times[0], times[HELD_OUT_RUNS - 1]);
    let predicted = predicted_time(kernel, &fitted, HELD_OUT.1, n);
    let error = predicted / median - 1.0;
    let interval = (predicted / slowest - 1.0, predicted / fastest - 1.0);
    let as_written = predicted_time(kernel, &unprobed, HELD_OUT.1, n) / median - 1.0;
    let in_sample = largest_residual(&fit);
    println!(
        "held-out error of {kernel} on {} ({}), N = {n}: {:+.1}% [{:+.1}%, {:+.1}%] (94% interval of the median from {HELD_OUT_RUNS} runs; predicted {predicted:.3e} s, measured median {median:.3e} s; calibrated on the medians of {REPETITIONS} runs on {} and {} with the probed network, largest calibration residual {:.1}%, leave-one-out error {}; {:+.1}% with the platform's network as written)",
        HELD_OUT.0,
        HELD_OUT.1,
        100.0 * error,
        100.0 * interval.0,
        100.0 * interval.1,
        CALIBRATION[0].0,
        CALIBRATION[1].0,
        100.0 * in_sample,
        leave_one_out(&fit),
        100.0 * as_written,
    );
    // Every `measured_time` checks its verification and every command its success, so the
    // whole chain ran on real, verified runs; the prediction must be a time.
    assert!(
        predicted.is_finite() && predicted > 0.0,
        "{kernel}: predicted {predicted} s"
    );
    assert!(median.is_finite() && median > 0.0, "{times:?}");
    assert!(in_sample.is_finite(), "{fit}");
}

/// MM is one compute block per node. C_3 runs about twice as slow as a model of independent
/// nodes calibrated on C_1 and C_2 predicts, and not because two products contend for a core's
/// memory: on a quiet host two concurrent products in one process run as fast as one
/// (`cargo run --release -p hetscale-kernels --example concurrent_dgemm`, 24 Nov: 62.6 Gflop/s
/// alone, 62.1 + 58.1 at once). C_3's trace at N = 1024 (`hetscale run mm --backend threads
/// --emulate-speeds --nodes full:1,half:2 --trace`) shows where the time goes: each half node's
/// block takes 37-38 ms where its stretched share should take 18, the full node's 24 ms where
/// 18 (three threads on two cores while the half nodes compute), and the root spends 13 ms
/// distributing and 21 ms collecting the 8 MB pieces (2 ms of copying). Most of it is fresh
/// message memory: about 2 us per 4 KB page faulted in, five times the probe's `g` on warm
/// buffers (README, host studies); the machine model has no such cost.
#[test]
fn mm_held_out_pipeline_runs_on_emulated_heterogeneous_threads_and_prints_its_error() {
    held_out_pipeline("mm");
}

/// GE syncs twice per eliminated row, and three node threads on two cores pay tens of
/// microseconds per superstep against well under one for two: the probe's `L(3)` carries it,
/// the platform's guess of 5 us does not (on a quiet host about -70% without the probe, within
/// about 25% with it).
#[test]
fn ge_held_out_pipeline_runs_on_emulated_heterogeneous_threads_and_prints_its_error() {
    held_out_pipeline("ge");
}

#[test]
fn the_host_studies_run_what_the_quick_form_checks() {
    let studies = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hetscale-study/studies");
    for kernel in ["mm", "ge"] {
        let path = studies.join(format!("host-threads-{kernel}.toml"));
        let spec = hetscale_study::spec::StudySpec::from_file(&path).unwrap();
        let nodes: Vec<(&str, &str)> = spec
            .configurations
            .iter()
            .map(|c| (c.label.as_str(), c.nodes.as_str()))
            .collect();
        assert_eq!(nodes, [CALIBRATION[0], CALIBRATION[1], HELD_OUT]);
        // Specs name the platform from the repository root, where they are run.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert_eq!(
            root.join(&spec.platform).canonicalize().unwrap(),
            platform().canonicalize().unwrap()
        );
        let template = &spec.command.as_ref().expect("a [command] study").template;
        for part in [
            format!("hetscale run {kernel} --backend threads --emulate-speeds"),
            format!("--platform {}", spec.platform),
            "--nodes {nodes}".to_owned(),
        ] {
            assert!(template.contains(&part), "{template} lacks {part}");
        }
    }
}
