//! Test support for the hetscale workspace: a test that needs something beyond the Rust
//! toolchain, gcc, Python 3 and git asks for it with [`require`], which says whether the test
//! can go on. Where the need is missing, the test is skipped with one visible line,
//!
//! ```text
//! skipped: <test> needs <what>; <how to enable it>
//! ```
//!
//! or, under `HETSCALE_STRICT_TESTS=1` ([`STRICT`], set by `.ci/run`), fails with that message.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The environment variable that turns every skip into a failure when it is `1`.
pub const STRICT: &str = "HETSCALE_STRICT_TESTS";

/// Something a test needs beyond the Rust toolchain, gcc, Python 3 and git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// numpy in `python3`: cross-checks of the kernels' `.npy` dumps.
    Numpy,
    /// Extra-P in `python3`: its own reader loads `hetscale export --format extrap`.
    ExtraP,
    /// Headless Chromium: renders the HTML report.
    Chromium,
    /// OpenMPI's `mpirun` and `mpicc`: jobs of the mpi backend and MPI programs in C.
    OpenMpi,
    /// The `mpi` cargo feature, which only builds with OpenMPI installed; asked only by a test
    /// compiled without it, so never present.
    MpiFeature,
    /// A mount namespace of the test's own (`unshare -m`, root).
    MountNamespace,
    /// A cgroup v1 memory controller this process may make cgroups in (root).
    CgroupV1Memory,
    /// `chattr +i` on a directory under the temporary directory (root, and a filesystem with
    /// the immutable attribute).
    ImmutableDirectory,
}

impl Need {
    /// What is needed, as the skip line names it.
    pub fn what(self) -> &'static str {
        match self {
            Need::Numpy => "numpy",
            Need::ExtraP => "Extra-P (python3 -c 'import extrap')",
            Need::Chromium => "Chromium (chromium or chromium-browser on PATH)",
            Need::OpenMpi => "OpenMPI (mpirun and mpicc on PATH)",
            Need::MpiFeature => "OpenMPI",
            Need::MountNamespace => "root (a mount namespace: unshare -m)",
            Need::CgroupV1Memory => "root (a cgroup in the cgroup v1 memory controller)",
            Need::ImmutableDirectory => {
                "root (chattr +i on a directory in the temporary directory)"
            }
        }
    }

    /// How to enable it, as the skip line says.
    pub fn how(self) -> &'static str {
        match self {
            Need::Numpy => "python3 -m pip install numpy",
            Need::ExtraP => "python3 -m pip install extrap",
            Need::Chromium => "sudo apt-get install chromium",
            Need::OpenMpi => "sudo apt-get install openmpi-bin libopenmpi-dev",
            Need::MpiFeature => "sudo bash .ci/setup, then cargo test --workspace --all-features",
            Need::MountNamespace => "run the tests as root",
            Need::CgroupV1Memory => "run the tests as root on a host with cgroup v1",
            Need::ImmutableDirectory => {
                "run the tests as root with the temporary directory on ext4"
            }
        }
    }

    /// Whether this machine has it.
    pub fn present(self) -> bool {
        match self {
            Need::Numpy => succeeds("python3", &["-c", "import numpy"]),
            Need::ExtraP => succeeds("python3", &["-c", "import extrap"]),
            Need::Chromium => chromium().is_some(),
            Need::OpenMpi => on_path("mpirun").is_some() && on_path("mpicc").is_some(),
            Need::MpiFeature => false,
            Need::MountNamespace => succeeds("unshare", &["-m", "true"]),
            Need::CgroupV1Memory => cgroup_v1_memory_writable(),
            Need::ImmutableDirectory => chattr_works(),
        }
    }
}

/// Whether the running test can go on: `need` is present. Where it is missing, prints
/// `skipped: <test> needs <what>; <how>` on standard error and returns `false` (the test
/// returns early); in strict mode ([`STRICT`]) fails the test with that message instead.
pub fn require(need: Need) -> bool {
    require_by(&running_test(), need)
}

/// Whether the running test can go on with `part` of itself (e.g. "its Extra-P check", the
/// rest needing nothing): as [`require`], the skip line naming the part, `skipped: <test>
/// (<part>) needs <what>; <how>`.
pub fn require_part(part: &str, need: Need) -> bool {
    require_by(&format!("{} ({part})", running_test()), need)
}

