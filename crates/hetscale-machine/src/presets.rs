//! Built-in platforms: the machines of the papers, and this host.
//!
//! | preset | machine | source |
//! |---|---|---|
//! | `sunwulf` | Sunwulf compute farm, IIT: 1 server, 64 SunBlade, 20 SunFire V210 | Chen, Sun & Wu, JPDC 2008, sections 4.2-4.5, Table 2 |
//! | `ucf-cluster` | 10 SUN/SGI workstations, UCF (speeds are BYTEmark Integer indices) | Williams & Parsons 2001, Tables 3-5, section 4.4 |
//! | `ncube2` | 128-node nCUBE 2 hypercube | Sun & Rover, IEEE TPDS 1994, section IV |
//! | `maspar` | 8192-processor MasPar MP-1, 2-D toroidal mesh | Sun & Rover, IEEE TPDS 1994, sections IV and IV-D |
//! | `kalinov` | 256 processors of three speeds (H = 4), parallel point-to-point network | Kalinov, "Scalability analysis of matrix-matrix multiplication on heterogeneous clusters", sections 1, 3.2 and 4.1; the numbers are chosen (the paper publishes none) |
//! | `local` | this host: one node per core, placeholder speed and network | `hetscale probe --write-platform` measures it |

use std::path::Path;

use crate::error::{MachineError, Result};
use crate::machine_model::{Barrier, CollectiveCost, MachineModel, Topology};
use crate::paper_machines::{
    KALINOV_NODES, KALINOV_PER_ELEMENT_S, KALINOV_STARTUP_S, MASPAR_BURG_R_INF_MFLOPS,
    NCUBE2_ALPHA_S, NCUBE2_BETA_S_PER_BYTE, NCUBE2_BURG_R_INF_MFLOPS, SUNWULF_SERVER,
    SUNWULF_SUNBLADE, SUNWULF_SUNFIRE, UCF_BARRIER_US, UCF_ETHERNET_BYTES_PER_S, UCF_G_US_PER_BYTE,
    UCF_NODES, kalinov_speeds, ucf_message_start_up_s,
};
use crate::platform::{BarrierCost, BarrierPoint, Network, Node, Platform};

/// Names of the presets, for listings and error messages.
pub const NAMES: [&str; 6] = [
    "sunwulf",
    "ucf-cluster",
    "ncube2",
    "maspar",
    "kalinov",
    "local",
];

/// The preset called `name`, if there is one.
pub fn preset(name: &str) -> Option<Platform> {
    match name {
        "sunwulf" => Some(sunwulf()),
        "ucf-cluster" => Some(ucf_cluster()),
        "ncube2" => Some(ncube2()),
        "maspar" => Some(maspar()),
        "kalinov" => Some(kalinov()),
        "local" => Some(local(cores())),
        _ => None,
    }
}

/// Every preset, in [`NAMES`] order.
pub fn all() -> Vec<Platform> {
    NAMES.iter().filter_map(|n| preset(n)).collect()
}

