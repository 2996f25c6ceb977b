//! The units of a platform's `speed_unit`.

/// Operations per second in one unit of the platform's `speed_unit`, if it is a rate.
pub fn ops_scale(unit: &str) -> Option<f64> {
    match unit.trim().to_ascii_lowercase().as_str() {
        "flop/s" | "op/s" | "ops/s" => Some(1.0),
        "kflop/s" => Some(1e3),
        "mflop/s" | "mflops" | "mop/s" => Some(1e6),
        "gflop/s" | "gflops" | "gop/s" => Some(1e9),
        _ => None,
    }
}
