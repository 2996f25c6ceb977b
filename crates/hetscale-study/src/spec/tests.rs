//! Tests of the spec: its parsing, validation and the errors it gives.

use super::*;

const VALID: &str = r#"
name = "t"
kernel = "mm"
platform = "sunwulf"
target = 0.2
n_max = 512

[[configuration]]
label = "C'_2"
nodes = "server:1,sunfire:1"

[[configuration]]
label = "C'_4"
nodes = "server:1,sunblade:1,sunfire:2"
"#;

fn error_of(text: &str) -> String {
    StudySpec::from_toml_str(text, "t.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn a_minimal_spec_gets_the_documented_defaults() {
    let spec = StudySpec::from_toml_str(VALID, "t.toml").unwrap();
    assert_eq!(spec.backend, "sim");
    assert_eq!(spec.approaches, Approach::ALL);
    assert_eq!((spec.n_min, spec.repetitions, spec.warmup), (8, 1, 0));
    assert_eq!(spec.configurations.len(), 2);
    assert_eq!(spec.verified_configuration(), 0);
}

#[test]
fn threads_studies_repeat_and_warm_up_by_default() {
    let spec =
        StudySpec::from_toml_str(&VALID.replace("n_max", "backend = \"threads\"\nn_max"), "t")
            .unwrap();
    assert_eq!((spec.repetitions, spec.warmup), (3, 1));
}

#[test]
fn errors_name_the_line_and_the_field() {
    let err = error_of(&VALID.replace("target = 0.2", "target = 1.5"));
    assert!(
        err.contains("t.toml line 5") && err.contains("target = 1.5"),
        "{err}"
    );
    let err = error_of(&VALID.replace("kernel = \"mm\"", "kernel = \"fft\""));
    assert!(
        err.contains("line 3") && err.contains("unknown kernel"),
        "{err}"
    );
    let err = error_of(&VALID.replace("n_max = 512", "n_max = 512\nspeed = 3"));
    assert!(err.contains("line 7") && err.contains("speed"), "{err}");
    let err = error_of(&VALID.replace("sunfire:1\"", "sunfire:x\""));
    assert!(err.contains("C'_2") && err.contains("nodes"), "{err}");
    let err = error_of(&VALID.replace("platform = \"sunwulf\"\n", ""));
    assert!(err.contains("platform"), "{err}");
    let err = error_of(&VALID.replace("n_max = 512", "n_max = 512\nbackend = \"gpu\""));
    assert!(
        err.contains("line 7") && err.contains("sim, threads, mpi"),
        "{err}"
    );
    let err = error_of(&format!("{VALID}\n[mpi]\nhosts = \"a,b\"\n"));
    assert!(err.contains("[mpi] is for backend = \"mpi\""), "{err}");
    for err in [err, error_of("= broken"), error_of("")] {
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn numbers_out_of_bounds_are_refused_naming_the_line_and_field() {
    let extra =
        |line: &str| error_of(&VALID.replace("n_max = 512", &format!("n_max = 512\n{line}")));
    for (line, says) in [
        ("samples = 4294967295", "samples = 4294967295: use 2 to 100"),
        ("samples = 1", "samples = 1: use 2 to 100"),
        (
            "repetitions = 4294967295",
            "repetitions = 4294967295: use 1 to 1000",
        ),
        (
            "max_repetitions = 1001",
            "max_repetitions = 1001: use 1 to 1000",
        ),
        ("warmup = 4294967295", "warmup = 4294967295: use 0 to 1000"),
        (
            "max_relative_ci = inf",
            "max_relative_ci = inf: use a fraction in (0, 1]",
        ),
        (
            "max_relative_ci = nan",
            "max_relative_ci = NaN: use a fraction in (0, 1]",
        ),
    ] {
        let err = extra(line);
        assert!(
            err.contains("t.toml line 7") && err.contains(says),
            "{line}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let err = error_of(&VALID.replace("n_max = 512", "n_max = 9007199254740993"));
    assert!(
        err.contains("t.toml line 6") && err.contains("n_max = 9007199254740993: use at most 2^53"),
        "{err}"
    );
    let mpi = VALID.replace("n_max = 512", "n_max = 512\nbackend = \"mpi\"");
    let err = error_of(&format!("{mpi}\n[mpi]\ntimeout_s = 1e300\n"));
    assert!(
        err.contains("line 17")
            && err.contains(
                "[mpi] timeout_s = 1e300: give a positive number of seconds up to 2592000 (30 days)"
            ),
        "{err}"
    );
    let err = error_of(&format!(
        "{mpi}\n[mpi]\nlauncher = \"/usr/bin/srun\"\nhostfile = \"h\"\n"
    ));
    assert!(
        err.contains("[mpi] hostfile and hosts are for mpirun"),
        "{err}"
    );
    let command = "name = \"c\"\nplatform = \"local\"\ntarget = 0.5\nn_max = 64\n\
        [command]\ntemplate = \"prog {n}\"\nwork = \"n\"\ntimeout_s = 1e300\n\
        [[configuration]]\nlabel = \"one\"\nnodes = \"1\"\n";
    let err = error_of(command);
    assert!(
        err.contains("line 5") && err.contains("[command] timeout_s = 1e300: give a positive number of seconds up to 2592000 (30 days)"),
        "{err}"
    );
}

#[test]
fn a_command_formula_error_names_its_key_where_and_an_example_of_its_kind() {
    let command = |key: &str, value: &str| {
        error_of(&format!(
            "name = \"c\"\nplatform = \"local\"\ntarget = 0.5\nn_max = 64\n\
             [command]\ntemplate = \"prog {{n}}\"\nwork = \"n\"\n{key} = \"{value}\"\n\
             [[configuration]]\nlabel = \"one\"\nnodes = \"1\"\n"
        ))
    };
    for (key, value, says) in [
        (
            "overhead",
            "1e-4*p*log(p",
            "[command] overhead = \"1e-4*p*log(p\": \"(\" at character 11 is never closed: write the overhead in seconds in n and p, e.g. 1e-4*p*log2(p)",
        ),
        (
            "communication",
            "neighbours(8*n) allreduce(8)",
            "[command] communication = \"neighbours(8*n) allreduce(8)\": \"allreduce(8)\" at character 17",
        ),
    ] {
        let err = command(key, value);
        assert!(err.contains("line 5") && err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // work is set above: a second one would be a TOML error, so replace it.
    let err = error_of(
        "name = \"c\"\nplatform = \"local\"\ntarget = 0.5\nn_max = 64\n\
         [command]\ntemplate = \"prog {n}\"\nwork = \"foo(n)\"\n\
         [[configuration]]\nlabel = \"one\"\nnodes = \"1\"\n",
    );
    assert!(
        err.contains("[command] work = \"foo(n)\": \"foo\" at character 1 is no function (the functions are abs")
            && err.ends_with("write the work in flop in n and p, e.g. 2*n^3 + 4*p*n^2"),
        "{err}"
    );
}

#[test]
fn ge_blocks_are_a_kernel_option_absent_from_the_canonical_spec_at_one() {
    let ge = VALID.replace("kernel = \"mm\"", "kernel = \"ge\"");
    let blocked = format!("{ge}\n[kernel_options]\npivoting = \"none\"\nblock = 8\n");
    let spec = StudySpec::from_toml_str(&blocked, "t").unwrap();
    assert_eq!(spec.kernel_options.block, 8);
    assert!(
        spec.canonical().contains("\"block\":8"),
        "{}",
        spec.canonical()
    );
    // The default (1) leaves the canonical text, and so stored studies, as they were.
    let plain = StudySpec::from_toml_str(&ge, "t").unwrap();
    assert_eq!(plain.kernel_options.block, 1);
    assert!(
        !plain.canonical().contains("block"),
        "{}",
        plain.canonical()
    );
    let partial = format!("{ge}\n[kernel_options]\nblock = 8\n");
    let err = error_of(&partial);
    assert!(err.contains("partial pivoting needs block = 1"), "{err}");
}

#[test]
fn a_spec_validates_again_as_it_was_and_a_tampered_one_is_refused() {
    let registry = KernelRegistry::builtin();
    let spec = StudySpec::from_toml_str(
        &VALID.replace(
            "n_max = 512",
            "n_max = 512\nverify = \"C'_4\"\n[kernel_options]\ngrid = \"1x2\"",
        ),
        "t",
    )
    .unwrap();
    assert_eq!(spec.validated(&registry).unwrap(), spec);
    let command = crate::spec::command_study::CommandStudy {
        name: "c".into(),
        command: CommandSpec::new("./solver {n}", "2*n^3"),
        platform: "sunwulf".into(),
        nodes: vec!["1".into(), "2".into()],
        target: 0.5,
        n_min: 8,
        n_max: 64,
        repetitions: None,
        warmup: None,
    }
    .spec()
    .unwrap();
    assert_eq!(command.validated(&registry).unwrap(), command);
    let mut tampered = spec.clone();
    tampered.n_max = 0;
    let err = tampered.validated(&registry).unwrap_err();
    assert!(err.contains("n_max = 0"), "{err}");
}

#[test]
fn a_name_that_would_leave_the_output_directory_is_refused() {
    for (name, why) in [
        ("../../victim", "contains '/'"),
        ("/tmp/abs", "contains '/'"),
        ("a\\\\b", "contains '\\\\'"),
        ("..", "contains \"..\""),
        ("tab\\there", "contains '\\t'"),
    ] {
        let err = error_of(&VALID.replace("name = \"t\"", &format!("name = \"{name}\"")));
        assert!(
            err.contains("t.toml line 2") && err.contains(why) && err.contains("result files"),
            "{name}: {err}"
        );
    }
    let long = error_of(&VALID.replace("name = \"t\"", &format!("name = \"{}\"", "x".repeat(201))));
    assert!(long.contains("201 bytes long"), "{long}");
    let spec = StudySpec::from_toml_str(
        &VALID.replace("name = \"t\"", "name = \"small ge.v2\""),
        "t",
    )
    .unwrap();
    assert_eq!(spec.file_stem(), "small ge.v2");
}

#[test]
fn file_stems_stay_in_the_output_directory() {
    let mut spec = StudySpec::from_toml_str(VALID, "t").unwrap();
    for (name, stem) in [
        ("../../victim", ".._.._victim"),
        ("/etc/passwd", "_etc_passwd"),
        ("", "study"),
    ] {
        spec.name = name.into();
        assert_eq!(spec.file_stem(), stem, "{name}");
    }
    spec.name = "é".repeat(150);
    assert!(spec.file_stem().len() <= MAX_NAME_BYTES);
}

#[test]
fn duplicate_labels_and_bad_verify_are_refused() {
    let err = error_of(&VALID.replace("C'_4", "C'_2"));
    assert!(err.contains("twice"), "{err}");
    let err = error_of(&VALID.replace("n_max = 512", "n_max = 512\nverify = \"C_9\""));
    assert!(err.contains("verify") && err.contains("line 7"), "{err}");
}

#[test]
fn an_empty_node_set_is_named_before_an_empty_label() {
    // `hetscale study --command --nodes ""` labels each configuration by its node-set.
    let err = error_of(&VALID.replace(
        "label = \"C'_2\"\nnodes = \"server:1,sunfire:1\"",
        "label = \"\"\nnodes = \"\"",
    ));
    assert!(
        err.contains("configuration 1: nodes: the node-set is empty: write a count (4)"),
        "{err}"
    );
    let err = error_of(&VALID.replace("server:1,sunfire:1", " "));
    assert!(
        err.contains("configuration \"C'_2\": nodes: the node-set is empty"),
        "{err}"
    );
}
