//! `hetscale run`: one run of a kernel ([`kernel`]) or of any program ([`command`]) on one
//! machine; prints T, W, S = W/T, C and E_s.

mod args;
mod command;
mod kernel;

pub use args::{Args, KernelArgs};
use hetscale_kernels::KernelRegistry;

/// Runs `hetscale run`.
pub fn run(args: &Args, registry: &KernelRegistry) -> anyhow::Result<()> {
    match &args.kernel {
        Some(kernel) => kernel::run(args, kernel, registry),
        None => command::run(args, registry),
    }
}
