//! Measuring what each collective costs on a machine, as such, the way Chen, Sun & Wu measured
//! Sunwulf's `T_broadcast ~ 0.12 + 0.23 p ms` for their prediction (JPDC 2008, section 4.5).
//!
//! For every collective and every node count given, each node contributes `b` bytes for a few
//! sizes `b`; a collective's time is the time of the supersteps it spans minus an empty
//! superstep's, so it holds what the collective costs beyond the barrier a program pays anyway.
//! The times are fitted by least squares to JPDC's form
//! `T(p, x) = base + per_node p + per_byte x`, where `x` is the most bytes one node receives
//! (the payload [`CollectiveCost::at`] takes): `b` for a one-phase broadcast and a scatter,
//! `b (p - 1)` for a gather, an allgather and an all-to-all. A term the data would make negative
//! is dropped and the rest refitted, so every cost stays physical. Each kept term comes with
//! its 95% interval ([`CollectiveFit`]).
//!
//! On the mpi backend one `mpirun -np P` job measures every node count: each machine runs on
//! the job's first ranks through a communicator of their own while the others wait, and every
//! rank gets the same fit.
//!
//! The result goes into the platform's `[[network.collective]]` (`hetscale reproduce` writes it
//! for the JPDC experiments, `hetscale probe --collectives --write-platform FILE` for any
//! machine), which models charge instead of HBSP^1's `g h + L`.
//!
//! ```
//! use hetscale_probe::collective_probe::{CollectiveProbeOptions, probe_collectives};
//! use hbsp::Backend;
//! use hetscale_machine::presets;
//!
//! let platform = presets::sunwulf();
//! let machines = [2, 4].map(|p| platform.select(&format!("{p}").parse().unwrap()).unwrap());
//! let options = CollectiveProbeOptions::quick(&["broadcast"]);
//! let costs = probe_collectives(&Backend::sim(), &machines, &options).unwrap();
//! // Sunwulf's section 4.5 broadcast, measured back on the simulated machine.
//! assert!((costs[0].per_node_s - 0.23e-3).abs() < 1e-9);
//! ```

use hetscale_model::fit::fit_linear;
use serde::Serialize;

use hbsp::Ctx;
use hbsp::backend::Backend;
use hbsp::backend::sim::{SimOptions, WorkCharge};
use hbsp::collectives::{
    BroadcastAlgorithm, Root, allgather, alltoallv, broadcast, gatherv, scatterv,
};
use hbsp::{HbspError, Result};
use hetscale_machine::machine_model::CollectiveCost;
use hetscale_machine::platform::Machine;

/// The collectives the probe knows how to run.
pub const COLLECTIVES: [&str; 5] = ["broadcast", "scatterv", "gatherv", "allgather", "alltoallv"];

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveProbeOptions {
    /// Collectives to measure, from [`COLLECTIVES`].
    pub names: Vec<String>,
    /// Bytes each node contributes, at least two distinct sizes (multiples of 8).
    pub bytes_per_node: Vec<usize>,
    /// Times each collective is timed per size (the median is used).
    pub samples: usize,
}

impl CollectiveProbeOptions {
    /// Every collective in [`COLLECTIVES`], at 1 KiB, 64 KiB and 512 KiB per node.
    pub fn all() -> Self {
        Self {
            names: COLLECTIVES.map(String::from).to_vec(),
            bytes_per_node: vec![1 << 10, 64 << 10, 512 << 10],
            samples: 5,
        }
    }

    /// `names` at two small sizes, once each: for tests and the deterministic `sim`.
    pub fn quick(names: &[&str]) -> Self {
        Self {
            names: names.iter().map(|n| n.to_string()).collect(),
            bytes_per_node: vec![1 << 10, 16 << 10],
            samples: 1,
        }
    }
}

/// One measured time of a collective.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    p: f64,
    payload: f64,
    time_s: f64,
}

