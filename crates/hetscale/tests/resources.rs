//! Resources: counts a user gives are bounded before anything is allocated or run, and runs
//! that cannot fit this machine (its memory, or the memory limit of the process's own cgroup)
//! are refused before they start.

mod common;

use common::hetscale;

/// `--repetitions`, `--runs` and `--warmup` of every command that has them: a count beyond
/// the documented maximum (4294967295 aborted `bench` on a 34 GB allocation) or a zero
/// (`collectives` ran it as 1) is refused by the parser, in one line, before anything runs.
#[test]
fn repetition_counts_out_of_range_are_refused_before_anything_runs() {
    let cases: [&[&str]; 8] = [
        &["bench", "--quick", "--repetitions", "4294967295"],
        &["bench", "--quick", "--repetitions", "0"],
        &["collectives", "--repetitions", "4294967295"],
        &["collectives", "--repetitions", "0"],
        &["run", "mm", "--n", "8", "--runs", "4294967295"],
        &["run", "mm", "--n", "8", "--warmup", "4294967295"],
        &["study", "--command", "true", "--repetitions", "0"],
        &["study", "--command", "true", "--warmup", "1000000000"],
    ];
    for args in cases {
        let out = hetscale().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let flag = args[args.len() - 2];
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.lines().next().is_some_and(|line| line.contains(flag)
                && line.contains("is not in")),
            "{args:?}: {err}"
        );
    }
}
