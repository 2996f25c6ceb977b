//! Studies of any program: a C program compiled here with `cc`, studied on 1 and 2 processes
//! with all three approaches; `hetscale run --command`; failing, timing-out and badly written
//! commands.

mod common;

use std::path::{Path, PathBuf};

use common::{hetscale_in, hetscale_process, json_of, one_line_error, succeeded};
use serde_json::Value;

/// A program whose time on `p` processes of 100 Mflop/s is exactly `W / (p 1e8) + 0.1 p`
/// seconds with `W = 2 n^2`: it does its `2 n^2` flops (far faster than 100 Mflop/s), then
/// sleeps until that time has passed (the sleep stands for the `p` processes' work and
/// communication). So `E_s = W / (T C) = W / (W + 1e7 p^2)`, which is 0.5 at
/// `n = sqrt(5e6) p`: N = 2236 on one process and 4472 on two, psi = 0.5.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: emulated N P\n"); return 2; }
    long n = atol(argv[1]), p = atol(argv[2]);
    if (n > 100000) { fprintf(stderr, "N = %ld is too large for this test\n", n); return 3; }
    double start = now(), x = 1.0;
    for (long i = 0; i < n * n; i++) x = x * 0.999999 + 1e-6;
    double work = 2.0 * n * n, t = work / (p * 1e8) + 0.1 * p;
    double rest = t - (now() - start);
    if (rest > 0) {
        struct timespec s = { (time_t)rest, (long)((rest - (time_t)rest) * 1e9) };
        nanosleep(&s, NULL);
    }
    printf("checksum %g\ntime: %.9f\n{\"time_s\": %.9f}\n", x, t, t);
    return 0;
}
"#;

/// Two nodes of 100 Mflop/s.
const PLATFORM: &str = r#"
name = "two"
[network]
g_s_per_byte = 1e-9
L = { base_s = 0.0 }
[[node]]
name = "alpha"
marked_speed = 100.0
[[node]]
name = "beta"
marked_speed = 100.0
"#;

/// Compiles the program and writes the platform into `dir`; returns the program's path.
fn setup(dir: &Path) -> PathBuf {
    let source = dir.join("emulated.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let program = dir.join("emulated");
    let status = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&program)
        .arg(&source)
        .status()
        .expect("a C compiler `cc` (Debian: apt-get install gcc)");
    assert!(status.success(), "cc failed");
    std::fs::write(dir.join("two.toml"), PLATFORM).unwrap();
    program
}

fn spec(program: &Path, extra: &str) -> String {
    format!(
        r#"
name = "emulated"
platform = "two.toml"
target = 0.5
tolerance = 0.02
n_min = 64
n_max = 8192
repetitions = 3
warmup = 0
{extra}
[command]
template = "{} {{n}} {{p}}"
work = "2*n^2"
overhead = "0.1*p"
timeout_s = 10

[[configuration]]
label = "p=1"
nodes = "1"

[[configuration]]
label = "p=2"
nodes = "2"
"#,
        program.display()
    )
}

