//! Every collective for p = 1..9 with uneven speeds, zero shares and mismatches.

mod common;

use common::{machine, uneven, within_5s};
use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{Backend, HbspError, Machine};
use proptest::prelude::*;

const SIZES: [usize; 5] = [0, 1, 3, 37, 1000];

fn data(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i * 7 + 1).collect()
}

fn run<T: hbsp::NodeResult + 'static>(
    m: Machine,
    program: impl Fn(&mut hbsp::Ctx<'_>) -> hbsp::Result<T> + Send + Sync + 'static,
) -> Vec<T> {
    within_5s(move || hbsp::run(&Backend::threads(), &m, program))
        .unwrap()
        .results
}

fn machines() -> impl Iterator<Item = Machine> {
    (1..=9).map(|p| machine(&uneven(p)))
}

fn same_cost<T>(results: &[(T, f64)]) -> f64 {
    let cost = results[0].1;
    assert!(
        cost > 0.0 && results.iter().all(|r| r.1 == cost),
        "cost differs between nodes"
    );
    cost
}

#[test]
fn scatter_gives_balanced_shares_and_gather_restores() {
    for m in machines() {
        for n in SIZES {
            let counts = m.balanced_counts(n);
            let results = run(m.clone(), move |ctx| {
                let mine = collectives::scatter(ctx, Root::Fastest, &data(n))?;
                let back = collectives::gather(ctx, Root::Fastest, &mine.value, n)?;
                Ok((mine.value, back.value, mine.predicted_s, back.predicted_s))
            });
            let mut start = 0;
            for (j, (piece, back, scatter_s, gather_s)) in results.iter().enumerate() {
                assert_eq!(
                    piece,
                    &data(n)[start..start + counts[j]],
                    "p = {}, n = {n}, node {j}",
                    m.p()
                );
                start += counts[j];
                assert_eq!(back.is_some(), j == m.ranking()[0]);
                assert_eq!((*scatter_s, *gather_s), (results[0].2, results[0].3));
            }
            let root = m.ranking()[0];
            assert_eq!(results[root].1.as_deref(), Some(&data(n)[..]));
        }
    }
}

#[test]
fn scatterv_and_gatherv_with_zero_counts() {
    for m in machines() {
        let p = m.p();
        let counts: Vec<usize> = (0..p).map(|j| if j % 2 == 1 { 0 } else { j + 2 }).collect();
        let total: usize = counts.iter().sum();
        let expect = counts.clone();
        let results = run(m.clone(), move |ctx| {
            let root = Root::Pid(ctx.nprocs() - 1);
            let piece = collectives::scatterv(ctx, root, &data(total), &counts)?;
            let back = collectives::gatherv(ctx, root, &piece.value, &counts)?;
            Ok((piece.value, back.value))
        });
        let mut start = 0;
        for (j, (piece, back)) in results.iter().enumerate() {
            assert_eq!(piece, &data(total)[start..start + expect[j]]);
            start += expect[j];
            assert_eq!(back.is_some(), j == p - 1);
        }
        assert_eq!(results[p - 1].1.as_deref(), Some(&data(total)[..]));
    }
}

#[test]
fn broadcast_all_algorithms() {
    for m in machines() {
        for n in SIZES {
            for algorithm in [
                BroadcastAlgorithm::OnePhase,
                BroadcastAlgorithm::TwoPhase,
                BroadcastAlgorithm::Auto,
            ] {
                let results = run(m.clone(), move |ctx| {
                    let root = Root::Slowest;
                    let input = if ctx.pid() == ctx.rank(ctx.nprocs())? {
                        data(n)
                    } else {
                        Vec::new()
                    };
                    let out = collectives::broadcast(ctx, root, &input, algorithm)?;
                    Ok((out.value, out.predicted_s))
                });
                same_cost(&results);
                for (value, _) in &results {
                    assert_eq!(value, &data(n), "p = {}, n = {n}, {algorithm:?}", m.p());
                }
            }
        }
    }
}

/// What a node got from an in-place collective: whether it borrowed the root's data (and
/// where it points), its items, and the cost.
type InPlace = (bool, bool, Vec<u32>, f64);

fn in_place_view(value: std::borrow::Cow<'_, [u32]>, input: &[u32], cost: f64) -> InPlace {
    let borrowed = matches!(value, std::borrow::Cow::Borrowed(_));
    let inside = input.as_ptr_range().contains(&value.as_ptr());
    (borrowed, inside, value.to_vec(), cost)
}

