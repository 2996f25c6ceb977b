//! How hetscale writes a number for a person to read: every format of tables, tick labels,
//! captions, verdict lines, formulas and error messages, one named function each.
//!
//! Pure string formatting (no I/O), here at the bottom so that every crate above shares one
//! formatter.

/// `value` with `digits` significant digits, in scientific notation when very large or small,
/// without trailing zeros (`1.5`, `1200`, `3.2e-7`); integers print as integers; `n/a` for
/// NaN. Tables, tick labels and captions use it.
pub fn significant(value: f64, digits: usize) -> String {
    if !value.is_finite() {
        return if value.is_nan() {
            "n/a".into()
        } else if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let magnitude = value.abs();
    if value == value.trunc() && magnitude < 1e9 {
        return format!("{value:.0}");
    }
    let digits = digits.max(1);
    if !(1e-3..1e6).contains(&magnitude) {
        return scientific(value, digits);
    }
    let exponent = magnitude.log10().floor() as i32;
    let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
    trim_zeros(&format!("{value:.decimals$}"))
}

/// `value` in scientific notation with `digits` significant digits (`1e7`, `2.5e10`).
pub fn scientific(value: f64, digits: usize) -> String {
    trim_mantissa(&format!("{value:.prec$e}", prec = digits.max(1) - 1))
}

/// `x` to 3 significant digits, trailing zeros dropped, in scientific notation from 1e5 up and
/// below 1e-3: `1.02`, `0.012`, `3.1e-4`, `1.23e5`. A fitted formula's coefficients read so.
pub fn three_digits(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exponent = x.abs().log10().floor() as i32;
    if (-3..5).contains(&exponent) {
        let decimals = (2 - exponent).max(0) as usize;
        let text = format!("{x:.decimals$}");
        let rounded: f64 = text.parse().unwrap_or(x);
        // 9.996 rounds to 10.00: one decimal too many is trimmed below.
        trim_zeros(&if rounded.abs().log10().floor() as i32 > exponent {
            format!("{x:.*}", decimals.saturating_sub(1))
        } else {
            text
        })
    } else {
        trim_mantissa(&format!("{x:.2e}"))
    }
}

/// `value` with up to 4 decimals, trailing zeros dropped (0.3 -> `0.3`, 0.32374 -> `0.3237`).
pub fn trimmed(value: f64) -> String {
    trim_zeros(&format!("{value:.4}"))
}

/// `value` to `digits` significant digits in fixed notation, its zeros kept (9.51 -> `9.5`,
/// 0.01287 -> `0.013`, 48.3 -> `48`, 0.3 -> `0.30`).
pub fn significant_fixed(value: f64, digits: usize) -> String {
    if !value.is_finite() || value == 0.0 {
        return format!("{value}");
    }
    let exponent = value.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
    format!("{value:.decimals$}")
}

/// A problem size as the tables print it, whole: `2967`, `100246`. Never rounded to a few
/// digits: a verdict's `N [lo, hi]` must read as the table's does, and `1.0e5 [9.7e4, 1.0e5]`
/// would hide both the point and the gap to the upper end.
pub fn size(n: f64) -> String {
    format!("{n:.0}")
}

/// `1024` as `1,024`.
pub fn grouped(count: usize) -> String {
    let digits = count.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `value` as an error message echoes it: short, in scientific notation when very large or
/// very small.
pub fn echoed(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1e6 || (magnitude > 0.0 && magnitude < 1e-4) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

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

/// A time in seconds as read at a glance: 4 significant digits, an exponent from 1e6 s up
/// (`0.01128`, `3.542e6`). Predicted times' interval ends read so.
pub fn seconds_compact(seconds: f64) -> String {
    if seconds.abs() >= 1e6 {
        format!("{seconds:.3e}")
    } else {
        significant_fixed(seconds, 4)
    }
}

/// A ratio (`psi`) to 3 significant digits, with an exponent below 0.001 (`0.912`, `4.10e-4`).
pub fn ratio(value: f64) -> String {
    if value == 0.0 || value.abs() >= 1e-3 {
        significant_fixed(value, 3)
    } else {
        format!("{value:.2e}")
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

/// `seconds` in seconds and, when that is hard to read, beside it in minutes, hours or days:
/// `80.1 s`, `654112 s (7.6 days)`.
pub fn seconds_and_human(seconds: f64) -> String {
    let plain = format!("{} s", significant_fixed(seconds, 4));
    if seconds < 120.0 {
        return plain;
    }
    format!("{plain} ({})", human_seconds(seconds))
}

/// A time unit that keeps numbers readable for spans up to `max_s` seconds: its name and how
/// many of it make a second.
pub fn time_unit(max_s: f64) -> (&'static str, f64) {
    if max_s < 1e-3 {
        ("µs", 1e6)
    } else if max_s < 1.0 {
        ("ms", 1e3)
    } else {
        ("s", 1.0)
    }
}

/// Drops trailing zeros after a decimal point (`1.500` -> `1.5`, `2.000` -> `2`).
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// `1.500e-7` -> `1.5e-7`.
fn trim_mantissa(text: &str) -> String {
    match text.split_once('e') {
        Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_without_noise() {
        assert_eq!(significant(4.0, 4), "4");
        assert_eq!(significant(0.123456, 4), "0.1235");
        assert_eq!(significant(1234.5678, 4), "1235");
        assert_eq!(significant(1.5, 4), "1.5");
        assert_eq!(significant(3.2e-7, 3), "3.2e-7");
        assert_eq!(significant(2.5e12, 3), "2.5e12");
        assert_eq!(significant(f64::NAN, 3), "n/a");
        assert_eq!(scientific(10_000_000.0, 3), "1e7");
        assert_eq!(scientific(2.5e10, 3), "2.5e10");
    }

    #[test]
    fn time_units_follow_the_span() {
        assert_eq!(time_unit(5e-5).0, "µs");
        assert_eq!(time_unit(0.2).0, "ms");
        assert_eq!(time_unit(30.0).0, "s");
    }

    #[test]
    fn three_significant_digits() {
        let cases = [
            (1.0234, "1.02"),
            (0.012, "0.012"),
            (3.1e-4, "3.1e-4"),
            (0.0123456, "0.0123"),
            (123456.0, "1.23e5"),
            (9.996, "10"),
            (1.0, "1"),
            (42.0, "42"),
            (2e-6, "2e-6"),
        ];
        for (x, text) in cases {
            assert_eq!(three_digits(x), text, "{x}");
        }
    }

    #[test]
    fn sizes_and_counts_read_at_a_glance() {
        assert_eq!(size(2967.0), "2967");
        assert_eq!(size(100_246.0), "100246");
        assert_eq!(size(101_695.4), "101695");
        assert_eq!(grouped(1024), "1,024");
    }

    #[test]
    fn numbers_read_with_a_few_digits() {
        assert_eq!(trimmed(0.3), "0.3");
        assert_eq!(trimmed(0.32374), "0.3237");
        assert_eq!(significant_fixed(9.509, 2), "9.5");
        assert_eq!(significant_fixed(0.012_87, 2), "0.013");
        assert_eq!(significant_fixed(48.3, 2), "48");
        assert_eq!(grouped(1024), "1,024");
        assert_eq!(grouped(8), "8");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn long_times_read_in_days_beside_seconds() {
        assert_eq!(seconds_and_human(80.1), "80.10 s");
        assert_eq!(seconds_and_human(654_112.2), "654112 s (7.6 days)");
    }

    #[test]
    fn error_messages_echo_a_value_short() {
        assert_eq!(echoed(0.5), "0.5");
        assert_eq!(echoed(2e6), "2e6");
        assert_eq!(echoed(1e-5), "1e-5");
        assert_eq!(echoed(0.0), "0");
    }

    #[test]
    fn predicted_times_and_ratios_read_at_a_glance() {
        assert_eq!(seconds_compact(0.011284), "0.01128");
        assert_eq!(seconds_compact(42.0), "42.00");
        assert_eq!(seconds_compact(3.5421e6), "3.542e6");
        assert_eq!(ratio(0.91234), "0.912");
        assert_eq!(ratio(0.0), "0");
        assert_eq!(ratio(4.1e-4), "4.10e-4");
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(3.2e6), "3.2 MB");
        assert_eq!(human_bytes(2.4e19), "2.4e7 TB");
    }
}
