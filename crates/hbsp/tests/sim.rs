//! The sim backend against the HBSP^1 model's closed forms.

mod common;

use common::{machine, within_5s};
use hbsp::collectives::{self, BroadcastAlgorithm, Root};
use hbsp::{Backend, HbspError, Machine, Platform, SimOptions};
use hetscale_model::hbsp as model;

fn ucf(p: usize) -> Machine {
    Platform::load("ucf-cluster")
        .unwrap()
        .select(&p.to_string().parse().unwrap())
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

#[test]
fn an_empty_superstep_costs_l() {
    for backend in common::sim_declared() {
        for p in [2, 4, 10] {
            let m = ucf(p);
            for syncs in 0..3 {
                let out = hbsp::run(&backend, &m, |ctx| {
                    (0..syncs).try_for_each(|_| ctx.sync())?;
                    Ok::<_, HbspError>(())
                })
                .unwrap();
                assert!(out.virtual_time);
                assert!(
                    close(out.elapsed_s, syncs as f64 * m.l_s()),
                    "p={p} syncs={syncs}: {}",
                    out.elapsed_s
                );
            }
        }
    }
}

#[test]
fn balanced_scatter_from_the_fastest_root_is_the_model_cost() {
    for backend in common::sim_declared() {
        for p in [2, 4, 6, 8, 10] {
            let m = ucf(p);
            let n = 25_000usize; // 100 KB of i32
            let out = hbsp::run(&backend, &m, |ctx| {
                let data: Vec<i32> = (0..n as i32).collect();
                let result = collectives::scatter(ctx, Root::Fastest, &data)?;
                Ok::<_, HbspError>(result.predicted_s)
            })
            .unwrap();
            let counts: Vec<f64> = m
                .balanced_counts(n)
                .iter()
                .map(|&c| 4.0 * c as f64)
                .collect();
            let exact = model::scatter_cost(&m.cost_model(), 0, &counts).unwrap();
            assert!(
                close(out.elapsed_s, exact),
                "p={p}: sim {} model {exact}",
                out.elapsed_s
            );
            assert!(close(out.results[0], exact));
            // The paper's closed form g n + L bounds it (r_j c_j < 1 for all but chromus at small p).
            let closed =
                model::scatter_closed_form(m.network().g_s_per_byte, 4.0 * n as f64, m.l_s())
                    .unwrap();
            assert!(out.elapsed_s <= closed * 1.0001 || p == 2, "p={p}");
        }
    }
}

#[test]
fn two_phase_broadcast_costs_what_the_library_predicts() {
    for backend in common::sim_declared() {
        for p in [2, 4, 6, 8, 10] {
            let m = ucf(p);
            let out = hbsp::run(&backend, &m, |ctx| {
                let data = vec![7u32; 50_000];
                let b = collectives::broadcast(
                    ctx,
                    Root::Fastest,
                    &data,
                    BroadcastAlgorithm::TwoPhase,
                )?;
                assert_eq!(b.value, data);
                Ok::<_, HbspError>(b.predicted_s)
            })
            .unwrap();
            assert!(
                close(out.elapsed_s, out.results[0]),
                "p={p}: sim {} predicted {}",
                out.elapsed_s,
                out.results[0]
            );
            assert_eq!(out.costs.iter().filter(|c| c.barrier_s > 0.0).count(), 2);
            let closed = model::two_phase_broadcast_closed_form(
                m.network().g_s_per_byte,
                200_000.0,
                m.cost_model().r_slowest(),
                m.l_s(),
            )
            .unwrap();
            assert!(out.elapsed_s <= closed, "p={p}");
        }
    }
}

#[test]
fn declared_work_is_charged_at_each_node_speed() {
    for backend in common::sim_declared() {
        let m = machine(&[100.0, 50.0, 25.0]);
        let out = hbsp::run(&backend, &m, |ctx| {
            ctx.compute(1e6, || ())?;
            ctx.sync()?;
            ctx.charge_work(if ctx.pid() == 0 { 4e6 } else { 0.0 })?;
            Ok::<_, HbspError>(ctx.time())
        })
        .unwrap();
        // Superstep 0: slowest node, 1e6 / 25e6 s, plus L. End: node 0's 4e6 / 100e6, no barrier.
        let expected = 1e6 / 25e6 + m.l_s() + 4e6 / 100e6;
        assert!(
            close(out.elapsed_s, expected),
            "{} vs {expected}",
            out.elapsed_s
        );
        assert!(close(out.results[0], 1e6 / 25e6 + m.l_s() + 4e6 / 100e6));
        assert!(close(out.results[1], 1e6 / 25e6 + m.l_s()));
        let first = &out.trace.nodes[0].supersteps[0];
        assert!(
            close(first.compute_s, 1e6 / 100e6)
                && close(first.wait_s, 1e6 / 25e6 - 1e6 / 100e6 + m.l_s())
        );
    }
}

#[test]
fn per_message_overhead_and_r_are_charged() {
    for backend in common::sim_declared() {
        let mut platform = common::platform(&[10.0, 10.0, 10.0]);
        platform.network.o_s = 1e-3;
        let m = platform.all().unwrap();
        let out = hbsp::run(&backend, &m, |ctx| {
            if ctx.pid() == 0 {
                for _ in 0..3 {
                    ctx.send(2, 0, &[0u8; 1000])?;
                }
                ctx.send(0, 0, &[0u8; 1_000_000])?; // to itself: no network
            }
            ctx.sync()?;
            Ok::<_, HbspError>(())
        })
        .unwrap();
        // Node 2 receives 3000 bytes at r = 1.2 in 3 messages.
        let expected = 1e-9 * 1.2 * 3000.0 + 1e-3 * 3.0 + 1e-5;
        assert!(
            close(out.elapsed_s, expected),
            "{} vs {expected}",
            out.elapsed_s
        );
    }
}

#[test]
fn runs_are_deterministic() {
    for backend in common::sim_declared() {
        let (a, b) = (exchanges(&backend), exchanges(&backend));
        assert_eq!(a.elapsed_s.to_bits(), b.elapsed_s.to_bits());
        assert_eq!(a.costs, b.costs);
        assert_eq!(a.trace, b.trace);
        // The allreduce of the pids, and each broadcast's sum of i (root + 1) for i < 1001.
        assert_eq!(a.results, vec![45 + 500_500 * (4 + 8 + 10); 10]);
    }
}

/// Both engines give the same virtual times, costs, traces and results, bit for bit; with
/// the trace off too, where the coroutine engine's broadcasts count totals, not flows.
#[test]
fn both_engines_agree_bit_for_bit() {
    for no_trace in [false, true] {
        let [coroutines, threads] = common::sim_engines(SimOptions {
            work: hbsp::WorkCharge::Declared,
            no_trace,
            ..SimOptions::default()
        });
        let (a, b) = (exchanges(&coroutines), exchanges(&threads));
        assert_eq!(a.elapsed_s.to_bits(), b.elapsed_s.to_bits(), "{no_trace}");
        assert_eq!(a.costs, b.costs, "no_trace {no_trace}");
        assert_eq!(a.trace, b.trace, "no_trace {no_trace}");
        assert_eq!(a.results, b.results);
        assert!(a.costs.len() > 5 && a.elapsed_s > 0.0);
    }
}

/// Spreading the coroutine engine's nodes over several OS threads (lanes) changes nothing:
/// times, costs, traces and results are those of one lane, bit for bit, whatever the lanes'
/// timing, including lanes of one node.
#[test]
fn lanes_agree_bit_for_bit_with_one_lane() {
    let on = |lanes, no_trace| {
        Backend::Sim(SimOptions {
            work: hbsp::WorkCharge::Declared,
            no_trace,
            lanes: Some(lanes),
            ..SimOptions::default()
        })
    };
    for no_trace in [false, true] {
        let one = exchanges(&on(1, no_trace));
        for lanes in [2, 3, 10] {
            for _ in 0..3 {
                let many = exchanges(&on(lanes, no_trace));
                assert_eq!(one.elapsed_s.to_bits(), many.elapsed_s.to_bits(), "{lanes}");
                assert_eq!(one.costs, many.costs, "{lanes} lanes");
                assert_eq!(one.trace, many.trace, "{lanes} lanes");
                assert_eq!(one.results, many.results, "{lanes} lanes");
            }
        }
    }
}

/// When nodes in different lanes fail in the same superstep, the run ends with the failure
/// of the lowest pid (as with one lane, which runs the nodes in pid order), every time.
#[test]
fn the_lowest_failing_pid_ends_the_run_whatever_the_lanes() {
    for lanes in [1, 2, 4] {
        for _ in 0..10 {
            let backend = Backend::Sim(SimOptions {
                work: hbsp::WorkCharge::Declared,
                lanes: Some(lanes),
                ..SimOptions::default()
            });
            let err = within_5s(move || {
                hbsp::run(&backend, &ucf(8), |ctx| {
                    let sync = |ctx: &mut hbsp::Ctx<'_>| ctx.sync().map_err(|e| e.to_string());
                    sync(ctx)?;
                    if ctx.pid() == 2 || ctx.pid() == 6 {
                        return Err(format!("node {} gave up", ctx.pid()));
                    }
                    loop {
                        sync(ctx)?;
                    }
                })
            })
            .map(|out: hbsp::RunOutput<()>| out.elapsed_s)
            .unwrap_err()
            .to_string();
            assert!(err.contains("node 2 gave up"), "{lanes} lanes: {err}");
        }
    }
}

/// Uneven exchanges, declared work, a phase, an allreduce and broadcasts of both algorithms
/// from roots other than 0 on ten nodes of uneven speeds.
fn exchanges(backend: &Backend) -> hbsp::RunOutput<u64> {
    hbsp::run(backend, &machine(&common::uneven(10)), |ctx| {
        for step in 0..5u32 {
            ctx.charge_work(1e3 * (ctx.pid() + step as usize) as f64)?;
            let to = (ctx.pid() + step as usize + 1) % ctx.nprocs();
            ctx.send(to, step, &vec![step; 100 * (ctx.pid() + 1)])?;
            ctx.sync()?;
            let got: usize = ctx.recv_all::<u32>()?.iter().map(|m| m.data.len()).sum();
            assert!(got > 0);
        }
        let all = ctx.phase("sum", |ctx| {
            collectives::allreduce(ctx, &[ctx.pid() as u64], |a, b| a + b)
        })?;
        let mut checksum = all.value[0];
        for (root, algorithm) in [
            (3, BroadcastAlgorithm::OnePhase),
            (7, BroadcastAlgorithm::TwoPhase),
            (9, BroadcastAlgorithm::TwoPhase),
        ] {
            let data: Vec<u64> = (0..1001).map(|i| i * (root as u64 + 1)).collect();
            let got = collectives::broadcast(ctx, Root::Pid(root), &data, algorithm)?.value;
            assert_eq!(got, data);
            checksum += got.iter().sum::<u64>();
        }
        Ok::<_, HbspError>(checksum)
    })
    .unwrap()
}

#[test]
fn skeleton_execution_skips_blocks_and_charges_work() {
    let m = machine(&[100.0, 100.0]);
    let options = SimOptions {
        skip_compute: true,
        work: hbsp::WorkCharge::Declared,
        ..SimOptions::default()
    };
    for backend in common::sim_engines(options) {
        let out = hbsp::run(&backend, &m, |ctx| {
            let ran = ctx.compute(5e8, || {
                std::thread::sleep(std::time::Duration::from_secs(5));
                true
            })?;
            Ok::<_, HbspError>(ran)
        })
        .unwrap();
        assert!(out.compute_skipped);
        assert_eq!(out.results, vec![false, false]);
        assert!(close(out.elapsed_s, 5.0));
    }
}

#[test]
fn undeclared_compute_is_charged_by_cpu_time() {
    let m = machine(&[100.0, 10.0]);
    for backend in common::sim() {
        let out = hbsp::run(&backend, &m, |ctx| {
            let mut x = 0u64;
            for i in 0..3_000_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            std::hint::black_box(x);
            ctx.sync()?;
            Ok::<_, HbspError>(())
        })
        .unwrap();
        // The slow node's host CPU time is scaled by 100 / 10, so the superstep takes > 0.
        assert!(out.costs[0].compute_s > 0.0);
    }
}

#[test]
fn a_failing_node_ends_the_simulation() {
    for backend in common::sim_declared() {
        let out = within_5s(move || {
            hbsp::run(&backend, &ucf(8), |ctx| {
                if ctx.pid() == 5 {
                    panic!("disk on fire");
                }
                loop {
                    ctx.sync()?;
                }
                #[allow(unreachable_code)]
                Ok::<_, HbspError>(())
            })
        });
        let err = out.unwrap_err().to_string();
        assert!(err.contains("disk on fire") && err.contains('5'), "{err}");
    }
}

#[test]
fn work_on_a_platform_without_operation_rates_is_an_error() {
    for backend in common::sim_declared() {
        let err = hbsp::run(&backend, &ucf(2), |ctx| ctx.compute(1.0, || ())).unwrap_err();
        assert!(err.to_string().contains("speed_unit"), "{err}");
    }
}

#[test]
fn thousands_of_virtual_nodes() {
    let platform = common::platform(&vec![10.0; 4096]);
    for p in [1024, 4096] {
        let m = platform.select(&p.to_string().parse().unwrap()).unwrap();
        let options = SimOptions {
            no_trace: true,
            work: hbsp::WorkCharge::Declared,
            ..SimOptions::default()
        };
        for backend in common::sim_engines(options) {
            let out = hbsp::run(&backend, &m, |ctx| {
                let right = (ctx.pid() + 1) % ctx.nprocs();
                for _ in 0..3 {
                    ctx.send(right, 0, &[1u64; 4])?;
                    ctx.sync()?;
                    assert_eq!(ctx.recv_all::<u64>()?.len(), 1);
                }
                Ok::<_, HbspError>(())
            })
            .unwrap();
            assert!(
                close(out.elapsed_s, 3.0 * (1e-9 * 32.0 * out_r_max(&m) + 1e-5)),
                "p={p}"
            );
        }
    }
}

fn out_r_max(m: &Machine) -> f64 {
    m.nodes().iter().map(|n| n.r).fold(0.0, f64::max)
}

/// More nodes than this process may map stacks for: refused before any is mapped, in one
/// line naming the limit (it failed halfway, at the first stack the kernel refused).
#[test]
fn more_nodes_than_stacks_can_map_are_refused() {
    let Some(most) = hbsp::backend::coroutines::max_nodes() else {
        return; // Not Linux: the limit is unknown.
    };
    let m = common::platform(&vec![10.0; most + 1]).all().unwrap();
    for backend in common::sim() {
        let err = hbsp::run(&backend, &m, |_| Ok::<_, HbspError>(())).unwrap_err();
        assert!(err.is_refusal(), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "sim on {} nodes needs {} memory mappings for their stacks but this machine \
                 allows {most} nodes (vm.max_map_count): use at most {most} nodes",
                most + 1,
                2 * (most + 1)
            )
        );
    }
}