fn run_count(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

fn n_of(result: &Value, approach: &str, index: usize) -> f64 {
    result[approach]["points"][index]["n"]
        .as_f64()
        .unwrap_or_else(|| {
            panic!(
                "{approach} has no N on configuration {index}: {}",
                result[approach]
            )
        })
}

#[test]
fn a_c_program_is_studied_with_all_three_approaches_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let program = setup(dir.path());
    std::fs::write(dir.path().join("spec.toml"), spec(&program, "")).unwrap();
    let study = || common::study_json(dir.path())[0].clone();
    let result = study();
    // The wall clock adds the program's start-up to the modelled time: a few per cent at most.
    // A start-up stalled by a loaded machine is one run of a size's three, which its median
    // leaves out; with one run per size, one stalled sample tilted the computed fit to twice
    // the exact N (CI, computed N = 4540 on configuration 0).
    for (index, exact) in [(0, 2236.0), (1, 4472.0)] {
        for approach in ["measured", "computed", "predicted"] {
            let n = n_of(&result, approach, index);
            assert!(
                (n / exact - 1.0).abs() < 0.1,
                "{approach} N = {n} on configuration {index}, exact {exact}"
            );
        }
    }
    // psi = C_2 W_1 / (C_1 W_2) with W ~ N^2: with each N within 10% of exact (wall-clock
    // runs on a shared machine), psi is within about 20% of 0.5; it read 0.57 under load.
    let psi = result["measured"]["psi"]["values"][0][1].as_f64().unwrap();
    assert!((psi - 0.5).abs() < 0.1, "psi = {psi}");
    let runs = run_count(&dir.path().join("s.db"));
    assert!(runs > 10, "{runs} runs");
    // Rerunning resumes from the database: nothing runs again, the result is the same.
    let again = study();
    assert_eq!(run_count(&dir.path().join("s.db")), runs);
    assert_eq!(again["measured"], result["measured"]);
    let report = dir.path().join("out/index.html");
    assert!(report.is_file());

    let export = dir.path().join("emulated.txt");
    succeeded(hetscale_in(dir.path()).args([
        "export",
        "s.db",
        "--format",
        "extrap",
        "--output",
        "emulated.txt",
    ]));
    if hetscale_testkit::require_part("its export read by Extra-P", hetscale_testkit::Need::ExtraP)
    {
        let models = common::extrap_models(&export);
        assert_eq!(models.len(), 1, "{models:?}");
        assert_eq!(models[0].0, "emulated");
        assert!(models[0].1.contains('n'), "a model in n: {models:?}");
    }
}

#[test]
fn approach_3_without_an_overhead_formula_says_what_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let program = setup(dir.path());
    let text = spec(&program, "approaches = [\"measured\", \"predicted\"]")
        .replace("overhead = \"0.1*p\"\n", "")
        .replace(
            "timeout_s = 10",
            "timeout_s = 10\ntime_regex = \"time: (\\\\S+)\"",
        );
    std::fs::write(dir.path().join("spec.toml"), text).unwrap();
    let result =
        json_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out", "--json"]));
    let result = &result["studies"][0];
    // The time read from the output is the model's exactly: N is within the 2% tolerance.
    for (index, exact) in [(0, 2236.0), (1, 4472.0)] {
        let n = n_of(result, "measured", index);
        assert!((n / exact - 1.0).abs() < 0.025, "N = {n}, exact {exact}");
    }
    let failures = result["predicted"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2);
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap()
            .contains("needs an overhead model"),
        "{failures:?}"
    );
}

/// A computed-approach study (six samples) in `dir` of the Python program `source`, saved as
/// `script` and run as `python3 script {n} {p}` on the two nodes of [`PLATFORM`], which
/// prints its time: the study's result as JSON.
fn python_study(dir: &Path, script: &str, source: &str) -> Value {
    write_python_study(dir, script, source);
    common::study_json(dir)[0].clone()
}

/// Writes the spec of [`python_study`] into `dir`.
fn write_python_study(dir: &Path, script: &str, source: &str) {
    std::fs::write(dir.join(script), source).unwrap();
    std::fs::write(dir.join("two.toml"), PLATFORM).unwrap();
    let spec = spec(
        Path::new("python3"),
        "approaches = [\"computed\"]\nsamples = 6",
    )
    .replace("{n} {p}", &format!("{script} {{n}} {{p}}"))
    .replace(
        "timeout_s = 10",
        "timeout_s = 10\ntime_regex = 'time: (\\S+)'",
    );
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
}

/// The JSON results `command` printed, a study that settled no configuration: it ends with
/// [`hetscale::UNSETTLED`].
fn unsettled_json(command: &mut assert_cmd::Command) -> Value {
    let out = command
        .assert()
        .code(i32::from(hetscale::UNSETTLED))
        .get_output()
        .clone();
    let mut document: Value =
        serde_json::from_slice(&out.stdout).expect("one JSON document on standard output");
    document["studies"].take()
}

