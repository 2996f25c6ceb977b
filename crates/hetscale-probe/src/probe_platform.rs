//! A probe's measurements as a platform keeps them (`hetscale probe --write-platform`): the
//! supersteps' `g`, `r_j`, `o` and `L(p)`, the collectives' costs and the ping-pong's segments
//! and stalls, written into a platform file with where each came from; and the probe's JSON
//! document.

use std::path::Path;

use serde::Serialize;

use crate::collective_probe::{
    COLLECTIVES, CollectiveFit, CollectiveProbeOptions, probe_collectives_with_intervals,
};
use crate::p2p_probe::{P2pMerge, P2pReport, raise_g_to_sustained};
use crate::probe::ProbeReport;
use hbsp::backend::Backend;
use hbsp::{HbspError, Result};
use hetscale_machine::platform::{Machine, Platform};

/// What one `hetscale probe` measured.
#[derive(Debug, Clone, Copy)]
pub struct Probed<'a> {
    /// The supersteps' `g`, `r_j`, `o` and `L(p)`.
    pub report: &'a ProbeReport,
    /// The collectives' costs (`--collectives`), empty if not measured.
    pub collectives: &'a [CollectiveFit],
    /// The ping-pong (`--p2p`), if measured.
    pub p2p: Option<&'a P2pReport>,
}

/// What writing the measurements into a platform did beyond writing them.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// How each node's (or, `None`, the network's) ping-pong segments met the platform's.
    pub merged: Vec<(Option<String>, P2pMerge)>,
    /// The supersteps' `g` when the ping-pong's sustained cost per byte raised it.
    pub raised_g: Option<f64>,
}

/// The collectives' costs, fitted over the first 2, 4, 8, ... nodes of `machine` and all of it
/// (on mpi, the first 2, 4, 8, ... ranks of the job and all of them).
pub fn measure_collectives(
    backend: &Backend,
    platform: &Platform,
    machine: &Machine,
    quick: bool,
) -> Result<Vec<CollectiveFit>> {
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    let mut counts: Vec<usize> = std::iter::successors(Some(2), |k| Some(k * 2))
        .take_while(|&k| k < names.len())
        .collect();
    counts.push(names.len());
    if counts.len() < 2 {
        return Err(HbspError::InvalidNodeSet(
            "--collectives needs at least 3 nodes (two node counts to fit the term in p): \
             pass --nodes 4 or more"
                .into(),
        ));
    }
    let machines = counts
        .iter()
        .map(|&k| platform.select(&names[..k].join(",").parse()?))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let options = if quick {
        CollectiveProbeOptions::quick(&COLLECTIVES)
    } else {
        CollectiveProbeOptions::all()
    };
    probe_collectives_with_intervals(backend, &machines, &options)
}

/// Writes `probed` into the platform file `path` (created from `platform`, the probed one, if
/// it does not exist), saying in its network's `source` what was measured, on which nodes
/// and backend, and when.
pub fn write_platform(
    path: &Path,
    probed: &Probed<'_>,
    platform: &Platform,
    machine: &Machine,
    backend: &Backend,
) -> Result<Written> {
    let mut target = if path.exists() {
        Platform::from_file(path)?
    } else {
        platform.clone()
    };
    probed.report.apply_to(&mut target, machine)?;
    with_collectives(&mut target, probed.collectives)?;
    let names: Vec<&str> = machine.nodes().iter().map(|n| n.name.as_str()).collect();
    let mut source = format!(
        "probe: supersteps (g, r_j, o, L({})) on {}, {backend} backend, {}",
        machine.p(),
        names.join(","),
        utc_date()
    );
    let mut written = Written::default();
    if let Some(p2p) = probed.p2p {
        written.merged = p2p.apply_to(&mut target, &|node| p2p_source(p2p, backend, node))?;
        source.push_str(&format!(
            "; message_stall_s and message_stall_all_s at p = {} from the ping-pong's supersteps and those in which every node took part",
            p2p.p
        ));
    }
    if let Some(old) = raise_g_to_sustained(&mut target) {
        written.raised_g = Some(old);
        source.push_str(&format!(
            "; g = the ping-pong's sustained s_per_byte ([[machine.p2p]]'s last segment), above the supersteps' {old:.4e} s/byte, and r_j = max(1, r_j g_old / g)"
        ));
    }
    target.network.source = Some(source);
    target.validate()?;
    target.write_file(path)?;
    Ok(written)
}

/// Replaces the platform's measured collectives of the same names by `measured`.
fn with_collectives(platform: &mut Platform, measured: &[CollectiveFit]) -> Result<()> {
    let network = &mut platform.network.collectives;
    network.retain(|c| measured.iter().all(|m| m.cost.name != c.name));
    network.extend(measured.iter().map(|m| m.cost.clone()));
    Ok(platform.validate()?)
}

/// Where a ping-pong's segments come from: the network's, `probe: ping-pong h1-h2,h1-h3
/// (the fastest pair at each size), 8 B to 16777216 B, mpi backend, 2026-11-27` (UTC date), or
/// node `j`'s, `probe: ping-pong h1-h3, ...`.
fn p2p_source(p2p: &P2pReport, backend: &Backend, node: Option<&str>) -> String {
    let first = &p2p.nodes[0];
    let pairs = match node {
        Some(n) => format!("{first}-{n}"),
        None => {
            let pairs: Vec<String> = p2p.nodes[1..]
                .iter()
                .map(|n| format!("{first}-{n}"))
                .collect();
            format!("{} (the fastest pair at each size)", pairs.join(","))
        }
    };
    format!(
        "probe: ping-pong {pairs}, {} B to {} B, {backend} backend, {}",
        p2p.sizes.first().copied().unwrap_or(0),
        p2p.sizes.last().copied().unwrap_or(0),
        utc_date()
    )
}

/// Today's date in UTC, `YYYY-MM-DD` (the days-to-civil conversion of H. Hinnant).
fn utc_date() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// A probe in the one JSON schema: the supersteps' figures, the collectives' costs (with
/// `--collectives`) and the ping-pong (with `--p2p`), the backend, platform and node set.
#[derive(Debug, Serialize)]
pub struct ProbeDocument<'a> {
    #[serde(flatten)]
    report: &'a ProbeReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    collectives: Option<&'a [CollectiveFit]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p2p: Option<&'a P2pReport>,
    backend: String,
    platform: &'a str,
    nodes: &'a str,
}

impl<'a> ProbeDocument<'a> {
    /// The document of `probed` on `backend`, the node set `nodes` of `platform`;
    /// `collectives` says whether they were asked for.
    pub fn new(
        probed: &Probed<'a>,
        collectives: bool,
        backend: &Backend,
        platform: &'a str,
        nodes: &'a str,
    ) -> Self {
        Self {
            report: probed.report,
            collectives: collectives.then_some(probed.collectives),
            p2p: probed.p2p,
            backend: backend.to_string(),
            platform,
            nodes,
        }
    }
}
