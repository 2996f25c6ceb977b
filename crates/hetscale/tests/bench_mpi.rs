//! `hetscale bench --backend mpi` under `mpirun`: every rank measures, rank 0 writes one node
//! per host, named by its host name (issue 35).
#![cfg(feature = "mpi")]

use std::process::Command;

fn hetscale() -> &'static str {
    env!("CARGO_BIN_EXE_hetscale")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn bench_on_mpi_writes_one_node_per_host_with_its_ranks_speed() {
    if !hetscale_testkit::require(hetscale_testkit::Need::OpenMpi) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let platform = dir.path().join("hosts.toml");
    let output = Command::new("mpirun")
        .args(["--oversubscribe", "-np", "2", hetscale()])
        .args([
            "bench",
            "--backend",
            "mpi",
            "--quick",
            "--runs",
            "1",
            "--json",
        ])
        .arg("--write-platform")
        .arg(&platform)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun runs: install openmpi-bin");
    assert!(output.status.success(), "{}", text(&output.stderr));
    // Rank 0 alone prints: one JSON document.
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("one JSON document ({e}): {}", text(&output.stdout)));
    assert_eq!(json["backend"], "mpi");
    assert_eq!(json["p"], 2);
    let host = text(&Command::new("hostname").output().unwrap().stdout)
        .trim()
        .split('.')
        .next()
        .unwrap()
        .to_owned();
    let hosts = json["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 1, "both ranks ran on this host: {json}");
    assert_eq!(hosts[0]["host"], host.as_str());
    assert_eq!(hosts[0]["cpus"], 2);
    let speed = hosts[0]["marked_speed_flops"].as_f64().unwrap();
    let ci = hosts[0]["marked_speed_flops_ci95"].as_array().unwrap();
    assert!(speed > 0.0 && ci[0].as_f64().unwrap() <= ci[1].as_f64().unwrap());

    // The platform: this host as one node of 2 CPUs at the measured speed, valid for hetscale.
    let written = hbsp::Platform::from_file(&platform).unwrap();
    assert_eq!(written.nodes.len(), 1);
    assert_eq!(written.nodes[0].name, host);
    assert_eq!(written.nodes[0].cpus, 2);
    assert!((written.nodes[0].marked_speed - speed / 1e6).abs() < 1e-9 * speed);

    // Given a platform, its node named like the host takes the speed; the others stay.
    let base = dir.path().join("base.toml");
    std::fs::write(
        &base,
        format!(
            "name = \"lab\"\n[network]\ng_s_per_byte = 1e-9\nL = {{ base_s = 1e-5 }}\n\
             [[node]]\nname = \"{host}\"\nkind = \"fast\"\nmarked_speed = 1.0\n\
             [[node]]\nname = \"elsewhere\"\nmarked_speed = 5.0\n"
        ),
    )
    .unwrap();
    let output = Command::new("mpirun")
        .args(["--oversubscribe", "-np", "2", hetscale()])
        .args(["bench", "--backend", "mpi", "--quick", "--runs", "1"])
        .arg("--platform")
        .arg(&base)
        .arg("--write-platform")
        .arg(&platform)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(&host) && stdout.contains("wrote the hosts' platform"),
        "{stdout}"
    );
    let written = hbsp::Platform::from_file(&platform).unwrap();
    assert_eq!(written.name, "lab");
    assert_eq!(written.nodes.len(), 2);
    assert_eq!(written.nodes[0].kind.as_deref(), Some("fast"));
    assert!(written.nodes[0].marked_speed > 1.0);
    assert_eq!(written.nodes[1].marked_speed, 5.0);
}

#[test]
fn bench_options_that_do_not_fit_the_backend_are_refused_in_one_line() {
    let refused = Command::new(hetscale())
        .args(["bench", "--platform", "sunwulf", "--quick"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = text(&refused.stderr);
    assert!(err.contains("--platform is for --backend mpi"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let refused = Command::new(hetscale())
        .args(["bench", "--backend", "nowhere"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}
