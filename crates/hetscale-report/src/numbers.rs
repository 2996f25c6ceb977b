//! How numbers read in tables, tick labels and captions: a few significant digits, no noise.

/// `value` with `digits` significant digits, in scientific notation when very large or small,
/// without trailing zeros (`1.5`, `1200`, `3.2e-7`); integers print as integers.
pub fn format_number(value: f64, digits: usize) -> String {
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
        let text = format!("{value:.prec$e}", prec = digits - 1);
        return trim_mantissa(&text);
    }
    let exponent = magnitude.log10().floor() as i32;
    let decimals = (digits as i32 - 1 - exponent).max(0) as usize;
    trim_zeros(&format!("{value:.decimals$}"))
}

/// `value` in scientific notation with `digits` significant digits (`1e7`, `2.5e10`).
pub(crate) fn scientific(value: f64, digits: usize) -> String {
    trim_mantissa(&format!("{value:.prec$e}", prec = digits.max(1) - 1))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_without_noise() {
        assert_eq!(format_number(4.0, 4), "4");
        assert_eq!(format_number(0.123456, 4), "0.1235");
        assert_eq!(format_number(1234.5678, 4), "1235");
        assert_eq!(format_number(1.5, 4), "1.5");
        assert_eq!(format_number(3.2e-7, 3), "3.2e-7");
        assert_eq!(format_number(2.5e12, 3), "2.5e12");
        assert_eq!(format_number(f64::NAN, 3), "n/a");
        assert_eq!(scientific(10_000_000.0, 3), "1e7");
        assert_eq!(scientific(2.5e10, 3), "2.5e10");
    }

    #[test]
    fn time_units_follow_the_span() {
        assert_eq!(time_unit(5e-5).0, "µs");
        assert_eq!(time_unit(0.2).0, "ms");
        assert_eq!(time_unit(30.0).0, "s");
    }
}
