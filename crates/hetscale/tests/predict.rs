//! `hetscale predict` end to end: defaults that work for every kernel, both psi columns, and
//! one-line refusals of what cannot fit in memory.

mod common;

use common::{hetscale, json_of, one_line_error, stdout_of};
use serde_json::Value;

#[test]
fn burg_predicts_with_its_defaults() {
    // Burg's default order used to equal the default n_min (8), so nothing could be searched.
    let stdout = stdout_of(hetscale().args([
        "predict", "burg", "--nodes", "2", "--nodes", "4", "--target", "0.3",
    ]));
    assert!(stdout.contains("burg on sunwulf"), "{stdout}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with('2') || l.starts_with('4'))
            .count(),
        2,
        "{stdout}"
    );
}

#[test]
fn psi_is_printed_between_consecutive_configurations_and_from_the_first() {
    let args = [
        "predict",
        "mm",
        "--nodes",
        "sunblade:2",
        "--nodes",
        "sunblade:8",
        "--nodes",
        "sunblade:32",
        "--target",
        "0.2",
    ];
    let study = json_of(hetscale().args(args).arg("--json"));
    let points = study["points"].as_array().unwrap();
    let psi = |i: usize, j: usize| study["psi"]["values"][i][j].as_f64().unwrap();
    assert_eq!(points[0]["psi_from_previous"], Value::Null);
    assert_eq!(points[0]["psi_from_first"], 1.0);
    assert_eq!(points.len(), 3);
    for (j, point) in points.iter().enumerate().skip(1) {
        assert_eq!(point["psi_from_previous"].as_f64().unwrap(), psi(j - 1, j));
        assert_eq!(point["psi_from_first"].as_f64().unwrap(), psi(0, j));
    }
    let (consecutive, from_first) = (psi(1, 2), psi(0, 2));
    assert!(
        (consecutive - from_first).abs() > 1e-3,
        "{consecutive} {from_first}"
    );

    let text = stdout_of(hetscale().args(args));
    let header = text.lines().nth(1).unwrap();
    assert!(
        header.contains("psi(prev,this)") && header.contains("psi(1st,this)"),
        "{text}"
    );
    let last: Vec<&str> = text.lines().nth(4).unwrap().split_whitespace().collect();
    assert_eq!(last[0], "sunblade:32", "{text}");
    assert_eq!(last[last.len() - 2], format!("{consecutive:.4}"), "{text}");
    assert_eq!(last[last.len() - 1], format!("{from_first:.4}"), "{text}");
    // The answer last: the verdict, from the prediction's own numbers (JSON's N are rounded).
    let n = |i: usize| points[i]["n"].as_f64().unwrap();
    let verdict = text.lines().last().unwrap();
    let told: f64 = verdict
        .split_once("N must grow to ")
        .and_then(|(_, rest)| rest.split_once(", "))
        .and_then(|(size, rest)| {
            Some((
                size.parse::<f64>().ok()?,
                rest.split_once("x the 2-node size; T = ")?.0,
            ))
        })
        .map(|(size, growth)| {
            assert_eq!(size, n(2), "{verdict}");
            growth.parse().unwrap()
        })
        .unwrap_or_else(|| panic!("{verdict}"));
    assert!(
        verdict.starts_with("to hold E_s = 0.2 on 32 nodes"),
        "{verdict}"
    );
    assert!((told / (n(2) / n(0)) - 1.0).abs() < 0.1, "{verdict}");
}

#[test]
fn what_cannot_fit_in_memory_is_refused_in_one_line() {
    let cases: [(&[&str], &str); 3] = [
        // 85 nodes x 1e9: the replicated platform alone would take tens of TB.
        (
            &[
                "mm",
                "--nodes",
                "all",
                "--target",
                "0.3",
                "--replicate",
                "1000000000",
            ],
            "use a smaller --replicate",
        ),
        (
            &[
                "mm",
                "--nodes",
                "2",
                "--target",
                "0.3",
                "--n-max",
                "18446744073709551615",
            ],
            "use a smaller --n-max",
        ),
        // SUMMA's model lists every panel, N / nb of them: refused at the first size tried.
        (
            &[
                "summa",
                "--nodes",
                "4",
                "--target",
                "0.3",
                "--n-min",
                "1000000000000000",
                "--n-max",
                "9000000000000000",
            ],
            "use fewer nodes or a smaller n_max (--n-max)",
        ),
    ];
    for (args, advice) in cases {
        let stderr = one_line_error(hetscale().arg("predict").args(args));
        assert!(stderr.contains(advice), "{args:?}: {stderr}");
    }
}

/// Ten million nodes fit in memory as a platform but no prediction replays them in time: a
/// one-line refusal naming the limit, exit code 2, at once (it ran for minutes).
#[test]
fn absurd_node_counts_are_refused_with_exit_code_2() {
    let out = hetscale()
        .args(["predict", "ge", "--platform", "sunwulf", "--nodes", "all"])
        .args(["--target", "0.5", "--replicate", "120000"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("(1.020e7 nodes) is beyond the 1e6 nodes a prediction replays")
            && stderr.contains("use a smaller --replicate"),
        "{stderr}"
    );
}

#[test]
fn a_configuration_that_holds_the_target_is_answered_beside_one_that_does_not() {
    // 2 Sunwulf nodes hold E_s = 0.3 at N = 275; 16 reach 0.013 at most by N = 400.
    let question = [
        "predict", "ge", "--nodes", "2", "--nodes", "16", "--target", "0.3",
    ];
    let args = [&question[..], &["--n-max", "400"]].concat();
    let study = json_of(hetscale().args(&args).arg("--json"));
    let points = study["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{study}");
    assert_eq!(points[0]["configuration"]["p"], 2);
    let unreached = study["unreached"].as_array().unwrap();
    assert_eq!(unreached.len(), 1, "{study}");
    assert_eq!(unreached[0]["p"], 16);
    let reason = unreached[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("raise --n-max or lower the target"),
        "{reason}"
    );

    let text = stdout_of(hetscale().args(&args));
    assert!(
        text.contains("not reached on 16 (p = 16): no N in [8, 400] reaches"),
        "{text}"
    );
    // Where no configuration holds it, the first one's reason is the error, as before.
    let err = one_line_error(hetscale().args(question).args(["--n-max", "100"]));
    assert!(
        err.starts_with("hetscale: configuration 2: no N in [8, 100]"),
        "{err}"
    );
}
