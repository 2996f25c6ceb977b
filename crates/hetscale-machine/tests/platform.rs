//! Platforms, presets and node-sets.

use hetscale_machine::{MachineError, NodeSet, Platform};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn ucf_cluster_shares_at_p4_match_williams_parsons() {
    let machine = Platform::load("ucf-cluster")
        .unwrap()
        .select(&"4".parse().unwrap())
        .unwrap();
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["gromit", "chromus", "aditi", "dcn_sgi1"]);
    assert!(close(machine.cluster_speed(), 12.89, 1e-9));
    let percent: Vec<String> = machine
        .shares()
        .iter()
        .map(|c| format!("{:.1}", c * 100.0))
        .collect();
    assert_eq!(percent, ["37.9", "5.8", "34.5", "21.7"]);
    assert!(close(machine.l_s(), 15_000e-6, 1e-12));
}

#[test]
fn ucf_cluster_table4_speeds_and_l() {
    let platform = Platform::load("ucf-cluster").unwrap();
    for (p, speed, l_us) in [
        (2, 5.64, 9000.0),
        (6, 17.48, 23000.0),
        (8, 22.10, 30000.0),
        (10, 28.00, 37000.0),
    ] {
        let machine = platform.select(&NodeSet::First(p)).unwrap();
        assert!(close(machine.cluster_speed(), speed, 1e-9), "p = {p}");
        assert!(close(machine.l_s(), l_us * 1e-6, 1e-12), "p = {p}");
    }
    // Between table points L is interpolated; beyond them extrapolated.
    assert!(close(platform.network.l.at(3), 12_000e-6, 1e-12));
    assert!(close(platform.network.l.at(1), 6_000e-6, 1e-12));
    assert_eq!(platform.network.g_s_per_byte, 0.196e-6);
}

#[test]
fn sunwulf_configurations_of_jpdc() {
    let sunwulf = Platform::load("sunwulf").unwrap();
    let speed = |spec: &str| {
        sunwulf
            .select(&spec.parse().unwrap())
            .unwrap()
            .cluster_speed()
    };
    // JPDC Table 7, case 3: one server, three SunBlade, four SunFire, one CPU each.
    assert!(close(speed("sunblade:3,sunfire:4,server:1"), 227.55, 1e-9));
    // JPDC 4.4.1: the server with two CPUs plus one SunBlade, and plus three.
    assert!(close(speed("server*2:1,sunblade:1"), 62.05, 1e-9));
    assert!(close(speed("sunwulf*2,hpc-40,hpc-41,hpc-42"), 102.63, 1e-9));
    // JPDC 4.3 example: server, one SunBlade, two SunFire.
    assert!(close(speed("server,sunblade,sunfire:2"), 114.07, 1e-9));
    let machine = sunwulf.select(&"sunfire*2:1".parse().unwrap()).unwrap();
    assert_eq!(machine.nodes()[0].cpus_used, 2);
    // JPDC 4.5: T_barrier = p x 0.39 ms, "where p is the number of processes": the node's
    // two CPUs run two.
    assert_eq!((machine.p(), machine.processes()), (1, 2));
    assert!(close(machine.l_s(), 2.0 * 0.39e-3, 1e-15));
}

#[test]
fn node_sets_keep_platform_order() {
    let ucf = Platform::load("ucf-cluster").unwrap();
    let machine = ucf
        .select(&"aditi,gromit,chromus".parse().unwrap())
        .unwrap();
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["gromit", "chromus", "aditi"]);
    let set: NodeSet = "server*2:1,sunblade:3".parse().unwrap();
    assert_eq!(set.to_string(), "server*2:1,sunblade:3");
}

#[test]
fn ncube2_and_local_presets() {
    let ncube = Platform::load("ncube2").unwrap();
    assert_eq!(ncube.nodes.len(), 128);
    assert_eq!(ncube.network.o_s, 130e-6);
    assert_eq!(ncube.network.g_s_per_byte, 0.5e-6);
    assert!(close(ncube.network.l.at(8), 3.0 * 130e-6, 1e-15));
    let local = Platform::load("local").unwrap();
    assert_eq!(local.nodes.len(), hetscale_machine::presets::cores());
    for preset in hetscale_machine::presets::all() {
        preset.validate().unwrap();
        let text = preset.to_toml_string().unwrap();
        assert_eq!(
            Platform::from_toml_str(&text).unwrap(),
            preset,
            "{} round-trips through TOML",
            preset.name
        );
    }
}