/// A collective's fitted cost with the 95% interval of each term (`None` for a term the fit
/// dropped or fixed exactly, with no degrees of freedom left).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveFit {
    /// The cost, as the platform's `[[network.collective]]` holds it.
    #[serde(flatten)]
    pub cost: CollectiveCost,
    /// 95% interval of `base_s`.
    pub base_s_ci95: Option<[f64; 2]>,
    /// 95% interval of `per_node_s`.
    pub per_node_s_ci95: Option<[f64; 2]>,
    /// 95% interval of `per_byte_s`.
    pub per_byte_s_ci95: Option<[f64; 2]>,
    /// How many (node count, size) medians the fit used.
    pub samples: usize,
}

/// Measures every collective of `options` on each of `machines` (their node counts give the
/// `p` of the fit; two or more distinct counts identify the term in `p`) and fits its cost.
pub fn probe_collectives(
    backend: &Backend,
    machines: &[Machine],
    options: &CollectiveProbeOptions,
) -> Result<Vec<CollectiveCost>> {
    Ok(
        probe_collectives_with_intervals(backend, machines, options)?
            .into_iter()
            .map(|fit| fit.cost)
            .collect(),
    )
}

/// [`probe_collectives`] with each term's 95% interval.
///
/// On the mpi backend, run it in every rank of the job: each machine (of at most the job's
/// ranks, its nodes on the first ranks) runs on a communicator of the first `p` ranks while the
/// others wait, and all ranks get the same fit.
pub fn probe_collectives_with_intervals(
    backend: &Backend,
    machines: &[Machine],
    options: &CollectiveProbeOptions,
) -> Result<Vec<CollectiveFit>> {
    check(machines, options)?;
    // Nothing reads a trace, which would grow with every superstep of every node.
    let backend = &declared_only(backend).untraced();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); options.names.len()];
    for machine in machines {
        let output = run_on(backend, machine, &|ctx: &mut Ctx<'_>| {
            measure_all(ctx, options)
        })?;
        let root = &output.results[0];
        for (into, times) in samples.iter_mut().zip(root) {
            into.extend(times.iter().map(|&(payload, time_s)| Sample {
                p: machine.processes() as f64,
                payload,
                time_s,
            }));
        }
    }
    options
        .names
        .iter()
        .zip(&samples)
        .map(|(name, samples)| fit_cost(name, samples))
        .collect()
}

