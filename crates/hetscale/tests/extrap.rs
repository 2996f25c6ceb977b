//! `hetscale export --format extrap` read back by Extra-P's own text reader: one study per
//! file, every point with data, each region modelled.

mod common;

use common::{SMALL_GE, hetscale_in, one_line_error, stdout_of};

#[test]
fn extra_p_models_each_study_of_a_database_holding_two_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let mm = SMALL_GE
        .replace("name = \"small ge\"", "name = \"small mm\"")
        .replace("kernel = \"ge\"", "kernel = \"mm\"")
        .replace("target = 0.3", "target = 0.2")
        .replace("[kernel_options]\npivoting = \"none\"\n", "");
    std::fs::write(dir.path().join("ge.toml"), SMALL_GE).unwrap();
    std::fs::write(dir.path().join("mm.toml"), mm).unwrap();
    for spec in ["ge.toml", "mm.toml"] {
        stdout_of(hetscale_in(dir.path()).args(["study", spec, "--db", "s.db", "--out", "out"]));
    }

    let err =
        one_line_error(hetscale_in(dir.path()).args(["export", "s.db", "--format", "extrap"]));
    assert!(
        err.contains("\"small ge\", \"small mm\": export one with --study NAME"),
        "{err}"
    );

    for study in ["small ge", "small mm"] {
        let text = stdout_of(
            hetscale_in(dir.path())
                .args(["export", "s.db", "--format", "extrap", "--study", study]),
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
