//! Input the CLI must refuse in one line, or advise on, rather than silently misuse (issue
//! 31): platform entries that name nothing, labels that would print terminal escapes, and a
//! target outside the searched range.

mod common;

use common::{SMALL_GE, hetscale, hetscale_in, one_line_error, spec_dir, stdout_of};

/// The `sunwulf` preset as a file in a new directory, with `extra` appended.
fn sunwulf_with(extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let preset = stdout_of(hetscale().args(["platform", "show", "sunwulf"]));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    std::fs::write(&file, format!("{preset}\n{extra}")).unwrap();
    (dir, file)
}

const TYPO_COLLECTIVE: &str = "[[network.collective]]\nname = \"braodcast\"\nbase_s = 1.0\n";

#[test]
fn a_misspelt_collective_is_refused_by_validate_predict_run_and_study() {
    // The preset ends in a [[machine.collective]] table: append a key-less top-level table.
    let (dir, file) = sunwulf_with(TYPO_COLLECTIVE);
    let file = file.to_str().unwrap();
    let expected = "network.collective \"braodcast\" names no collective: use one of broadcast, \
                    scatter, scatterv, gather, gatherv, allgather, reduce, allreduce, alltoall, \
                    alltoallv";
    for args in [
        vec!["platform", "validate", file],
        vec![
            "predict",
            "ge",
            "--platform",
            file,
            "--nodes",
            "2",
            "--target",
            "0.3",
        ],
        vec![
            "run",
            "mm",
            "--platform",
            file,
            "--nodes",
            "2",
            "--n",
            "16",
            "--backend",
            "sim",
        ],
    ] {
        let err = one_line_error(hetscale().args(&args));
        assert!(err.ends_with(expected), "{args:?}: {err}");
    }
    let spec = SMALL_GE.replace("platform = \"sunwulf\"", &format!("platform = {file:?}"));
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let err = one_line_error(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(err.ends_with(expected), "{err}");
}

#[test]
fn a_collective_listed_twice_is_refused() {
    let (_dir, file) = sunwulf_with(
        "[[network.collective]]\nname = \"broadcast\"\nbase_s = 1.0\n\
         [[network.collective]]\nname = \"broadcast\"\nbase_s = 2.0\n",
    );
    let err = one_line_error(hetscale().args(["platform", "validate"]).arg(&file));
    assert!(
        err.ends_with("network.collective \"broadcast\" is listed twice: keep one"),
        "{err}"
    );
}

#[test]
fn a_compute_rate_for_no_kernel_is_refused_by_validate_predict_run_and_study() {
    let (dir, file) = sunwulf_with("[[machine.compute]]\nkernel = \"mn\"\nrate_fraction = 0.5\n");
    let file = file.to_str().unwrap();
    let expected = "platform sunwulf: machine.compute kernel \"mn\" is no kernel: use one of mm, \
                    ge, conv2d, summa, burg, slalom or \"*\"";
    for args in [
        vec!["platform", "validate", file],
        vec![
            "predict",
            "ge",
            "--platform",
            file,
            "--nodes",
            "2",
            "--target",
            "0.3",
        ],
        vec![
            "run",
            "mm",
            "--platform",
            file,
            "--nodes",
            "2",
            "--n",
            "16",
            "--backend",
            "sim",
        ],
    ] {
        let err = one_line_error(hetscale().args(&args));
        assert!(err.ends_with(expected), "{args:?}: {err}");
    }
    let spec = SMALL_GE.replace("platform = \"sunwulf\"", &format!("platform = {file:?}"));
    std::fs::write(dir.path().join("spec.toml"), spec).unwrap();
    let err = one_line_error(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(err.ends_with(expected), "{err}");
    let (_dir, kind) =
        sunwulf_with("[[machine.compute]]\nkind = \"sunbalde\"\nrate_fraction = 0.5\n");
    let err = one_line_error(hetscale().args(["platform", "validate"]).arg(&kind));
    assert!(
        err.ends_with(
            "machine.compute kind \"sunbalde\" is no node's kind: use one of server, sunblade, \
             sunfire or \"*\""
        ),
        "{err}"
    );
}

#[test]
fn a_label_with_terminal_escapes_is_refused_without_printing_them() {
    let spec = SMALL_GE.replace("label = \"C_2\"", "label = \"C1\\u001b]0;pwned\\u0007\"");
    let dir = spec_dir(&spec);
    let err = one_line_error(hetscale_in(dir.path()).args(["study", "spec.toml", "--out", "out"]));
    assert!(
        err.contains("configuration 1: label \"C1\\u{1b}]0;pwned\\u{7}\" contains the control character '\\u{1b}': remove it"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(!dir.path().join("out").exists(), "nothing ran");
}

#[test]
fn predict_advises_lowering_n_min_for_a_target_below_the_smallest_size() {
    let base = ["predict", "ge", "--platform", "sunwulf", "--nodes", "4"];
    let below = one_line_error(hetscale().args(base).args(["--target", "0.00001"]));
    assert_eq!(
        below,
        "hetscale: configuration 4: speed-efficiency = 0.0001 at N = 8 already exceeds the \
         target 1e-5: lower --n-min or raise the target"
    );
    // However small, the target is echoed in a few characters, not 300 digits.
    let tiny = one_line_error(hetscale().args(base).args(["--target", "1e-300"]));
    assert!(
        tiny.ends_with("already exceeds the target 1e-300: lower --n-min or raise the target"),
        "{tiny}"
    );
    let negative = one_line_error(hetscale().args(base).args(["--target", "-1e300"]));
    assert!(
        negative.contains("--target -1e300 is not a speed-efficiency"),
        "{negative}"
    );
    let above = one_line_error(
        hetscale()
            .args(base)
            .args(["--target", "0.9", "--n-max", "100"]),
    );
    assert_eq!(
        above,
        "hetscale: configuration 4: no N in [8, 100] reaches speed-efficiency = 0.9: the highest \
         speed-efficiency reached is 0.0143 at N = 100; raise --n-max or lower the target"
    );
}

/// The failure message of approach `approach` on the first configuration of [`SMALL_GE`]
/// with `target`, `n_max` and the measured approach left out.
fn study_failure(target: &str, n_max: &str, approach: &str) -> String {
    let spec = SMALL_GE
        .replace("target = 0.3", &format!("target = {target}"))
        .replace("n_max = 2048", &format!("n_max = {n_max}"))
        .replace(
            "samples = 3",
            "samples = 3\napproaches = [\"computed\", \"predicted\"]",
        );
    let dir = spec_dir(&spec);
    // A study that settles no configuration fails, and still prints its results.
    let output = hetscale_in(dir.path())
        .args(common::STUDY_ARGS)
        .arg("--quiet")
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    result["studies"][0][approach]["failures"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("a {approach} failure: {result}"))
        .to_string()
}

#[test]
fn study_advises_by_the_side_of_the_range_the_target_missed() {
    let below = study_failure("0.00001", "2048", "predicted");
    assert!(
        below.ends_with("already exceeds the target 1e-5: lower n_min or raise the target"),
        "{below}"
    );
    let above = study_failure("0.95", "64", "predicted");
    assert!(
        above.contains("the highest predicted speed-efficiency reached is")
            && above.ends_with("raise n_max or lower the target"),
        "{above}"
    );
}

#[test]
fn calibrate_refuses_absurd_times_and_a_label_on_two_node_sets_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let refusal = |rows: &str| {
        let file = dir.path().join("runs.csv");
        std::fs::write(
            &file,
            format!("configuration,nodes,kernel,n,time_s\nC_2,2,mm,64,0.5\n{rows}"),
        )
        .unwrap();
        one_line_error(
            hetscale()
                .args(["calibrate", "--platform", "sunwulf", "--runs"])
                .arg(&file),
        )
    };
    let tiny = refusal("C_2,2,mm,128,1e-320\n");
    assert!(
        tiny.ends_with("runs.csv line 3, field time_s: 1e-320 s is shorter than any measured run (1e-9 s); give seconds, e.g. 0.25"),
        "{tiny}"
    );
    let huge = refusal("C_2,2,mm,128,1e308\n");
    assert!(
        huge.contains("line 3, field time_s: 1e308 s is longer than any measured run"),
        "{huge}"
    );
    let two = refusal("C_2,4,mm,128,0.9\n");
    assert!(
        two.contains("line 3, field nodes: configuration \"C_2\" was \"2\" on an earlier row and is \"4\" here"),
        "{two}"
    );
}
