//! The collective experiments of Williams & Parsons (2001, section 5): scatter and one-to-all
//! broadcast with the fastest versus the slowest root (`T_s / T_f`), even versus balanced shares
//! (`T_u / T_b`), and one- versus two-phase broadcast, on a backend, beside the HBSP^1 model's
//! prediction for the traffic each variant generates.
//!
//! Each variant follows the paper: even shares are `n / p` items per node (`c_j = 1 / p`),
//! balanced shares are `c_j n` with `c_j = C_j / C`; the two-phase broadcast scatters pieces and
//! then all-gathers them; `n` is the number of 4-byte integers the root holds. Time is measured
//! on the backend's clock (virtual on `sim`) from a barrier to the end of the collective's last
//! superstep, the latest node's.

use hbsp::collectives::{BroadcastAlgorithm, Root, allgather, broadcast, scatterv};
use hbsp::{Backend, Ctx, HbspError, Machine};
use serde::Serialize;

use hetscale_kernels::Result;

/// Which collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CollectiveKind {
    /// One superstep: the root sends each node its share.
    Scatter,
    /// One-to-all broadcast.
    Broadcast,
}

/// How the collective is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Fastest root, even shares (`T_f`, which is also `T_u`).
    FastestRoot,
    /// Slowest root, even shares (`T_s`).
    SlowestRoot,
    /// Fastest root, balanced shares (`T_b`).
    Balanced,
    /// Broadcast only: the root sends all `n` items to every node.
    OnePhase,
}

/// One measured (or simulated) variant beside its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentRow {
    /// Collective.
    pub collective: CollectiveKind,
    /// Variant.
    pub variant: Variant,
    /// Number of nodes.
    pub p: usize,
    /// Input size in KB (1 KB = 1024 bytes) of 4-byte integers (in JSON `size_bytes`).
    #[serde(rename = "size_bytes", serialize_with = "kb_as_bytes")]
    pub n_kb: usize,
    /// Time on the backend (median over repetitions), s.
    pub actual_s: f64,
    /// The HBSP^1 cost of the same traffic, s.
    pub predicted_s: f64,
}

const INT_BYTES: usize = 4;

/// Runs every variant of both collectives on the first `p` nodes of `platform_nodes` for each
/// `p` in `ps` and each size in `sizes_kb`, `repetitions` times (median reported).
pub fn run_experiments(
    backend: &Backend,
    machines: &[Machine],
    sizes_kb: &[usize],
    repetitions: usize,
) -> Result<Vec<ExperimentRow>> {
    let mut rows = Vec::new();
    for machine in machines {
        for &kb in sizes_kb {
            let n = kb * 1024 / INT_BYTES;
            for (collective, variant) in VARIANTS {
                let (actual_s, predicted_s) =
                    time_variant(backend, machine, collective, variant, n, repetitions)?;
                rows.push(ExperimentRow {
                    collective,
                    variant,
                    p: machine.p(),
                    n_kb: kb,
                    actual_s,
                    predicted_s,
                });
            }
        }
    }
    Ok(rows)
}

const VARIANTS: [(CollectiveKind, Variant); 7] = [
    (CollectiveKind::Scatter, Variant::FastestRoot),
    (CollectiveKind::Scatter, Variant::SlowestRoot),
    (CollectiveKind::Scatter, Variant::Balanced),
    (CollectiveKind::Broadcast, Variant::FastestRoot),
    (CollectiveKind::Broadcast, Variant::SlowestRoot),
    (CollectiveKind::Broadcast, Variant::Balanced),
    (CollectiveKind::Broadcast, Variant::OnePhase),
];

fn time_variant(
    backend: &Backend,
    machine: &Machine,
    collective: CollectiveKind,
    variant: Variant,
    n: usize,
    repetitions: usize,
) -> Result<(f64, f64)> {
    let mut times = Vec::new();
    let mut predicted = 0.0;
    for _ in 0..repetitions.max(1) {
        let out = hbsp::run(backend, machine, |ctx| {
            ctx.sync()?;
            let start = ctx.time();
            let predicted_s = run_variant(ctx, collective, variant, n)?;
            Ok::<_, HbspError>((start, ctx.time(), predicted_s))
        })?;
        let start = out
            .results
            .iter()
            .map(|r| r.0)
            .fold(f64::INFINITY, f64::min);
        let end = out.results.iter().map(|r| r.1).fold(0.0, f64::max);
        times.push(end - start);
        predicted = out.results[0].2;
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], predicted))
}

/// Runs one variant on this node; returns its predicted cost.
fn run_variant(
    ctx: &mut Ctx<'_>,
    collective: CollectiveKind,
    variant: Variant,
    n: usize,
) -> hbsp::Result<f64> {
    let root = if variant == Variant::SlowestRoot {
        Root::Slowest
    } else {
        Root::Fastest
    };
    let root_pid = if root == Root::Slowest {
        ctx.rank(ctx.nprocs())?
    } else {
        ctx.rank(1)?
    };
    let data: Vec<i32> = if ctx.pid() == root_pid {
        (0..n as i32).collect()
    } else {
        Vec::new()
    };
    let counts = if variant == Variant::Balanced {
        ctx.balanced_counts(n)
    } else {
        even_counts(n, ctx.nprocs())
    };
    let cost = match (collective, variant) {
        (CollectiveKind::Scatter, _) => scatterv(ctx, root, &data, &counts)?.predicted_s,
        (CollectiveKind::Broadcast, Variant::OnePhase) => {
            let result = broadcast(ctx, root, &data, BroadcastAlgorithm::OnePhase)?;
            delivered(ctx, result.value.len(), n)?;
            result.predicted_s
        }
        (CollectiveKind::Broadcast, _) => {
            let piece = scatterv(ctx, root, &data, &counts)?;
            let all = allgather(ctx, &piece.value)?;
            delivered(ctx, all.value.iter().map(Vec::len).sum(), n)?;
            piece.predicted_s + all.predicted_s
        }
    };
    Ok(cost)
}

