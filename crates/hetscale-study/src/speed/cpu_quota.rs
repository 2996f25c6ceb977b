//! The CPU quota this process runs under (a Linux cgroup's CFS bandwidth limit), whose period
//! is the grain of the speed it gets.
//!
//! Under a quota of `q` cores per period `P` a process runs `q P` of every `P` and waits out
//! the rest. A timed sample whose length is not many periods catches a throttle more or less
//! by chance: one period changes a sample of length `T` by up to `(1 - q) P / T`. `bench`
//! therefore stretches its samples to [`PERIODS_PER_SAMPLE`] periods of the binding quota. On
//! the 4-host testbed at a 100 ms period
//! (`mpirun -np 4 hetscale bench --backend mpi --runs 3`), samples of 0.25 s, 2.5 periods,
//! missed the quota ratios by up to 8.5% and samples of 20 periods stayed within 5%:
//! docs/testbed.md, "Measured on this machine", and docs/notes/testbed-history.md.

use std::path::{Path, PathBuf};

/// Periods of the binding quota that one timed sample spans at least (one throttle more or
/// less then moves a sample by at most 5%).
pub const PERIODS_PER_SAMPLE: f64 = 20.0;

/// A CFS bandwidth limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuQuota {
    /// Cores' worth of CPU time per period.
    pub cores: f64,
    /// The period, s.
    pub period_s: f64,
}

/// The tightest quota on this process's cgroup and its ancestors, if any (cgroup v1's `cpu`
/// controller or v2's `cpu.max`); `None` where there is none or the files cannot be read.
pub fn this_process() -> Option<CpuQuota> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    tightest(&membership, |path| std::fs::read_to_string(path).ok())
}

/// The tightest quota over the cgroups that `membership` (the text of `/proc/self/cgroup`)
/// names and their ancestors, reading each file through `read`.
pub fn tightest(membership: &str, read: impl Fn(&Path) -> Option<String>) -> Option<CpuQuota> {
    quota_files(membership)
        .into_iter()
        .filter_map(|files| files.quota(&read))
        .min_by(|a, b| a.cores.total_cmp(&b.cores))
}

/// Where one cgroup keeps its quota.
enum QuotaFiles {
    /// v1: `cpu.cfs_quota_us` (-1: none) and `cpu.cfs_period_us`.
    V1(PathBuf),
    /// v2: `cpu.max`, "QUOTA PERIOD" or "max PERIOD".
    V2(PathBuf),
}

impl QuotaFiles {
    fn quota(&self, read: &impl Fn(&Path) -> Option<String>) -> Option<CpuQuota> {
        let number = |dir: &Path, file: &str| -> Option<f64> {
            read(&dir.join(file))?.trim().parse::<f64>().ok()
        };
        let (quota_us, period_us) = match self {
            Self::V1(dir) => (
                number(dir, "cpu.cfs_quota_us")?,
                number(dir, "cpu.cfs_period_us")?,
            ),
            Self::V2(dir) => {
                let text = read(&dir.join("cpu.max"))?;
                let mut fields = text.split_whitespace();
                let quota = fields.next()?.parse::<f64>().ok()?;
                (quota, fields.next()?.parse::<f64>().ok()?)
            }
        };
        (quota_us > 0.0 && period_us > 0.0).then(|| CpuQuota {
            cores: quota_us / period_us,
            period_s: period_us / 1e6,
        })
    }
}

/// The quota files of every cgroup of `membership` that can hold a CPU quota, and of each of
/// its ancestors (a parent's quota binds its children).
fn quota_files(membership: &str) -> Vec<QuotaFiles> {
    let mut files = Vec::new();
    for member in hetscale_machine::cgroup::memberships(membership) {
        let mounts: &[&str] = if member.is_v2() {
            &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        } else if member.holds("cpu") {
            &["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
        } else {
            continue;
        };
        for mount in mounts {
            for dir in Path::new(member.path).ancestors() {
                let dir = Path::new(mount).join(dir.strip_prefix("/").unwrap_or(dir));
                files.push(if member.is_v2() {
                    QuotaFiles::V2(dir)
                } else {
                    QuotaFiles::V1(dir)
                });
            }
        }
    }
    files
}

/// The least length of a timed sample under `quota`: `floor`, or [`PERIODS_PER_SAMPLE`] of
/// its periods if that is longer.
pub fn min_sample_s(floor: f64, quota: Option<CpuQuota>) -> f64 {
    quota.map_or(floor, |q| floor.max(PERIODS_PER_SAMPLE * q.period_s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect();
        move |path| map.get(path).cloned()
    }

    #[test]
    fn a_v1_hosts_quota_is_found_in_its_cpu_cgroup() {
        let read = files(&[
            ("/sys/fs/cgroup/cpu/hst/h4/cpu.cfs_quota_us", "15000\n"),
            ("/sys/fs/cgroup/cpu/hst/h4/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpu/hst/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/hst/cpu.cfs_period_us", "100000\n"),
        ]);
        let quota = tightest("4:memory:/x\n1:cpu:/hst/h4\n0::/\n", read).unwrap();
        assert!((quota.cores - 0.15).abs() < 1e-12);
        assert!((quota.period_s - 0.1).abs() < 1e-12);
        assert!((min_sample_s(0.25, Some(quota)) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_tightest_of_a_cgroup_and_its_ancestors_binds() {
        let read = files(&[
            ("/sys/fs/cgroup/a/b/cpu.max", "max 10000\n"),
            ("/sys/fs/cgroup/a/cpu.max", "5000 10000\n"),
            ("/sys/fs/cgroup/cpu.max", "max 100000\n"),
        ]);
        let quota = tightest("0::/a/b\n", read).unwrap();
        assert_eq!(quota.cores, 0.5);
        assert_eq!(quota.period_s, 0.01);
        // A 10 ms period asks for 0.2 s: the floor stands.
        assert_eq!(min_sample_s(0.25, Some(quota)), 0.25);
    }

    #[test]
    fn no_quota_or_unreadable_files_leave_the_floor() {
        let read = files(&[
            ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
            ("/sys/fs/cgroup/cpu.max", "garbage\n"),
        ]);
        assert_eq!(tightest("1:cpu,cpuacct:/\n0::/\n", &read), None);
        assert_eq!(tightest("", &read), None);
        assert_eq!(min_sample_s(0.25, None), 0.25);
    }
}
