//! The cgroups a process belongs to, as `/proc/self/cgroup` lists them: where the memory
//! check ([`crate::room`]) finds a memory limit, and `bench` a CPU quota.

/// One line of `/proc/self/cgroup`: `ID:CONTROLLERS:PATH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Membership<'a> {
    /// The v1 hierarchy's controllers, comma-separated; empty for v2's unified hierarchy.
    pub controllers: &'a str,
    /// The cgroup's path in its hierarchy, from `/`.
    pub path: &'a str,
}

impl Membership<'_> {
    /// Whether this is cgroup v2's unified hierarchy.
    pub fn is_v2(&self) -> bool {
        self.controllers.is_empty()
    }

    /// Whether this v1 hierarchy holds `controller` (e.g. `cpu`, `memory`).
    pub fn holds(&self, controller: &str) -> bool {
        self.controllers.split(',').any(|c| c == controller)
    }
}

/// The memberships `text` (the contents of `/proc/self/cgroup`) lists; lines without three
/// fields are skipped.
pub fn memberships(text: &str) -> impl Iterator<Item = Membership<'_>> {
    text.lines().filter_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        Some(Membership { controllers, path })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_lines_are_told_apart_and_bad_lines_skipped() {
        let lines: Vec<_> =
            memberships("4:memory:/a\n2:cpu,cpuacct:/b/c\n0::/d\nno colons\n").collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].holds("memory") && !lines[0].holds("cpu"));
        assert!(lines[1].holds("cpu") && lines[1].holds("cpuacct") && lines[1].path == "/b/c");
        assert!(lines[2].is_v2() && !lines[1].is_v2() && lines[2].path == "/d");
    }
}
