//! One module per subcommand: each has its clap `Args` and a `run` that wires library calls.

pub mod bench;
pub mod calibrate;
pub mod collectives;
mod command_args;
pub mod completions;
pub mod declared;
pub mod export;
pub mod man;
pub mod mpi;
pub mod paper;
pub mod plan;
pub mod platform;
pub mod predict;
pub mod probe;
mod progress;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod study;

/// The platform `name_or_path`, `local` at this host's cached marked speed; where that speed
/// comes from is said on stderr (standard output stays the command's result). Its machine
/// model may name only `registry`'s kernels.
pub(crate) fn load_platform(
    name_or_path: &str,
    registry: &hetscale_kernels::KernelRegistry,
) -> anyhow::Result<hbsp::Platform> {
    hetscale_out::protect_input("the platform file", name_or_path);
    let loaded = hetscale_study::speed::local_speed::load_platform(name_or_path)?;
    loaded.platform.check_kernels(&registry.names())?;
    if let Some(note) = loaded.note {
        crate::output::errln!("note: {note}");
    }
    Ok(loaded.platform)
}
