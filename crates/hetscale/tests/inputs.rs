//! What hetscale reads and where it writes, as an attacker or a careless user would give it:
//! files that never end, a tampered or damaged study database, a start that fails, a platform
//! file written over, and inputs too long to echo.

mod common;

use std::path::Path;

use common::{hetscale_in, one_line_error, stdout_of};

/// Runs of `mm` on Sunwulf (`calibrate --runs` fits them).
const RUNS: &str = "configuration,nodes,kernel,n,time_s\n\
    C'_2,\"server:1,sunfire:1\",mm,96,0.25\n\
    C'_2,\"server:1,sunfire:1\",mm,128,0.45\n\
    C'_4,\"server:1,sunblade:1,sunfire:2\",mm,160,0.5\n";

/// A study of `/bin/true` stored in `dir/s/study.db`: a few milliseconds of runs, enough
/// for `predict --from`, `export` and `report` to read. It settles nothing (exit code 3).
fn study_db(dir: &Path) -> std::path::PathBuf {
    hetscale_in(dir)
        .args([
            "study",
            "--command",
            "/bin/true",
            "--work",
            "n^3",
            "--nodes",
            "1",
            "--nodes",
            "2",
            "--target",
            "0.5",
            "--n-max",
            "64",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--out",
            "s",
            "-q",
        ])
        .assert()
        .code(3);
    dir.join("s/study.db")
}

/// The one-line errors of `predict --from`, `export` and `report` on `db` in `dir`.
fn readers_errors(dir: &Path, db: &str) -> [String; 3] {
    [
        one_line_error(hetscale_in(dir).args(["predict", "--from", db, "--nodes", "4"])),
        one_line_error(hetscale_in(dir).args(["export", db])),
        one_line_error(hetscale_in(dir).args(["report", db, "--out", "r"])),
    ]
}

#[cfg(unix)]
#[test]
fn a_file_that_never_ends_is_read_no_further_than_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let predict = one_line_error(hetscale_in(d).args([
        "predict",
        "--runs",
        "/dev/zero",
        "--work",
        "2*n^3",
        "--platform",
        "sunwulf",
        "--nodes",
        "sunblade:16",
        "--target",
        "0.5",
    ]));
    assert!(
        predict.contains("/dev/zero: larger than 64 MiB, the cap on a runs file: split it"),
        "{predict}"
    );
    let calibrate = one_line_error(hetscale_in(d).args(["calibrate", "--runs", "/dev/zero"]));
    assert!(calibrate.contains("the cap on a runs file"), "{calibrate}");
    let study = one_line_error(hetscale_in(d).args(["study", "/dev/zero", "--out", "o"]));
    assert!(study.contains("the cap on a study spec"), "{study}");
    assert!(!d.join("o").exists());
    let platform = one_line_error(hetscale_in(d).args(["platform", "validate", "/dev/zero"]));
    assert!(
        platform.contains("the cap on a platform file"),
        "{platform}"
    );
}

#[test]
fn a_tampered_run_time_is_refused_naming_the_database_the_run_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = study_db(dir.path());
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE runs SET time_s = 1e300 WHERE id = (SELECT min(id) FROM runs)",
            [],
        )
        .unwrap();
    for err in readers_errors(dir.path(), "s/study.db") {
        assert!(
            err.contains("study database s/study.db")
                && err.contains("run of study \"command\" on \"1\" at n = 8")
                && err.contains("time_s = 1e300")
                && err.contains("altered"),
            "{err}"
        );
    }
    assert!(!dir.path().join("r").exists());
}

#[test]
fn a_damaged_database_is_one_line_naming_it_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let db = study_db(dir.path());
    let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.set_len(8192).unwrap();
    drop(file);
    for err in readers_errors(dir.path(), "s/study.db") {
        assert!(
            err.contains("study database s/study.db: is damaged (SQLite: ")
                && err.contains("restore it from a copy"),
            "{err}"
        );
    }
    std::fs::write(dir.path().join("notes.db"), vec![b'x'; 5000]).unwrap();
    // None of them has a --db to change.
    for err in readers_errors(dir.path(), "notes.db") {
        assert!(
            err.contains("notes.db: is not a hetscale database") && !err.contains("--db path"),
            "{err}"
        );
    }
}

#[test]
fn a_study_refused_for_its_database_leaves_no_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notadb.db"), vec![b'x'; 5000]).unwrap();
    for out in ["s1", "s2/a/b"] {
        let err = one_line_error(hetscale_in(d).args([
            "study",
            "--command",
            "/bin/true",
            "--work",
            "n^3",
            "--nodes",
            "1",
            "--target",
            "0.5",
            "--n-max",
            "64",
            "--out",
            out,
            "--db",
            "notadb.db",
        ]));
        assert!(err.contains("use another --db path"), "{err}");
        let top = out.split('/').next().unwrap();
        assert!(!d.join(top).exists(), "--out {out} left {top}");
    }
}

