//! A published number as printed, with the precision it was printed at.

/// A value as the paper prints it, e.g. `"0.445"`, `"19811638"` or `"1.8E+08"` (spaces used as
/// thousands separators in the paper are allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published(&'static str);

impl Published {
    /// Wraps a literal copied from a paper's table.
    pub const fn new(text: &'static str) -> Self {
        Self(text)
    }

    /// The literal as written.
    pub fn text(&self) -> &'static str {
        self.0
    }

    fn compact(&self) -> String {
        self.0.chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// The number. Literals are checked by the crate's tests, so a bad one is a bug here.
    pub fn value(&self) -> f64 {
        self.compact().parse().unwrap_or(f64::NAN)
    }

    /// `x` formatted the way the paper prints this value.
    pub fn format_like(&self, x: f64) -> String {
        let text = self.compact();
        match text.split_once(['E', 'e']) {
            Some((mantissa, _)) => {
                let sci = format!("{:.*E}", decimals(mantissa), x);
                let (m, e) = sci.split_once('E').unwrap_or((&sci, "0"));
                format!("{m}E{:+03}", e.parse::<i32>().unwrap_or(0))
            }
            None => format!("{:.*}", decimals(&text), x),
        }
    }

    /// Whether `x`, rounded to the published precision, equals the published value.
    pub fn is_reproduced_by(&self, x: f64) -> bool {
        let rounded: f64 = self.format_like(x).parse().unwrap_or(f64::NAN);
        let published: f64 = self.format_like(self.value()).parse().unwrap_or(f64::NAN);
        rounded == published
    }
}

fn decimals(number: &str) -> usize {
    number.split_once('.').map_or(0, |(_, frac)| frac.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_follows_the_literal() {
        assert!(Published::new("0.445").is_reproduced_by(0.44515));
        assert!(!Published::new("0.445").is_reproduced_by(0.4456));
        assert!(Published::new("1.8E+08").is_reproduced_by(184_853_052.0));
        assert!(!Published::new("1.8E+08").is_reproduced_by(186_000_000.0));
        assert!(Published::new("19 811 638").is_reproduced_by(19_811_638.3));
        assert_eq!(Published::new("19 811 638").value(), 19_811_638.0);
        assert_eq!(
            Published::new("1.44E+08").format_like(143_760_000.0),
            "1.44E+08"
        );
    }
}
