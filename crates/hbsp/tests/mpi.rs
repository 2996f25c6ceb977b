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
    let start = Instant::now();
    let output = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string()])
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
    for ranks in 1..=4 {
        let (output, _) = mpirun(ranks, &["check"]);
        assert!(
            output.status.success(),
            "{ranks} ranks: {}{}",
            text(&output.stdout),
            text(&output.stderr)
        );
        assert!(text(&output.stdout).contains(&format!("ok on {ranks} ranks")));
    }
}

#[test]
fn a_mismatch_of_calls_is_an_error_on_every_rank() {
    let (output, _) = mpirun(3, &["mismatch"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert_eq!(stdout.matches("mismatch reported").count(), 3, "{stdout}");
    assert!(stdout.contains("node 0 (n0) called broadcast"), "{stdout}");
}

#[test]
fn a_failing_rank_ends_the_job_within_seconds_naming_itself() {
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