/// A command that reports `W / (p 1e8) + 0.1 p` seconds, as [`PROGRAM`] takes, scaled by a
/// factor of 0.3, 1 or 3 chosen by `n`: times no smooth model fits.
const SCATTERED: &str = "import sys
n, p = int(sys.argv[1]), int(sys.argv[2])
factor = [0.3, 1.0, 3.0][n * 7919 % 3]
print(f'time: {(2 * n * n / (p * 1e8) + 0.1 * p) * factor}')
";

#[test]
fn a_poorly_fitting_model_is_flagged_and_not_inverted_into_an_n() {
    let dir = tempfile::tempdir().unwrap();
    write_python_study(dir.path(), "scattered.py", SCATTERED);
    // No configuration settles: the poor fit on p = 1, and the same scatter on p = 2.
    let result = unsettled_json(hetscale_in(dir.path()).args(common::STUDY_ARGS))[0].clone();
    let fit = &result["fits"][0];
    let quality = &fit["model_quality"];
    let adjusted = quality["adjusted_r_squared"].as_f64().unwrap();
    assert!(adjusted < 0.9, "{quality}");
    assert!(
        quality["smape_percent"].as_f64().unwrap() > 10.0,
        "{quality}"
    );
    assert!(
        quality["loo_cv_rmse_s"].as_f64().unwrap() > 0.0,
        "{quality}"
    );
    assert!(
        fit["n_root"].is_null() && fit.get("n_root").is_some(),
        "a poor fit gives no N: {fit}"
    );
    let reason = format!("adjusted R^2 = {adjusted:.3} < 0.9");
    assert!(fit["poor_fit"].as_str().unwrap().contains(&reason), "{fit}");
    let failure = &result["computed"]["failures"][0];
    assert_eq!(failure["configuration"], "p=1");
    assert!(
        failure["message"]
            .as_str()
            .unwrap()
            .contains("too poor to invert into an N"),
        "{failure}"
    );
    assert!(
        result["computed"]["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["configuration"] != "p=1")
    );
}

/// `SCATTERED` with +/- 5% instead of a factor of 3: a good fit, but not an exact one.
const JITTERED: &str = "import sys
n, p = int(sys.argv[1]), int(sys.argv[2])
factor = [0.95, 1.0, 1.05][n * 7919 % 3]
print(f'time: {(2 * n * n / (p * 1e8) + 0.1 * p) * factor}')
";

#[test]
fn noisy_runs_give_the_computed_n_and_psi_a_95_percent_interval() {
    let dir = tempfile::tempdir().unwrap();
    let result = python_study(dir.path(), "jittered.py", JITTERED);
    // E_s = 0.5 where 2 n^2 = 1e7 p^2: N = 2236 on p = 1, 4472 on p = 2.
    for (index, exact) in [(0, 2236.0), (1, 4472.0)] {
        let point = &result["computed"]["points"][index];
        let n = point["n"].as_f64().unwrap();
        let (lo, hi) = (
            point["n_ci95"][0].as_f64().unwrap(),
            point["n_ci95"][1].as_f64().unwrap(),
        );
        assert!(lo <= n && n <= hi && hi - lo >= 10.0, "{point}");
        assert!(lo <= exact && exact <= hi, "{exact} outside {point}");
        assert!(
            point["work_flop_ci95"][0].as_f64().unwrap() <= point["work_flop"].as_f64().unwrap()
        );
        assert_eq!(result["fits"][index]["n_ci95"], point["n_ci95"]);
    }
    // psi(p=1, p=2) = 2 W_1 / W_2 = 0.5 exactly; its interval holds it and is not a point.
    let psi = result["computed"]["psi"]["values"][0][1].as_f64().unwrap();
    let interval = &result["computed"]["psi_ci95"]["values"][0][1];
    let (lo, hi) = (interval[0].as_f64().unwrap(), interval[1].as_f64().unwrap());
    assert!(
        lo < psi && psi < hi && lo <= 0.5 && 0.5 <= hi,
        "{psi} [{lo}, {hi}]"
    );
    let text = std::fs::read_to_string(dir.path().join("out/emulated.txt")).unwrap();
    let cell = format!("{psi:.3} [{lo:.3}, {hi:.3}]");
    assert!(text.contains(&cell), "no `{cell}` in\n{text}");
    // The report's tables export them as columns.
    let table = std::fs::read_to_string(dir.path().join("out/tables/emulated-psi.csv")).unwrap();
    assert!(
        table.starts_with("approach,from C_i,to C_j,consecutive,psi,psi 95% low,psi 95% high\n"),
        "{table}"
    );
    let row: Vec<f64> = table
        .lines()
        .find_map(|l| l.strip_prefix("computed,p=1,p=2,yes,"))
        .unwrap_or_else(|| panic!("no computed row in {table}"))
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    let expected = [psi, lo, hi];
    assert!(
        row.iter()
            .zip(expected)
            .all(|(a, b)| (a - b).abs() <= 1e-12 * b),
        "{row:?} vs {expected:?}"
    );
}

#[test]
fn run_command_prints_one_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let program = setup(dir.path());
    let run = json_of(
        hetscale_in(dir.path())
            .args([
                "run",
                "--platform",
                "two.toml",
                "--nodes",
                "2",
                "--n",
                "1000",
            ])
            .arg("--command")
            .arg(format!("{} {{n}} {{p}}", program.display()))
            .args(["--work", "2*n^2", "--time-json", "time_s", "--json"]),
    );
    // T = 2e6 / 2e8 + 0.1 * 2 = 0.21 s; E_s = 2e6 / (0.21 * 2e8).
    assert_eq!(run["p"], 2);
    assert!((run["time_s"].as_f64().unwrap() - 0.21).abs() < 1e-9);
    assert_eq!(run["work_flop"].as_f64().unwrap(), 2e6);
    let e_s = run["speed_efficiency"].as_f64().unwrap();
    assert!((e_s - 2e6 / (0.21 * 2e8)).abs() < 1e-9, "{e_s}");
}

