//! One command-line convention across the commands (issue 32): the same flag names
//! (`--runs`, `--out`, `--nodes`, the old spellings still accepted), negative numbers as
//! values, every missing flag named at once, shell completions and man pages, the papers named.

mod common;

use common::{hetscale, json_of, one_line_error, stdout_of};

#[test]
fn paper_names_each_paper_by_authors_title_venue_and_year() {
    let text = stdout_of(hetscale().arg("paper"));
    for paper in [
        "X.-H. Sun and D. T. Rover, \"Scalability of Parallel Algorithm-Machine Combinations\", IEEE Transactions on Parallel and Distributed Systems, 1994",
        "Y. Chen, X.-H. Sun and M. Wu, \"Algorithm-system scalability of heterogeneous computing\"",
        "T. L. Williams and R. J. Parsons, \"Practical experience using a computational model",
        "A. Kalinov, \"Scalability analysis of matrix-matrix multiplication on heterogeneous clusters\"",
    ] {
        assert!(text.contains(paper), "{paper} missing:\n{text}");
    }
    assert!(!text.contains("seed"), "{text}");
}

#[test]
fn a_negative_number_is_a_value_and_gets_the_values_own_error() {
    let err = one_line_error(hetscale().args(["predict", "mm", "--nodes", "4", "--target", "-1"]));
    assert!(
        err.contains("--target -1 is not a speed-efficiency"),
        "{err}"
    );
    let err = one_line_error(hetscale().args([
        "study",
        "--command",
        "true",
        "--work",
        "n",
        "--nodes",
        "1",
        "--target",
        "-0.5",
        "--n-max",
        "64",
    ]));
    assert!(!err.contains("unexpected argument"), "{err}");
    assert!(err.contains("-0.5"), "{err}");
}

#[test]
fn every_missing_flag_of_a_command_study_is_named_in_one_error() {
    let err = one_line_error(hetscale().args(["study", "--command", "./solver {n}"]));
    for flag in ["--work", "--nodes", "--target", "--n-max"] {
        assert!(err.contains(flag), "{flag} not named: {err}");
    }
    let err = one_line_error(hetscale().args(["run", "--command", "true", "--n", "4"]));
    assert!(err.contains("--work"), "{err}");
}

#[test]
fn collectives_takes_nodes_and_runs_and_still_the_old_p_and_repetitions() {
    let rows = |args: &[&str]| {
        json_of(
            hetscale()
                .args(["collectives", "--sizes", "100", "--json"])
                .args(args),
        )
    };
    let new = rows(&["--nodes", "2,4", "--runs", "1"]);
    let text = new.to_string();
    assert!(
        text.contains(r#""p":4"#) && !text.contains(r#""p":6"#),
        "{text}"
    );
    assert_eq!(new, rows(&["--p", "2,4", "--repetitions", "1"]));
}

#[test]
fn export_writes_to_out_and_to_the_old_o_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // A study of a trivial command: a database with a few runs, in a second.
    let _ = hetscale()
        .args(["study", "--command", "true", "--work", "n", "--nodes", "1"])
        .args([
            "--target", "0.5", "--n-max", "16", "--runs", "1", "--warmup", "0", "--quiet",
        ])
        .arg("--db")
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    for (flag, file) in [("--out", "a.csv"), ("-o", "b.csv"), ("--output", "c.csv")] {
        let path = dir.path().join(file);
        stdout_of(hetscale().arg("export").arg(&db).arg(flag).arg(&path));
        let csv = std::fs::read_to_string(&path).unwrap();
        assert!(
            csv.starts_with("study,") && csv.contains("\ncommand,sample,"),
            "{flag}: {csv}"
        );
    }
}

#[test]
fn completions_script_knows_the_subcommands() {
    let bash = stdout_of(hetscale().args(["completions", "bash"]));
    for sub in ["study", "predict", "reproduce", "completions", "man"] {
        assert!(
            bash.contains(sub),
            "{sub} missing from the bash completions"
        );
    }
    let err = one_line_error(hetscale().args(["completions", "cmd.exe"]));
    assert!(err.contains("invalid value 'cmd.exe'"), "{err}");
}

#[test]
fn man_prints_the_page_or_writes_one_per_command() {
    let page = stdout_of(hetscale().arg("man"));
    assert!(
        page.contains(".TH hetscale 1") && page.contains("completions"),
        "{page}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man1");
    stdout_of(hetscale().arg("man").arg("--out").arg(&out));
    for page in ["hetscale.1", "hetscale-study.1", "hetscale-platform-show.1"] {
        let roff = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(roff.contains(".TH"), "{page}: {roff}");
    }
}