/// Whether `need` is present; where not, `subject needs <what>; <how>` is reported.
fn require_by(subject: &str, need: Need) -> bool {
    if need.present() {
        return true;
    }
    missing(&format!("{subject} needs {}; {}", need.what(), need.how()));
    false
}

/// For a test compiled only without a cargo feature: `tests` (what the feature would have
/// added, e.g. "the mpi backend's tests of hbsp") are skipped for lack of `need`, reported as
/// [`require`] reports a missing need.
pub fn skip_feature_tests(tests: &str, need: Need) {
    missing(&format!("{tests} need {}; {}", need.what(), need.how()));
}

/// Chromium's path: `chromium` or `chromium-browser` on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    on_path("chromium").or_else(|| on_path("chromium-browser"))
}

/// Reports a missing need as [`STRICT`] says.
fn missing(message: &str) {
    report(message, std::env::var(STRICT).is_ok_and(|v| v == "1"));
}

/// Reports a missing need: a failure when `strict`, else one line on standard error.
fn report(message: &str, strict: bool) {
    if strict {
        panic!("{STRICT}=1 and {message}");
    }
    // Written to the process's standard error itself: libtest captures `eprintln!` of a
    // passing test and would hide the skip.
    let _ = writeln!(std::io::stderr(), "skipped: {message}");
}

/// The running test as `<test binary>::<test>`, e.g. `numpy_check::dumped_results_match_numpy`
/// (libtest names each test's thread after the test).
fn running_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| without_hash(&stem).to_string())
        .unwrap_or_else(|| "a test".into());
    match std::thread::current().name() {
        Some(test) if test != "main" => format!("{binary}::{test}"),
        _ => binary,
    }
}

/// A test binary's name without the hash cargo appends (`numpy_check-1a2b...`).
fn without_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

/// The first `name` on `PATH` that is a file.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Whether `program args` runs and exits 0 (its output discarded).
fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process can make a cgroup in the cgroup v1 memory controller (root, the
/// controller mounted writable): it makes one and removes it.
fn cgroup_v1_memory_writable() -> bool {
    let controller = Path::new("/sys/fs/cgroup/memory");
    if !controller.join("memory.limit_in_bytes").exists() {
        return false;
    }
    let probe = controller.join(format!("hetscale-testkit-{}", std::process::id()));
    std::fs::create_dir(&probe).is_ok() && std::fs::remove_dir(&probe).is_ok()
}

/// Whether `chattr +i` (and `-i` again) works on a fresh directory in the temporary directory.
fn chattr_works() -> bool {
    let dir = std::env::temp_dir().join(format!("hetscale-testkit-chattr-{}", std::process::id()));
    if std::fs::create_dir(&dir).is_err() {
        return false;
    }
    let path = dir.to_string_lossy().into_owned();
    let works = succeeds("chattr", &["+i", &path]);
    if works {
        succeeds("chattr", &["-i", &path]);
    }
    let _ = std::fs::remove_dir(&dir);
    works
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_binary_loses_only_cargo_s_hash() {
        assert_eq!(without_hash("numpy_check-0123456789abcdef"), "numpy_check");
        assert_eq!(
            without_hash("hetscale_testkit-0123456789abcdef"),
            "hetscale_testkit"
        );
        assert_eq!(without_hash("user-kernel"), "user-kernel");
        assert_eq!(without_hash("probe-collectives"), "probe-collectives");
    }

    #[test]
    fn the_running_test_is_named_after_its_thread() {
        assert!(
            running_test().ends_with("::tests::the_running_test_is_named_after_its_thread"),
            "{}",
            running_test()
        );
    }

    #[test]
    fn every_need_says_how_to_enable_it() {
        let needs = [
            Need::Numpy,
            Need::ExtraP,
            Need::Chromium,
            Need::OpenMpi,
            Need::MpiFeature,
            Need::MountNamespace,
            Need::CgroupV1Memory,
            Need::ImmutableDirectory,
        ];
        for need in needs {
            assert!(
                !need.what().is_empty() && !need.how().is_empty(),
                "{need:?}"
            );
        }
        assert!(!Need::MpiFeature.present());
    }

    #[test]
    #[should_panic(expected = "HETSCALE_STRICT_TESTS=1 and t needs numpy; python3 -m pip")]
    fn strict_mode_fails_with_the_skip_s_message() {
        report("t needs numpy; python3 -m pip install numpy", true);
    }
}
