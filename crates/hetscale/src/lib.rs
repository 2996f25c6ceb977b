//! The `hetscale` command line: argument parsing and wiring only; the logic lives in the
//! library crates.
//!
//! [`main_with`] is the whole command line as a function, so a user's own binary gets every
//! subcommand with their kernels added (`hetscale run my-kernel ...`, a study spec with
//! `kernel = "my-kernel"`, `hetscale report` of such a study):
//!
//! ```no_run
//! use hetscale_kernels::{KernelRegistry, mm::MmKernel};
//!
//! fn main() -> std::process::ExitCode {
//!     // A real user registers their own `Kernel`; see examples/user-kernel.
//!     match KernelRegistry::builtin().with("my-mm", |_| Ok(Box::new(MmKernel))) {
//!         Ok(registry) => hetscale::main_with(registry),
//!         Err(e) => {
//!             eprintln!("{e}");
//!             std::process::ExitCode::FAILURE
//!         }
//!     }
//! }
//! ```

// Commands print through `output` (`outln!`, `out!`, `errln!`): std's print macros panic
// when a stream cannot be written.
#![warn(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod cmd;
mod output;
mod usage;

use cli::{Command, command_line, parse};
use hetscale_kernels::KernelRegistry;
use output::errln;
use std::process::ExitCode;

/// The exit code of a run refused before it started because it cannot fit this machine.
pub const REFUSED: u8 = 2;

/// The exit code of a study that settled no configuration (every one failed or its target
/// was unreachable); its database, results and report are written all the same.
pub const UNSETTLED: u8 = 3;

/// Whether `err` refuses a run too large for this machine, whichever crate refused it.
fn is_refusal(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<hbsp::HbspError>()
            .is_some_and(hbsp::HbspError::is_refusal)
            || cause
                .downcast_ref::<hetscale_machine::MachineError>()
                .is_some_and(hetscale_machine::MachineError::is_refusal)
            || cause
                .downcast_ref::<hetscale_kernels::KernelError>()
                .is_some_and(hetscale_kernels::KernelError::is_refusal)
            || cause
                .downcast_ref::<hetscale_study::StudyError>()
                .is_some_and(hetscale_study::StudyError::is_refusal)
    })
}

/// Runs the `hetscale` command line on this process's arguments, with the kernels of
/// `registry`; returns the exit code (failure after printing a one-line reason; [`REFUSED`]
/// for a run refused as too large for this machine).
pub fn main_with(registry: KernelRegistry) -> ExitCode {
    if let Err(err) = output::check_stdout_open() {
        errln!("hetscale: {err:#}");
        return ExitCode::FAILURE;
    }
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => return usage::parse_failure(&err),
    };
    let outcome = match cli.command {
        Command::Bench(args) => cmd::bench::run(&args),
        Command::Paper(args) => cmd::paper::run(&args),
        Command::Run(args) => cmd::run::run(&args, &registry),
        Command::Study(args) => cmd::study::run(&args, &registry),
        Command::Report(args) => cmd::report::run(&args, &registry),
        Command::Predict(args) => cmd::predict::run(&args, &registry),
        Command::Plan(args) => cmd::plan::run(&args, &registry),
        Command::Export(args) => cmd::export::run(&args),
        Command::Collectives(args) => cmd::collectives::run(&args),
        Command::Platform(args) => cmd::platform::run(&args, &registry),
        Command::Probe(args) => cmd::probe::run(&args),
        Command::Calibrate(args) => cmd::calibrate::run(&args, &registry),
        Command::Reproduce(args) => cmd::reproduce::run(&args, &registry),
        Command::Completions(args) => cmd::completions::run(&args, command_line()),
        Command::Man(args) => cmd::man::run(&args, command_line()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`| head`): it has what it wanted; end quietly.
        Err(err) if output::is_closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            errln!("hetscale: {err:#}");
            if is_refusal(&err) {
                return ExitCode::from(REFUSED);
            }
            if err.is::<hetscale_study::study::Unsettled>() {
                return ExitCode::from(UNSETTLED);
            }
            // As a shell reports a process ended by the signal.
            hetscale_study::runner::interrupt::requested()
                .and_then(|signal| u8::try_from(128 + signal).ok())
                .map_or(ExitCode::FAILURE, ExitCode::from)
        }
    }
}