#[test]
fn failing_commands_are_stored_as_failed_and_end_the_study_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let study = |command: &str, extra: &[&str]| {
        let mut args = vec![
            "study",
            "--command",
            command,
            "--work",
            "n^2",
            "--nodes",
            "1",
        ];
        args.extend_from_slice(&["--target", "0.5", "--n-max", "64", "--repetitions", "1"]);
        // --quiet: the error is then all of stderr (off a terminal, progress is logged there).
        args.extend_from_slice(&["--warmup", "0", "--db", "f.db", "--out", "out", "--quiet"]);
        args.extend_from_slice(extra);
        one_line_error(hetscale_in(dir.path()).args(&args))
    };
    let err = study(
        "sh -c 'echo first >&2; echo disk full >&2; exit 3' {n}",
        &[],
    );
    assert!(
        err.contains("every run failed")
            && err.contains("N = 8")
            && err.contains("exit status: 3")
            && err.contains("disk full"),
        "{err}"
    );
    let conn = rusqlite::Connection::open(dir.path().join("f.db")).unwrap();
    let (status, error): (String, String) = conn
        .query_row("SELECT status, error FROM runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "failed");
    assert!(error.contains("disk full"), "{error}");
    drop(conn);
    // Resuming replays the stored failure instead of running again.
    let again = study(
        "sh -c 'echo first >&2; echo disk full >&2; exit 3' {n}",
        &[],
    );
    assert_eq!(again, err);
    let err = study("sleep 5", &["--timeout", "0.2", "--name", "slow"]);
    assert!(err.contains("timed out after 0.200 s"), "{err}");
    let err = study("echo {n}", &["--time-regex", "T=(\\S+)", "--name", "regex"]);
    assert!(err.contains("no match of time_regex"), "{err}");
}

