//! Approach 3, predicted scalability (Sun & Rover IV-A; Chen, Sun & Wu section 4.5): solve the
//! isospeed-e condition `W/(T C) = E_s` for `N` on every configuration with a time model.

use hetscale_model::error::positive;
use hetscale_model::scalability::ScalabilityMatrix;
use hetscale_model::{ModelError, Result, metrics, root};

use crate::runner::program::Program;
use crate::spec::configuration::{Configuration, ResolvedConfiguration};
use serde::Serialize;

/// The predicted operating point of one configuration. In JSON, `n` is the integer size the
/// text shows and `n_root` the real-valued root.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictedPoint {
    /// The configuration.
    pub configuration: Configuration,
    /// Problem size `N` that gives the target speed-efficiency (real-valued root).
    pub n: f64,
    /// Work `W(N)`, flop.
    pub work: f64,
    /// Predicted time `T(N)`, seconds.
    pub time_s: f64,
    /// `E_s = W / (T C)` at that point (the target, up to root-finding tolerance).
    pub speed_efficiency: f64,
    /// `psi(first, this) = C W_first / (C_first W)`, from the first configuration (1 there).
    pub psi_from_first: f64,
    /// `psi(previous, this)`, between consecutive configurations as the papers tabulate it
    /// (the matrix's super-diagonal); `None` on the first.
    pub psi_from_previous: Option<f64>,
}

impl Serialize for PredictedPoint {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            configuration: &'a Configuration,
            n: Option<u64>,
            n_root: f64,
            work_flop: f64,
            time_s: f64,
            speed_efficiency: f64,
            psi_from_first: f64,
            psi_from_previous: Option<f64>,
        }
        Json {
            configuration: &self.configuration,
            n: crate::json::integer_size(self.n),
            n_root: self.n,
            work_flop: self.work,
            time_s: self.time_s,
            speed_efficiency: self.speed_efficiency,
            psi_from_first: self.psi_from_first,
            psi_from_previous: self.psi_from_previous,
        }
        .serialize(serializer)
    }
}

/// A predicted study: one point per configuration and the scalability matrix between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictedStudy {
    /// Target speed-efficiency.
    pub target: f64,
    /// One point per configuration, in order.
    pub points: Vec<PredictedPoint>,
    /// `psi(C_i, C_j) = C_j W_i / (C_i W_j)` for `i <= j`.
    pub psi: ScalabilityMatrix,
}