#[test]
fn in_place_collectives_borrow_at_the_root_and_match_their_copying_namesakes() {
    let n = 1000;
    for m in machines().take(5) {
        let counts = m.balanced_counts(n);
        let root = m.ranking()[0];
        for algorithm in [BroadcastAlgorithm::OnePhase, BroadcastAlgorithm::TwoPhase] {
            let shares = counts.clone();
            let results = run(m.clone(), move |ctx| {
                let input = data(n);
                let piece = collectives::scatterv_in_place(ctx, Root::Fastest, &input, &shares)?;
                let piece = in_place_view(piece.value, &input, piece.predicted_s);
                let copied = collectives::scatterv(ctx, Root::Fastest, &input, &shares)?;
                let all = collectives::broadcast_in_place(ctx, Root::Fastest, &input, algorithm)?;
                let all = in_place_view(all.value, &input, all.predicted_s);
                let copy = collectives::broadcast(ctx, Root::Fastest, &input, algorithm)?;
                Ok((piece, copied.value, copied.predicted_s, all, copy.value))
            });
            let mut start = 0;
            for (j, (piece, copied, copied_s, all, copy)) in results.into_iter().enumerate() {
                let at_root = j == root;
                let expect = &data(n)[start..start + counts[j]];
                start += counts[j];
                assert_eq!((piece.0, piece.1), (at_root, at_root), "scatterv, node {j}");
                assert_eq!((&piece.2[..], piece.3), (expect, copied_s), "node {j}");
                assert_eq!(copied, expect);
                assert_eq!(
                    (all.0, all.1),
                    (at_root, at_root),
                    "{algorithm:?}, node {j}"
                );
                assert_eq!(
                    (&all.2, &copy),
                    (&data(n), &data(n)),
                    "{algorithm:?}, node {j}"
                );
            }
        }
    }
}

#[test]
fn broadcast_auto_picks_the_cheaper_algorithm() {
    let ucf = hbsp::Platform::load("ucf-cluster").unwrap();
    for p in [2, 4, 10] {
        let m = ucf.select(&hbsp::NodeSet::First(p)).unwrap();
        let n = 100_000;
        let results = run(m, move |ctx| {
            let input = data(n);
            let costs: Vec<f64> = [
                BroadcastAlgorithm::OnePhase,
                BroadcastAlgorithm::TwoPhase,
                BroadcastAlgorithm::Auto,
            ]
            .into_iter()
            .map(|a| collectives::broadcast(ctx, Root::Fastest, &input, a).map(|c| c.predicted_s))
            .collect::<hbsp::Result<_>>()?;
            Ok(costs)
        });
        let [one, two, auto] = results[0][..] else {
            panic!()
        };
        assert_eq!(auto, one.min(two), "p = {p}");
    }
}

#[test]
fn reduce_and_allreduce_fold_in_pid_order() {
    for m in machines() {
        for n in [0, 1, 5, 100] {
            let results = run(m.clone(), move |ctx| {
                let mine: Vec<u64> = (0..n as u64).map(|i| i + 100 * ctx.pid() as u64).collect();
                let root = collectives::reduce(ctx, Root::Fastest, &mine, |a, b| a * 3 + b)?;
                let all = collectives::allreduce(ctx, &mine, |a, b| a * 3 + b)?;
                let sum = collectives::allreduce(ctx, &[ctx.pid() as f64], |a, b| a + b)?;
                Ok((root.value, all.value, all.predicted_s, sum.value))
            });
            let p = m.p();
            let expect: Vec<u64> = (0..n as u64)
                .map(|i| {
                    (0..p as u64)
                        .map(|j| i + 100 * j)
                        .reduce(|a, b| a * 3 + b)
                        .unwrap()
                })
                .collect();
            for (j, (root, all, _, sum)) in results.iter().enumerate() {
                assert_eq!(all, &expect, "p = {p}, n = {n}");
                assert_eq!(root.as_ref(), (j == m.ranking()[0]).then_some(&expect));
                assert_eq!(sum, &vec![(p * (p - 1) / 2) as f64]);
            }
            same_cost(&results.iter().map(|r| ((), r.2)).collect::<Vec<_>>());
        }
    }
}

#[test]
fn allgather_with_uneven_and_empty_contributions() {
    for m in machines() {
        let p = m.p();
        let results = run(m, |ctx| {
            let mine = vec![ctx.pid() as u16; ctx.pid() % 3];
            let out = collectives::allgather(ctx, &mine)?;
            Ok((out.value, out.predicted_s))
        });
        same_cost(&results);
        let expect: Vec<Vec<u16>> = (0..p).map(|j| vec![j as u16; j % 3]).collect();
        assert!(results.iter().all(|(v, _)| *v == expect));
    }
}

#[test]
fn alltoall_and_alltoallv_transpose() {
    for m in machines() {
        let p = m.p();
        let results = run(m, |ctx| {
            let (p, me) = (ctx.nprocs(), ctx.pid());
            let blocks: Vec<Vec<u32>> = (0..p).map(|j| vec![(me * 100 + j) as u32; 2]).collect();
            let even = collectives::alltoall(ctx, &blocks)?;
            let counts: Vec<Vec<usize>> = (0..p)
                .map(|i| (0..p).map(|j| (i + j) % 3).collect())
                .collect();
            let uneven: Vec<Vec<u32>> = (0..p)
                .map(|j| vec![(me * 100 + j) as u32; counts[me][j]])
                .collect();
            let v = collectives::alltoallv(ctx, &uneven, &counts)?;
            Ok((even.value, v.value, v.predicted_s))
        });
        for (me, (even, v, _)) in results.iter().enumerate() {
            for i in 0..p {
                assert_eq!(even[i], vec![(i * 100 + me) as u32; 2]);
                assert_eq!(v[i], vec![(i * 100 + me) as u32; (i + me) % 3]);
            }
        }
        same_cost(&results.iter().map(|r| ((), r.2)).collect::<Vec<_>>());
    }
}

