//! `hetscale report DB` and the report `hetscale study` writes: the same page either way,
//! every study view in it, and one-line errors for a database without studies.

mod common;

use std::path::Path;

use common::{SMALL_GE, hetscale_in, one_line_error, spec_dir, stdout_of, succeeded};

#[test]
fn study_writes_the_report_and_report_rebuilds_it_from_the_database() {
    let dir = spec_dir(SMALL_GE);
    let printed = stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(
        printed.contains("Report: out/index.html"),
        "the study prints where its report is: {printed}"
    );
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    for view in ["setup", "es-vs-n", "psi", "contours", "approaches"] {
        assert!(
            page.contains(&format!("id=\"small-ge-{view}\"")),
            "view {view} is missing"
        );
    }
    assert!(dir.path().join("out/tables/small-ge-psi.csv").exists());

    let printed =
        stdout_of(hetscale_in(dir.path()).args(["report", "out/study.db", "--out", "again"]));
    assert_eq!(printed.trim(), "Report: again/index.html");
    let again = std::fs::read_to_string(dir.path().join("again/index.html")).unwrap();
    assert_eq!(again, page, "the database alone gives the same report");

    // Without --out, the report goes beside the database, where the study put it.
    let printed = stdout_of(hetscale_in(dir.path()).args(["report", "out/study.db"]));
    assert_eq!(printed.trim(), "Report: out/index.html");
}

#[test]
fn a_resumed_study_says_how_many_runs_it_reused() {
    let dir = spec_dir(SMALL_GE);
    let first = stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(!first.contains("Resumed"), "{first}");
    let stored: i64 = rusqlite::Connection::open(dir.path().join("out/study.db"))
        .unwrap()
        .query_row("SELECT count(*) FROM runs WHERE status = 'ok'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let again = stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(
        again.contains(&format!(
            "Resumed study \"small ge\": reused {stored} stored runs\n"
        )),
        "{again}"
    );
}

#[test]
fn a_study_that_settles_nothing_still_writes_its_report() {
    let spec = SMALL_GE
        .replace("target = 0.3", "target = 0.95")
        .replace("n_max = 2048", "n_max = 64");
    let dir = spec_dir(&spec);
    // It ends with its own exit code, once everything is written.
    let out = hetscale_in(dir.path())
        .args(["study", "spec.toml", "--out", "out"])
        .assert()
        .code(i32::from(hetscale::UNSETTLED))
        .get_output()
        .clone();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("Report: out/index.html"), "{printed}");
    let page = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    assert!(page.contains("did not settle"), "failures are stated");
}

#[test]
fn a_database_without_studies_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(hetscale_study::store::Store::open(&dir.path().join("none.db")).unwrap());
    let err = one_line_error(hetscale_in(dir.path()).args(["report", "none.db"]));
    assert!(
        err.contains("holds no study") && err.contains("hetscale study"),
        "{err}"
    );
    assert!(!dir.path().join("index.html").exists());

    std::fs::write(dir.path().join("empty.db"), b"").unwrap();
    let err = one_line_error(hetscale_in(dir.path()).args(["report", "empty.db"]));
    assert!(err.contains("empty file, not a hetscale database"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("empty.db")).unwrap(), b"");

    let err = one_line_error(hetscale_in(dir.path()).args(["report", "missing.db"]));
    assert!(err.contains("no study database at missing.db"), "{err}");
    assert!(
        !dir.path().join("missing.db").exists(),
        "nothing is created"
    );
}

/// Runs the small study in `dir` with its platform in a file named by a relative path;
/// returns the study's report page.
fn study_on_a_platform_file(dir: &Path) -> String {
    let platform = hetscale_machine::presets::sunwulf()
        .to_toml_string()
        .unwrap();
    std::fs::write(dir.join("plat.toml"), platform).unwrap();
    let spec = SMALL_GE.replace("platform = \"sunwulf\"", "platform = \"plat.toml\"");
    std::fs::write(dir.join("spec.toml"), spec).unwrap();
    stdout_of(hetscale_in(dir).args(["study", "spec.toml", "--out", "out"]));
    std::fs::read_to_string(dir.join("out/index.html")).unwrap()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn report_and_export_read_the_database_alone_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let page = study_on_a_platform_file(dir.path());
    let db = dir.path().join("out/study.db");
    let (files, bytes) = (
        listing(&dir.path().join("out")),
        std::fs::read(&db).unwrap(),
    );

    // From another directory, where plat.toml means nothing: the stored platform is used.
    let elsewhere = tempfile::tempdir().unwrap();
    let again = elsewhere.path().join("again");
    succeeded(
        hetscale_in(elsewhere.path())
            .arg("report")
            .arg(&db)
            .arg("--out")
            .arg(&again),
    );
    assert_eq!(
        std::fs::read_to_string(again.join("index.html")).unwrap(),
        page,
        "the database alone gives the same report"
    );
    let csv = stdout_of(hetscale_in(elsewhere.path()).args(["export", db.to_str().unwrap()]));
    assert!(csv.starts_with("study,purpose,kernel,"), "{csv}");

    assert_eq!(
        listing(&dir.path().join("out")),
        files,
        "no -wal, -shm or table added"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        bytes,
        "the database is unchanged"
    );
}

#[test]
fn export_names_the_studies_and_refuses_tampered_runs() {
    let dir = spec_dir(SMALL_GE);
    stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    let err = one_line_error(hetscale_in(dir.path()).args([
        "export",
        "out/study.db",
        "--study",
        "nosuch",
    ]));
    assert!(
        err.contains("has no study \"nosuch\": it holds \"small ge\""),
        "{err}"
    );
    let json = stdout_of(hetscale_in(dir.path()).args([
        "export",
        "out/study.db",
        "--study",
        "small ge",
        "--format",
        "json",
    ]));
    assert!(json.contains("\"study\": \"small ge\""), "{json}");

    rusqlite::Connection::open(dir.path().join("out/study.db"))
        .unwrap()
        .execute("UPDATE runs SET n = -5 WHERE id = 3", [])
        .unwrap();
    for command in ["export", "report"] {
        let err = one_line_error(hetscale_in(dir.path()).args([command, "out/study.db"]));
        assert!(
            err.contains("holds a run of study \"small ge\"")
                && err.contains("with n = -5")
                && err.contains("altered"),
            "{command}: {err}"
        );
    }
}

/// A database on a read-only filesystem: a private tmpfs mounted read-only in a mount
/// namespace of its own (root only; skipped, saying so, where namespaces are not allowed).
#[test]
fn a_database_on_a_read_only_filesystem_can_be_exported() {
    if !hetscale_testkit::require(hetscale_testkit::Need::MountNamespace) {
        return;
    }
    let dir = spec_dir(SMALL_GE);
    stdout_of(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    std::fs::create_dir(dir.path().join("ro")).unwrap();
    let script = format!(
        "mount -t tmpfs tmpfs ro && cp out/study.db ro/ && mount -o remount,ro ro && exec {} export ro/study.db",
        assert_cmd::cargo::cargo_bin("hetscale").display()
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(
        csv.starts_with("study,purpose,kernel,") && csv.lines().count() > 10,
        "{csv}"
    );
}
