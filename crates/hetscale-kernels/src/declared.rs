//! The communication a program hetscale did not write declares, charged on a machine as the
//! kernels' own models are charged (the crate's `charges` module): so a user's MPI program gets
//! the probed machine's point-to-point costs, `L(p)` and message stall, as hetscale's kernels do.
//!
//! A program declares steps, each a count of identical supersteps of one pattern moving a
//! number of bytes per message (the study crate parses `100*neighbours(8*n)` into one). Every
//! step is an HBSP^1 superstep (it ends in the machine's `L(p)`, plus the probed stall when a
//! message moves), or a measured collective where the platform lists one under the pattern's
//! collective name. What each pattern sends, with `m` the step's bytes and ranks in the
//! machine's order:
//!
//! | pattern      | traffic                                                          |
//! |--------------|------------------------------------------------------------------|
//! | `neighbours` | rank `j` sends `m` to `j - 1` and to `j + 1`, where they exist     |
//! | `alltoall`   | every rank sends `m` to every other                              |
//! | `broadcast`  | rank 0 sends `m` to every other (one phase)                      |
//! | `scatter`    | rank 0 sends `m` to every other                                  |
//! | `gather`     | every other rank sends `m` to rank 0                             |
//! | `allreduce`  | a vector of `m` bytes reduced in two phases (its pieces to their owners, then the reduced pieces to all) |
//!
//! ```
//! use hetscale_kernels::declared::{Pattern, Step, communication_s};
//!
//! let machine = hbsp::Platform::load("ncube2")?.select(&"4".parse()?)?;
//! let halo = Step { count: 100.0, pattern: Pattern::Neighbours, bytes: 8.0 * 1024.0 };
//! let one = Step { count: 1.0, ..halo };
//! let t = communication_s(&[halo], &machine)?;
//! assert!((t - 100.0 * communication_s(&[one], &machine)?).abs() < 1e-12 * t);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use hbsp::Machine;
use hetscale_model::hbsp::Traffic;

use crate::charges::{self, Charges, IDLE};
use crate::error::{KernelError, Result};

/// What one declared superstep sends (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// A 1-D halo exchange: each rank with the ranks beside it.
    Neighbours,
    /// Every rank to every other.
    Alltoall,
    /// Rank 0 to every other, one phase.
    Broadcast,
    /// Rank 0 a piece to every other.
    Scatter,
    /// Every other rank a piece to rank 0.
    Gather,
    /// A vector reduced onto every rank.
    Allreduce,
}

impl Pattern {
    /// Every pattern, in the order the module's table gives them.
    pub const ALL: [Pattern; 6] = [
        Pattern::Neighbours,
        Pattern::Alltoall,
        Pattern::Broadcast,
        Pattern::Scatter,
        Pattern::Gather,
        Pattern::Allreduce,
    ];

    /// The name a declaration writes.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Neighbours => "neighbours",
            Pattern::Alltoall => "alltoall",
            Pattern::Broadcast => "broadcast",
            Pattern::Scatter => "scatter",
            Pattern::Gather => "gather",
            Pattern::Allreduce => "allreduce",
        }
    }

    /// The pattern named `name`, if any.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The collective whose measured cost (`hetscale probe`) stands for it, if it is one.
    fn collective(self) -> Option<&'static str> {
        match self {
            Pattern::Neighbours => None,
            Pattern::Alltoall => Some("alltoallv"),
            Pattern::Broadcast => Some("broadcast"),
            Pattern::Scatter => Some("scatterv"),
            Pattern::Gather => Some("gatherv"),
            Pattern::Allreduce => Some("allreduce"),
        }
    }

    /// The traffic of each superstep the pattern makes on `p` ranks, `m` bytes a message.
    fn traffic(self, p: usize, m: f64, machine: &Machine) -> Vec<Traffic> {
        let mut t = Traffic::idle(p);
        match self {
            Pattern::Neighbours => {
                for j in 1..p {
                    t.add(j, j - 1, m);
                    t.add(j - 1, j, m);
                }
            }
            Pattern::Alltoall => t = Traffic::each_to_all(&vec![m; p], None),
            Pattern::Broadcast | Pattern::Scatter => (1..p).for_each(|k| t.add(0, k, m)),
            Pattern::Gather => (1..p).for_each(|k| t.add(k, 0, m)),
            Pattern::Allreduce => {
                let items = (m / 8.0).ceil().max(1.0) as usize;
                return charges::allreduce(&machine.balanced_counts(items), 8.0).to_vec();
            }
        }
        vec![t]
    }
}

/// `count` identical supersteps of `pattern`, `bytes` in each message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// How many times the superstep is made (need not be whole: a mean).
    pub count: f64,
    /// What it sends.
    pub pattern: Pattern,
    /// Bytes per message.
    pub bytes: f64,
}

