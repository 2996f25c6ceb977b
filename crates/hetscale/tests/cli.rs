//! End-to-end tests of the `hetscale` binary.

mod common;

use common::{
    SMALL_GE, failure_of, hetscale, hetscale_in, hetscale_process, json_of, one_line_error,
    stdout_of, succeeded,
};
use serde_json::Value;

#[test]
fn paper_json_has_every_table_with_the_documented_shape() {
    let tables = json_of(hetscale().args(["paper", "--json"]));
    let tables = tables["tables"].as_array().unwrap();
    let ids: Vec<&str> = tables.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 13);
    assert!(ids.contains(&"tpds-table1") && ids.contains(&"hbsp-improvement"));
    for t in tables {
        for key in ["id", "title", "source", "rows", "notes"] {
            assert!(t.get(key).is_some(), "{key} missing in {}", t["id"]);
        }
        for row in t["rows"].as_array().unwrap() {
            assert!(row["label"].is_string() && row["computed"].is_number());
            assert!(row["published"].is_number() || row["published"].is_null());
        }
    }
    // The gromit share of Williams & Parsons section 4.4.
    let shares = tables.iter().find(|t| t["id"] == "hbsp-shares").unwrap();
    let gromit = shares["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "c_j of gromit, p=2")
        .unwrap();
    assert!((gromit["computed"].as_f64().unwrap() - 0.867).abs() < 5e-4);
}

/// The message a panicking `launch` leaves.
fn panic_message(launch: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(launch).expect_err("the launch panics");
    payload
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted panic message")
}

#[test]
fn a_launch_that_ends_otherwise_than_expected_names_the_command_and_shows_stderr() {
    let failed = panic_message(|| {
        succeeded(hetscale().args(["paper", "--only", "nosuchtable"]));
    });
    assert!(
        failed.contains("\"paper\" \"--only\" \"nosuchtable\"")
            && failed.contains("hetscale: no table id contains")
            && failed.contains("to see the ids"),
        "{failed}"
    );
    let passed = panic_message(|| {
        one_line_error(hetscale().args(["platform", "list"]));
    });
    assert!(
        passed.contains("Unexpected success") && passed.contains("\"platform\" \"list\""),
        "{passed}"
    );
}

