//! What `hetscale bench` makes of a measurement: the `local` platform at this host's marked
//! speed; with `--backend mpi`, each host's speed (the mean over its ranks) and a platform of
//! one node per host; and the JSON document of either.

use std::collections::BTreeMap;

use hbsp::{Node, Platform};
use serde::Serialize;

use crate::error::{Result, StudyError};
use crate::speed::marked_speed::{BenchOptions, MAX_RELATIVE_WIDTH, MarkedSpeedReport};

/// One host's measurement: the mean over its ranks of their marked speeds and intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpeed {
    /// Host name, short (up to its first dot): the platform node's name.
    pub host: String,
    /// The ranks that ran on it.
    pub ranks: Vec<usize>,
    /// Marked speed per core, Mflop/s.
    pub marked_speed: f64,
    /// 95% interval, Mflop/s.
    pub interval: (f64, f64),
    /// Each kernel's median rate, Mflop/s, in the suite's order (the values after the
    /// interval's).
    pub kernels: Vec<f64>,
}

/// Groups the ranks' `(host, [speed, low, high, kernel medians...])` by host, in order of first
/// rank.
pub fn by_host(ranks: &[(String, Vec<f64>)]) -> Vec<HostSpeed> {
    let mut hosts: Vec<(HostSpeed, usize)> = Vec::new();
    for (rank, (host, values)) in ranks.iter().enumerate() {
        let short = host.split('.').next().unwrap_or(host).to_owned();
        let i = match hosts.iter().position(|(h, _)| h.host == short) {
            Some(i) => i,
            None => {
                hosts.push((
                    HostSpeed {
                        host: short,
                        ranks: Vec::new(),
                        marked_speed: 0.0,
                        interval: (0.0, 0.0),
                        kernels: vec![0.0; values.len().saturating_sub(3)],
                    },
                    0,
                ));
                hosts.len() - 1
            }
        };
        let (h, _) = &mut hosts[i];
        h.ranks.push(rank);
        h.marked_speed += values[0];
        h.interval.0 += values[1];
        h.interval.1 += values[2];
        for (sum, v) in h.kernels.iter_mut().zip(values.iter().skip(3)) {
            *sum += v;
        }
    }
    hosts
        .into_iter()
        .map(|(mut h, _)| {
            let k = h.ranks.len() as f64;
            h.marked_speed /= k;
            h.interval = (h.interval.0 / k, h.interval.1 / k);
            h.kernels.iter_mut().for_each(|v| *v /= k);
            h
        })
        .collect()
}

/// `base` (or a new platform with the `local` preset's placeholder network) with every host's
/// node at its measured speed: a node named like the host takes it; a host without one is
/// added, with one CPU per rank that ran on it.
pub fn hosts_platform(base: Option<Platform>, hosts: &[HostSpeed]) -> Result<Platform> {
    let mut platform = match base {
        Some(platform) => platform,
        None => {
            let mut platform = Platform::load("local")?;
            platform.name = "mpi-hosts".into();
            platform.nodes.clear();
            platform
        }
    };
    if platform.speed_unit != "Mflop/s" {
        return Err(StudyError::Options(format!(
            "platform \"{}\" measures speeds in {}: bench measures Mflop/s",
            platform.name, platform.speed_unit
        )));
    }
    for h in hosts {
        match platform.nodes.iter_mut().find(|n| n.name == h.host) {
            Some(node) => node.marked_speed = h.marked_speed,
            None => {
                let mut node = Node::new(&h.host, h.marked_speed);
                node.cpus = h.ranks.len() as u32;
                platform.nodes.push(node);
            }
        }
    }
    let list: Vec<String> = hosts
        .iter()
        .map(|h| format!("{} {:.1}", h.host, h.marked_speed))
        .collect();
    platform.description = format!(
        "marked speeds per host measured by hetscale bench --backend mpi (Mflop/s: {}); network: run hetscale probe --backend mpi --write-platform",
        list.join(", ")
    );
    platform.validate()?;
    Ok(platform)
}

/// The `local` preset with every core at the measured marked speed.
pub fn local_platform(report: &MarkedSpeedReport) -> Result<Platform> {
    let mut platform = Platform::load("local")?;
    for node in &mut platform.nodes {
        node.marked_speed = report.marked_speed;
    }
    platform.description = format!(
        "this host, one node per core at the marked speed measured by hetscale bench ({:.1} Mflop/s); network: run hetscale probe --write-platform",
        report.marked_speed
    );
    platform.validate()?;
    Ok(platform)
}

/// Hosts whose marked speed has a 95% interval wider than [`MAX_RELATIVE_WIDTH`] of it: each
/// was loaded while it was measured.
pub fn hosts_warnings(hosts: &[HostSpeed]) -> Vec<String> {
    hosts
        .iter()
        .filter(|h| (h.interval.1 - h.interval.0) / h.marked_speed > MAX_RELATIVE_WIDTH)
        .map(|h| {
            format!(
                "host {}: the marked speed {:.1} Mflop/s has a 95% interval of {:.1}-{:.1} Mflop/s, wider than {:.0}% of it: the host was loaded while it was measured",
                h.host,
                h.marked_speed,
                h.interval.0,
                h.interval.1,
                100.0 * MAX_RELATIVE_WIDTH
            )
        })
        .collect()
}