#[test]
fn balanced_scatter_cost_matches_paper_closed_form_bound() {
    let ucf = hbsp::Platform::load("ucf-cluster").unwrap();
    let m = ucf.select(&hbsp::NodeSet::First(4)).unwrap();
    let (g, l) = (m.network().g_s_per_byte, m.l_s());
    let n = 250_000; // 1000 KB of 4-byte integers, the paper's largest size
    let results = run(m.clone(), move |ctx| {
        Ok(collectives::scatter(ctx, Root::Fastest, &data(n))?.predicted_s)
    });
    // HBSP^1 closed form: h = max(root's bytes out, max_j r_j * bytes into j), bytes by share c_j.
    let bytes = (4 * n) as f64;
    let root = m.ranking()[0];
    let shares = m.shares();
    let into = |j: usize| m.nodes()[j].r * shares[j] * bytes;
    let h = (0..m.p())
        .filter(|&j| j != root)
        .map(into)
        .fold(m.nodes()[root].r * (1.0 - shares[root]) * bytes, f64::max);
    let closed_form = g * h + l + m.network().o_s * (m.p() - 1) as f64;
    // Integer counts differ from c_j n by under one item per node.
    let one_item = 4.0 * g * m.nodes().iter().map(|n| n.r).fold(0.0, f64::max);
    assert!(
        (results[0] - closed_form).abs() <= one_item,
        "{} vs {closed_form}",
        results[0]
    );
    assert!(closed_form < g * bytes + l, "the paper's bound g n + L");
}

fn mismatch(
    program: impl Fn(&mut hbsp::Ctx<'_>) -> hbsp::Result<()> + Send + Sync + 'static,
) -> String {
    let err = within_5s(move || hbsp::run(&Backend::threads(), &machine(&uneven(3)), program))
        .unwrap_err();
    assert!(matches!(err, HbspError::Mismatch { .. }), "{err:?}");
    err.to_string()
}

#[test]
fn mismatched_collectives_are_errors() {
    let kinds = mismatch(|ctx| {
        if ctx.pid() == 1 {
            collectives::allgather(ctx, &[1u8])?;
        } else {
            collectives::broadcast(ctx, Root::Fastest, &[1u8], BroadcastAlgorithm::OnePhase)?;
        }
        Ok(())
    });
    assert!(kinds.contains("node 1 (n1) called allgather"), "{kinds}");
    let roots = mismatch(|ctx| {
        collectives::scatter(ctx, Root::Pid(ctx.pid().min(1)), &[1u8, 2, 3])?;
        Ok(())
    });
    assert!(
        roots.contains("root 0") && roots.contains("root 1"),
        "{roots}"
    );
    let sizes = mismatch(|ctx| {
        collectives::allreduce(ctx, &vec![1u32; 2 + ctx.pid() / 2], |a, b| a + b)?;
        Ok(())
    });
    assert!(
        sizes.contains("sizes [2]") && sizes.contains("sizes [3]"),
        "{sizes}"
    );
    let with_sync = mismatch(|ctx| {
        if ctx.pid() == 0 {
            ctx.sync()
        } else {
            collectives::allgather(ctx, &[0u8]).map(|_| ())
        }
    });
    assert!(with_sync.contains("node 0 (n0) called sync"), "{with_sync}");
}

#[test]
fn bad_collective_arguments_are_errors() {
    let err = within_5s(|| {
        hbsp::run(&Backend::threads(), &machine(&uneven(3)), |ctx| {
            collectives::scatterv(ctx, Root::Pid(0), &[1u8; 5], &[1, 1, 1]).map(|_| ())
        })
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("the counts add up to 3 items but the root has 5 to hand out"),
        "{err}"
    );
    let err = within_5s(|| {
        hbsp::run(&Backend::threads(), &machine(&uneven(3)), |ctx| {
            collectives::broadcast(ctx, Root::Pid(7), &[1u8], BroadcastAlgorithm::Auto).map(|_| ())
        })
    })
    .unwrap_err();
    assert!(err.to_string().contains("root 7 is not a pid"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn balanced_counts_sum_to_n_and_follow_speed(
        speeds in prop::collection::vec(0.01f64..100.0, 1..40),
        n in 0usize..100_000,
    ) {
        let m = machine(&speeds);
        let counts = m.balanced_counts(n);
        prop_assert_eq!(counts.iter().sum::<usize>(), n);
        for (count, share) in counts.iter().zip(m.shares()) {
            prop_assert!((*count as f64 - share * n as f64).abs() < 1.0);
        }
    }
}
