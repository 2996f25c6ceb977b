//! Standard output and error that fail or are closed, and how usage errors read.

mod common;

use std::process::Output;

use common::{hetscale, hetscale_process, stdout_of};

/// `hetscale args` run by `sh` with `redirections` (`>&-`, `2>/dev/full`) applied.
fn redirected(args: &[&str], redirections: &str) -> Output {
    let binary = hetscale_process().get_program().to_owned();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" \"$@\" {redirections}"))
        .arg(binary)
        .args(args)
        .env("HETSCALE_CACHE_DIR", "")
        .output()
        .expect("sh runs")
}

const FAILING_RUN: [&str; 10] = [
    "run",
    "mm",
    "--backend",
    "sim",
    "--platform",
    "sunwulf",
    "--nodes",
    "0",
    "--n",
    "64",
];

#[cfg(unix)]
#[test]
fn a_full_stderr_does_not_panic() {
    // The error itself cannot be shown: the exit code still says it failed.
    let failed = redirected(&FAILING_RUN, "2>/dev/full");
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    // A run whose notes go to stderr succeeds and prints its result all the same.
    let run = [
        "run",
        "mm",
        "--backend",
        "sim",
        "--platform",
        "sunwulf",
        "--n",
        "16",
    ];
    let ok = redirected(
        &[&run[..], &["--json", "--trace", "/dev/null"]].concat(),
        "2>/dev/full",
    );
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    assert!(serde_json::from_slice::<serde_json::Value>(&ok.stdout).is_ok());
}

#[cfg(unix)]
#[test]
fn a_closed_or_full_stdout_is_a_failure() {
    for args in [
        &["paper"][..],
        &["--help"],
        &["--version"],
        &["run", "--help"],
    ] {
        for redirection in [">&-", ">/dev/full"] {
            let out = redirected(args, redirection);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?} {redirection}: {err}");
            assert!(
                err.starts_with("hetscale: ") && err.trim_end().lines().count() == 1,
                "{err}"
            );
        }
    }
    let closed = redirected(&["paper"], ">&-");
    assert!(String::from_utf8_lossy(&closed.stderr).contains("standard output is closed"));
    // A closed stdin or stderr is no reason to fail.
    for redirection in ["<&-", "2>&-"] {
        let out = redirected(&["platform", "list"], redirection);
        assert!(out.status.success() && !out.stdout.is_empty(), "{out:?}");
    }
}

#[test]
fn a_usage_error_is_one_line() {
    for (args, expected) in [
        (
            &["run", "mm", "--n", "NaN"][..],
            "hetscale: invalid value 'NaN' for '--n <N>': invalid digit found in string; try \
             '--help'",
        ),
        (
            &["platform", "show"],
            "hetscale: the following required arguments were not provided: <NAME>; try '--help'",
        ),
        (
            &["run", "mm", "--nodes-x", "2"],
            "hetscale: unexpected argument '--nodes-x' found; a similar argument exists: \
             '--nodes'",
        ),
        (
            &["nonsense"],
            "hetscale: unrecognized subcommand 'nonsense'; try '--help'",
        ),
    ] {
        let out = hetscale().args(args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err, format!("{expected}\n"), "{args:?}");
    }
}

#[test]
fn help_and_version_are_clap_own() {
    let version = stdout_of(hetscale().arg("--version"));
    assert_eq!(version, format!("hetscale {}\n", env!("CARGO_PKG_VERSION")));
    let help = stdout_of(hetscale().args(["run", "--help"]));
    assert!(
        help.starts_with("Run one kernel on one machine") && help.contains("Usage: hetscale run")
    );
    // With no command, the help, on stderr, as a usage error.
    let out = hetscale().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: hetscale <COMMAND>"));
}