#[test]
fn the_kalinov_preset_is_his_256_processor_cluster_of_heterogeneity_4() {
    let kalinov = Platform::load("kalinov").unwrap();
    let speeds: Vec<f64> = kalinov.nodes.iter().map(|n| n.marked_speed).collect();
    assert_eq!(speeds.len(), 256);
    assert_eq!(speeds[..4], [2000.0, 500.0, 1000.0, 2000.0]);
    let (min, max) = (
        speeds.iter().copied().fold(f64::INFINITY, f64::min),
        speeds.iter().copied().fold(0.0, f64::max),
    );
    assert_eq!(max / min, 4.0, "H");
    // a = 50 us per message, b = 64 ns per 8-byte element, no barrier.
    assert_eq!(kalinov.network.o_s, 50e-6);
    assert_eq!(kalinov.network.g_s_per_byte, 8e-9);
    assert_eq!(kalinov.network.l.at(256), 0.0);
    assert_eq!(kalinov.nodes[1].kind.as_deref(), Some("slow"));
}

fn node_set_error(spec: &str) -> String {
    let ucf = Platform::load("sunwulf").unwrap();
    let err = spec
        .parse::<NodeSet>()
        .and_then(|set| ucf.select(&set))
        .unwrap_err();
    assert!(matches!(err, MachineError::InvalidNodeSet(_)), "{err:?}");
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

#[test]
fn node_set_errors_say_what_to_write() {
    assert!(node_set_error("").contains("write a count"));
    assert!(node_set_error("0").contains("at least 1"));
    assert!(node_set_error("86").contains("has 85"));
    assert!(node_set_error("sunblade:x").contains("e.g. sunblade:3"));
    assert!(node_set_error("server*y").contains("e.g. server*2"));
    assert!(node_set_error("hpc-1,,hpc-2").contains("single commas"));
    assert!(node_set_error("sunfire:21").contains("ask for fewer"));
    assert!(node_set_error("server*8").contains("at most *4"));
    assert!(node_set_error("hpc-1,hpc-1").contains("twice"));
    assert!(node_set_error("hpc-1:2").contains("a count only follows a kind"));
    let escape = node_set_error("sun\u{1b}[31mblade:2");
    assert!(
        escape.contains("contains the control character '\\u{1b}'") && !escape.contains('\u{1b}'),
        "{escape}"
    );
    let unknown = node_set_error("gromit");
    assert!(
        unknown.contains("kinds are server, sunblade, sunfire"),
        "{unknown}"
    );
}

#[test]
fn a_negative_count_is_called_negative_not_a_fraction() {
    let count = node_set_error("sunblade:-100");
    assert!(
        count.contains("\"-100\" is negative") && !count.contains("whole number"),
        "{count}"
    );
    let cpus = node_set_error("server*-2:1");
    assert!(cpus.contains("\"-2\" is negative"), "{cpus}");
    assert!(node_set_error("sunblade:1x").contains("\"1x\" is not a whole number"));
}

#[test]
fn a_huge_node_set_is_echoed_cut_with_its_length() {
    let word = "x".repeat(100_000);
    let unknown = node_set_error(&word);
    assert!(
        unknown.len() < 400 && unknown.contains("(100000 characters)"),
        "{} bytes: {}",
        unknown.len(),
        &unknown[..unknown.len().min(400)]
    );
    let count = node_set_error(&format!("sunblade:{}", "9".repeat(100_000)));
    assert!(count.len() < 400, "{} bytes", count.len());
    let items = vec!["sunblade:1x"; 20_000].join(",");
    assert!(node_set_error(&items).len() < 400);
}

#[test]
fn a_set_asks_beyond_the_platform_only_for_more_nodes_than_it_has() {
    let sunwulf = Platform::load("sunwulf").unwrap();
    let beyond = |spec: &str| spec.parse::<NodeSet>().unwrap().asks_beyond(&sunwulf);
    // 85 nodes, 64 of kind sunblade.
    assert!(beyond("86"));
    assert!(beyond("sunblade:65"));
    assert!(beyond("sunblade:40,sunblade:30"));
    assert!(!beyond("85"));
    assert!(!beyond("all"));
    assert!(!beyond("sunblade:64,server:1"));
    // Wrong on any number of copies: no node or kind of it, or a node twice.
    assert!(!beyond("gromit:100"));
    assert!(!beyond("hpc-1,hpc-1"));
}

fn platform_error(toml: &str) -> String {
    let err = Platform::from_toml_str(toml).unwrap_err();
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

const NETWORK: &str = "[network]\ng_s_per_byte = 1e-9\nL = { base_s = 1e-5 }\n";

#[test]
fn platform_validation_names_field_and_problem() {
    let node = |body: &str| format!("name = \"t\"\n{NETWORK}\n[[node]]\n{body}\n");
    assert_eq!(
        platform_error(&node("name = \"gromit\"\nmarked_speed = -1")),
        "node \"gromit\": marked_speed must be > 0, got -1"
    );
    assert!(
        platform_error(&node("name = \"a\"\nmarked_speed = 1\nr = 0")).contains("r must be > 0")
    );
    assert!(
        platform_error(&node("name = \"a\"\nmarked_speed = 1\ncpus = 0"))
            .contains("cpus must be >= 1")
    );
    assert!(platform_error(&node("name = \"a,b\"\nmarked_speed = 1")).contains("contains ','"));
    assert!(platform_error(&node("name = \"a\"\nspeed = 1")).contains("unknown field `speed`"));
    assert!(platform_error(&node("name = \"a\"\nmarked_speed = \"fast\"")).starts_with("line "));
    assert!(platform_error(&format!("name = \"t\"\n{NETWORK}")).contains("has no nodes"));
    let twice = format!(
        "name = \"t\"\n{NETWORK}\n[[node]]\nname = \"a\"\nmarked_speed = 1\n[[node]]\nname = \"a\"\nmarked_speed = 2\n"
    );
    assert!(platform_error(&twice).contains("listed twice"));
    let with_network = |net: &str| {
        format!("name = \"t\"\n[network]\n{net}\n[[node]]\nname = \"a\"\nmarked_speed = 1\n")
    };
    assert!(
        platform_error(&with_network("g_s_per_byte = -1\nL = { base_s = 0 }"))
            .contains("g_s_per_byte must be >= 0")
    );
    assert!(
        platform_error(&with_network("g_s_per_byte = 1\nL = { }")).contains("network.L is empty")
    );
    assert!(
        platform_error(&with_network(
            "g_s_per_byte = 1\nL = { base_s = 1, table = [] }"
        ))
        .contains("not both")
    );
    let unsorted = "g_s_per_byte = 1\nL = { table = [{ p = 4, L_s = 1 }, { p = 2, L_s = 1 }] }";
    assert!(platform_error(&with_network(unsorted)).contains("sort the table by p"));
}

#[test]
fn platform_files_load_and_report_their_path() {
    let dir = std::env::temp_dir().join(format!("hbsp-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.toml");
    Platform::load("ucf-cluster")
        .unwrap()
        .write_file(&path)
        .unwrap();
    assert_eq!(
        Platform::load(path.to_str().unwrap()).unwrap().nodes.len(),
        10
    );
    std::fs::write(&path, "name = \"x\"").unwrap();
    let err = Platform::from_file(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(path.to_str().unwrap()) && err.contains("missing field"),
        "{err}"
    );
    // A file that never ends is read no further than its cap.
    #[cfg(unix)]
    {
        let err = Platform::load("/dev/zero").unwrap_err().to_string();
        assert!(
            err.starts_with("/dev/zero: larger than 16 MiB, the cap on a platform file"),
            "{err}"
        );
    }
    assert!(
        Platform::load("no-such-preset")
            .unwrap_err()
            .to_string()
            .contains("use one of sunwulf")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A valid two-kind platform with `extra` appended (TOML tables).
fn two_kinds_with(extra: &str) -> String {
    format!(
        "name = \"t\"\n[network]\ng_s_per_byte = 1e-9\nL = {{ base_s = 1e-5 }}\n{extra}\n\
         [[node]]\nname = \"a\"\nkind = \"blade\"\nmarked_speed = 1\n\
         [[node]]\nname = \"b\"\nkind = \"server\"\nmarked_speed = 2\n"
    )
}

const MACHINE: &str = "[machine]\nlink_bytes_per_s = 1e6\n";

#[test]
fn collectives_must_be_named_once_and_by_a_collective_this_library_has() {
    let typo = two_kinds_with("[[network.collective]]\nname = \"braodcast\"\nbase_s = 1.0\n");
    assert_eq!(
        platform_error(&typo),
        "network.collective \"braodcast\" names no collective: use one of broadcast, scatter, \
         scatterv, gather, gatherv, allgather, reduce, allreduce, alltoall, alltoallv"
    );
    let twice = two_kinds_with(
        "[[network.collective]]\nname = \"broadcast\"\nbase_s = 1.0\n\
         [[network.collective]]\nname = \"broadcast\"\nbase_s = 2.0\n",
    );
    assert_eq!(
        platform_error(&twice),
        "network.collective \"broadcast\" is listed twice: keep one"
    );
    let machine_typo = two_kinds_with(&format!(
        "{MACHINE}[[machine.collective]]\nname = \"gater\"\n"
    ));
    assert!(
        platform_error(&machine_typo)
            .starts_with("machine.collective \"gater\" names no collective: use one of broadcast"),
        "{}",
        platform_error(&machine_typo)
    );
    for name in hetscale_machine::collective_names::NAMES {
        let known = two_kinds_with(&format!("[[network.collective]]\nname = \"{name}\"\n"));
        Platform::from_toml_str(&known).unwrap();
    }
}

#[test]
fn compute_rates_must_name_a_node_kind_and_a_known_kernel() {
    let kind = two_kinds_with(&format!(
        "{MACHINE}[[machine.compute]]\nkind = \"blaed\"\nrate_fraction = 0.5\n"
    ));
    assert_eq!(
        platform_error(&kind),
        "machine.compute kind \"blaed\" is no node's kind: use one of blade, server or \"*\""
    );
    let kernel = two_kinds_with(&format!(
        "{MACHINE}[[machine.compute]]\nkernel = \"mn\"\nkind = \"blade\"\nrate_fraction = 0.5\n"
    ));
    let platform = Platform::from_toml_str(&kernel).unwrap();
    let known = ["mm".to_string(), "ge".to_string()];
    assert_eq!(
        platform.check_kernels(&known).unwrap_err().to_string(),
        "platform t: machine.compute kernel \"mn\" is no kernel: use one of mm, ge or \"*\""
    );
    let fixed = Platform::from_toml_str(&kernel.replace("\"mn\"", "\"mm\"")).unwrap();
    fixed.check_kernels(&known).unwrap();
    for preset in hetscale_machine::presets::all() {
        preset
            .check_kernels(&known)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn names_and_labels_with_control_characters_are_refused() {
    let escape = "C1\u{1b}]0;pwned\u{7}";
    let node = two_kinds_with("").replace(
        "name = \"a\"",
        &format!("name = \"{}\"", "a\\u001b]0;x\\u0007"),
    );
    assert!(
        platform_error(&node).contains("contains the control character '\\u{1b}': remove it"),
        "{}",
        platform_error(&node)
    );
    let kind = two_kinds_with("").replace("kind = \"blade\"", "kind = \"bl\\u0007ade\"");
    assert!(
        platform_error(&kind).contains("kind \"bl\\u{7}ade\" contains"),
        "{}",
        platform_error(&kind)
    );
    let platform_name = two_kinds_with("").replace("name = \"t\"", "name = \"t\\u001b[2J\"");
    assert!(platform_error(&platform_name).starts_with("platform name"));
    assert!(
        !platform_error(&platform_name).contains('\u{1b}'),
        "the error itself prints no escape"
    );
    assert!(hetscale_machine::platform::control_character_problem(escape).is_some());
    assert!(hetscale_machine::platform::control_character_problem("C_1 (server*2)").is_none());
}

#[test]
fn speeds_too_close_to_zero_to_compute_with_are_refused() {
    let tiny = two_kinds_with("").replace("marked_speed = 1\n", "marked_speed = 5e-324\n");
    assert_eq!(
        platform_error(&tiny),
        "node \"a\": marked_speed = 5e-324 is too close to 0 to compute with: give one of at \
         least 2.2250738585072014e-308, or a smaller unit"
    );
    // Normal, but no node is that slow: a prediction on it was a NaN time.
    let slow = two_kinds_with("").replace("marked_speed = 1\n", "marked_speed = 1e-300\n");
    assert_eq!(
        platform_error(&slow),
        "node \"a\": marked_speed = 1e-300 is outside 1e-6 to 1e18 in the platform's \
         speed_unit: no node is that slow or fast; check the number, or give it in another \
         speed_unit"
    );
    let r = two_kinds_with("").replace("marked_speed = 1\n", "marked_speed = 1\nr = 1e-320\n");
    assert!(
        platform_error(&r).contains("r = 1e-320 is too close to 0"),
        "{}",
        platform_error(&r)
    );
}
