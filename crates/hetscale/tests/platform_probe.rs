//! `hetscale platform` and `hetscale probe` from the outside.

mod common;

use common::{failure_of, hetscale, json_of, one_line_error, stdout_of, succeeded};

#[test]
fn platform_list_and_show() {
    let list = json_of(hetscale().args(["platform", "list", "--json"]));
    assert_eq!(
        list["platforms"].as_array().unwrap().len(),
        6,
        "sunwulf, ucf-cluster, ncube2, maspar, kalinov, local"
    );
    let machine = json_of(hetscale().args([
        "platform",
        "show",
        "sunwulf",
        "--nodes",
        "sunblade:3,sunfire:4,server:1",
        "--json",
    ]));
    let speed = machine["marked_speed_flops"].as_f64().unwrap();
    assert!((speed - 227.55e6).abs() < 1e-3, "{machine}");
    assert_eq!(machine["p"], 8);
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    for args in [
        vec!["platform", "show", "nowhere"],
        vec!["platform", "show", "ucf-cluster", "--nodes", "sunblade:x"],
        vec!["probe", "--backend", "mpi", "--nodes", "2"],
        vec!["platform", "validate", "/nonexistent/file.toml"],
        vec!["probe", "--backend", "sim", "--nodes", "2", "--collectives"],
    ] {
        let text = one_line_error(hetscale().args(&args));
        assert!(!text.contains("panicked"), "{text}");
    }
}

#[test]
fn validate_reports_the_field() {
    let dir = std::env::temp_dir().join(format!("hetscale-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "name = \"x\"\n[network]\ng_s_per_byte = 1e-9\nL = { base_s = 0 }\n[[node]]\nname = \"gromit\"\nmarked_speed = -1\n").unwrap();
    let err = failure_of(hetscale().args(["platform", "validate"]).arg(&file));
    assert!(err.contains("node \"gromit\": marked_speed must be > 0, got -1"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_accepts_presets_and_refuses_an_overflowing_c() {
    let text = stdout_of(hetscale().args(["platform", "validate", "sunwulf"]));
    assert!(text.starts_with("sunwulf: ok: sunwulf"), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.toml");
    std::fs::write(&file, "name = \"huge\"\n[network]\ng_s_per_byte = 1e-9\nL = { base_s = 0 }\n[[node]]\nname = \"a\"\nmarked_speed = 1e308\n[[node]]\nname = \"b\"\nmarked_speed = 1e308\n").unwrap();
    let text = one_line_error(hetscale().args(["platform", "validate"]).arg(&file));
    assert!(
        text.contains("node \"a\": marked_speed = 1e308 is outside 1e-6 to 1e18"),
        "{text}"
    );
}

#[test]
fn probe_writes_json_and_a_platform_file() {
    let dir = std::env::temp_dir().join(format!("hetscale-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("local.toml");
    let report = json_of(
        hetscale()
            .args([
                "probe",
                "--backend",
                "threads",
                "--nodes",
                "2",
                "--quick",
                "--json",
                "--write-platform",
            ])
            .arg(&file),
    );
    assert_eq!(report["p"], 2);
    assert_eq!(report["g_s_per_byte_ci95"].as_array().unwrap().len(), 2);
    succeeded(hetscale().args(["platform", "validate"]).arg(&file));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn probe_on_sim_reports_the_platforms_own_parameters() {
    let report = json_of(hetscale().args([
        "probe",
        "--backend",
        "sim",
        "--platform",
        "ucf-cluster",
        "--nodes",
        "all",
        "--quick",
        "--json",
    ]));
    let close = |v: &serde_json::Value, expected: f64| {
        (v.as_f64().unwrap() - expected).abs() <= 0.01 * expected
    };
    assert_eq!(report["p"], 10);
    // Williams & Parsons: g = 0.196 us/byte (gromit), L(10) = 37 ms, chromus r = 4.08.
    assert!(close(&report["g_s_per_byte"], 0.196e-6), "{report}");
    assert!(close(&report["l_s"], 37e-3), "{report}");
    assert!(close(&report["r"][1], 4.08), "{report}");
    assert!(close(&report["r"][0], 1.0), "{report}");
}

#[test]
fn probe_collectives_measures_sunwulfs_broadcast_and_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("measured.toml");
    let report = json_of(
        hetscale()
            .args([
                "probe",
                "--backend",
                "sim",
                "--platform",
                "sunwulf",
                "--nodes",
                "8",
            ])
            .args(["--collectives", "--quick", "--json", "--write-platform"])
            .arg(&file),
    );
    let broadcast = report["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "broadcast")
        .expect("a broadcast cost");
    // JPDC section 4.5: T_broadcast ~ 0.12 + 0.23 p ms, what the sunwulf preset's machine charges.
    assert!((broadcast["per_node_s"].as_f64().unwrap() - 0.23e-3).abs() < 1e-9);
    assert!((broadcast["base_s"].as_f64().unwrap() - 0.12e-3).abs() < 1e-9);
    assert_eq!(
        common::written_collectives(&file),
        ["broadcast", "scatterv", "gatherv", "allgather", "alltoallv"]
    );
}
