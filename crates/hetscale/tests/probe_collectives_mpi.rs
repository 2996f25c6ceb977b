//! `hetscale probe --collectives --backend mpi` under `mpirun`: one job measures every
//! collective on its first 2, 4, ... ranks and on all of them, and rank 0 reports one fit with
//! intervals, as the threads backend does (issue 35).
#![cfg(feature = "mpi")]

mod common;

use std::process::Command;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn probe(ranks: usize, extra: &[&str]) -> std::process::Output {
    Command::new("mpirun")
        .args(["--oversubscribe", "-np", &ranks.to_string()])
        .args(["--mca", "mpi_yield_when_idle", "1"])
        .arg(env!("CARGO_BIN_EXE_hetscale"))
        .args(["probe", "--backend", "mpi", "--collectives", "--quick"])
        .args(["--nodes", &ranks.to_string()])
        .args(extra)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs: install openmpi-bin")
}

#[test]
fn every_collective_gets_a_finite_cost_with_an_interval_from_one_mpi_job() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("measured.toml");
    for ranks in [3, 4] {
        let mut args = vec!["--json"];
        let path = file.to_str().unwrap();
        if ranks == 4 {
            args.extend(["--write-platform", path]);
        }
        let output = probe(ranks, &args);
        assert!(output.status.success(), "{}", text(&output.stderr));
        // Rank 0 alone prints: one JSON document.
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("one JSON report ({e}): {}", text(&output.stdout)));
        let fits = report["collectives"].as_array().expect("collectives");
        let names: Vec<&str> = fits.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["broadcast", "scatterv", "gatherv", "allgather", "alltoallv"]
        );
        for fit in fits {
            let terms = ["base_s", "per_node_s", "per_byte_s"];
            for term in terms {
                let v = fit[term].as_f64().unwrap();
                assert!(v.is_finite() && v >= 0.0, "{term} of {fit}");
            }
            // Two node counts, two sizes: four medians, so every kept term has an interval.
            assert_eq!(fit["samples"], 4, "{fit}");
            let intervals: Vec<&serde_json::Value> = terms
                .iter()
                .map(|t| &fit[format!("{t}_ci95")])
                .filter(|ci| !ci.is_null())
                .collect();
            assert!(!intervals.is_empty(), "no interval in {fit}");
            for ci in intervals {
                let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
                assert!(lo.is_finite() && hi.is_finite() && lo <= hi, "{fit}");
            }
        }
    }
    // --write-platform: rank 0 wrote the five costs.
    assert_eq!(
        common::written_collectives(&file),
        ["broadcast", "scatterv", "gatherv", "allgather", "alltoallv"]
    );
    // The text form names each collective with its intervals.
    let output = probe(3, &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("[95% intervals]"), "{stdout}");
    for name in ["broadcast", "alltoallv"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line: {stdout}"));
        assert!(line.contains(" s/byte"), "{line}");
    }
}