#[test]
fn bad_templates_and_formulas_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &str, work: &str| {
        one_line_error(hetscale_in(dir.path()).args([
            "run",
            "--command",
            command,
            "--work",
            work,
            "--n",
            "10",
            "--nodes",
            "1",
        ]))
    };
    assert!(run("prog {q}", "n").contains("unknown placeholder {q}"));
    assert!(run("prog {n", "n").contains("unbalanced brace"));
    let unclosed = run("prog {n}", "2*(n");
    assert!(
        unclosed.contains("--work \"2*(n\": \"(\" at character 3 is never closed")
            && unclosed.ends_with("e.g. 2*n^3 + 4*p*n^2"),
        "{unclosed}"
    );
    assert!(run("prog {n}", "2*m").contains("only n"));
    let err = run("echo {n}", "n - 100");
    assert!(err.contains("N = 10") && err.contains("positive"), "{err}");
}

#[test]
fn an_always_failing_command_fails_the_study_despite_the_default_warm_up() {
    let dir = tempfile::tempdir().unwrap();
    // No --warmup: the default warm-up run is the first to fail.
    let study = |name: &str, command: &str, extra: &[&str]| {
        let mut args = vec!["study", "--quiet", "--command", command, "--nodes", "1"];
        args.extend_from_slice(&["--target", "0.5", "--n-max", "64", "--repetitions", "1"]);
        args.extend_from_slice(&["--db", "f.db", "--out", "out", "--name", name]);
        args.extend_from_slice(extra);
        one_line_error(hetscale_in(dir.path()).args(&args))
    };
    let failing = "sh -c 'echo disk full >&2; exit 3' {n}";
    let exits = study("exits", failing, &["--work", "n"]);
    assert!(
        exits.contains("every run failed")
            && exits.contains("N = 8")
            && exits.contains("disk full"),
        "{exits}"
    );
    let err = study("infinite", "echo {n}", &["--work", "n/0"]);
    assert!(
        err.contains("every run failed") && err.contains("work \"n/0\" is inf"),
        "{err}"
    );
    let err = study("negative", "echo {n}", &["--work=-n"]);
    assert!(
        err.contains("every run failed") && err.contains("positive"),
        "{err}"
    );
    let err = study(
        "no time",
        "echo {n}",
        &["--work", "n", "--time-regex", "T=(\\S+)"],
    );
    assert!(
        err.contains("every run failed") && err.contains("no match of time_regex"),
        "{err}"
    );
    // The warm-up's failure is stored like a measured run's: resuming replays it.
    let conn = rusqlite::Connection::open(dir.path().join("f.db")).unwrap();
    let failed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM runs WHERE study = 'exits' AND status = 'failed'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(failed, 1);
    drop(conn);
    assert_eq!(study("exits", failing, &["--work", "n"]), exits);
}

#[test]
fn numbers_out_of_bounds_are_one_line_errors_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let run = one_line_error(hetscale_in(dir.path()).args([
        "run",
        "--command",
        "echo {n}",
        "--work",
        "n",
        "--n",
        "5",
        "--nodes",
        "1",
        "--timeout",
        "1e300",
    ]));
    assert!(
        run.contains("--timeout 1e300: give a positive number of seconds up to 2592000"),
        "{run}"
    );
    let study = |flag: &str, value: &str| {
        let mut args = vec![
            "study",
            "--command",
            "echo {n}",
            "--work",
            "n",
            "--nodes",
            "1",
        ];
        args.extend_from_slice(&["--out", "out", flag, value]);
        for (default, its_value) in [("--target", "0.5"), ("--n-max", "64")] {
            if flag != default {
                args.extend_from_slice(&[default, its_value]);
            }
        }
        one_line_error(hetscale_in(dir.path()).args(&args))
    };
    for (flag, value, says) in [
        (
            "--timeout",
            "1e300",
            "--timeout 1e300: give a positive number of seconds",
        ),
        (
            "--timeout",
            "nan",
            "--timeout NaN: give a positive number of seconds",
        ),
        (
            "--n-max",
            "9007199254740993",
            "--n-max 9007199254740993: use at most 2^53",
        ),
        // Within the parser's bound (10,000), beyond the spec's (1000).
        ("--runs", "5000", "--runs 5000: use 1 to 1000"),
        ("--warmup", "5000", "--warmup 5000: use 0 to 1000"),
        (
            "--target",
            "1e300",
            "--target 1e300: a speed-efficiency lies in (0, 1)",
        ),
    ] {
        let err = study(flag, value);
        assert!(
            err.starts_with("hetscale: hetscale study --command: ") && err.contains(says),
            "{flag} {value}: {err}"
        );
    }
}

