//! `hetscale reproduce --only wp-collectives`: Williams & Parsons' seven observations on the
//! simulated UCF cluster, each with the number behind its verdict (1.5 s in a debug build).

use hbsp::Platform;
use hetscale_machine::presets;
use hetscale_papers::wp::collectives::{WpExperiment, WpPublished, WpReproduction, reproduce_wp};

fn reproduction(published: WpPublished) -> WpReproduction {
    let experiment = WpExperiment {
        published,
        ..WpExperiment::default()
    };
    reproduce_wp(&experiment).unwrap()
}

#[test]
fn each_observation_has_a_verdict_and_its_number() {
    let w = reproduction(WpPublished::default());
    let verdicts: Vec<(usize, bool)> = w.observations.iter().map(|o| (o.number, o.holds)).collect();
    // 4 of 7 hold. Before the UCF machine model, sim's "actual" was the HBSP^1 prediction and
    // observation 7 (the model over-predicts) could not hold: 3 of 7. The receive cost made
    // observation 3 hold and observation 2 fail (the best p at 500 KB moved from 6 to 8).
    assert_eq!(
        verdicts,
        [
            (1, false),
            (2, false),
            (3, true),
            (4, true),
            (5, true),
            (6, false),
            (7, true)
        ]
    );
    assert_eq!(w.holding(), 4);
    for o in &w.observations {
        let number = format!("{:.2}", o.value);
        let printed = o.evidence.contains(&number)
            || (o.number == 1 && o.evidence.contains(&format!("{:+.0}%", 100.0 * o.value)))
            || (o.number == 7 && o.evidence.contains("predicted vs"));
        assert!(printed, "observation {}: {}", o.number, o.evidence);
        // What the machine model lacks is named exactly when the observation does not hold.
        assert_eq!(o.lacks.is_some(), !o.holds, "{o:?}");
        assert!(o.lacks.is_none_or(|l| !l.is_empty()), "{o:?}");
    }
    assert!(
        w.machine
            .contains("receiving 0.196 us/byte x r_j of the receiver"),
        "{}",
        w.machine
    );
    // At p = 2 the fast root's transfer ends with chromus taking the bytes in at its r_j; the
    // slow root's with gromit doing it (the paper measured < 1).
    assert_eq!(
        w.observations[2].evidence,
        "T_s/T_f = 0.51 to 0.57 at p = 2 over the sizes"
    );
    assert_eq!(
        w.observations[1].evidence,
        "largest T_s/T_f at n = 500 KB: 2.90 at p = 8 (over all sizes: 3.24 at p = 8, n = 1000 KB)"
    );
    // The balanced scatter's best gain, beside the paper's 3.62 (3.47 without the receive cost).
    let best = &w.observations[4];
    assert!((best.value - 3.61).abs() < 0.01, "{best:?}");
    assert!(
        best.evidence.contains("at p = 2, n = 1000 KB"),
        "{}",
        best.evidence
    );

    let rows = w.values();
    assert_eq!(rows.len(), 14);
    assert!(rows.iter().all(|r| r.paper == "wp"));
    let verdict = |item: &str| rows.iter().find(|r| r.item == item).unwrap();
    let three = verdict("observation 3 holds");
    assert_eq!(
        (three.table.as_str(), three.tool),
        ("Figure 3 (a)", Some(1.0))
    );
    assert_eq!(verdict("observation 2 holds").tool, Some(0.0));
    let quoted = rows.iter().find(|r| r.item == "observation 5").unwrap();
    assert_eq!(quoted.published, 3.62);
}

#[test]
fn without_the_receive_cost_both_roots_cost_the_same_at_two_nodes() {
    let mut platform = Platform::load("ucf-cluster").unwrap();
    let mut machine = presets::ucf_machine_model();
    machine.receive_s_per_byte = 0.0;
    platform.machine = Some(machine);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ucf-no-receive.toml");
    platform.write_file(&path).unwrap();
    let w = reproduce_wp(&WpExperiment {
        platform: path.to_str().unwrap().into(),
        processors: vec![2, 4, 6],
        sizes_kb: vec![100, 500],
        ..WpExperiment::default()
    })
    .unwrap();
    let three = &w.observations[2];
    assert!(!three.holds);
    assert_eq!(
        three.evidence,
        "T_s/T_f = 1.00 to 1.00 at p = 2 over the sizes"
    );
    assert!(
        three
            .lacks
            .is_some_and(|l| l.contains("receive_s_per_byte")),
        "{three:?}"
    );
    assert!(!w.machine.contains("receiving"), "{}", w.machine);
}

#[test]
fn a_changed_published_value_moves_no_simulated_value() {
    let original = reproduction(WpPublished::default());
    let altered = reproduction(WpPublished {
        root_best: (8, 500),
        balanced_best: (2, 5.0),
    });
    assert_eq!(original.factors, altered.factors);
    let values = |w: &WpReproduction| w.observations.iter().map(|o| o.value).collect::<Vec<_>>();
    assert_eq!(values(&original), values(&altered));
    // The published values are read, only to judge (the simulated best p at 500 KB is 8).
    assert!(!original.observations[1].holds && altered.observations[1].holds);
    assert!(original.observations[4].holds && !altered.observations[4].holds);
}
