//! `hetscale reproduce --only kalinov-summa` on 4, 16 and 64 processors of the `kalinov`
//! preset (the command runs to 256): each strategy's verdict is Kalinov's, and HeHo, whose
//! process count on this cluster is a prime, runs on a near-square grid.

use hetscale_kernels::KernelRegistry;
use hetscale_model::summa::Strategy;
use hetscale_papers::kalinov::summa::{
    KalinovExperiment, KalinovReproduction, STATEMENTS, reproduce_kalinov,
};

fn small() -> KalinovReproduction {
    let experiment = KalinovExperiment {
        processors: vec![4, 16, 64],
        ..KalinovExperiment::default()
    };
    reproduce_kalinov(&experiment, &KernelRegistry::builtin()).unwrap()
}

#[test]
fn every_strategy_s_verdict_is_kalinov_s() {
    let k = small();
    assert_eq!(k.strategies.len(), 4);
    for (series, statement) in k.strategies.iter().zip(STATEMENTS) {
        let e_he: Vec<f64> = series.points.iter().map(|p| p.e_he).collect();
        assert!(
            series.agrees(),
            "{}: Kalinov says scalable = {}, E_he {e_he:?}",
            statement.strategy.name(),
            statement.scalable
        );
        assert_eq!(
            series.points.iter().map(|p| (p.p, p.n)).collect::<Vec<_>>(),
            [(4, 2000), (16, 4000), (64, 8000)]
        );
    }
    let hohe1 = &k.strategies[2];
    assert_eq!(hohe1.statement.strategy, Strategy::HoHe1);
    assert!(hohe1.retained < 0.8, "{}", hohe1.retained);
    // HeHo on 64 processors asks for 151 processes (4 + 1 + 2 per three): a 12x12 grid, not
    // 1x151 (E_he was 0.12 there, against 0.50 on 16 processors).
    let heho = &k.strategies[1];
    assert_eq!(heho.points[2].grid, "12x12");
    assert!(heho.points[2].e_he > 0.6, "{}", heho.points[2].e_he);
}

#[test]
fn json_rows_carry_the_paper_his_equation_and_his_statement() {
    let rows = small().values();
    assert!(rows.iter().all(|r| r.paper == "kalinov"));
    assert_eq!(rows.len(), 4 * (3 + 1));
    let verdict = rows
        .iter()
        .find(|r| r.item == "hohe1 scalable p=4..64")
        .unwrap();
    assert_eq!((verdict.table.as_str(), verdict.published), ("4.2", 0.0));
    assert_eq!(verdict.tool, Some(0.0));
    let point = rows.iter().find(|r| r.item == "hohe2 p=16 n=4000").unwrap();
    assert_eq!(
        (point.table.as_str(), point.quantity.as_str()),
        ("eq. 11", "E_he")
    );
    assert!(
        point.published > 0.0 && point.published < 1.0,
        "{}",
        point.published
    );
}

#[test]
fn a_platform_without_flop_rates_is_refused_in_one_line() {
    let experiment = KalinovExperiment {
        platform: "ucf-cluster".into(),
        processors: vec![4],
        n2_per_p: 10_000.0,
        ..KalinovExperiment::default()
    };
    let err = reproduce_kalinov(&experiment, &KernelRegistry::builtin())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a flop rate") && !err.contains('\n'),
        "{err}"
    );
}