/// The command of the interruption tests, run as `sh step.sh {n}`: each call appends its N
/// to `calls`; from N = 32 on, while the file `block` exists, it writes its pid (its process
/// group's, as it leads it) to `pid` and sleeps; otherwise it prints a time of 1 s.
const STEP: &str = r#"
echo "$1" >> calls
if [ "$1" -ge 32 ] && [ -e block ]; then echo $$ > pid; exec sleep 1000; fi
echo "time: 1"
"#;

/// With T = 1 s on one node of 100 Mflop/s, E_s = n / (n + 16): 0.8 at N = 64.
const STEP_ARGS: [&str; 8] = [
    "--command",
    "sh step.sh {n}",
    "--work",
    "1e8*n/(n+16)",
    "--time-regex",
    "time: (\\S+)",
    "--platform",
    "two.toml",
];

/// A directory with the step command, its platform and the file that makes it block.
fn blocking_step() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("step.sh"), STEP).unwrap();
    std::fs::write(dir.path().join("two.toml"), PLATFORM).unwrap();
    std::fs::write(dir.path().join("block"), "").unwrap();
    dir
}

fn step_study_args() -> Vec<&'static str> {
    let mut args = vec!["study"];
    args.extend(STEP_ARGS);
    args.extend(["--nodes", "1", "--target", "0.8", "--n-max", "256"]);
    // --quiet: the interruption is then all of stderr (off a terminal, progress is logged there).
    args.extend(["--db", "s.db", "--out", "out", "--quiet"]);
    args
}

fn spawn_hetscale(dir: &Path, args: &[&str]) -> std::process::Child {
    hetscale_process()
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The process group the blocked step command leads, once it has started; dropped, it kills
/// what is left of the group, so that a failing test leaves no sleeper behind.
struct BlockedGroup(String);

impl BlockedGroup {
    fn of(dir: &Path) -> Self {
        let file = dir.join("pid");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match std::fs::read_to_string(&file) {
                Ok(pid) if pid.ends_with('\n') => return Self(pid.trim().to_string()),
                _ if std::time::Instant::now() > deadline => panic!("the command never blocked"),
                _ => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }

    /// Whether any live (not zombie) process is in the group.
    fn alive(&self) -> bool {
        std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or(vec![], |(_, rest)| rest.split_whitespace().collect());
            fields.len() > 2 && fields[2] == self.0 && fields[0] != "Z"
        })
    }
}

impl Drop for BlockedGroup {
    fn drop(&mut self) {
        if self.alive() {
            let _ = std::process::Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{}", self.0)])
                .status();
        }
    }
}

