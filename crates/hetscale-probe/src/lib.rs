//! # hetscale-probe
//!
//! Measuring a machine and writing its platform: each probe runs HBSP programs of its own on a
//! backend (`threads`, `sim` or `mpi`) and turns their superstep times into the parameters a
//! `hetscale_machine::Platform` holds, with 95% intervals.
//!
//! - [`probe`]: HBSP^1's `g`, `r_j`, `L` and `o` (`hetscale probe`), as BSPlib's `bspprobe`;
//! - [`p2p_probe`]: point-to-point transfers piecewise-linear in size, the duplex penalty and
//!   the stall after compute (`hetscale probe --p2p`), as SMPI calibrates its network;
//! - [`collective_probe`]: each collective's own cost as JPDC section 4.5 measured it
//!   (`hetscale probe --collectives`);
//! - [`probe_platform`]: what a probe measured, written into a platform file.
//!
//! The machine model these write is `hetscale_machine`'s; the runtime they run on is `hbsp`'s.

pub mod collective_probe;
pub mod p2p_probe;
pub mod probe;
pub mod probe_platform;
