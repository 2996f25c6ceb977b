//! # hetscale-machine
//!
//! The machine a parallel program runs on, as data: a [`Platform`] (TOML file or [`presets`])
//! lists nodes with their marked speeds and the network between them (HBSP^1's `g`, `L(p)`,
//! `o`, and the optional [`MachineModel`] of what a real machine has beyond HBSP^1); a
//! [`NodeSet`] (`"4"`, `"gromit,chromus"`, `"sunblade:3,server*2:1"`) selects the [`Machine`] a
//! run uses. It also says how much memory this host has room for ([`room`]).
//!
//! ```
//! use hetscale_machine::Platform;
//!
//! let machine = Platform::load("ucf-cluster")?.select(&"4".parse()?)?;
//! assert_eq!(machine.p(), 4);
//! # Ok::<(), hetscale_machine::MachineError>(())
//! ```
//!
//! The HBSP library (`hbsp`) runs programs on a [`Machine`]; the probes (`hetscale-probe`)
//! measure one and write its platform file. Nothing here runs a program.

mod barrier_cost;
pub mod cgroup;
pub mod collective_names;
pub mod compute_stall;
pub mod duplex;
mod error;
pub mod machine_model;
pub mod nodeset;
pub mod paper_machines;
pub mod platform;
pub mod presets;
pub mod room;
pub mod units;

pub use error::{MachineError, Result};
pub use machine_model::MachineModel;
pub use nodeset::NodeSet;
pub use platform::{BarrierCost, BarrierPoint, Machine, MachineNode, Network, Node, Platform};
