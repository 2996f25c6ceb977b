//! Resources: counts a user gives are bounded before anything is allocated or run, and runs
//! that cannot fit this machine (its memory, or the memory limit of the process's own cgroup)
//! are refused before they start.

mod common;

use common::hetscale;

/// `--repetitions`, `--runs` and `--warmup` of every command that has them: a count beyond
/// the documented maximum (4294967295 aborted `bench` on a 34 GB allocation) or a zero
/// (`collectives` ran it as 1) is refused by the parser, in one line, before anything runs.
#[test]
fn repetition_counts_out_of_range_are_refused_before_anything_runs() {
    let cases: [&[&str]; 8] = [
        &["bench", "--quick", "--runs", "4294967295"],
        &["bench", "--quick", "--runs", "0"],
        &["collectives", "--runs", "4294967295"],
        &["collectives", "--runs", "0"],
        &["run", "mm", "--n", "8", "--runs", "4294967295"],
        &["run", "mm", "--n", "8", "--warmup", "4294967295"],
        &["study", "--command", "true", "--runs", "0"],
        &["study", "--command", "true", "--warmup", "1000000000"],
    ];
    for args in cases {
        let out = hetscale().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let flag = args[args.len() - 2];
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.lines()
                .next()
                .is_some_and(|line| line.contains(flag) && line.contains("is not in")),
            "{args:?}: {err}"
        );
    }
}

/// A cgroup v1 memory cgroup of this test's own, removed when dropped (after the processes in
/// it ended), even when the test fails.
struct MemoryCgroup {
    dir: std::path::PathBuf,
}

impl MemoryCgroup {
    /// A new cgroup `name` (unique among the tests) limited to `bytes`; `None`, the test
    /// skipped saying so, where this process cannot make one (not root, or no v1 memory
    /// controller).
    fn limited_to(name: &str, bytes: u64) -> Option<Self> {
        if !hetscale_testkit::require(hetscale_testkit::Need::CgroupV1Memory) {
            return None;
        }
        let controller = std::path::Path::new("/sys/fs/cgroup/memory");
        let dir = controller.join(format!("hetscale-test-{}-{name}", std::process::id()));
        if let Err(err) = std::fs::create_dir(&dir) {
            panic!("cannot create {} ({err})", dir.display());
        }
        let cgroup = Self { dir };
        std::fs::write(cgroup.dir.join("memory.limit_in_bytes"), bytes.to_string()).unwrap();
        Some(cgroup)
    }

    /// `hetscale args` run inside this cgroup (the shell moves itself in, then becomes it),
    /// set up as [`common::hetscale_process`] sets it up.
    fn hetscale(&self, args: &[&str]) -> std::process::Output {
        let procs = self.dir.join("cgroup.procs");
        let script = format!("echo $$ > '{}' && exec \"$0\" \"$@\"", procs.display());
        std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(assert_cmd::cargo::cargo_bin("hetscale"))
            .args(args)
            .env("HETSCALE_CACHE_DIR", "")
            .current_dir(std::env::temp_dir())
            .output()
            .unwrap()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_dir(&self.dir) {
            eprintln!("could not remove {}: {err}", self.dir.display());
        }
    }
}

const GIB: u64 = 1 << 30;

/// Under a 1 GiB cgroup v1 limit (the machine has far more), a run whose estimate is larger is
/// refused before it starts (exit 2, one line naming the estimate and the limit) instead of
/// being OOM-killed (137): the check reads the process's own cgroup, not only the root's v2
/// `memory.max`.
#[test]
fn a_run_larger_than_the_own_cgroup_s_memory_limit_is_refused_not_killed() {
    let Some(cgroup) = MemoryCgroup::limited_to("mm-8000", GIB) else {
        return;
    };
    let args = [
        "run",
        "mm",
        "--backend",
        "sim",
        "--platform",
        "sunwulf",
        "--nodes",
        "2",
        "--n",
        "8000",
    ];
    let err = refusal(&cgroup.hetscale(&args));
    assert!(
        err.starts_with("hetscale: mm at N = 8000 on 2 nodes would need about ")
            && err.contains("available"),
        "{err}"
    );
}

/// The one-line refusal (exit 2) of a run that `out` shows.
fn refusal(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

/// A platform of `p` identical nodes, as TOML.
fn platform_of(p: usize) -> String {
    let mut toml =
        format!("name = \"flat{p}\"\n[network]\ng_s_per_byte = 1e-9\nL = {{ base_s = 1e-5 }}\n");
    for i in 0..p {
        toml.push_str(&format!(
            "[[node]]\nname = \"n{i}\"\nmarked_speed = 100.0\n"
        ));
    }
    toml
}

/// What grows as p^2 is in the estimate: a skeleton mm on 8,000 nodes at N = 64 peaks at
/// 1.6 GB (a few vectors of p counts per node; 2.1 GB before) and was estimated at 0.1 GB, so
/// under a 1 GiB limit it was killed; now it is refused before it starts.
#[test]
fn a_run_on_thousands_of_nodes_counts_its_per_pair_state_and_is_refused() {
    let Some(cgroup) = MemoryCgroup::limited_to("p-8000", GIB) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let platform = dir.path().join("flat.toml");
    std::fs::write(&platform, platform_of(8000)).unwrap();
    let args = [
        "run",
        "mm",
        "--backend",
        "sim",
        "--skip-compute",
        "--platform",
        platform.to_str().unwrap(),
        "--nodes",
        "all",
        "--n",
        "64",
    ];
    let err = refusal(&cgroup.hetscale(&args));
    assert!(
        err.contains("mm at N = 64 on 8000 nodes would need about 2.")
            && err.contains("use a smaller N or fewer nodes"),
        "{err}"
    );
}

/// `probe --nodes 100000 --quick` grew past 6 GB in 20 s and ran on: it is refused at once
/// (exit 2), in one line with its estimates of memory and time and what to do. (The timeout
/// only ends a probe that was not refused.)
#[test]
fn a_probe_too_large_for_this_machine_is_refused_before_it_starts() {
    let out = hetscale()
        .args(["probe", "--nodes", "100000", "--quick"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = refusal(&out);
    assert!(
        err.starts_with("hetscale: probing 100000 nodes (")
            && err.contains("supersteps, about ")
            && err.contains("probe fewer nodes"),
        "{err}"
    );
}
