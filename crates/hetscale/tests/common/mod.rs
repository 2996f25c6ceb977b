//! Helpers shared by the CLI's test files.
// Each test file compiles this module on its own and uses only some of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// A small GE study on simulated Sunwulf, three configurations (a held-out check too): a few
/// seconds, a few dozen runs.
pub const SMALL_GE: &str = include_str!("../specs/small-ge.toml");

/// A temporary directory holding `spec` as `spec.toml`.
pub fn spec_dir(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    dir
}

/// The arguments of a study of `spec.toml` in the current directory, stored in `s.db`, its
/// report under `out`, its results printed as JSON.
pub const STUDY_ARGS: [&str; 7] = [
    "study",
    "spec.toml",
    "--db",
    "s.db",
    "--out",
    "out",
    "--json",
];

/// The `hetscale` binary as a `std` command, for what `assert_cmd` cannot do (spawn it, give
/// it a pipe of the test's own). `local` keeps its placeholder speed: no test depends on this
/// host's cached one.
pub fn hetscale_process() -> std::process::Command {
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("hetscale"));
    command.env("HETSCALE_CACHE_DIR", "");
    command
}

/// The `hetscale` binary, as [`hetscale_process`] sets it up.
pub fn hetscale() -> Command {
    Command::from_std(hetscale_process())
}

/// [`hetscale`] run in `dir`.
pub fn hetscale_in(dir: &Path) -> Command {
    let mut command = hetscale();
    command.current_dir(dir);
    command
}

/// What `command` gave; it must succeed: a failure names the command and shows its exit
/// code, standard output and standard error.
pub fn succeeded(command: &mut Command) -> Output {
    command.assert().success().get_output().clone()
}

/// The standard output of `command`, which must succeed (see [`succeeded`]).
pub fn stdout_of(command: &mut Command) -> String {
    String::from_utf8(succeeded(command).stdout).expect("UTF-8 on standard output")
}

/// The JSON document `command` printed; it must succeed (see [`succeeded`]).
pub fn json_of(command: &mut Command) -> Value {
    serde_json::from_slice(&succeeded(command).stdout)
        .expect("one JSON document on standard output")
}

/// The standard error of `command`, which must fail: a success names the command.
pub fn failure_of(command: &mut Command) -> String {
    let out = command.assert().failure().get_output().clone();
    String::from_utf8(out.stderr).expect("UTF-8 on standard error")
}

/// The one-line error `command` fails with, without its line end: a success, or an error of
/// more lines, names the command.
pub fn one_line_error(command: &mut Command) -> String {
    let err = failure_of(command).trim_end().to_string();
    assert_eq!(err.lines().count(), 1, "{command:?}: {err}");
    err
}

/// `hetscale study spec.toml --db s.db --out out --json` in `dir` ([`STUDY_ARGS`]): its
/// results, one object per study (its JSON document's `studies`).
pub fn study_json(dir: &Path) -> Value {
    json_of(hetscale_in(dir).args(STUDY_ARGS))["studies"].take()
}

/// Loads `file` with Extra-P's own text reader (`python3 -m extrap --text`) and returns the model
/// of each region, as `(region, model)`. The test asks for Extra-P first
/// (`hetscale_testkit::require(Need::ExtraP)`).
pub fn extrap_models(file: &Path) -> Vec<(String, String)> {
    let out = std::process::Command::new("python3")
        .args(["-m", "extrap", "--disable-progress", "--text"])
        .arg(file)
        .args(["--print", "{callpath}\t{model}"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Extra-P could not load {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(region, model)| (region.to_string(), model.trim().to_string()))
        .collect()
}

/// The names of the collectives whose costs the platform file at `path` lists, in order.
pub fn written_collectives(path: &Path) -> Vec<String> {
    hbsp::Platform::from_file(path)
        .unwrap()
        .network
        .collectives
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

/// Sixteen nodes, fast and slow in turn: the first `p` have a marked speed of `1.5e9 p`
/// flop/s for even `p`.
pub fn planned_platform() -> String {
    let mut text = String::from(
        "name = \"pairs\"\nspeed_unit = \"Mflop/s\"\n[network]\ng_s_per_byte = 1e-9\nL = { base_s = 0.0 }\n",
    );
    for i in 0..16 {
        let (kind, speed) = if i % 2 == 0 {
            ("fast", 2000)
        } else {
            ("slow", 1000)
        };
        text +=
            &format!("[[node]]\nname = \"n{i}\"\nkind = \"{kind}\"\nmarked_speed = {speed}.0\n");
    }
    text
}

/// The law the command's time follows: its work `2 n^3` at the configuration's marked speed,
/// and an all-to-all overhead `1.2e-4 n p`, s.
pub fn planned_law(n: f64, p: f64) -> f64 {
    2.0 * n.powi(3) / (1.5e9 * p) + 1.2e-4 * n * p
}

/// `hetscale study law.toml --predict-nodes 16 --precision 0.1` of [`write_planned_study`]'s
/// study, its results under `out` and printed as JSON.
pub const PLANNED_STUDY: [&str; 10] = [
    "study",
    "law.toml",
    "--out",
    "out",
    "--quiet",
    "--json",
    "--predict-nodes",
    "16",
    "--precision",
    "0.1",
];

/// The target of [`write_planned_study`]'s study.
pub const PLANNED_TARGET: f64 = 0.5;

/// A command study of the law on 2, 4, 8 and 16 nodes, in `dir`.
pub fn write_planned_study(dir: &Path) {
    std::fs::write(dir.join("pairs.toml"), planned_platform()).unwrap();
    let program = "import sys; n, p = int(sys.argv[1]), int(sys.argv[2]); print('time: %.12g' % (2 * n**3 / (1.5e9 * p) + 1.2e-4 * n * p))";
    let mut spec = format!(
        "name = \"law\"\nplatform = \"pairs.toml\"\ntarget = {PLANNED_TARGET}\nn_min = 8\nn_max = 100000\nrepetitions = 1\nwarmup = 0\n\n[command]\ntemplate = \"python3 -c \\\"{program}\\\" {{n}} {{p}}\"\nwork = \"2*n^3\"\ntime_regex = \"time: (\\\\S+)\"\n"
    );
    for p in [2, 4, 8, 16] {
        spec += &format!("\n[[configuration]]\nlabel = \"C_{p}\"\nnodes = \"{p}\"\n");
    }
    std::fs::write(dir.join("law.toml"), spec).unwrap();
}