/// `hbsp::run`, except that on mpi the machine may have fewer nodes than the job has ranks.
fn run_on<T: hbsp::NodeResult>(
    backend: &Backend,
    machine: &Machine,
    program: &(dyn Fn(&mut Ctx<'_>) -> Result<T> + Sync),
) -> Result<hbsp::RunOutput<T>> {
    match backend {
        #[cfg(feature = "mpi")]
        Backend::Mpi(options) => hbsp::backend::mpi::run_on_first_ranks(options, machine, &program),
        _ => hbsp::run(backend, machine, program),
    }
}

/// On `sim`, the probe's supersteps cost exactly what the machine charges: the probe declares
/// all its work (none), so no host CPU time may leak in.
fn declared_only(backend: &Backend) -> Backend {
    match backend {
        Backend::Sim(options) => Backend::Sim(SimOptions {
            work: WorkCharge::Declared,
            ..options.clone()
        }),
        other => other.clone(),
    }
}

fn check(machines: &[Machine], options: &CollectiveProbeOptions) -> Result<()> {
    let invalid = |why: String| Err(HbspError::InvalidBackend(why));
    if let Some(name) = options
        .names
        .iter()
        .find(|n| !COLLECTIVES.contains(&n.as_str()))
    {
        return invalid(format!(
            "collective probe: unknown collective {name:?}; choose from {}",
            COLLECTIVES.join(", ")
        ));
    }
    let mut sizes = options.bytes_per_node.clone();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 || sizes.iter().any(|b| b % 8 != 0 || *b == 0) || options.samples == 0 {
        return invalid(
            "collective probe: give at least two distinct sizes per node (multiples of 8 bytes) and samples >= 1".into(),
        );
    }
    if machines.is_empty() || machines.iter().any(|m| m.p() < 2) {
        return invalid("collective probe: give machines of 2 or more nodes".into());
    }
    Ok(())
}

/// On every node: for each collective, `(payload, median time)` per size.
fn measure_all(
    ctx: &mut Ctx<'_>,
    options: &CollectiveProbeOptions,
) -> Result<Vec<Vec<(f64, f64)>>> {
    ctx.charge_work(0.0)?;
    let empty = median(
        (0..options.samples)
            .map(|_| timed(ctx, |_| Ok(())))
            .collect::<Result<_>>()?,
    );
    options
        .names
        .iter()
        .map(|name| {
            options
                .bytes_per_node
                .iter()
                .map(|&b| {
                    let times = (0..options.samples)
                        .map(|_| timed(ctx, |ctx| run_collective(ctx, name, b / 8)))
                        .collect::<Result<_>>()?;
                    Ok((
                        payload(name, b, ctx.nprocs()),
                        (median(times) - empty).max(0.0),
                    ))
                })
                .collect()
        })
        .collect()
}

/// The most bytes one node receives when each contributes `b`.
fn payload(name: &str, b: usize, p: usize) -> f64 {
    match name {
        "broadcast" | "scatterv" => b as f64,
        _ => (b * (p - 1)) as f64,
    }
}

/// Time from one barrier to the next around `body` (which may make supersteps of its own).
fn timed(ctx: &mut Ctx<'_>, body: impl FnOnce(&mut Ctx<'_>) -> Result<()>) -> Result<f64> {
    // Declared empty, so `sim` charges the supersteps' communication, not the host's copying.
    ctx.charge_work(0.0)?;
    ctx.sync()?;
    ctx.charge_work(0.0)?;
    let start = ctx.time();
    body(ctx)?;
    ctx.charge_work(0.0)?;
    ctx.sync()?;
    Ok(ctx.time() - start)
}

fn run_collective(ctx: &mut Ctx<'_>, name: &str, items: usize) -> Result<()> {
    let p = ctx.nprocs();
    let mine = vec![0.0f64; items];
    ctx.charge_work(0.0)?;
    let counts = vec![items; p];
    match name {
        "broadcast" => broadcast(ctx, Root::Fastest, &mine, BroadcastAlgorithm::OnePhase).map(drop),
        "scatterv" => scatterv(ctx, Root::Fastest, &vec![0.0f64; items * p], &counts).map(drop),
        "gatherv" => gatherv(ctx, Root::Fastest, &mine, &counts).map(drop),
        "allgather" => allgather(ctx, &mine).map(drop),
        _ => {
            let blocks = vec![mine; p];
            alltoallv(ctx, &blocks, &vec![counts; p]).map(drop)
        }
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `base + per_node p + per_byte x` by least squares, dropping any term that comes out
/// negative (and the term in `p` when only one `p` was measured).
fn fit_cost(name: &str, samples: &[Sample]) -> Result<CollectiveFit> {
    let time: Vec<f64> = samples.iter().map(|s| s.time_s).collect();
    let columns: [Vec<f64>; 3] = [
        vec![1.0; samples.len()],
        samples.iter().map(|s| s.p).collect(),
        samples.iter().map(|s| s.payload).collect(),
    ];
    const TERMS: [&str; 3] = ["base_s", "per_node_s", "per_byte_s"];
    let one_p = samples.iter().all(|s| s.p == samples[0].p);
    let mut kept: Vec<usize> = (0..3).filter(|&t| !(one_p && t == 1)).collect();
    loop {
        let chosen: Vec<Vec<f64>> = kept.iter().map(|&t| columns[t].clone()).collect();
        let names: Vec<&str> = kept.iter().map(|&t| TERMS[t]).collect();
        let fit = fit_linear(&names, &chosen, &time, None).map_err(|e| {
            HbspError::InvalidBackend(format!("collective probe: {name}: cannot fit: {e}"))
        })?;
        let c: Vec<f64> = fit.parameters.iter().map(|p| p.estimate).collect();
        match (0..c.len())
            .filter(|&i| c[i] < 0.0)
            .min_by(|&a, &b| c[a].total_cmp(&c[b]))
        {
            Some(worst) if kept.len() > 1 => {
                kept.remove(worst);
            }
            _ => {
                let interval = |t: usize| {
                    let i = kept.iter().position(|&k| k == t)?;
                    let (lo, hi) = fit.parameters[i].ci95?;
                    Some([lo.max(0.0), hi.max(0.0)])
                };
                return Ok(CollectiveFit {
                    cost: cost_of(name, &kept, &c),
                    base_s_ci95: interval(0),
                    per_node_s_ci95: interval(1),
                    per_byte_s_ci95: interval(2),
                    samples: samples.len(),
                });
            }
        }
    }
}

fn cost_of(name: &str, kept: &[usize], coefficients: &[f64]) -> CollectiveCost {
    let term = |t: usize| {
        kept.iter()
            .position(|&k| k == t)
            .map_or(0.0, |i| coefficients[i].max(0.0))
    };
    CollectiveCost {
        name: name.into(),
        base_s: term(0),
        per_node_s: term(1),
        per_byte_s: term(2),
        ..CollectiveCost::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetscale_machine::presets;

    fn sunwulf(p: usize) -> Machine {
        presets::sunwulf()
            .select(&p.to_string().parse().unwrap())
            .unwrap()
    }

    #[test]
    fn measured_collectives_are_recovered_from_the_simulated_machine() {
        let machines = [2, 4, 8].map(sunwulf);
        let names = ["broadcast", "scatterv", "gatherv"];
        let costs = probe_collectives(
            &Backend::sim(),
            &machines,
            &CollectiveProbeOptions::quick(&names),
        )
        .unwrap();
        let model = presets::sunwulf().machine.unwrap();
        for (cost, name) in costs.iter().zip(names) {
            let truth = model.collective(name).unwrap();
            for (p, x) in [(2, 1e3), (8, 1e5), (32, 1e6)] {
                let (got, want) = (cost.at(p, x), truth.at(p, x));
                assert!(
                    (got - want).abs() <= 1e-9 + 1e-9 * want,
                    "{name} at p = {p}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn an_unmeasured_collective_gets_a_physical_fit_of_what_sim_charges() {
        let machines = [2, 4].map(sunwulf);
        let costs = probe_collectives(
            &Backend::sim(),
            &machines,
            &CollectiveProbeOptions::quick(&["allgather"]),
        )
        .unwrap();
        let c = &costs[0];
        assert!(
            c.base_s >= 0.0 && c.per_node_s >= 0.0 && c.per_byte_s > 0.0,
            "{c:?}"
        );
        // Each node sends its b to p - 1 others over 100 Mbit/s links: at least the wire time.
        assert!(c.per_byte_s >= 0.9 / 12.5e6, "{c:?}");
    }

    #[test]
    fn bad_options_are_refused_with_what_to_do() {
        let machines = [sunwulf(2)];
        let mut options = CollectiveProbeOptions::quick(&["bcast"]);
        let err = probe_collectives(&Backend::sim(), &machines, &options).unwrap_err();
        assert!(err.to_string().contains("choose from broadcast"), "{err}");
        options.names = vec!["broadcast".into()];
        options.bytes_per_node = vec![1024];
        let err = probe_collectives(&Backend::sim(), &machines, &options).unwrap_err();
        assert!(err.to_string().contains("two distinct sizes"), "{err}");
    }
}