fn send(signal: &str, pid: u32) {
    let sent = std::process::Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn ctrl_c_ends_the_commands_group_stores_nothing_half_done_and_the_rerun_resumes() {
    let dir = blocking_step();
    let study = spawn_hetscale(dir.path(), &step_study_args());
    let group = BlockedGroup::of(dir.path());
    assert!(group.alive());
    send("INT", study.id());
    let out = study.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // N = 8 and 16 completed (three runs each after a warm-up); N = 32 was cut short.
    assert_eq!(
        err.trim(),
        "hetscale: interrupted: rerun to resume (6 runs stored)"
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(!group.alive(), "the command's group outlived hetscale");
    let conn = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
    let stored: (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE status = 'failed') FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(stored, (6, 0), "only completed runs are stored");
    drop(conn);

    std::fs::remove_file(dir.path().join("block")).unwrap();
    succeeded(hetscale_in(dir.path()).args(step_study_args()));
    let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
    let at = |n: &str| calls.lines().filter(|l| *l == n).count();
    assert_eq!(
        (at("8"), at("16")),
        (4, 4),
        "the rerun ran no stored run again"
    );
    assert!(at("64") >= 4, "the rerun finished the search: {calls}");
}

#[test]
fn ctrl_c_is_one_progress_line_not_one_per_remaining_configuration() {
    let dir = blocking_step();
    // Two configurations and the progress log (stderr is a pipe): the interruption cuts the
    // first short; the second, and the other approaches, never start.
    let args: Vec<&str> = step_study_args()
        .into_iter()
        .filter(|a| *a != "--quiet")
        .chain(["--nodes", "2"])
        .collect();
    let study = spawn_hetscale(dir.path(), &args);
    let _group = BlockedGroup::of(dir.path());
    send("INT", study.id());
    let out = study.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let interrupted: Vec<&str> = err.lines().filter(|l| l.contains("interrupted")).collect();
    assert_eq!(interrupted.len(), 2, "{err}");
    assert!(
        interrupted[0].starts_with("command measured 1 (1/2): interrupted: rerun to resume (6 runs stored) after 2 sizes in"),
        "{err}"
    );
    assert_eq!(
        interrupted[1],
        "hetscale: interrupted: rerun to resume (6 runs stored)"
    );
    assert!(!err.contains("(2/2)"), "{err}");
    assert_eq!(out.status.code(), Some(130), "{err}");
}

/// The measured search's failure on one node with the step command (T = 1 s on 100 Mflop/s,
/// so E_s = W / 1e8) for the work formula `work` and `target`, up to N = 256.
fn measured_failure(work: &str, target: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("step.sh"), STEP).unwrap();
    std::fs::write(dir.path().join("two.toml"), PLATFORM).unwrap();
    let mut args: Vec<&str> = vec!["study"];
    args.extend(STEP_ARGS);
    let at = args.iter().position(|a| *a == "--work").unwrap() + 1;
    args[at] = work;
    args.extend(["--nodes", "1", "--target", target, "--n-max", "256"]);
    args.extend(["--repetitions", "1", "--warmup", "0"]);
    args.extend(["--out", "out", "--json", "--quiet"]);
    let result = unsettled_json(hetscale_in(dir.path()).args(&args));
    result[0]["measured"]["failures"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("a failure: {result}"))
        .to_string()
}

#[test]
fn a_target_above_where_e_s_levels_off_is_called_unreachable() {
    // E_s = 0.4 n / (n + 16) tends to 0.4: no n_max reaches 0.8.
    let message = measured_failure("4e7*n/(n+16)", "0.8");
    assert_eq!(
        message,
        "E_s levels off at 0.3765 (N = 256) below the target 0.8: growing N up to 256 barely \
         raises it, so this target is unreachable on this configuration; lower the target"
    );
    // E_s = n / (n + 16) reaches 0.99 at N = 1584: a larger n_max would find it, named as
    // the option that sets it.
    let message = measured_failure("1e8*n/(n+16)", "0.99");
    assert!(
        message.contains("raise --n-max or lower the target"),
        "{message}"
    );
}

#[test]
fn a_command_study_from_options_asks_for_its_overhead_in_options() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("step.sh"), STEP).unwrap();
    std::fs::write(dir.path().join("two.toml"), PLATFORM).unwrap();
    let mut args: Vec<&str> = vec!["study"];
    args.extend(STEP_ARGS);
    args.extend(["--nodes", "1", "--target", "0.8", "--n-max", "256"]);
    args.extend(["--repetitions", "1", "--warmup", "0"]);
    args.extend(["--out", "out", "--json", "--quiet"]);
    let result = json_of(hetscale_in(dir.path()).args(&args));
    let message = result["studies"][0]["predicted"]["failures"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("a predicted failure: {result}"));
    assert!(
        message.contains("give --overhead FORMULA") && !message.contains("[command]"),
        "{message}"
    );
}