/// This host's measurement in the one JSON schema: the suite's report, the marked speed's 95%
/// interval in flop/s and the warnings.
#[derive(Debug, Serialize)]
pub struct BenchDocument<'a> {
    #[serde(flatten)]
    report: &'a MarkedSpeedReport,
    marked_speed_flops_ci95: [f64; 2],
    warnings: &'a [String],
}

impl<'a> BenchDocument<'a> {
    /// The document of `report` with its `warnings`.
    pub fn new(report: &'a MarkedSpeedReport, warnings: &'a [String]) -> Self {
        let (lo, hi) = report.interval();
        Self {
            report,
            marked_speed_flops_ci95: [lo * 1e6, hi * 1e6],
            warnings,
        }
    }
}

/// An MPI job's measurement in the one JSON schema: each host's marked speed and kernels'
/// medians in flop/s, the options and the warnings.
#[derive(Debug, Serialize)]
pub struct HostsDocument<'a> {
    backend: &'static str,
    p: usize,
    hosts: Vec<HostDocument>,
    options: &'a BenchOptions,
    warnings: &'a [String],
}

/// One host of a [`HostsDocument`].
#[derive(Debug, Serialize)]
struct HostDocument {
    host: String,
    cpus: usize,
    marked_speed_flops: f64,
    marked_speed_flops_ci95: [f64; 2],
    kernel_median_flops: BTreeMap<String, f64>,
}

impl<'a> HostsDocument<'a> {
    /// The document of `hosts` measured by `ranks` ranks with `options`, the kernels named as
    /// `report`'s (this rank's measurement).
    pub fn new(
        ranks: usize,
        hosts: &[HostSpeed],
        report: &MarkedSpeedReport,
        options: &'a BenchOptions,
        warnings: &'a [String],
    ) -> Self {
        let hosts = hosts
            .iter()
            .map(|h| HostDocument {
                host: h.host.clone(),
                cpus: h.ranks.len(),
                marked_speed_flops: h.marked_speed * 1e6,
                marked_speed_flops_ci95: [h.interval.0 * 1e6, h.interval.1 * 1e6],
                kernel_median_flops: report
                    .kernels
                    .iter()
                    .zip(&h.kernels)
                    .map(|(k, v)| (k.name.to_owned(), v * 1e6))
                    .collect(),
            })
            .collect();
        Self {
            backend: "mpi",
            p: ranks,
            hosts,
            options,
            warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(list: &[(&str, f64)]) -> Vec<(String, Vec<f64>)> {
        list.iter()
            .map(|(h, s)| (h.to_string(), vec![*s, s - 1.0, s + 1.0]))
            .collect()
    }

    #[test]
    fn ranks_on_one_host_are_averaged_and_hosts_keep_first_rank_order() {
        let hosts = by_host(&ranks(&[("h2.lab", 300.0), ("h1", 600.0), ("h2", 200.0)]));
        assert_eq!(hosts.len(), 2);
        assert_eq!(hosts[0].host, "h2");
        assert_eq!(hosts[0].ranks, vec![0, 2]);
        assert_eq!(hosts[0].marked_speed, 250.0);
        assert_eq!(hosts[0].interval, (249.0, 251.0));
        assert_eq!(hosts[1].host, "h1");
        assert_eq!(hosts[1].ranks, vec![1]);
        assert!(hosts[0].kernels.is_empty());
        // The kernels' medians after the interval, averaged over a host's ranks alike.
        let with_kernels = vec![
            ("h1".to_owned(), vec![3.0, 2.0, 4.0, 10.0, 20.0]),
            ("h1".to_owned(), vec![5.0, 4.0, 6.0, 30.0, 40.0]),
        ];
        assert_eq!(by_host(&with_kernels)[0].kernels, vec![20.0, 30.0]);
    }

    #[test]
    fn a_platform_takes_its_hosts_speeds_and_gains_the_hosts_it_lacks() {
        let mut base = Platform::load("local").unwrap();
        base.nodes = vec![Node::new("h1", 1.0).with_kind("fast"), Node::new("h9", 7.0)];
        let hosts = by_host(&ranks(&[("h1", 600.0), ("h3", 150.0), ("h3", 150.0)]));
        let platform = hosts_platform(Some(base), &hosts).unwrap();
        let names: Vec<&str> = platform.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["h1", "h9", "h3"]);
        assert_eq!(platform.nodes[0].marked_speed, 600.0);
        assert_eq!(platform.nodes[0].kind.as_deref(), Some("fast"));
        assert_eq!(platform.nodes[1].marked_speed, 7.0);
        assert_eq!(
            (platform.nodes[2].marked_speed, platform.nodes[2].cpus),
            (150.0, 2)
        );
        assert!(platform.description.contains("h3 150.0"));
        // Without a base: a new platform of the hosts only.
        let fresh = hosts_platform(None, &hosts).unwrap();
        assert_eq!(fresh.nodes.len(), 2);
        assert_eq!(fresh.name, "mpi-hosts");
    }

    #[test]
    fn a_platform_in_another_unit_is_refused() {
        let base = Platform::load("ucf-cluster").unwrap();
        let err = hosts_platform(Some(base), &by_host(&ranks(&[("h1", 1.0)]))).unwrap_err();
        assert!(err.to_string().contains("bench measures Mflop/s"), "{err}");
    }
}
