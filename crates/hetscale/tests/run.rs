//! End-to-end tests of `hetscale run`.

mod common;

use common::{failure_of, hetscale, hetscale_in, json_of, one_line_error, stdout_of};

#[test]
fn run_json_reports_t_w_s_c_and_e_s_and_dumps_the_result() {
    let dir = std::env::temp_dir().join(format!("hetscale-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("c.npy");
    let report = json_of(
        hetscale()
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
            .arg(&out_path),
    );
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
    let text = stdout_of(
        hetscale()
            .args([
                "run",
                "mm",
                "--platform",
                "sunwulf",
                "--nodes",
                "sunblade:2,sunfire:1",
            ])
            .arg("--input")
            .arg(format!("{},{}", a.display(), a.display())),
    );
    assert!(
        text.contains("E_s      ") && !text.contains("n/a") && text.contains("verified yes"),
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
        vec!["slalom", "--n", "40"],
        vec!["summa", "--n", "20", "--strategy", "heho"],
        vec!["mm", "--n", "20", "--backend", "sim"],
    ] {
        let text = stdout_of(
            hetscale()
                .arg("run")
                .args(&args)
                .args(["--platform", "sunwulf", "--nodes", "server:1,sunfire:2"])
                // Speed emulation is a threads option; sim charges each node's speed itself.
                .args((!args.contains(&"sim")).then_some("--emulate-speeds")),
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
    let nan_matrix = dir.join("nan.npy");
    let mut a = hetscale_kernels::Matrix::new(4, 4, vec![1.0; 16]).unwrap();
    a.as_mut_slice()[6] = f64::NAN;
    hetscale_kernels::write_npy(&nan_matrix, &hetscale_kernels::Array::matrix("A", a)).unwrap();
    let skewed = dir.join("skewed.toml");
    std::fs::write(
        &skewed,
        "name = \"skewed\"\n[network]\ng_s_per_byte = 1e-9\nL = { base_s = 1e-5 }\n\
         [[node]]\nname = \"fast\"\nmarked_speed = 1e9\n[[node]]\nname = \"slow\"\nmarked_speed = 1.0\n",
    )
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
        // A NaN in an input is refused, not run to a "verified" result.
        vec![
            "run".into(),
            "ge".into(),
            "--pivoting".into(),
            "none".into(),
            "--input".into(),
            format!("{},{}", nan_matrix.display(), vector.display()),
        ],
        // A 1e9-fold speed ratio asked HeHo for a billion processes (an 8 GB allocation).
        vec![
            "run".into(),
            "summa".into(),
            "--strategy".into(),
            "heho".into(),
            "--platform".into(),
            skewed.display().to_string(),
            "--n".into(),
            "16".into(),
        ],
    ];
    for args in cases {
        let err = one_line_error(hetscale().args(&args));
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
        json_of(hetscale().args(&args))
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

#[test]
fn slalom_runs_on_the_ncube2_verified_and_as_a_skeleton() {
    let run = |extra: &[&str]| {
        json_of(
            hetscale()
                .args(["run", "slalom", "--backend", "sim", "--platform", "ncube2"])
                .args(["--nodes", "16", "--n", "200", "--json"])
                .args(extra),
        )
    };
    let full = run(&[]);
    assert_eq!(full["kernel"], "slalom");
    assert_eq!(full["p"], 16);
    assert_eq!(full["verification"]["passed"], true);
    let skeleton = run(&["--skip-compute"]);
    assert_eq!(skeleton["verification"]["skipped"], true);
    assert_eq!(skeleton["work_flop"], full["work_flop"]);
}

#[test]
fn sizes_beyond_memory_are_refused_before_anything_is_allocated() {
    // These aborted on allocation (exit 134) or on "capacity overflow" (conv2d); a refusal
    // exits with 2.
    for (kernel, n) in [
        ("mm", "1000000000"),
        ("ge", "1000000000"),
        ("conv2d", "1000000000"),
        ("summa", "1000000000"),
        ("burg", "100000000000000"),
    ] {
        for backend in ["threads", "sim"] {
            let out = hetscale()
                .args(["run", kernel, "--n", n, "--backend", backend])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{kernel} {backend}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.starts_with(&format!(
                    "hetscale: {kernel} at N = {n} on 2 nodes would need about "
                )) && err.contains("use a smaller N or fewer nodes"),
                "{err}"
            );
        }
    }
}

/// GE's skeleton on 1024 nodes at N = 16384 runs in a few hundred MB, but its trace exported
/// for Perfetto would take tens of GB (such an export was killed for memory at 23.5 GB).
#[test]
fn a_trace_export_that_cannot_fit_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let out = hetscale()
        .args([
            "run",
            "ge",
            "--backend",
            "sim",
            "--skip-compute",
            "--platform",
            "maspar",
        ])
        .args(["--nodes", "pe:1024", "--n", "16384", "--trace"])
        .arg(&trace)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("ge at N = 16384 on 1024 nodes with its trace exported would need about")
            && err.contains("drop --trace and --report"),
        "{err}"
    );
    assert!(!trace.exists());
}

#[test]
fn a_kernel_with_command_is_refused() {
    // --command used to be ignored when a kernel was named.
    let err = failure_of(hetscale().args([
        "run",
        "mm",
        "--n",
        "4",
        "--command",
        "echo {n}",
        "--work",
        "n",
    ]));
    assert!(err.contains("cannot be used with '--command"), "{err}");
}

#[test]
fn a_study_refuses_runs_that_cannot_fit_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "name = \"huge\"\nkernel = \"mm\"\nbackend = \"sim\"\nplatform = \"sunwulf\"\n\
                target = 0.3\napproaches = [\"measured\"]\nn_min = 1000000\nn_max = 4000000\n\
                [[configuration]]\nlabel = \"one\"\nnodes = \"server:1\"\n";
    std::fs::write(dir.path().join("huge.toml"), spec).unwrap();
    let err = failure_of(hetscale_in(dir.path()).args([
        "study",
        "huge.toml",
        "--db",
        "s.db",
        "--out",
        "out",
    ]));
    assert!(
        err.contains("N = 1000000: mm at N = 1000000 on 1 nodes would need about"),
        "{err}"
    );
}