#[test]
fn write_platform_extends_the_platform_it_calibrated_and_refuses_another() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("runs.csv"), RUNS).unwrap();
    let local = stdout_of(hetscale_in(d).args(["platform", "show", "local"]));
    std::fs::write(d.join("mine.toml"), &local).unwrap();
    let err = one_line_error(hetscale_in(d).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--platform",
        "sunwulf",
        "--write-platform",
        "mine.toml",
    ]));
    assert!(
        err.contains("mine.toml describes platform \"local\"")
            && err.contains("not \"sunwulf\"")
            && err.contains("write to a new file"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(d.join("mine.toml")).unwrap(), local);

    // Sunwulf's own file, described in the user's words and with an entry of another
    // kernel: both kept, and mm's entry added.
    let sunwulf = stdout_of(hetscale_in(d).args(["platform", "show", "sunwulf"]));
    let description = sunwulf.lines().nth(1).unwrap();
    assert!(description.starts_with("description = "), "{description}");
    let own = format!(
        "{}\n[[machine.compute]]\nkernel = \"ge\"\nrate_fraction = 0.5\n",
        sunwulf.replace(description, "description = \"our Sunwulf\"")
    );
    std::fs::write(d.join("sunwulf.toml"), &own).unwrap();
    stdout_of(hetscale_in(d).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--platform",
        "sunwulf",
        "--write-platform",
        "sunwulf.toml",
    ]));
    let written = std::fs::read_to_string(d.join("sunwulf.toml")).unwrap();
    assert!(
        written.contains("description = \"our Sunwulf\"")
            && written.contains("kernel = \"ge\"\nkind = \"*\"\nrate_fraction = 0.5")
            && written.contains("kernel = \"mm\""),
        "{written}"
    );
}

#[test]
fn huge_inputs_are_echoed_cut_to_a_readable_length() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let time = "9".repeat(1_000_000);
    std::fs::write(
        d.join("big.csv"),
        format!("configuration,nodes,kernel,n,time_s\nC_1,sunblade:1,ge,310,{time}\n"),
    )
    .unwrap();
    let predict = |runs: &[&str], nodes: &str| {
        one_line_error(
            hetscale_in(d)
                .args(["predict", "--work", "2*n^3", "--platform", "sunwulf"])
                .args(runs)
                .args(["--nodes", nodes, "--target", "0.5"]),
        )
    };
    let field = predict(&["--runs", "big.csv"], "sunblade:16");
    assert!(
        field.len() < 300 && field.contains("(1000000 characters)"),
        "{} bytes",
        field.len()
    );
    // A long list of nodes each asked for twice: named once, cut.
    let list = vec!["sunblade:1"; 2000].join(",");
    let nodes = predict(&["--overhead", "p*n"], &list);
    assert!(nodes.len() < 400, "{} bytes: {nodes:.400}", nodes.len());
    let unknown = predict(&["--overhead", "p*n"], &"x".repeat(100_000));
    assert!(unknown.len() < 500, "{} bytes", unknown.len());
    let kernel = "k".repeat(100_000);
    std::fs::write(
        d.join("kernel.csv"),
        format!("configuration,nodes,kernel,n,time_s\nC_1,sunblade:1,{kernel},310,0.5\n"),
    )
    .unwrap();
    let unknown = one_line_error(hetscale_in(d).args(["calibrate", "--runs", "kernel.csv"]));
    assert!(
        unknown.contains("unknown kernel") && unknown.len() < 400,
        "{} bytes",
        unknown.len()
    );
}

#[test]
fn the_replicate_hint_is_given_only_for_more_nodes_than_the_platform_has() {
    let dir = tempfile::tempdir().unwrap();
    let predict = |nodes: &str| {
        one_line_error(hetscale_in(dir.path()).args([
            "predict",
            "--work",
            "2*n^3",
            "--overhead",
            "p*n",
            "--platform",
            "sunwulf",
            "--nodes",
            nodes,
            "--target",
            "0.5",
        ]))
    };
    for beyond in ["sunblade:100", "100"] {
        let err = predict(beyond);
        assert!(err.contains("add --replicate K"), "{beyond}: {err}");
    }
    for wrong in ["sunblade:1x", "sunblade:-100", "gromit", "hpc-1,hpc-1"] {
        let err = predict(wrong);
        assert!(!err.contains("--replicate"), "{wrong}: {err}");
    }
}
