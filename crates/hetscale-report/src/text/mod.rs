//! The terminal text of each command's result, one module per command.

pub mod predict;
