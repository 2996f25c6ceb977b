//! The mpi backend under `mpirun` with 1-4 ranks: identical to threads, mismatches reported
//! on every rank, and a failing rank ending the job within seconds with its message.
//!
//! Runs the `mpi_selftest` example, which `cargo test -p hbsp --features mpi` builds.
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn selftest() -> PathBuf {
    let deps = std::env::current_exe().expect("the test's path");
    let profile = deps
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let path = profile.join("examples").join("mpi_selftest");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test -p hbsp --features mpi`, which builds the examples",
        path.display()
    );
    path
}

/// `mpirun -np ranks mpi_selftest args...`, allowed to run as root, oversubscribed.
fn mpirun(ranks: usize, args: &[&str]) -> (Output, Duration) {
    mpirun_with(ranks, &[], args)
}

/// [`mpirun`] with `options` for mpirun before the program.
fn mpirun_with(ranks: usize, options: &[&str], args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let output = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .args(options)
        .arg(selftest())
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("mpirun runs: install openmpi-bin");
    (output, start.elapsed())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_program_matches_the_threads_backend_on_1_to_4_ranks() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    for (ranks, agreement) in (1..=4).flat_map(|r| [(r, "--shared"), (r, "--rounds")]) {
        let (output, _) = mpirun(ranks, &["check", agreement]);
        assert!(
            output.status.success(),
            "{ranks} ranks, {agreement}: {}{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        assert!(text(&output.stdout).contains(&format!("ok on {ranks} ranks")));
    }
}

/// Every rank's `(sendrecv, alltoall, alltoallv)` calls in `mpi_selftest empty supersteps`
/// with `agreement` (`--shared` or `--rounds`), counted by `tests/mpi_calls.c` preloaded
/// into the ranks.
fn calls_of_empty_supersteps(
    ranks: usize,
    supersteps: usize,
    agreement: &str,
) -> Vec<(u64, u64, u64)> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let shim = dir.path().join("libmpi_calls.so");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mpi_calls.c");
    let built = Command::new("mpicc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&shim)
        .arg(source)
        .output()
        .expect("mpicc runs: install libopenmpi-dev");
    assert!(built.status.success(), "mpicc: {}", text(&built.stderr));
    let preload = format!("LD_PRELOAD={}", shim.display());
    let (output, _) = mpirun_with(
        ranks,
        &["-x", &preload],
        &["empty", &supersteps.to_string(), agreement],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let mut counts: Vec<(usize, (u64, u64, u64))> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("mpi calls of rank "))
        .filter_map(|line| {
            let (rank, calls) = line.split_once(':')?;
            let n: Vec<u64> = calls
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            Some((rank.parse().ok()?, (n[0], n[1], n[2])))
        })
        .collect();
    counts.sort_unstable();
    let counts: Vec<(u64, u64, u64)> = counts.into_iter().map(|(_, calls)| calls).collect();
    assert_eq!(counts.len(), ranks, "{stdout}");
    counts
}

#[test]
fn an_empty_superstep_is_a_barrier_s_rounds_of_sendrecv_and_nothing_else() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    let supersteps = 200;
    for (ranks, rounds) in [(2, 1), (3, 2), (4, 2)] {
        // The program's supersteps and the final one when it returns.
        let expected = (rounds * (supersteps as u64 + 1), 0, 0);
        for (rank, calls) in calls_of_empty_supersteps(ranks, supersteps, "--rounds")
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                calls, expected,
                "{ranks} ranks, rank {rank}: (sendrecv, alltoall, alltoallv)"
            );
        }
    }
}

#[test]
fn on_one_machine_an_empty_superstep_makes_no_mpi_call() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    for ranks in [2, 3, 4] {
        for (rank, calls) in calls_of_empty_supersteps(ranks, 200, "--shared")
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                calls,
                (0, 0, 0),
                "{ranks} ranks, rank {rank}: (sendrecv, alltoall, alltoallv)"
            );
        }
    }
}

#[test]
fn a_mismatch_of_calls_is_an_error_on_every_rank() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    for agreement in ["--shared", "--rounds"] {
        let (output, _) = mpirun(3, &["mismatch", agreement]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let stdout = text(&output.stdout);
        assert_eq!(stdout.matches("mismatch reported").count(), 3, "{stdout}");
        assert!(stdout.contains("node 0 (n0) called broadcast"), "{stdout}");
    }
}

#[test]
fn a_failing_rank_ends_the_job_within_seconds_naming_itself() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    for (mode, says) in [
        ("panic", "panicked at"),
        ("abort", "aborted the run: selftest abort on purpose"),
        ("error", "failed: selftest error on purpose"),
    ] {
        let (output, took) = mpirun(3, &[mode, "1"]);
        let stderr = text(&output.stderr);
        assert!(!output.status.success(), "{mode}: the job must fail");
        assert!(
            stderr.contains("hbsp: MPI rank 1 of 3") && stderr.contains(says),
            "{mode}: {stderr}"
        );
        assert!(took < Duration::from_secs(10), "{mode}: took {took:?}");
    }
}
