//! `hetscale export --format extrap` read back by Extra-P's own text reader: one study per
//! file, every point with data, each region modelled.

mod common;

use std::path::Path;

use assert_cmd::Command;

/// A small GE study on simulated Sunwulf (three configurations).
const SPEC: &str = include_str!("specs/small-ge.toml");

fn hetscale(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("hetscale")
        .expect("binary built")
        .env("HETSCALE_CACHE_DIR", "")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = hetscale(dir, args);
    assert!(
        out.status.success(),
        "hetscale {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn extra_p_models_each_study_of_a_database_holding_two_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let mm = SPEC
        .replace("name = \"small ge\"", "name = \"small mm\"")
        .replace("kernel = \"ge\"", "kernel = \"mm\"")
        .replace("target = 0.3", "target = 0.2")
        .replace("[kernel_options]\npivoting = \"none\"\n", "");
    std::fs::write(dir.path().join("ge.toml"), SPEC).unwrap();
    std::fs::write(dir.path().join("mm.toml"), mm).unwrap();
    for spec in ["ge.toml", "mm.toml"] {
        run_ok(dir.path(), &["study", spec, "--db", "s.db", "--out", "out"]);
    }

    let out = hetscale(dir.path(), &["export", "s.db", "--format", "extrap"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("\"small ge\", \"small mm\": export one with --study NAME"),
        "{err}"
    );

    for study in ["small ge", "small mm"] {
        let text = run_ok(
            dir.path(),
            &["export", "s.db", "--format", "extrap", "--study", study],
        );
        assert!(!text.contains("DATA \n"), "an empty point: {text}");
        assert!(text.contains("\nMETRIC time_s\n"), "{text}");
        let points = text.lines().find(|l| l.starts_with("POINTS")).unwrap();
        let data = text.lines().filter(|l| l.starts_with("DATA ")).count();
        assert_eq!(points.matches('(').count(), data, "{text}");
        let file = dir.path().join(format!("{study}.txt"));
        std::fs::write(&file, &text).unwrap();
        let Some(models) = common::extrap_models(&file) else {
            return;
        };
        assert_eq!(models.len(), 1, "{models:?}");
        assert_eq!(models[0].0, study);
        assert!(models[0].1.contains('n'), "a model in n: {models:?}");
    }
}
