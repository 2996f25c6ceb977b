//! `hetscale platform`: a platform in one line, and the machine a node set selects, node by
//! node.

use std::fmt::Write as _;

use hetscale_study::platform_view::{MachineView, PlatformSummary};

/// The platform in one line: name, node count, marked speed and unit, kinds.
pub fn summary(s: &PlatformSummary<'_>) -> String {
    format!(
        "{:<12} {:>4} nodes  C = {:<9.2} {:<24} kinds: {}",
        s.name,
        s.p,
        s.cluster_speed,
        s.speed_unit,
        s.kinds.join(", ")
    )
}

/// The machine: its marked speed, each node's CPUs, speed, share and `r_j`, and its network.
pub fn machine(view: &MachineView<'_>) -> String {
    let m = view.machine;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} nodes of {}: C = {:.2} {}",
        view.p,
        m.platform(),
        view.cluster_speed,
        m.speed_unit()
    );
    let _ = writeln!(
        out,
        "{:>4}  {:<12} {:>4} {:>12} {:>7} {:>6}",
        "pid", "node", "cpus", "marked_speed", "share", "r"
    );
    for (pid, (node, share)) in m.nodes().iter().zip(&view.shares).enumerate() {
        let _ = writeln!(
            out,
            "{pid:>4}  {:<12} {:>4} {:>12.2} {:>6.1}% {:>6.2}",
            node.name,
            node.cpus_used,
            node.marked_speed,
            share * 100.0,
            node.r
        );
    }
    let net = m.network();
    let _ = writeln!(
        out,
        "g = {:.4e} s/byte, L({}) = {:.4e} s, o = {:.4e} s",
        net.g_s_per_byte, view.p, view.l_s, net.o_s
    );
    out
}
