//! Numbers as a person reads them in verdict lines: sizes at a glance, counts grouped.

/// A size as read at a glance: `2967`, `2.1e5`.
pub fn size(n: f64) -> String {
    if n < 1e5 {
        return format!("{n:.0}");
    }
    format!("{n:.1e}").replace(".0e", "e")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts_read_at_a_glance() {
        assert_eq!(size(2967.0), "2967");
        assert_eq!(size(210_000.0), "2.1e5");
        assert_eq!(grouped(1024), "1,024");
    }
}
