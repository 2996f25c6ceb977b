//! The papers' machines as they publish them (or, for Kalinov's, as chosen once): the numbers
//! the [`crate::presets`] are built from. The papers' tables and experiments (crate
//! `hetscale-papers`) use the same constants, re-exported beside each paper's tables.

// Chen, Sun & Wu, JPDC 2008: the Sunwulf compute farm.

/// Marked speed of the Sunwulf server node, per CPU, Mflop/s (JPDC Table 2).
pub const SUNWULF_SERVER: f64 = 20.88;
/// Marked speed of a SunBlade compute node, Mflop/s (JPDC Table 2).
pub const SUNWULF_SUNBLADE: f64 = 20.29;
/// Marked speed of a SunFire V210 compute node, per CPU, Mflop/s (JPDC Table 2).
pub const SUNWULF_SUNFIRE: f64 = 36.45;

// Sun & Rover, IEEE TPDS 1994: the nCUBE 2 and the MasPar MP-1.

/// nCUBE 2 message latency alpha, seconds (Sun & Rover section IV-B: 130 us).
pub const NCUBE2_ALPHA_S: f64 = 130e-6;
/// nCUBE 2 transfer time per byte beta, seconds (Sun & Rover section IV-B: 0.5 us/byte).
pub const NCUBE2_BETA_S_PER_BYTE: f64 = 0.5e-6;

/// Burg's asymptotic average unit speed on the nCUBE 2, Mflop/s (section IV-B: "1.7 MFLOPS");
/// the `ncube2` preset's marked speed.
pub const NCUBE2_BURG_R_INF_MFLOPS: f64 = 1.7;
/// Burg's asymptotic average unit speed on the MasPar MP-1, Mflop/s (section IV-D: "41
/// KFLOPS"); the `maspar` preset's marked speed.
pub const MASPAR_BURG_R_INF_MFLOPS: f64 = 0.041;

// Williams & Parsons 2001: the UCF cluster.

/// A workstation of the UCF cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UcfNode {
    /// Host name.
    pub name: &'static str,
    /// BYTEmark Integer index (Table 3), the speed used to rank nodes and compute `c_j`.
    pub integer_index: f64,
    /// Injection slowness relative to gromit (Table 5).
    pub r: f64,
}

/// The ten workstations in the processor order of Table 4 (speeds Table 3, `r_j` Table 5).
pub const UCF_NODES: [UcfNode; 10] = [
    UcfNode {
        name: "gromit",
        integer_index: 4.89,
        r: 1.00,
    },
    UcfNode {
        name: "chromus",
        integer_index: 0.75,
        r: 4.08,
    },
    UcfNode {
        name: "aditi",
        integer_index: 4.45,
        r: 1.03,
    },
    UcfNode {
        name: "dcn_sgi1",
        integer_index: 2.80,
        r: 2.12,
    },
    UcfNode {
        name: "dcn_sgi3",
        integer_index: 2.79,
        r: 1.95,
    },
    UcfNode {
        name: "gradsun1",
        integer_index: 1.80,
        r: 2.00,
    },
    UcfNode {
        name: "gradsun3",
        integer_index: 1.81,
        r: 2.46,
    },
    UcfNode {
        name: "sgi1",
        integer_index: 2.81,
        r: 1.68,
    },
    UcfNode {
        name: "sgi3",
        integer_index: 2.77,
        r: 1.20,
    },
    UcfNode {
        name: "sgi7",
        integer_index: 3.13,
        r: 1.16,
    },
];

/// gromit's injection time, microseconds per byte: the `g` of the cluster (section 4.4).
pub const UCF_G_US_PER_BYTE: f64 = 0.196;

/// Barrier cost `L` in microseconds for p = 2, 4, 6, 8, 10 (Table 4).
pub const UCF_BARRIER_US: [(usize, f64); 5] = [
    (2, 9_000.0),
    (4, 15_000.0),
    (6, 23_000.0),
    (8, 30_000.0),
    (10, 37_000.0),
];

/// W&P section 4.2: "Each node is connected by a 100Mbit/s Ethernet connection", in bytes/s.
pub const UCF_ETHERNET_BYTES_PER_S: f64 = 100e6 / 8.0;

/// Seconds one more node adds to Table 4's barrier: the least-squares slope of `L(p)` (about
/// 3.5 ms). HBSPlib's barrier is `pvm_barrier` plus a check that every message arrived
/// (section 4.1), a few PVM messages per node, so this slope is what a PVM message costs on
/// that network beyond its bytes.
pub fn ucf_message_start_up_s() -> f64 {
    let points = UCF_BARRIER_US.map(|(p, us)| (p as f64, us * 1e-6));
    let count = points.len() as f64;
    let mean_p = points.iter().map(|(p, _)| p).sum::<f64>() / count;
    let mean_l = points.iter().map(|(_, l)| l).sum::<f64>() / count;
    let covariance: f64 = points
        .iter()
        .map(|(p, l)| (p - mean_p) * (l - mean_l))
        .sum();
    let variance: f64 = points.iter().map(|(p, _)| (p - mean_p).powi(2)).sum();
    covariance / variance
}

// Kalinov: the modelled platform of 256 processors (chosen; the paper publishes no numbers).

/// Heterogeneity `H = r_max / r_min` of the modelled platform (section 4.1 names `H`; 4 is
/// chosen).
pub const KALINOV_HETEROGENEITY: f64 = 4.0;
/// Performance of the fastest processors, element updates (multiply-adds) per second: chosen.
pub const KALINOV_R_MAX: f64 = 1e9;
/// The speeds cycle through these fractions of `r_max`: three levels, so that every
/// power-of-two grid column mixes them differently and HoHe1's columns cut rows differently
/// (his Figure 1); with two alternating levels each column of an even grid is uniform and
/// HoHe1's layout is a true grid.
pub const KALINOV_SPEED_CYCLE: [f64; 3] = [1.0, 1.0 / KALINOV_HETEROGENEITY, 0.5];
/// Message startup `a`, seconds (section 3.2's `t = a + b L`): chosen.
pub const KALINOV_STARTUP_S: f64 = 50e-6;
/// Time per matrix element `b` (8 bytes at 1 Gbit/s), seconds: chosen.
pub const KALINOV_PER_ELEMENT_S: f64 = 6.4e-8;
/// Processors of the largest platform (the range of the strategies' comparison).
pub const KALINOV_NODES: usize = 256;

/// The speeds of processors `0..p`, element updates per second.
pub fn kalinov_speeds(p: usize) -> Vec<f64> {
    (0..p)
        .map(|i| KALINOV_R_MAX * KALINOV_SPEED_CYCLE[i % KALINOV_SPEED_CYCLE.len()])
        .collect()
}