#[test]
fn paper_text_names_the_values_that_do_not_reproduce() {
    let out = hetscale()
        .args(["paper", "--only", "tpds-table1"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Not reproduced: psi(1, 8) is published as 0.215 but its inputs give 0.227"),
        "{text}"
    );
}

#[test]
fn default_study_runs_and_reports_psi() {
    let dir = tempfile::tempdir().unwrap();
    let out = succeeded(hetscale_in(dir.path()).args(["study", "--json", "--out", "out"]));
    let studies: Value = serde_json::from_slice(&out.stdout).unwrap();
    let studies = &studies["studies"];
    let ge = &studies[0];
    // GE holds its calibrated machine's E_s at C_2's published N = 310, near Table 5's 0.3
    // (MM's one-run base fit passes through its 0.2).
    let held = ge["spec"]["target"].as_f64().unwrap();
    assert!((held - 0.3).abs() < 0.05 && held != 0.3, "{held}");
    assert_eq!(ge["measured"]["points"].as_array().unwrap().len(), 5);
    assert_eq!(ge["measured"]["psi"]["labels"].as_array().unwrap().len(), 5);
    assert_eq!(studies[1]["spec"]["target"], 0.2);
    // With --json, stdout stays JSON and the report's path goes to stderr.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Report: out/index.html"), "{err}");
    let index = std::fs::read_to_string(dir.path().join("out/index.html")).unwrap();
    // The default study is the JPDC reproduction: the published values sit beside.
    assert!(
        index.contains("id=\"published-beside\""),
        "no published-beside section"
    );
    assert!(index.contains(&format!("held E_s = {held:.4}")), "{held}");
    assert_eq!(studies.as_array().unwrap().len(), 3, "GE, MM and conv2d");
    // The answer first: the summary's N are the approach's own, its verdict computed from them.
    let summary = &ge["summary"]["approaches"][0];
    assert_eq!(summary["approach"], "measured");
    let points = ge["measured"]["points"].as_array().unwrap();
    let n = |i: usize| points[i]["n"].as_f64().unwrap();
    for (i, row) in summary["rows"].as_array().unwrap().iter().enumerate() {
        assert_eq!(row["n"].as_f64().unwrap(), n(i), "{row}");
    }
    let verdict = summary["verdict_line"].as_str().unwrap();
    let growth = format!("N grows {:.1}x from C_2 to C_32", n(4) / n(0));
    assert!(
        verdict.starts_with("scales: ") && verdict.contains(&growth),
        "{verdict}"
    );
    // The page opens with the summary and the key figure, the definitions after them.
    let at = |what: &str| index.find(what).unwrap_or_else(|| panic!("no {what}"));
    assert!(at("id=\"summary\"") < at("id=\"summary-figure\""));
    assert!(at("id=\"summary-figure\"") < at("Isospeed-efficiency scalability (Chen"));
    assert!(at("Isospeed-efficiency scalability (Chen") < at("<nav>"));
    // In text, the last lines are the summaries (the rerun resumes from the database).
    let text = stdout_of(hetscale_in(dir.path()).args(["study", "--out", "out"]));
    let last = text.rsplit("\nSummary of ").next().unwrap();
    assert!(last.starts_with("jpdc-conv2d (E_s = 0.2 held):"), "{text}");
    assert!(last.contains("\nmeasured: scales: N grows"), "{last}");
    let report_line = text.find("Report: out/index.html").unwrap();
    assert!(
        report_line < text.find("\nSummary of jpdc-ge").unwrap(),
        "{text}"
    );
    // One target per block: the reproduction's header names the paper's, the numbers the held.
    assert!(
        text.contains("== jpdc-ge: the paper's values (published at E_s = 0.3) beside hetscale's"),
        "{text}"
    );
    let beside = std::fs::read_to_string(dir.path().join("out/published-beside.json")).unwrap();
    let values: Value = serde_json::from_str(&beside).unwrap();
    let roles: Vec<&str> = values
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["role"].as_str())
        .collect();
    assert!(roles.contains(&"calibration") && roles.contains(&"validation"));
    // `hetscale reproduce --json`'s row shape.
    let keys = [
        "paper",
        "table",
        "item",
        "quantity",
        "unit",
        "published",
        "tool",
        "approach",
        "role",
        "rel_err_percent",
    ];
    let first = values[0].as_object().unwrap();
    assert_eq!(first.len(), keys.len(), "{first:?}");
    assert!(keys.iter().all(|k| first.contains_key(*k)), "{first:?}");
    let psi = values
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["quantity"] == "psi")
        .unwrap();
    assert_eq!(psi["item"], "psi(C_2,C_4)");
}

#[test]
fn bad_input_is_a_one_line_error_and_nonzero_exit() {
    for args in [
        vec!["paper", "--only", "nosuchtable"],
        vec!["study", "missing.toml"],
    ] {
        let err = one_line_error(hetscale().args(&args));
        assert!(err.starts_with("hetscale: "), "{err}");
    }
    failure_of(hetscale().arg("no-such-command"));
}

#[test]
fn a_study_name_that_is_a_path_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("victim.json"), "precious").unwrap();
    let spec = SMALL_GE;
    for name in ["../../victim", "/tmp/hetscale-absolute-victim", "a/b"] {
        let text = spec.replace("name = \"small ge\"", &format!("name = \"{name}\""));
        std::fs::write(dir.path().join("spec.toml"), text).unwrap();
        let err =
            one_line_error(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "x/y"]));
        assert!(
            err.contains("spec.toml line 3") && err.contains("contains '/'"),
            "{name}: {err}"
        );
        assert!(
            !dir.path().join("x").exists(),
            "{name}: nothing ran, nothing written"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("victim.json")).unwrap(),
        "precious"
    );
    assert!(!std::path::Path::new("/tmp/hetscale-absolute-victim.json").exists());
}

