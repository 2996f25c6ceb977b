//! The papers' symbols as they print in a figure: `E_s` as Eₛ, `psi` as ψ, `C'_2` as C′₂.
//! Figures are SVG text without a math renderer, so subscripts are Unicode subscript letters
//! (the sans-serif fonts browsers fall back to carry them). Tables and JSON keep the ASCII
//! spelling, which every tool reads.

/// `text` with its symbols typeset: the word `psi` as ψ; a one-letter symbol followed by
/// `_` and letters or digits that all have a subscript form as that letter with subscripts
/// (`E_s`, `C_i`, `T_o`, `E_he`, `W_12`); a prime after a one-letter symbol as ′ (`C'`).
/// Longer names (`my_study`) and subscripts without a Unicode form stay as written.
pub fn typeset(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_word(chars[i - 1]);
        if starts_word && chars[i].is_ascii_alphabetic() {
            let end = word_end(&chars, i);
            out.push_str(&symbol(&chars[i..end]));
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '\''
}

fn word_end(chars: &[char], start: usize) -> usize {
    (start..chars.len())
        .find(|&k| !is_word(chars[k]))
        .unwrap_or(chars.len())
}

/// One word typeset, or as written when it is not a symbol.
fn symbol(word: &[char]) -> String {
    let text: String = word.iter().collect();
    if text == "psi" {
        return "ψ".into();
    }
    let (base, rest) = word.split_at(1);
    let (prime, rest) = match rest {
        ['\'', rest @ ..] => ("′", rest),
        _ => ("", rest),
    };
    let subscript = match rest {
        [] => Some(String::new()),
        ['_', letters @ ..] if !letters.is_empty() => {
            letters.iter().map(|&c| subscript(c)).collect()
        }
        _ => None,
    };
    match subscript {
        Some(sub) if !(prime.is_empty() && sub.is_empty()) => format!("{}{prime}{sub}", base[0]),
        _ => text,
    }
}

/// The Unicode subscript form of `c`, where there is one.
fn subscript(c: char) -> Option<char> {
    const FROM: &str = "0123456789aehijklmnoprstuvx";
    const TO: &str = "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ";
    FROM.chars()
        .position(|f| f == c)
        .and_then(|k| TO.chars().nth(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_get_subscripts_primes_and_greek() {
        assert_eq!(typeset("speed-efficiency E_s"), "speed-efficiency Eₛ");
        assert_eq!(typeset("psi(C_i, C_j) versus p"), "ψ(Cᵢ, Cⱼ) versus p");
        assert_eq!(typeset("C'_2 and C'"), "C′₂ and C′");
        assert_eq!(typeset("T_o(N), E_he, W_12"), "Tₒ(N), Eₕₑ, W₁₂");
    }

    #[test]
    fn names_and_plain_words_stay_as_written() {
        for text in [
            "my_study psis epsilon",
            "Kalinov's SUMMA",
            "E_S (no subscript capital)",
            "x_ trailing",
            "a 'quoted' word",
            "default-mm: 2 nodes",
        ] {
            assert_eq!(typeset(text), text);
        }
    }
}
