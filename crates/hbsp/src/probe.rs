//! Probes.
