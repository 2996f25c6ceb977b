//! Quantities as people read them.

/// Bytes as people read them: `512 B`, `3.2 MB`, `24.0 GB`, `2.4e7 TB`.
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{value:.0} B"),
        _ if value >= 1e5 => format!("{value:.1e} {}", UNITS[unit]),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

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

/// Seconds as people read them: `40 s`, `12 min`, `3.5 h`, `7.6 days`, `2.1e4 days`.
pub fn human_seconds(seconds: f64) -> String {
    match seconds {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s if s < 8.64e6 => format!("{:.1} days", s / 86_400.0),
        s if s < 8.64e8 => format!("{:.0} days", s / 86_400.0),
        s => format!("{:.1e} days", s / 86_400.0),
    }
}
