//! One module per subcommand: each has its clap `Args` and a `run` that wires library calls.

pub mod paper;
pub mod run;
pub mod study;