/// Predicts, for each configuration, the `N` in `range` where `W(N) / (T(N) C) = target`, and
/// the isospeed-e scalability between the configurations.
pub fn predict(
    configs: &[Configuration],
    work: impl Fn(f64, &Configuration) -> Result<f64>,
    time: impl Fn(f64, &Configuration) -> Result<f64>,
    target: f64,
    range: (f64, f64),
) -> Result<PredictedStudy> {
    positive("target speed-efficiency", target)?;
    let efficiency = |n: f64, c: &Configuration| {
        metrics::speed_efficiency(work(n, c)?, time(n, c)?, c.marked_speed)
    };
    let mut points = configs
        .iter()
        .map(|c| {
            let n = root::solve_for_target(
                |n| efficiency(n, c),
                target,
                range.0,
                range.1,
                "speed-efficiency",
            )?;
            Ok(PredictedPoint {
                configuration: c.clone(),
                n,
                work: work(n, c)?,
                time_s: time(n, c)?,
                speed_efficiency: efficiency(n, c)?,
                psi_from_first: f64::NAN,
                psi_from_previous: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let labels = configs.iter().map(|c| c.label.clone()).collect();
    let systems: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.configuration.marked_speed, p.work))
        .collect();
    let psi = ScalabilityMatrix::from_systems(labels, &systems)?;
    for (j, point) in points.iter_mut().enumerate() {
        point.psi_from_first = psi.get(0, j).unwrap_or(f64::NAN);
        point.psi_from_previous = j.checked_sub(1).and_then(|i| psi.get(i, j));
    }
    Ok(PredictedStudy {
        target,
        psi,
        points,
    })
}

/// A kernel's (or command's) time model on a configuration: `T(N) = a T_compute(N) + k T_o(N)`,
/// where for a kernel `T_compute = (1 - alpha) W / C + alpha W / C_root` and `T_o` is its
/// HBSP^1 overhead model on the configuration's machine; for a command `T_compute = W / C` and
/// `T_o` is the spec's overhead formula ([`Program::model_parts`]). The time is
/// `a T_compute + k T_o + b`. `a = k = 1, b = 0` is the model as derived; approach 3
/// calibrates `a` and `b` on the base configuration (`b`: the fixed cost a node's average
/// unit speed curve implies, Sun & Rover's `mu(W)` in Hockney form `t(w) = (w + w_1/2) /
/// r_inf`, plus start-up), the held-out check fits `a` and `k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelTimeModel {
    /// Factor on the compute time (1: nodes compute at their marked speed).
    pub compute_factor: f64,
    /// Factor on the modelled overhead.
    pub overhead_factor: f64,
    /// Fixed seconds per run.
    #[serde(default)]
    pub fixed_s: f64,
}

impl Default for KernelTimeModel {
    fn default() -> Self {
        Self {
            compute_factor: 1.0,
            overhead_factor: 1.0,
            fixed_s: 0.0,
        }
    }
}

impl KernelTimeModel {
    /// Compute and overhead times, s, of `program` at size `n` on `config` (model as derived).
    /// A kernel's overhead model that would not fit in memory at this size is refused before
    /// it runs.
    pub fn parts(
        program: &Program,
        n: f64,
        config: &ResolvedConfiguration,
    ) -> crate::Result<(f64, f64)> {
        if let Some(kernel) = program.kernel() {
            let size = n.round().max(1.0) as usize;
            hetscale_kernels::memory::check_fits(
                &format!(
                    "the {} model on {} ({} nodes) at N = {size}",
                    kernel.name(),
                    config.configuration.label,
                    config.configuration.nodes
                ),
                kernel.overhead_bytes(size, &config.machine)?,
                "use fewer nodes or a smaller n_max (--n-max)",
            )?;
        }
        program.model_parts(n, config)
    }

    /// Predicted time, s.
    pub fn time(
        &self,
        program: &Program,
        n: f64,
        config: &ResolvedConfiguration,
    ) -> crate::Result<f64> {
        let (compute, overhead) = Self::parts(program, n, config)?;
        Ok(self.compute_factor * compute + self.overhead_factor * overhead + self.fixed_s)
    }

    /// Predicts every configuration's size for `target` in `range` with this model.
    pub fn predict(
        &self,
        program: &Program,
        configs: &[ResolvedConfiguration],
        target: f64,
        range: (f64, f64),
    ) -> Result<PredictedStudy> {
        let plain: Vec<Configuration> = configs.iter().map(|c| c.configuration.clone()).collect();
        let by_label = |c: &Configuration| {
            configs
                .iter()
                .find(|r| r.configuration.label == c.label)
                .expect("configurations come from configs")
        };
        predict(
            &plain,
            |n, c| Ok(program.work(n, c.nodes)),
            |n, c| {
                self.time(program, n, by_label(c))
                    .map_err(|e| ModelError::Inconsistent(e.to_string()))
            },
            target,
            range,
        )
    }
}

/// Bytes a prediction holds per node of its machines beyond the kernel's model: the
/// platform's node, the selected machine's and the configuration's (about 400 measured for
/// 850,000 nodes; rounded up).
const BYTES_PER_NODE: f64 = 1024.0;

/// The most nodes a prediction takes: its overhead models replay supersteps node by node, so
/// time grows with the node count (a million takes seconds per configuration and size).
pub const MAX_PREDICTED_NODES: f64 = 1e6;

/// Refuses, before a platform of `nodes` nodes is replicated `copies` times, a machine whose
/// nodes alone would not fit in memory (or whose node count overflows).
pub fn check_replication_fits(nodes: usize, copies: usize) -> crate::Result<()> {
    let total = nodes as f64 * copies as f64;
    if total > MAX_PREDICTED_NODES {
        return Err(hbsp::HbspError::DoesNotFit(format!(
            "a platform of {nodes} nodes replicated {copies} times ({total:.3e} nodes) is beyond \
             the {MAX_PREDICTED_NODES:.0e} nodes a prediction replays in reasonable time: use a \
             smaller --replicate"
        ))
        .into());
    }
    hetscale_kernels::memory::check_fits(
        &format!("a platform of {nodes} nodes replicated {copies} times ({total:.3e} nodes)"),
        total * BYTES_PER_NODE,
        "use a smaller --replicate",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetscale_model::{ModelError, workload};

    #[test]
    fn perfectly_parallel_constant_overhead_scales_perfectly() {
        // Corollary 1: T = W/C + T_o with T_o fixed gives psi = 1 whatever C.
        let configs: Vec<Configuration> = (1..=3)
            .map(|k| Configuration::new(format!("{k}"), k, 100e6 * k as f64).unwrap())
            .collect();
        let s = predict(
            &configs,
            |n, _| workload::mm(n),
            |n, c| Ok(workload::mm(n)? / c.marked_speed + 0.5),
            0.4,
            (1.0, 1e5),
        )
        .unwrap();
        for j in 1..3 {
            assert!((s.psi.get(0, j).unwrap() - 1.0).abs() < 1e-6);
        }
        assert_eq!(s.points[0].psi_from_previous, None);
        assert_eq!(s.points[2].psi_from_previous, s.psi.get(1, 2));
        assert_eq!(s.points[2].psi_from_first, s.psi.get(0, 2).unwrap());
        for p in &s.points {
            assert!((p.speed_efficiency - 0.4).abs() < 1e-9);
        }
    }

    #[test]
    fn each_point_carries_psi_from_the_first_and_from_the_previous_configuration() {
        // An overhead growing with p: psi falls from one configuration to the next, so
        // psi(first, this) and psi(previous, this) differ from the third configuration on.
        let configs: Vec<Configuration> = (1..=3)
            .map(|k| Configuration::new(format!("C_{k}"), k, 100e6 * k as f64).unwrap())
            .collect();
        let s = predict(
            &configs,
            |n, _| workload::mm(n),
            |n, c| Ok(workload::mm(n)? / c.marked_speed + 0.01 * (c.nodes * c.nodes) as f64),
            0.5,
            (1.0, 1e5),
        )
        .unwrap();
        let (p01, p12, p02) = (
            s.psi.get(0, 1).unwrap(),
            s.psi.get(1, 2).unwrap(),
            s.psi.get(0, 2).unwrap(),
        );
        assert!(p12 < 1.0 && (p02 - p12).abs() > 0.05, "{p01} {p12} {p02}");
        let from_first: Vec<f64> = s.points.iter().map(|p| p.psi_from_first).collect();
        let from_previous: Vec<Option<f64>> =
            s.points.iter().map(|p| p.psi_from_previous).collect();
        assert_eq!(from_first, vec![1.0, p01, p02]);
        assert_eq!(from_previous, vec![None, Some(p01), Some(p12)]);
    }

    #[test]
    fn unreachable_target_says_so() {
        let configs = vec![Configuration::new("a", 1, 1e6).unwrap()];
        let err = predict(
            &configs,
            |n, _| workload::mm(n),
            |n, c| Ok(2.0 * workload::mm(n)? / c.marked_speed),
            0.9,
            (1.0, 1e4),
        )
        .unwrap_err();
        assert!(matches!(err, ModelError::Unreachable { .. }), "{err}");
        assert!(Configuration::new("b", 0, 1.0).is_err());
    }
}
