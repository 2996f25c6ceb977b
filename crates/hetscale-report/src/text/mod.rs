//! The terminal text of each command's result, one module per command: what `hetscale
//! COMMAND` prints without `--json`, as a string the command writes out.

pub mod bench;
pub mod calibrate;
pub mod collectives;
pub mod paper;
pub mod plan;
pub mod platform;
pub mod predict;
pub mod probe;
pub mod reproduce;
pub mod run;
pub mod study;
