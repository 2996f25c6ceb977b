//! Sun & Rover's Burg as a study (`tpds-burg` on the nCUBE 2, `tpds-burg-maspar` on the
//! MasPar MP-1), calibrated on the smallest system's published time only.

use hetscale_kernels::KernelOptions;
use hetscale_study::Result;
use hetscale_study::calibrate::FreeParameter;

use crate::experiment::Experiment;

/// The model order of Sun & Rover's Burg (see [`Experiment::named`]`("tpds-burg")`'s
/// assumption).
pub const TPDS_BURG_ORDER: usize = 10;

impl Experiment {
    /// Sun & Rover's Burg on the nCUBE 2 (TPDS 1994, section IV-B) or the MasPar MP-1
    /// (section IV-D): isospeed at half the asymptotic speed (1.7 Mflop/s, 41 Kflop/s), which
    /// is the preset's marked speed, so `E_s = 0.5`. Only the average unit speed curve is
    /// fitted, on the smallest system's time at the isospeed (Table II, Table IX), as their
    /// approach 3 uses "only the single node execution information"; `r_inf` and the
    /// network are the paper's.
    pub(crate) fn tpds_burg(id: &str, experiment: &str, platform: &str) -> Result<Self> {
        Self::from_paper(id, "tpds", experiment, "burg", 0.5, platform).map(|e| Self {
            assumption: Some(format!(
                "Sun & Rover do not state Burg's model order; order {TPDS_BURG_ORDER} does \
                 10 x {TPDS_BURG_ORDER} = 100 flop per sample, as section IV-C's sizes imply at \
                 Table II's times (W = 0.85 Mflop/s x p x T: 105 per sample for 440 samples on \
                 4 nodes, 101 for 2880 on 16), so those two sizes check the order, not the model"
            )),
            options: KernelOptions {
                order: TPDS_BURG_ORDER,
                ..KernelOptions::default()
            },
            free: vec![FreeParameter::HalfWork],
            shares_start_up: false,
            // At 128 nodes the isospeed needs millions of samples.
            n_max: 1 << 24,
            ..e
        })
    }
}
