//! The machine model the `sim` tests charge and the probe tests measure back: a two-node
//! platform of known link, latency and barrier.

use hbsp::Platform;
use hetscale_machine::machine_model::MachineModel;

pub const LINK: f64 = 1e6;
pub const LATENCY: f64 = 1e-4;
pub const L: f64 = 1e-5;

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Nodes of 4 and 1 Mflop/s, kinds `fast` and `slow`, with `model`.
pub fn platform(model: MachineModel) -> Platform {
    let mut platform = super::platform(&[4.0, 1.0]);
    platform.nodes[0].kind = Some("fast".into());
    platform.nodes[1].kind = Some("slow".into());
    platform.machine = Some(model);
    platform
}

pub fn model() -> MachineModel {
    MachineModel {
        latency_s: LATENCY,
        ..MachineModel::with_link(LINK)
    }
}

/// Two segments: 20 us + 1 ns/byte up to 128 KiB, 5 ms + 80 ns/byte beyond (a shaped link
/// whose bucket passes small messages at the host's speed).
pub fn two_segments() -> Vec<hetscale_machine::machine_model::P2pSegment> {
    use hetscale_machine::machine_model::P2pSegment;
    vec![
        P2pSegment::new(128 << 10, 20e-6, 1e-9),
        P2pSegment::new(16 << 20, 5e-3, 80e-9),
    ]
}