#[test]
fn sigterm_ends_run_commands_group() {
    let dir = blocking_step();
    let mut args = vec!["run"];
    args.extend(STEP_ARGS);
    args.extend(["--nodes", "1", "--n", "64"]);
    let run = spawn_hetscale(dir.path(), &args);
    let group = BlockedGroup::of(dir.path());
    send("TERM", run.id());
    let out = run.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("interrupted by SIGTERM: \"sh\" and its process group were ended"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(!group.alive(), "the command's group outlived hetscale");
}

/// A SIGKILLed hetscale cannot end the group itself: on Linux the kernel sends the command
/// SIGTERM (what the command started itself is the command's to end).
#[cfg(target_os = "linux")]
#[test]
fn a_sigkilled_hetscale_leaves_no_command_running() {
    let dir = blocking_step();
    let mut study = spawn_hetscale(dir.path(), &step_study_args());
    let group = BlockedGroup::of(dir.path());
    study.kill().unwrap();
    study.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while group.alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!group.alive(), "the command outlived a SIGKILLed hetscale");
}

/// A closed terminal or SSH session (SIGHUP) stops a study as Ctrl-C does: the command's whole
/// group is ended, not just the command (`sh` here, whose `sleep` was left running), and the
/// study stops resumable.
#[test]
fn sighup_ends_the_commands_group_and_the_study_stops_resumable() {
    let dir = blocking_step();
    let study = spawn_hetscale(dir.path(), &step_study_args());
    let group = BlockedGroup::of(dir.path());
    send("HUP", study.id());
    let out = study.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "hetscale: interrupted: rerun to resume (6 runs stored)"
    );
    assert_eq!(out.status.code(), Some(129), "{err}");
    assert!(!group.alive(), "the command's group outlived hetscale");
}

/// The interruption counts every run the database holds (a rerun resumes them all), not only
/// the cut-short study's: the default study's three experiments share one database.
#[test]
fn an_interruption_counts_the_runs_of_every_study_in_the_database() {
    let dir = blocking_step();
    std::fs::remove_file(dir.path().join("block")).unwrap();
    succeeded(
        hetscale_in(dir.path())
            .args(step_study_args())
            .args(["--name", "first"]),
    );
    let conn = rusqlite::Connection::open(dir.path().join("s.db")).unwrap();
    let first: i64 = conn
        .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    std::fs::write(dir.path().join("block"), "").unwrap();
    let mut args = step_study_args();
    args.extend(["--name", "second"]);
    let study = spawn_hetscale(dir.path(), &args);
    let _group = BlockedGroup::of(dir.path());
    send("INT", study.id());
    let out = study.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The second study stored its N = 8 and 16 runs (6) before N = 32 was cut short.
    assert_eq!(
        err.trim(),
        format!(
            "hetscale: interrupted: rerun to resume ({} runs stored)",
            first + 6
        )
    );
}

#[test]
fn a_run_whose_time_no_run_takes_fails_and_leaves_the_database_readable() {
    let dir = tempfile::tempdir().unwrap();
    // From N = 64 on, the program prints a time past the 1e9 s a measured run takes.
    let command = "python3 -c \"import sys; n = int(sys.argv[1]); print('time:', 2e9 if n > 32 else 1e-3 * n)\" {n}";
    let out = hetscale_in(dir.path())
        .args([
            "study",
            "--command",
            command,
            "--time-regex",
            "time: (\\S+)",
        ])
        .args([
            "--work", "n^2", "--nodes", "1", "--target", "0.5", "--n-max", "64",
        ])
        .args([
            "--runs", "1", "--warmup", "0", "--db", "f.db", "--out", "out", "--quiet",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(
        stdout.contains(
            "the run at N = 64 took 2e9 s, outside the 1e-9 to 1e9 s a measured run takes"
        ),
        "{stdout}"
    );
    // The runs that completed are read back, as every command reads a study database.
    let csv = String::from_utf8(
        succeeded(hetscale_in(dir.path()).args(["export", "f.db", "--format", "csv"])).stdout,
    )
    .unwrap();
    assert_eq!(csv.lines().count(), 1 + 3, "{csv}");
}
