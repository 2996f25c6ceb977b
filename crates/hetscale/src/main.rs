//! The `hetscale` binary: the command line with the built-in kernels.

use std::process::ExitCode;

fn main() -> ExitCode {
    hetscale::main_with(hetscale_kernels::KernelRegistry::builtin())
}