/// The seconds `steps` cost on `machine`: their traffic on its network (point-to-point ports
/// where it has `[[machine.p2p]]` segments, else `g h + o m`), `L(p)` and the message stall
/// per superstep, or a measured collective's cost. No compute: the program's work is its own.
pub fn communication_s(steps: &[Step], machine: &Machine) -> Result<f64> {
    let p = machine.p();
    let mut replay = Charges::new(machine);
    for step in steps {
        if !(step.count.is_finite() && step.count >= 0.0) {
            return Err(KernelError::InvalidInput(format!(
                "{} is made {} times: a count must be a finite number, not negative",
                step.pattern.name(),
                step.count
            )));
        }
        if !(step.bytes.is_finite() && step.bytes >= 0.0) {
            return Err(KernelError::InvalidInput(format!(
                "{} moves {} bytes a message: bytes must be a finite number, not negative",
                step.pattern.name(),
                step.bytes
            )));
        }
        replay.set_weight(step.count);
        let traffic = step.pattern.traffic(p, step.bytes, machine);
        for (phase, traffic) in traffic.iter().enumerate() {
            match step.pattern.collective() {
                Some(name) => replay.collective(name, phase, IDLE, traffic)?,
                None => replay.superstep(IDLE, traffic)?,
            }
        }
    }
    Ok(replay.communication())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nCUBE 2's first `p` nodes: `g`, `o` and `L(p)` of Sun & Rover, every `r_j` 1, no
    /// point-to-point segments and no stall.
    fn ncube(p: usize) -> Machine {
        let platform = hbsp::Platform::load("ncube2").expect("a preset");
        platform
            .select(&p.to_string().parse().expect("a count"))
            .expect("nodes")
    }

    fn one(pattern: Pattern, bytes: f64) -> Step {
        Step {
            count: 1.0,
            pattern,
            bytes,
        }
    }

    #[test]
    fn a_halo_costs_two_messages_each_way_on_an_interior_rank_and_one_barrier() {
        let machine = ncube(4);
        let (g, o, l) = (0.5e-6, 130e-6, machine.l_s());
        let m = 8192.0;
        let t = communication_s(&[one(Pattern::Neighbours, m)], &machine).unwrap();
        assert!((t - (g * 2.0 * m + o * 2.0 + l)).abs() < 1e-12, "{t}");
        // Two ranks: each sends and receives one message.
        let two = ncube(2);
        let t2 = communication_s(&[one(Pattern::Neighbours, m)], &two).unwrap();
        assert!((t2 - (g * m + o + two.l_s())).abs() < 1e-12, "{t2}");
        // One rank sends nothing and still ends its superstep.
        let t1 = communication_s(&[one(Pattern::Neighbours, m)], &ncube(1)).unwrap();
        assert!((t1 - ncube(1).l_s()).abs() < 1e-15, "{t1}");
    }

    #[test]
    fn a_gather_is_paced_by_the_root_taking_every_piece() {
        let machine = ncube(8);
        let m = 1000.0;
        let t = communication_s(&[one(Pattern::Gather, m)], &machine).unwrap();
        let expected = 0.5e-6 * 7.0 * m + 130e-6 * 7.0 + machine.l_s();
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
    }

    #[test]
    fn steps_add_and_a_count_multiplies() {
        let machine = ncube(4);
        let halo = one(Pattern::Neighbours, 800.0);
        let reduce = one(Pattern::Allreduce, 64.0);
        let each = |s: Step| communication_s(&[s], &machine).unwrap();
        let both = communication_s(
            &[
                Step {
                    count: 10.0,
                    ..halo
                },
                reduce,
            ],
            &machine,
        )
        .unwrap();
        assert!((both - (10.0 * each(halo) + each(reduce))).abs() < 1e-12);
        // An allreduce makes two supersteps, so it costs at least two barriers.
        assert!(each(reduce) >= 2.0 * machine.l_s());
    }

    #[test]
    fn a_negative_or_non_finite_step_is_refused_in_one_line() {
        let machine = ncube(2);
        for bad in [
            Step {
                count: -1.0,
                ..one(Pattern::Alltoall, 8.0)
            },
            one(Pattern::Broadcast, f64::NAN),
        ] {
            let err = communication_s(&[bad], &machine).unwrap_err().to_string();
            assert!(err.contains("not negative") && !err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn every_pattern_is_found_by_its_name() {
        for pattern in Pattern::ALL {
            assert_eq!(Pattern::named(pattern.name()), Some(pattern));
        }
        assert_eq!(Pattern::named("halo"), None);
    }
}