/// Ends the run if a broadcast delivered `got` items instead of `n`.
fn delivered(ctx: &Ctx<'_>, got: usize, n: usize) -> hbsp::Result<()> {
    if got == n {
        Ok(())
    } else {
        Err(ctx.abort(format!("broadcast delivered {got} of {n} items")))
    }
}

/// `n` items in `p` shares as even as integers allow (`c_j = 1 / p`).
fn even_counts(n: usize, p: usize) -> Vec<usize> {
    (0..p).map(|j| n / p + usize::from(j < n % p)).collect()
}

/// Serializes a size in KB (1024 bytes) as bytes.
fn kb_as_bytes<S: serde::Serializer>(
    kb: &usize,
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_u64(*kb as u64 * 1024)
}

/// An improvement factor, actual and predicted: `T_A / T_B` for the named pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Improvement {
    /// Collective.
    pub collective: CollectiveKind,
    /// `T_s/T_f`, `T_u/T_b` or `T_1/T_2` (one- over two-phase broadcast).
    pub factor: &'static str,
    /// Number of nodes.
    pub p: usize,
    /// Input size, KB (in JSON `size_bytes`).
    #[serde(rename = "size_bytes", serialize_with = "kb_as_bytes")]
    pub n_kb: usize,
    /// From the backend's times.
    pub actual: f64,
    /// From the model's predictions.
    pub predicted: f64,
}

/// The paper's improvement factors from a set of rows.
pub fn improvements(rows: &[ExperimentRow]) -> Vec<Improvement> {
    let find = |c, v, p, kb| {
        rows.iter()
            .find(|r| r.collective == c && r.variant == v && r.p == p && r.n_kb == kb)
    };
    let pairs = [
        ("T_s/T_f", Variant::SlowestRoot, Variant::FastestRoot),
        ("T_u/T_b", Variant::FastestRoot, Variant::Balanced),
        ("T_1/T_2", Variant::OnePhase, Variant::FastestRoot),
    ];
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.variant == Variant::FastestRoot) {
        for (factor, a, b) in pairs {
            if let (Some(ta), Some(tb)) = (
                find(r.collective, a, r.p, r.n_kb),
                find(r.collective, b, r.p, r.n_kb),
            ) {
                out.push(Improvement {
                    collective: r.collective,
                    factor,
                    p: r.p,
                    n_kb: r.n_kb,
                    actual: ta.actual_s / tb.actual_s,
                    predicted: ta.predicted_s / tb.predicted_s,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hbsp::Platform;

    fn ucf(p: usize) -> Machine {
        Platform::load("ucf-cluster")
            .unwrap()
            .select(&p.to_string().parse().unwrap())
            .unwrap()
    }

    #[test]
    fn on_sim_actual_equals_predicted() {
        let rows =
            run_experiments(&Backend::sim_declared(), &[ucf(2), ucf(6)], &[100, 300], 1).unwrap();
        assert_eq!(rows.len(), 2 * 2 * 7);
        for r in &rows {
            assert!(
                (r.actual_s - r.predicted_s).abs() <= 1e-12 * r.predicted_s,
                "{r:?}"
            );
        }
        let factors = improvements(&rows);
        let scatter_p2 = factors
            .iter()
            .find(|f| f.factor == "T_s/T_f" && f.p == 2 && f.collective == CollectiveKind::Scatter)
            .unwrap();
        // Two nodes: the one transfer is paced by chromus whichever end it is on.
        assert!((scatter_p2.predicted - 1.0).abs() < 1e-12);
        let balanced_p2 = factors
            .iter()
            .find(|f| f.factor == "T_u/T_b" && f.p == 2 && f.collective == CollectiveKind::Scatter)
            .unwrap();
        assert!(
            balanced_p2.predicted > 2.0,
            "balanced shares spare chromus: {balanced_p2:?}"
        );
    }

    #[test]
    fn even_counts_sum_to_n() {
        assert_eq!(even_counts(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(even_counts(2, 4).iter().sum::<usize>(), 2);
    }
}

/// The experiments' rows in the one JSON schema, with the backend and platform they ran on.
#[derive(Debug, Serialize)]
pub struct CollectivesDocument<'a> {
    backend: String,
    platform: &'a str,
    rows: &'a [ExperimentRow],
}

impl<'a> CollectivesDocument<'a> {
    /// The document of `rows` run on `backend` and `platform`.
    pub fn new(backend: &Backend, platform: &'a str, rows: &'a [ExperimentRow]) -> Self {
        Self {
            backend: backend.to_string(),
            platform,
            rows,
        }
    }
}