/// The Sunwulf compute farm of the JPDC paper.
///
/// Node kinds: `server` (node `sunwulf`, 4 CPUs), `sunblade` (`hpc-1`..`hpc-64`, 1 CPU) and
/// `sunfire` (`hpc-65`..`hpc-84`, 2 CPUs). Marked speeds are per CPU; the paper's GE runs use
/// the server with two CPUs (`--nodes server*2:1,sunblade:1` gives `C_2 = 62.05`), its MM runs
/// use one CPU per node (`--nodes server:1,sunblade:3,sunfire:4` gives `C'_8 = 227.55`).
pub fn sunwulf() -> Platform {
    // Marked speeds per CPU (JPDC Table 2) are the model crate's published inputs.
    // JPDC 2008, section 4.2: the server has 4 CPUs, a SunBlade 1, a SunFire V210 2.
    let mut nodes = vec![
        Node::new("sunwulf", SUNWULF_SERVER)
            .with_kind("server")
            .with_cpus(4),
    ];
    // JPDC 2008, section 4.2: 64 SunBlade nodes hpc-1..hpc-64, 20 SunFire V210 hpc-65..hpc-84.
    nodes.extend(
        (1..=64).map(|i| Node::new(format!("hpc-{i}"), SUNWULF_SUNBLADE).with_kind("sunblade")),
    );
    nodes.extend((65..=84).map(|i| {
        Node::new(format!("hpc-{i}"), SUNWULF_SUNFIRE)
            .with_kind("sunfire")
            .with_cpus(2)
    }));
    Platform {
        name: "sunwulf".into(),
        description: "Sunwulf compute farm (Chen, Sun & Wu, JPDC 2008, Table 2 and section 4.5); \
                      r_j = 1: the paper measured no per-node injection rates"
            .into(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network {
            // JPDC 2008, section 4.2: "The network connecting all these nodes is 100 Mbps
            // Ethernet": 12.5e6 B/s, so g = 80 ns per byte. (Section 4.5's T_send slope,
            // 0.00003 ms per element, would be 267 MB/s: faster than the wire.)
            g_s_per_byte: 1.0 / SUNWULF_LINK_BYTES_PER_S,
            // JPDC 2008, section 4.5: the 0.08 ms start-up of T_send.
            o_s: SUNWULF_SEND_START_S,
            // JPDC 2008, section 4.5: T_barrier = p x 0.39 ms.
            l: BarrierCost::Formula {
                base_s: 0.0,
                per_node_s: 0.39e-3,
                per_log2_node_s: 0.0,
            },
            collectives: Vec::new(),
            source: None,
        },
        machine: Some(sunwulf_machine_model()),
    }
}

/// JPDC 2008, section 4.2: 100 Mbps Ethernet.
const SUNWULF_LINK_BYTES_PER_S: f64 = 100e6 / 8.0;
/// JPDC 2008, section 4.5: `T_send = T_recv ~ 0.08 + 0.00003 N ms`; its start-up.
const SUNWULF_SEND_START_S: f64 = 0.08e-3;

/// What Sunwulf has beyond HBSP^1, from the facts JPDC 2008 states: its 100 Mbit/s links
/// and `T_send`'s start-up for point-to-point traffic, and the collectives section 4.5 measured
/// as such, costs that grow with the number of processes (section 4.5: "where p is the number
/// of processes"; the server's two CPUs in `C_2` run two). Every node computes at its marked
/// speed, runs pay no start-up and every code pays the collectives as benchmarked: those
/// depend on the code and are what `hetscale calibrate` fits (`rate_fraction`,
/// `process_overhead_s`, `collective_scale`; `hetscale reproduce` does, on each experiment's
/// base configuration).
fn sunwulf_machine_model() -> MachineModel {
    // JPDC 2008, section 4.5: T_send = T_recv ~ 0.08 + 0.00003 N ms for N elements of 8 B.
    // The distribution and collection of T_o cost (p - 1)(T_send + T_recv) each: both ends,
    // per node, and per byte of the largest payload. (The slope, 3.75 ns/B a side, is faster
    // than the 100 Mbit/s wire: the paper measured it so, and its T_o predicts its own runs
    // within 2.8%.)
    let measured_send = |name: &str| CollectiveCost {
        name: name.into(),
        per_node_s: 2.0 * SUNWULF_SEND_START_S,
        per_byte_s: 2.0 * 0.00003e-3 / 8.0,
        ..CollectiveCost::default()
    };
    let mut collectives: Vec<CollectiveCost> = ["scatter", "scatterv", "gather", "gatherv"]
        .into_iter()
        .map(measured_send)
        .collect();
    // JPDC 2008, section 4.5: T_broadcast ~ 0.12 + p x 0.23 ms, measured as such.
    collectives.push(CollectiveCost {
        name: "broadcast".into(),
        base_s: 0.12e-3,
        per_node_s: 0.23e-3,
        ..CollectiveCost::default()
    });
    MachineModel {
        latency_s: SUNWULF_SEND_START_S,
        collectives,
        ..MachineModel::with_link(SUNWULF_LINK_BYTES_PER_S)
    }
}

/// The UCF heterogeneous cluster of Williams & Parsons, in their Table 4 order.
///
/// `marked_speed` is the BYTEmark Integer index (times the speed of a 90 MHz Pentium), not
/// Mflop/s: the paper ranks and balances by it (section 4.3).
pub fn ucf_cluster() -> Platform {
    // Names, BYTEmark Integer indices (W&P Table 3) and r_j (Table 5) are the model crate's
    // published inputs, in Table 4's order; kinds and CPUs come from W&P Table 2.
    let hardware: [(&str, u32); 10] = [
        ("ultrasparc2i", 1),
        ("microsparc2", 1),
        // aditi has 2 CPUs (Table 2); BYTEmark and HBSPlib use one (section 4.3).
        ("ultrasparc2", 2),
        ("r5000", 1),
        ("r5000", 1),
        ("turbosparc", 1),
        ("turbosparc", 1),
        ("r5000", 1),
        ("r5000", 1),
        ("r5000", 1),
    ];
    let nodes = UCF_NODES
        .iter()
        .zip(hardware)
        .map(|(node, (kind, cpus))| {
            Node::new(node.name, node.integer_index)
                .with_kind(kind)
                .with_r(node.r)
                .with_cpus(cpus)
        })
        .collect();
    Platform {
        name: "ucf-cluster".into(),
        description: "UCF SUN/SGI workstation cluster (Williams & Parsons 2001, Tables 2-5)".into(),
        speed_unit: "BYTEmark Integer index".into(),
        nodes,
        network: Network {
            // W&P section 4.4: gromit injects at 0.196 us/byte.
            g_s_per_byte: UCF_G_US_PER_BYTE * 1e-6,
            o_s: 0.0,
            l: BarrierCost::Table(
                UCF_BARRIER_US
                    .iter()
                    .map(|&(p, us)| BarrierPoint {
                        p,
                        l_s: us * 1e-6,
                        message_stall_s: 0.0,
                        message_stall_all_s: None,
                    })
                    .collect(),
            ),
            collectives: Vec::new(),
            source: None,
        },
        machine: None,
    }
}

/// What the UCF cluster has beyond HBSP^1, from the facts Williams & Parsons state; `sim`
/// charges it when a platform carries it (`hetscale reproduce --only wp-collectives` puts it
/// on `ucf-cluster`, whose own runs stay pure HBSP^1 so that `probe` recovers Tables 4-5).
///
/// - Ports inject at gromit's measured 0.196 us/byte (section 4.4), scaled by each node's r_j
///   (Table 5): the HBSP^1 `g r_j h_j`, unchanged.
/// - Every message pays PVM's start-up, taken as the slope of Table 4's barrier cost over p
///   (about 3.5 ms a node; see `crate::paper_machines::ucf_message_start_up_s`).
/// - Every byte a node receives costs it its own injection time once more, `g r_j` a byte,
///   after it arrives. Table 5 timed only the sending half of a PVM transfer (injecting "a
///   sufficiently large packet into the network", section 4.4); the receiving half
///   (`pvm_recv` taking it from PVM, then the move into `recvbuf` of Figure 2) is per-byte
///   work on the receiver's CPU that the paper gives no rate for, so it takes the one per-byte
///   rate per node it measured. Nothing here comes from the measured factors of Figures 3
///   and 5.
/// - The nodes share one 100 Mbit/s Ethernet (section 4.2; section 4.4: the cluster is
///   non-dedicated and "many other nodes share the network link"): all the bytes a superstep
///   sends cross it at 12.5 MB/s at most.
pub fn ucf_machine_model() -> MachineModel {
    MachineModel {
        latency_s: ucf_message_start_up_s(),
        receive_s_per_byte: UCF_G_US_PER_BYTE * 1e-6,
        backplane_bytes_per_s: UCF_ETHERNET_BYTES_PER_S,
        ..MachineModel::with_link(1.0 / (UCF_G_US_PER_BYTE * 1e-6))
    }
}

/// The 128-node nCUBE 2 of Sun & Rover.
pub fn ncube2() -> Platform {
    // Sun & Rover 1994, section IV-B: Burg on the nCUBE 2 reaches an asymptotic speed of
    // 1.7 MFLOPS per node, used here as the marked speed.
    const NODE_MFLOPS: f64 = NCUBE2_BURG_R_INF_MFLOPS;
    // Sun & Rover 1994, section IV: "now, 128 nodes".
    let nodes = (0..128)
        .map(|i| Node::new(format!("ncube-{i}"), NODE_MFLOPS).with_kind("ncube"))
        .collect();
    // Sun & Rover 1994, section IV-B: message time alpha + beta S (the model crate's inputs).
    Platform {
        name: "ncube2".into(),
        description: "nCUBE 2 hypercube (Sun & Rover, IEEE TPDS 1994); L(p) = alpha log2 p is \
                      derived (one latency per dimension), not measured"
            .into(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network {
            g_s_per_byte: NCUBE2_BETA_S_PER_BYTE,
            o_s: NCUBE2_ALPHA_S,
            l: BarrierCost::Formula {
                base_s: 0.0,
                per_node_s: 0.0,
                per_log2_node_s: NCUBE2_ALPHA_S,
            },
            collectives: Vec::new(),
            source: None,
        },
        machine: Some(ncube2_machine_model()),
    }
}

/// The nCUBE 2 as Sun & Rover describe it: a hypercube whose neighbour transfers cost
/// `alpha + beta S`, collectives in `log2 p` such steps, and message-passing codes that wait
/// only for their messages (no barrier). Nodes compute at the marked speed `r_inf` with no
/// half-performance work: the average unit speed curve depends on the code, and `hetscale
/// calibrate --fit half_work` fits it from one-node runs (as Sun & Rover's approach 3 does).
fn ncube2_machine_model() -> MachineModel {
    MachineModel {
        // Sun & Rover 1994, section IV-B: alpha = 130 us, beta = 0.5 us/B, measured.
        latency_s: NCUBE2_ALPHA_S,
        topology: Topology::Hypercube,
        barrier: Barrier::None,
        ..MachineModel::with_link(1.0 / NCUBE2_BETA_S_PER_BYTE)
    }
}

/// The MasPar MP-1 of Sun & Rover: 8192 processing elements on a 2-D toroidal mesh.
pub fn maspar() -> Platform {
    // Sun & Rover 1994, section IV-D: Burg on the MasPar reaches an asymptotic average unit
    // speed of 41 KFLOPS, used here as the marked speed (as the ncube2 preset uses Burg's).
    const PE_MFLOPS: f64 = MASPAR_BURG_R_INF_MFLOPS;
    // Section IV-D: the study's machine sizes run to 8192 processors.
    let nodes = (0..8192)
        .map(|i| Node::new(format!("pe-{i}"), PE_MFLOPS).with_kind("pe"))
        .collect();
    Platform {
        name: "maspar".into(),
        description: "MasPar MP-1 SIMD array on a 2-D torus (Sun & Rover, IEEE TPDS 1994); a \
                      transfer costs the mesh's 30-clock overhead; lock-step, so no barrier"
            .into(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network {
            g_s_per_byte: MASPAR_BYTE_S,
            o_s: MASPAR_TRANSFER_S,
            l: BarrierCost::constant(0.0),
            collectives: Vec::new(),
            source: None,
        },
        machine: Some(MachineModel {
            latency_s: MASPAR_TRANSFER_S,
            topology: Topology::Torus,
            barrier: Barrier::None,
            ..MachineModel::with_link(1.0 / MASPAR_BYTE_S)
        }),
    }
}

/// Sun & Rover 1994, section IV: "the mesh network overhead is approximately 12-30 clocks" at
/// the 12.5 MHz clock; the upper figure, as their computation-to-communication ratio "180
/// clock cycles / 30 clock cycles" takes it.
const MASPAR_TRANSFER_S: f64 = 30.0 / 12.5e6;

/// Seconds per byte on a mesh link: the paper gives no rate, only the per-transfer overhead;
/// one clock per byte keeps the words Burg moves within that overhead.
const MASPAR_BYTE_S: f64 = 1.0 / 12.5e6;

/// Kalinov's heterogeneous cluster: 256 processors "with different processors performance
/// and homogeneous communication equipment supporting parallel point-to-point communications"
/// (section 1), of heterogeneity `H = r_max / r_min` (section 4.1), messages costing
/// `t = a + b L` (section 3.2). He publishes no number, so speeds, `a` and `b` are the model
/// crate's chosen ones (`crate::paper_machines::kalinov_speeds`, the same as its
/// `kalinov-strategies` table): speeds cycling 2000, 500 and 1000 Mflop/s (H = 4), a = 50 us,
/// b = 64 ns per 8-byte element. His pipelined SUMMA passes messages without a barrier (eqs.
/// 3-5), so `L = 0`.
pub fn kalinov() -> Platform {
    let nodes = kalinov_speeds(KALINOV_NODES)
        .into_iter()
        .enumerate()
        .map(|(i, updates_per_s)| {
            // One element update is a multiply and an add.
            let mflops = 2.0 * updates_per_s / 1e6;
            Node::new(format!("k{i}"), mflops).with_kind(kalinov_kind(mflops))
        })
        .collect();
    Platform {
        name: "kalinov".into(),
        description: "Kalinov's heterogeneous cluster (sections 1, 3.2, 4.1): H = 4, parallel \
                      point-to-point links; speeds, a and b are chosen, the paper publishes none"
            .into(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network {
            g_s_per_byte: KALINOV_PER_ELEMENT_S / 8.0,
            o_s: KALINOV_STARTUP_S,
            l: BarrierCost::constant(0.0),
            collectives: Vec::new(),
            source: None,
        },
        machine: None,
    }
}

fn kalinov_kind(mflops: f64) -> &'static str {
    if mflops >= 2000.0 {
        "fast"
    } else if mflops >= 1000.0 {
        "middle"
    } else {
        "slow"
    }
}

/// Number of cores of this host (1 if unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The variable naming the directory where hetscale caches this host's measured marked speed,
/// which replaces the `local` preset's placeholder (empty: no cache, the placeholder stays).
pub const CACHE_DIR_ENV: &str = "HETSCALE_CACHE_DIR";

/// The `local` preset's marked speed per core, Mflop/s: a placeholder, not a measurement.
pub const PLACEHOLDER_MFLOPS: f64 = 1000.0;

/// The `local` preset's description; a platform that still carries it has placeholder speeds
/// (see [`Platform::has_placeholder_speeds`]).
pub const LOCAL_PLACEHOLDER_DESCRIPTION: &str =
    "this host, one node per core; speed and network are placeholders until measured";

/// This host as a homogeneous platform of `p` nodes (`local-0`, `local-1`, ...).
///
/// The numbers are placeholders, not measurements: `marked_speed = 1000` Mflop/s per node,
/// `g = 0.1 ns/byte` (about 10 GB/s memory copies), `L = 1 us`, `o = 0`. `hetscale probe
/// --write-platform FILE` replaces the network numbers with measured ones; a later
/// `hetscale bench` will measure the speed.
pub fn local(p: usize) -> Platform {
    let nodes = (0..p.max(1))
        .map(|i| Node::new(format!("local-{i}"), PLACEHOLDER_MFLOPS).with_kind("core"))
        .collect();
    Platform {
        name: "local".into(),
        description: LOCAL_PLACEHOLDER_DESCRIPTION.into(),
        speed_unit: "Mflop/s".into(),
        nodes,
        network: Network {
            g_s_per_byte: 1e-10,
            o_s: 0.0,
            l: BarrierCost::constant(1e-6),
            collectives: Vec::new(),
            source: None,
        },
        machine: None,
    }
}

// Loading a platform by name sits above both the platform and the presets.
impl Platform {
    /// A preset by name (see [`crate::presets`]), or a platform file if `name_or_path` names
    /// no preset.
    pub fn load(name_or_path: &str) -> Result<Self> {
        match preset(name_or_path) {
            Some(platform) => Ok(platform),
            None if Path::new(name_or_path).exists() => Self::from_file(name_or_path),
            None => Err(MachineError::InvalidPlatform(format!(
                "no preset or file named \"{name_or_path}\": use one of {} or the path of a platform TOML file",
                NAMES.join(", ")
            ))),
        }
    }

    /// Whether the marked speeds are the `local` preset's placeholders rather than measured
    /// (`hetscale bench --write-platform` writes a platform with measured ones).
    pub fn has_placeholder_speeds(&self) -> bool {
        self.description == LOCAL_PLACEHOLDER_DESCRIPTION
    }

    /// What to tell the user of a run on placeholder speeds, if it is one.
    pub fn placeholder_warning(&self) -> Option<String> {
        self.has_placeholder_speeds().then(|| {
            format!(
                "platform {}: the marked speed of {} {} per core is a placeholder, not a \
                 measurement, so E_s and psi are relative to it; measure this host once with \
                 `hetscale bench --quick --save-local` (the cache must be on: {} unset or a \
                 directory), or with `hetscale bench --write-platform local.toml` and pass \
                 --platform local.toml",
                self.name, PLACEHOLDER_MFLOPS, self.speed_unit, CACHE_DIR_ENV
            )
        })
    }
}
