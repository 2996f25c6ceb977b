//! The built-in default study, as far as it can run today: GE on Sunwulf (JPDC Table 5's
//! configurations) at target E_s = 0.3, approach 3 with the paper's measured communication
//! model (section 4.5).

use crate::predicted::{Configuration, PredictedStudy, predict};
use hetscale_model::papers::{SUNWULF_SERVER, SUNWULF_SUNBLADE, SunwulfGeOverhead};
use hetscale_model::{Result, metrics, workload};

/// Target speed-efficiency of the GE study (JPDC section 4.4.1).
pub const GE_TARGET: f64 = 0.3;

/// Node counts of JPDC Table 5.
pub const GE_NODES: [usize; 5] = [2, 4, 8, 16, 32];

/// JPDC Table 5's configurations: the server with 2 CPUs plus `p - 1` SunBlades.
pub fn ge_configurations() -> Result<Vec<Configuration>> {
    GE_NODES
        .iter()
        .map(|&p| {
            let mut speeds = vec![SUNWULF_SERVER; 2];
            speeds.extend(std::iter::repeat_n(SUNWULF_SUNBLADE, p - 1));
            Configuration::new(
                format!("C_{p}"),
                p,
                metrics::system_marked_speed(&speeds)? * 1e6,
            )
        })
        .collect()
}

/// Approach 3 for GE on Sunwulf with the section 4.5 model, from N = 10 to 100 000.
pub fn ge_sunwulf_predicted() -> Result<PredictedStudy> {
    let model = SunwulfGeOverhead;
    let time = |n: f64, c: &Configuration| {
        let p = c.nodes as f64;
        Ok((model.compute_ms(n, p)? + model.overhead_ms(n, p)) * 1e-3)
    };
    predict(
        &ge_configurations()?,
        workload::ge,
        time,
        GE_TARGET,
        (10.0, 1e5),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicted_sizes_are_near_the_measured_table5() {
        // JPDC Table 5 measured N for E_s = 0.3: 310, 480, 1000, 1700, 3200.
        let s = ge_sunwulf_predicted().unwrap();
        let measured = [310.0, 480.0, 1000.0, 1700.0, 3200.0];
        for (p, m) in s.points.iter().zip(measured) {
            assert!((p.n - m).abs() / m < 0.15, "{} vs {m}", p.n);
        }
        assert!(s.psi.chaining_violations(1e-9).is_empty());
    }
}
