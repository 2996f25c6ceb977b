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
