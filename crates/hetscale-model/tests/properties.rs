//! Property tests of the scalability formulas.

use hetscale_model::hbsp::{balanced_shares, integer_shares};
use hetscale_model::scalability::{ScalabilityMatrix, isospeed_e_psi, isospeed_psi};
use hetscale_model::{root, theorems};
use proptest::prelude::*;

fn speed() -> impl Strategy<Value = f64> {
    0.1f64..1e4
}

proptest! {
    #[test]
    fn psi_of_a_system_with_itself_is_one(c in speed(), w in 1.0f64..1e12) {
        prop_assert!((isospeed_e_psi(c, w, c, w).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn homogeneous_case_is_isospeed(c1 in speed(), p in 1usize..512, p2 in 1usize..512, w in 1.0f64..1e9, w2 in 1.0f64..1e9) {
        // C = p C_1 turns psi(C, C') into psi(p, p').
        let het = isospeed_e_psi(p as f64 * c1, w, p2 as f64 * c1, w2).unwrap();
        let hom = isospeed_psi(p as f64, w, p2 as f64, w2).unwrap();
        prop_assert!((het - hom).abs() <= 1e-12 * hom);
    }

    #[test]
    fn psi_chains(systems in prop::collection::vec((speed(), 1.0f64..1e9), 3..8)) {
        let labels = (0..systems.len()).map(|i| i.to_string()).collect();
        let m = ScalabilityMatrix::from_systems(labels, &systems).unwrap();
        prop_assert!(m.chaining_violations(1e-9).is_empty());
        let (a, b, c) = (0, 1, systems.len() - 1);
        let chained = m.get(a, b).unwrap() * m.get(b, c).unwrap();
        prop_assert!((m.get(a, c).unwrap() - chained).abs() <= 1e-9 * chained);
    }

    #[test]
    fn theorem1_agrees_with_the_definition(
        c in 10.0f64..1e3, growth in 1.2f64..8.0, t0 in 0.01f64..10.0, t0_growth in 1.0f64..5.0,
        alpha in 0.0f64..0.01, w in 1e2f64..1e4,
    ) {
        // Synthetic runs T = (1 - alpha) W / C + alpha W / C_j + T_0 with the sequential part on a
        // node of speed C_j = c / 4 (Chen, Sun & Wu Theorem 1's assumptions).
        let (c2, t0s, cj) = (c * growth, t0 * t0_growth, c / 4.0);
        let time = |w: f64, c: f64, t0: f64| (1.0 - alpha) * w / c + alpha * w / cj + t0;
        let target = w / (time(w, c, t0) * c);
        let solved = root::solve_for_target(|w2| Ok(w2 / (time(w2, c2, t0s) * c2)), target, w, w * 1e8, "E_s");
        prop_assume!(solved.is_ok());
        let w2 = solved.unwrap();
        let by_definition = isospeed_e_psi(c, w, c2, w2).unwrap();
        let by_theorem = theorems::chen_theorem1(alpha * w / cj, t0, alpha * w2 / cj, t0s).unwrap();
        prop_assert!((by_definition - by_theorem).abs() <= 1e-6 * by_theorem, "{} vs {}", by_definition, by_theorem);
    }

    #[test]
    fn integer_shares_are_exact_and_proportional(n in 0usize..100_000, speeds in prop::collection::vec(0.01f64..100.0, 1..12)) {
        let counts = integer_shares(n, &speeds).unwrap();
        prop_assert_eq!(counts.iter().sum::<usize>(), n);
        for (k, c) in counts.iter().zip(balanced_shares(&speeds).unwrap()) {
            prop_assert!((*k as f64 - c * n as f64).abs() < 1.0);
        }
    }
}
