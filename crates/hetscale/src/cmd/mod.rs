//! One module per subcommand: each has its clap `Args` and a `run` that wires library calls.

pub mod bench;
pub mod calibrate;
pub mod collectives;
pub mod export;
pub mod mpi;
pub mod paper;
pub mod platform;
pub mod predict;
pub mod probe;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod run_command;
pub mod study;
mod study_text;
