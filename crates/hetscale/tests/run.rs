//! End-to-end tests of `hetscale run`.

use assert_cmd::Command;
use serde_json::Value;

fn hetscale() -> Command {
    Command::cargo_bin("hetscale").expect("binary built")
}

#[test]
fn run_json_reports_t_w_s_c_and_e_s_and_dumps_the_result() {
    let dir = std::env::temp_dir().join(format!("hetscale-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("c.npy");
    let out = hetscale()
        .args([
            "run",
            "summa",
            "--platform",
            "ucf-cluster",
            "--nodes",
            "4",
            "--n",
            "24",
        ])
        .args([
            "--strategy",
            "hohe2",
            "--grid",
            "2x2",
            "--nb",
            "5",
            "--json",
            "--dump-result",
        ])
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["kernel"], "summa");
    assert_eq!(report["details"]["grid"], "2x2");
    assert_eq!(report["details"]["strategy"], "hohe2");
    assert_eq!(report["work_flop"], 2.0 * 24f64.powi(3));
    assert!(report["verification"]["passed"].as_bool().unwrap());
    assert!(
        report["speed_efficiency"].is_null(),
        "UCF speeds are BYTEmark indices"
    );
    let c = hetscale_kernels::read_npy(&out_path).unwrap();
    assert_eq!(c.shape, vec![24, 24]);

    // The dumped matrices feed a second run through --input.
    let a = dir.join("a.npy");
    hetscale_kernels::write_npy(&a, &c).unwrap();
    let out = hetscale()
        .args([
            "run",
            "mm",
            "--platform",
            "sunwulf",
            "--nodes",
            "sunblade:2,sunfire:1",
        ])
        .arg("--input")
        .arg(format!("{},{}", a.display(), a.display()))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success()
            && text.contains("E_s      ")
            && !text.contains("n/a")
            && text.contains("verified yes"),
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_kernel_runs_and_verifies() {
    for args in [
        vec!["ge", "--n", "30", "--pivoting", "none"],
        vec!["conv2d", "--n", "16"],
        vec!["burg", "--n", "500", "--order", "4"],
        vec!["summa", "--n", "20", "--strategy", "heho"],
        vec!["mm", "--n", "20", "--backend", "sim"],
    ] {
        let out = hetscale()
            .arg("run")
            .args(&args)
            .args(["--platform", "sunwulf", "--nodes", "server:1,sunfire:2"])
            // Speed emulation is a threads option; sim charges each node's speed itself.
            .args((!args.contains(&"sim")).then_some("--emulate-speeds"))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("verified yes"), "{text}");
    }
}

#[test]
fn bad_input_is_a_one_line_error() {
    let dir = std::env::temp_dir().join(format!("hetscale-run-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let vector = dir.join("v.npy");
    hetscale_kernels::write_npy(&vector, &hetscale_kernels::Array::vector("v", vec![1.0; 4]))
        .unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["run".into(), "mm".into()],
        vec!["run".into(), "mm".into(), "--n".into(), "0".into()],
        vec!["run".into(), "nosuch".into(), "--n".into(), "4".into()],
        vec![
            "run".into(),
            "mm".into(),
            "--n".into(),
            "4".into(),
            "--backend".into(),
            "mpi".into(),
        ],
        vec![
            "run".into(),
            "summa".into(),
            "--n".into(),
            "8".into(),
            "--grid".into(),
            "3x3".into(),
        ],
        vec![
            "run".into(),
            "summa".into(),
            "--n".into(),
            "8".into(),
            "--grid".into(),
            "two".into(),
        ],
        vec![
            "run".into(),
            "burg".into(),
            "--n".into(),
            "8".into(),
            "--order".into(),
            "8".into(),
        ],
        vec![
            "run".into(),
            "mm".into(),
            "--input".into(),
            format!("{},{}", vector.display(), vector.display()),
        ],
        vec![
            "run".into(),
            "conv2d".into(),
            "--input".into(),
            "/nonexistent.npy,/x.npy".into(),
        ],
    ];
    for args in cases {
        let out = hetscale().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("hetscale: "), "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn sim_runs_are_deterministic_and_skeletons_unverified() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "ge",
            "--backend",
            "sim",
            "--platform",
            "sunwulf",
            "--nodes",
            "4",
            "--n",
            "40",
            "--json",
        ];
        args.extend_from_slice(extra);
        let out = hetscale().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let (a, b) = (run(&[]), run(&[]));
    assert_eq!(
        a["time_s"], b["time_s"],
        "virtual time is bit for bit repeatable"
    );
    assert_eq!(a["virtual_time"], true);
    assert_eq!(a["verification"]["passed"], true);
    let skeleton = run(&["--skip-compute"]);
    assert_eq!(skeleton["verification"]["passed"], false);
    assert!(
        skeleton["verification"]["method"]
            .as_str()
            .unwrap()
            .contains("skeleton")
    );
}
