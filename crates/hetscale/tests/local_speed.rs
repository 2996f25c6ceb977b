//! The marked speed runs use, as the commands show it: `platform show local` and `platform
//! list` at this host's cached speed (not the placeholder), and `run --command` on one node
//! unless told otherwise.

mod common;

use std::path::Path;

use common::{hetscale, hetscale_in, json_of, stdout_of};

/// A cache directory holding a marked speed of 2345.5 Mflop/s for `local`.
fn cache_with_speed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("local-marked-speed.json"),
        r#"{"marked_speed_mflops": 2345.5, "cores": 2, "measured_by": "hetscale 0 bench --quick"}"#,
    )
    .unwrap();
    dir
}

/// `hetscale ARGS` with the cache in `cache`: its standard output and standard error.
fn with_cache(cache: &Path, args: &[&str]) -> (String, String) {
    let out = common::succeeded(
        hetscale()
            .env(hetscale_study::speed::local_speed::CACHE_DIR_ENV, cache)
            .args(args),
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn platform_show_and_list_give_local_the_cached_speed_runs_use_and_say_where_from() {
    let cache = cache_with_speed();
    let file = cache.path().join("local-marked-speed.json");
    let (toml, note) = with_cache(cache.path(), &["platform", "show", "local"]);
    assert!(toml.contains("marked_speed = 2345.5"), "{toml}");
    assert!(!toml.contains("marked_speed = 1000.0"), "{toml}");
    assert!(
        toml.contains(&format!("2345.5 Mflop/s, cached in {}", file.display())),
        "{toml}"
    );
    assert!(
        note.starts_with("note: platform local: marked speed 2345.5 Mflop/s per core"),
        "{note}"
    );
    let (json, _) = with_cache(cache.path(), &["platform", "show", "local", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["node"][0]["marked_speed_flops"], 2345.5e6);
    let (list, _) = with_cache(cache.path(), &["platform", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    let local = list["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "local")
        .unwrap();
    let p = local["p"].as_f64().unwrap();
    assert_eq!(local["marked_speed_flops"].as_f64(), Some(p * 2345.5e6));
    // Without a cache, the placeholder, and nothing is measured to show it.
    let toml = stdout_of(hetscale().args(["platform", "show", "local"]));
    assert!(toml.contains("marked_speed = 1000.0"), "{toml}");
}

/// Two nodes of 100 Mflop/s.
const PLATFORM: &str = r#"
name = "two"
[network]
g_s_per_byte = 1e-9
L = { base_s = 0.0 }
[[node]]
name = "alpha"
marked_speed = 100.0
[[node]]
name = "beta"
marked_speed = 100.0
"#;

#[test]
fn run_command_defaults_to_one_node_and_takes_more_when_told() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.toml"), PLATFORM).unwrap();
    let run = |extra: &[&str]| {
        json_of(
            hetscale_in(dir.path())
                .args(["run", "--platform", "two.toml", "--n", "1000"])
                .args(["--command", "echo time: 0.5", "--work", "1e8*p"])
                .args(["--time-regex", "time: (\\S+)", "--json"])
                .args(extra),
        )
    };
    let one = run(&[]);
    assert_eq!(one["p"], 1, "{one}");
    // E_s against one node's 100 Mflop/s, not both nodes'.
    assert_eq!(one["speed_efficiency"], 2.0);
    assert_eq!(run(&["--nodes", "all"])["p"], 2);
    assert_eq!(run(&["--nodes", "2"])["p"], 2);
}
