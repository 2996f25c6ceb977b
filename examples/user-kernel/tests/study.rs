//! The user's `dot` kernel end to end: its overhead model is the simulator's time, and
//! `hetscale study` (the example's own binary) runs it with all three approaches.

use assert_cmd::Command;
use hbsp::{Backend, Platform, WorkCharge};
use hetscale_kernels::Kernel;
use serde_json::Value;
use user_kernel::DotKernel;

#[test]
fn the_overhead_model_is_the_simulators_time() {
    let platform = Platform::load("sunwulf").unwrap();
    let mut backend: Backend = "sim".parse().unwrap();
    if let Backend::Sim(options) = &mut backend {
        options.work = WorkCharge::Declared;
    }
    for nodes in [
        "server:1",
        "server:1,sunblade:3",
        "server*2:1,sunblade:7,sunfire:2",
    ] {
        let machine = platform.select(&nodes.parse().unwrap()).unwrap();
        for n in [5, 1000, 77_777] {
            let run = DotKernel
                .run(&DotKernel.generate(n, 3).unwrap(), &backend, &machine)
                .unwrap();
            assert!(run.verification.passed, "{nodes}, N = {n}");
            let c = run.cluster_speed_flops().unwrap();
            let root = machine.marked_speed(machine.ranking()[0]) * 1e6;
            let predicted = DotKernel
                .overhead(n, &machine)
                .unwrap()
                .predicted_time_s(run.work, c, root);
            assert!(
                (predicted - run.time_s).abs() <= 1e-9 * run.time_s,
                "{nodes}, N = {n}: model {predicted} s, sim {} s",
                run.time_s
            );
            assert_eq!(
                run.declared_ops(),
                DotKernel.counted_ops(n),
                "{nodes}, N = {n}"
            );
        }
    }
}

#[test]
fn hetscale_study_runs_the_user_kernel_with_all_three_approaches() {
    let dir = tempfile::tempdir().unwrap();
    let spec = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dot.toml");
    let out = Command::cargo_bin("user-kernel")
        .unwrap()
        .arg("study")
        .arg(&spec)
        .args(["--out", "out", "--json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    let result = &results["studies"][0];
    assert_eq!(result["spec"]["kernel"], "dot");
    let mut sizes = Vec::new();
    for approach in ["measured", "computed", "predicted"] {
        let points = result[approach]["points"].as_array().unwrap();
        assert_eq!(
            points.len(),
            3,
            "{approach}: {}",
            result[approach]["failures"]
        );
        for point in points {
            let e_s = point["speed_efficiency"].as_f64().unwrap();
            assert!((e_s - 0.5).abs() < 0.5 * 0.02, "{approach}: E_s = {e_s}");
        }
        sizes.push(points[2]["n"].as_f64().unwrap());
    }
    // On sim the model is the simulator: the approaches agree to the search tolerance.
    for n in &sizes[1..] {
        assert!((n / sizes[0] - 1.0).abs() < 0.03, "{sizes:?}");
    }
    // psi(C_2, C_8) = C_8 W_2 / (C_2 W_8) at each approach's operating points, and the
    // approaches' psi agree as their sizes do.
    let psi_of = |approach: &str| {
        let psi = result[approach]["psi"]["values"][0][2].as_f64().unwrap();
        let points = &result[approach]["points"];
        let field = |i: usize, name: &str| points[i][name].as_f64().unwrap();
        let definition = field(2, "marked_speed_flops") * field(0, "work_flop")
            / (field(0, "marked_speed_flops") * field(2, "work_flop"));
        assert!(
            (psi / definition - 1.0).abs() < 1e-9,
            "{approach}: psi(C_2, C_8) = {psi}, C'W/(CW') = {definition}"
        );
        psi
    };
    let measured = psi_of("measured");
    assert!(
        measured > 0.0 && measured < 1.0,
        "psi(C_2, C_8) = {measured}"
    );
    for approach in ["computed", "predicted"] {
        let psi = psi_of(approach);
        assert!(
            (psi / measured - 1.0).abs() < 0.06,
            "{approach}: psi {psi} vs measured {measured}"
        );
    }
    assert_eq!(result["verification"]["verified"], true);
    // The same binary has every other subcommand, the user's kernel included.
    let run = Command::cargo_bin("user-kernel")
        .unwrap()
        .args(["run", "dot", "--backend", "sim", "--platform", "sunwulf"])
        .args(["--nodes", "server:1,sunblade:2", "--n", "5000"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains("verified yes"));
}
