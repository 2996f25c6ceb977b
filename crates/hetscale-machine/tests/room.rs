//! The room under the memory limits of the process's own cgroup (v1 and v2 layouts, in fake
//! trees).

use std::path::Path;

use hetscale_machine::room::cgroup_room;

/// Writes `files` (`(path, contents)`, paths relative to `root`), making their directories.
fn tree(root: &Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// A cgroup v1 host (this project's CI machine): the memory controller's own line names the
/// process's cgroup under `memory/`; its limit minus its usage is the room. Before, only the
/// root's v2 `memory.max` was read and a 1 GiB v1 limit was ignored (the run was killed).
#[test]
fn a_v1_memory_limit_of_the_process_s_own_cgroup_leaves_limit_minus_usage() {
    let root = tempfile::tempdir().unwrap();
    tree(
        root.path(),
        &[
            ("memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("memory/memory.usage_in_bytes", "5000000000\n"),
            ("memory/jobs/run7/memory.limit_in_bytes", "1073741824\n"),
            ("memory/jobs/run7/memory.usage_in_bytes", "73741824\n"),
        ],
    );
    let membership = "5:cpu,cpuacct:/jobs/run7\n4:memory:/jobs/run7\n0::/\n";
    assert_eq!(cgroup_room(root.path(), membership), Some(1e9));
    // "No limit" (the largest page-aligned i64) everywhere: no room to respect.
    let unlimited = "4:memory:/\n";
    assert_eq!(cgroup_room(root.path(), unlimited), None);
    // Not in the memory controller's hierarchy at all.
    assert_eq!(cgroup_room(root.path(), "5:cpu:/jobs/run7\n"), None);
}

/// cgroup v2, alone (`root` is the v2 mount) or beside v1 (`root/unified`): `memory.max` of the
/// process's cgroup and of its ancestors, the tightest one winning; `max` is no limit.
#[test]
fn v2_memory_limits_of_the_cgroup_and_its_ancestors_leave_the_tightest_room() {
    let root = tempfile::tempdir().unwrap();
    tree(
        root.path(),
        &[
            ("cgroup.controllers", "cpu memory\n"),
            ("memory.current", "8000000000\n"),
            ("user.slice/memory.max", "3221225472\n"), // 3 GiB
            ("user.slice/memory.current", "1073741824\n"),
            ("user.slice/job/memory.max", "max\n"),
            ("user.slice/job/memory.current", "536870912\n"),
        ],
    );
    let membership = "0::/user.slice/job\n";
    assert_eq!(cgroup_room(root.path(), membership), Some(2.0 * GIB));
    assert_eq!(
        cgroup_room(root.path(), "0::/\n"),
        None,
        "the root has no memory.max"
    );

    let hybrid = tempfile::tempdir().unwrap();
    tree(
        hybrid.path(),
        &[
            ("unified/box/memory.max", "2147483648\n"),
            ("unified/box/memory.current", "1073741824\n"),
            ("memory/box/memory.limit_in_bytes", "4294967296\n"),
            ("memory/box/memory.usage_in_bytes", "0\n"),
        ],
    );
    // Both hierarchies limit the process: the tighter room counts.
    let both = "4:memory:/box\n0::/box\n";
    assert_eq!(cgroup_room(hybrid.path(), both), Some(GIB));
}

/// A cgroup path that is not there (another namespace's view) or unreadable files limit
/// nothing, and a usage above the limit leaves no room rather than a negative one.
#[test]
fn missing_cgroups_limit_nothing_and_an_overfull_one_leaves_no_room() {
    let root = tempfile::tempdir().unwrap();
    tree(
        root.path(),
        &[
            ("memory/full/memory.limit_in_bytes", "1000\n"),
            ("memory/full/memory.usage_in_bytes", "2000\n"),
        ],
    );
    assert_eq!(cgroup_room(root.path(), "4:memory:/elsewhere\n"), None);
    assert_eq!(cgroup_room(root.path(), "garbage"), None);
    assert_eq!(cgroup_room(root.path(), "4:memory:/full\n"), Some(0.0));
}
