//! Where hetscale writes: never over a file the command reads, never through a symbolic link
//! planted in its output directory.

mod common;

use std::path::Path;

use common::{SMALL_GE, hetscale_in, one_line_error, spec_dir, succeeded};

/// Runs of mm on Sunwulf, as `calibrate --runs` reads them.
const RUNS: &str = "configuration,nodes,kernel,n,time_s\n\
    C'_2,\"server:1,sunfire:1\",mm,96,0.25\n\
    C'_2,\"server:1,sunfire:1\",mm,128,0.45\n\
    C'_4,\"server:1,sunblade:1,sunfire:2\",mm,160,0.5\n";

/// A directory holding the small GE study's database as `s.db` (and its report in `out`).
fn with_study() -> tempfile::TempDir {
    let dir = spec_dir(SMALL_GE);
    succeeded(hetscale_in(dir.path()).args([
        "study",
        "spec.toml",
        "--db",
        "s.db",
        "--out",
        "out",
        "--quiet",
    ]));
    dir
}

/// Whether `db` still is the study's database: `export` reads it.
fn still_a_study_database(dir: &Path, db: &str) -> bool {
    let csv = succeeded(hetscale_in(dir).args(["export", db])).stdout;
    String::from_utf8(csv).unwrap().starts_with("study,")
}

fn assert_refused(err: &str, output: &str, input: &str) {
    assert!(
        err.starts_with(&format!("hetscale: cannot write {output}: it is "))
            && err.contains(&format!("{input}, which this command reads"))
            && err.ends_with("write to another path"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn an_output_that_is_the_study_database_is_refused_and_the_database_kept() {
    let dir = with_study();
    let path = dir.path();
    std::os::unix::fs::symlink("s.db", path.join("link.db")).unwrap();
    std::fs::hard_link(path.join("s.db"), path.join("hard.db")).unwrap();
    for output in ["s.db", "./s.db", "link.db", "hard.db"] {
        let err = one_line_error(hetscale_in(path).args(["export", "s.db", "-o", output]));
        assert_refused(&err, output, "the study database s.db");
    }
    let err = one_line_error(hetscale_in(path).args([
        "calibrate",
        "--db",
        "s.db",
        "--write-platform",
        "s.db",
    ]));
    assert_refused(&err, "--write-platform s.db", "the study database s.db");
    // A database named like the report's page, reported into its own directory.
    std::fs::create_dir(path.join("r")).unwrap();
    std::fs::copy(path.join("s.db"), path.join("r/index.html")).unwrap();
    let err = one_line_error(hetscale_in(path).args(["report", "r/index.html"]));
    assert!(
        err.contains("cannot write r/index.html: it is the study database r/index.html"),
        "{err}"
    );
    assert!(still_a_study_database(path, "s.db") && still_a_study_database(path, "r/index.html"));
    // Another output is written as before.
    succeeded(hetscale_in(path).args(["export", "s.db", "-o", "s.csv"]));
}

#[test]
fn an_output_that_is_the_runs_or_the_platform_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    std::fs::write(path.join("runs.csv"), RUNS).unwrap();
    let err = one_line_error(hetscale_in(path).args([
        "calibrate",
        "--runs",
        "runs.csv",
        "--write-platform",
        "runs.csv",
    ]));
    assert_refused(&err, "--write-platform runs.csv", "--runs runs.csv");
    assert_eq!(
        std::fs::read_to_string(path.join("runs.csv")).unwrap(),
        RUNS
    );
    let platform = succeeded(hetscale_in(path).args(["platform", "show", "sunwulf"])).stdout;
    std::fs::write(path.join("p.toml"), &platform).unwrap();
    let run = ["run", "mm", "--backend", "sim", "--platform", "p.toml"];
    for output in [["--trace", "p.toml"], ["--dump-result", "p.toml"]] {
        let err = one_line_error(
            hetscale_in(path)
                .args(run)
                .args(["--nodes", "2", "--n", "16"])
                .args(output),
        );
        assert!(
            err.contains("cannot write p.toml: it is the platform file p.toml"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(path.join("p.toml")).unwrap(), platform);
}

/// `dir/victim.txt` and an empty `dir/vdir`, and `dir/<out>` with `index.html` a link to the
/// one and, if `tables`, `tables` a link to the other: what someone who can write into a
/// shared output directory plants there.
#[cfg(unix)]
fn plant_links(dir: &Path, out: &str, tables: bool) {
    std::fs::write(dir.join("victim.txt"), "precious").unwrap();
    std::fs::create_dir_all(dir.join("vdir")).unwrap();
    let out = dir.join(out);
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(dir.join("victim.txt"), out.join("index.html")).unwrap();
    if tables {
        std::os::unix::fs::symlink(dir.join("vdir"), out.join("tables")).unwrap();
    }
}

#[cfg(unix)]
fn assert_untouched(dir: &Path) {
    assert_eq!(
        std::fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "precious"
    );
    assert_eq!(std::fs::read_dir(dir.join("vdir")).unwrap().count(), 0);
}

#[cfg(unix)]
fn assert_link_refused(err: &str, link: &str) {
    assert!(
        err.contains(&format!("{link}: it is a symbolic link"))
            && err.ends_with("remove the link or write elsewhere"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_study_follows_no_link_planted_in_its_out() {
    let dir = spec_dir(SMALL_GE);
    let path = dir.path();
    let study = ["study", "spec.toml", "--quiet", "--out"];
    plant_links(path, "a", true);
    let err = one_line_error(hetscale_in(path).args(study).arg("a"));
    assert_link_refused(&err, "a/tables");
    assert_untouched(path);
    // A link at a file's place is replaced by the file; the file it led to is kept.
    std::fs::remove_file(path.join("a/tables")).unwrap();
    succeeded(hetscale_in(path).args(study).arg("a"));
    assert!(!path.join("a/index.html").is_symlink());
    assert_untouched(path);
    // SQLite would follow a link at the default database.
    std::fs::create_dir(path.join("b")).unwrap();
    std::os::unix::fs::symlink(path.join("victim.txt"), path.join("b/study.db")).unwrap();
    let err = one_line_error(hetscale_in(path).args(study).arg("b"));
    assert_link_refused(&err, "b/study.db");
    assert_untouched(path);
}

#[cfg(unix)]
#[test]
fn a_report_follows_no_link_planted_in_its_out() {
    let dir = with_study();
    let path = dir.path();
    plant_links(path, "shared", true);
    let err = one_line_error(hetscale_in(path).args(["report", "s.db", "--out", "shared"]));
    assert_link_refused(&err, "shared/tables");
    assert_untouched(path);
    std::fs::remove_file(path.join("shared/tables")).unwrap();
    succeeded(hetscale_in(path).args(["report", "s.db", "--out", "shared"]));
    assert!(!path.join("shared/index.html").is_symlink());
    assert!(path.join("shared/tables").is_dir());
    assert_untouched(path);
}