#[test]
fn run_prints_the_paths_of_the_trace_and_report_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let run = |json: bool| {
        let out = succeeded(
            hetscale_in(dir.path())
                .args(["run", "mm", "--backend", "sim", "--platform", "sunwulf"])
                .args([
                    "--nodes", "2", "--n", "16", "--trace", "t.json", "--report", "r",
                ])
                .args(json.then_some("--json")),
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (text, _) = run(false);
    assert!(
        text.ends_with("Trace: t.json\nReport: r/index.html\n"),
        "{text}"
    );
    // With --json, stdout stays one JSON document and the paths go to stderr.
    let (json, err) = run(true);
    assert!(serde_json::from_str::<Value>(&json).is_ok(), "{json}");
    assert!(
        err.contains("Trace: t.json") && err.contains("Report: r/index.html"),
        "{err}"
    );
    assert!(dir.path().join("t.json").is_file() && dir.path().join("r/index.html").is_file());
}

#[test]
fn export_refuses_missing_and_foreign_files() {
    let dir = std::env::temp_dir().join(format!("hetscale-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.db");
    std::fs::write(&junk, "not sqlite at all, just text").unwrap();
    let notes = dir.join("notes.db");
    rusqlite::Connection::open(&notes)
        .unwrap()
        .execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    let empty = dir.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    for (path, expect) in [
        (dir.join("none.db"), "no study database"),
        (junk, "not a hetscale database"),
        (
            notes.clone(),
            "not a hetscale database (an SQLite file without hetscale's tables)",
        ),
        (empty.clone(), "is an empty file, not a hetscale database"),
        (dir.join("x".repeat(300)), "File name too long"),
    ] {
        let err = one_line_error(hetscale().arg("export").arg(&path));
        assert!(err.contains(expect), "{err}");
    }
    let tables: Vec<String> = rusqlite::Connection::open(&notes)
        .unwrap()
        .prepare("SELECT name FROM sqlite_master")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        tables,
        ["notes"],
        "export added nothing to another application's file"
    );
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    let out = hetscale()
        .args(["export", "x.db", "--format", "xml"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("use csv, json or extrap"));
}

#[test]
fn collectives_on_sim_match_the_model_row_by_row() {
    let rows =
        json_of(hetscale().args(["collectives", "--json", "--p", "2,4", "--sizes", "100,200"]));
    let rows = rows["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 2 * 7);
    for row in rows {
        let (a, p) = (
            row["actual_s"].as_f64().unwrap(),
            row["predicted_s"].as_f64().unwrap(),
        );
        assert!((a - p).abs() <= 1e-12 * p, "{row}");
        for key in ["collective", "variant", "p", "size_bytes"] {
            assert!(row.get(key).is_some());
        }
    }
    failure_of(hetscale().args(["collectives", "--p", "11"]));
}

/// Runs `args` with stdout a pipe whose reader is already gone; returns status and stderr.
fn with_closed_stdout(args: &[&str], dir: &std::path::Path) -> (Option<i32>, String) {
    let (reader, writer) = os_pipe::pipe().unwrap();
    drop(reader);
    let out = hetscale_process()
        .args(args)
        .current_dir(dir)
        .stdout(writer)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn every_command_ends_quietly_when_stdout_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/small-ge.toml");
    let commands: [&[&str]; 8] = [
        &["paper"],
        &["paper", "--json"],
        &["platform", "list"],
        &["platform", "show", "sunwulf"],
        &["collectives", "--p", "2", "--sizes", "100"],
        &["predict", "mm", "--nodes", "sunblade:4", "--target", "0.2"],
        &[
            "run",
            "mm",
            "--backend",
            "sim",
            "--platform",
            "sunwulf",
            "--n",
            "64",
        ],
        // --quiet: off a terminal, a study logs its progress on stderr.
        &["study", spec, "--out", "out", "--db", "study.db", "--quiet"],
    ];
    for args in commands {
        let (code, stderr) = with_closed_stdout(args, dir.path());
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "hetscale {args:?}");
    }
    // The study's work was done and kept although nobody read its tables.
    assert!(dir.path().join("out/index.html").exists());
}
