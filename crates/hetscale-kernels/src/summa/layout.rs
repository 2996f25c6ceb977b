//! SUMMA data layouts: the four strategies of Kalinov section 4 as partitioners.
//!
//! A [`Layout`] places a logical `P x Q` grid of processes on the nodes and cuts the `N x N`
//! matrices `A`, `B` and `C` (all laid out alike) into one rectangle per process: grid column
//! `j` owns the columns `col_bounds[j]..col_bounds[j+1]`, and process `(i, j)` the rows
//! `row_bounds[j][i]..row_bounds[j][i+1]` of them. In a *true grid* every column has the same
//! row bounds. Each partitioner reports its load-balance efficiency
//! ([`crate::partition::load_balance_efficiency`] of the nodes' areas against their marked
//! speeds).
//!
//! | strategy | processes | data | algorithm and source |
//! |---|---|---|---|
//! | `hoho` | one per node, `P Q = p` | even: rows and columns split in `P` and `Q` near-equal parts | Kalinov section 3 (plain SUMMA, van de Geijn & Watts 1997) |
//! | `heho` | on a near-square `P x Q` grid of about `sum round(C_l / C_min)` processes (`heho_grid`), `g_l` in proportion to speed (`heho_hosts`) | even over the processes | Kalinov section 4.1, after Kalinov & Lastovetsky (JPDC 2001): logical processes are dealt to nodes in row-major grid order, node 0's `g_0` first |
//! | `hohe1` | one per node, pid `i Q + j` at `(i, j)` | column widths in proportion to each grid column's total speed, then rows within each column in proportion to its processes' speeds (not a true grid) | Kalinov section 4.2, after Kalinov (1999) and Beaumont et al. column-based tiling (IEEE TPDS 2001) |
//! | `hohe2` | one per node, sorted by decreasing speed in row-major order | heterogeneous true grid: row heights `h_i`, column widths `w_j` | Kalinov section 4.3; arrangement after Beaumont, Boudet, Petitet, Rastello & Robert (IEEE TC 2001), who show speeds sorted along rows and columns are the right shape; `h`, `w` by alternating balancing (below) |
//!
//! HoHe2's balancing: with grid speeds `s_ij`, start from `w_j` proportional to column sums
//! and repeat 100 times `h_i = min_j s_ij / w_j`, `w_j = min_i s_ij / h_i` (each normalised
//! to sum 1). Each half-step equalises the slowest process time along one dimension, so the
//! worst time `max_ij h_i w_j / s_ij` never rises; the best pair seen is kept and rounded to
//! whole rows and columns by the largest-remainder method. For a rank-one speed matrix it is
//! exact after one step.
//!
//! All integer splits use [`hetscale_model::hbsp::integer_shares`] (largest remainder), so
//! blocks may be empty when `N` is small; the algorithm handles empty blocks.

use std::collections::BinaryHeap;
use std::ops::Range;

use hetscale_model::hbsp::integer_shares;
use hetscale_model::summa::{Processors, Strategy};
use serde::Serialize;

use crate::error::{Result, invalid};
use crate::partition::{check_speeds, load_balance_efficiency};

/// Where every logical process of the grid runs and which block of the matrices it owns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layout {
    /// The strategy that made it.
    pub strategy: Strategy,
    /// `(P, Q)`: process rows and columns.
    pub grid: (usize, usize),
    /// `Q + 1` column boundaries.
    pub col_bounds: Vec<usize>,
    /// For each grid column, its `P + 1` row boundaries.
    pub row_bounds: Vec<Vec<usize>>,
    /// Pid that runs logical process `i Q + j`.
    pub host: Vec<usize>,
    /// Load-balance efficiency on the nodes' marked speeds (1 = perfect).
    pub efficiency: f64,
}

impl Layout {
    /// Number of logical processes `P Q`.
    pub fn processes(&self) -> usize {
        self.grid.0 * self.grid.1
    }

    /// Grid position `(i, j)` of logical process `q`.
    pub fn position(&self, q: usize) -> (usize, usize) {
        (q / self.grid.1, q % self.grid.1)
    }

    /// Logical process at `(i, j)`.
    pub fn process(&self, i: usize, j: usize) -> usize {
        i * self.grid.1 + j
    }

    /// Rows owned by process `(i, j)`.
    pub fn rows(&self, i: usize, j: usize) -> Range<usize> {
        self.row_bounds[j][i]..self.row_bounds[j][i + 1]
    }

    /// Columns owned by grid column `j`.
    pub fn cols(&self, j: usize) -> Range<usize> {
        self.col_bounds[j]..self.col_bounds[j + 1]
    }

    /// Whether every grid column has the same row boundaries.
    pub fn is_true_grid(&self) -> bool {
        self.row_bounds.windows(2).all(|w| w[0] == w[1])
    }

    /// Elements of `C` each node owns.
    pub fn area_per_node(&self, p: usize) -> Vec<f64> {
        let mut area = vec![0.0; p];
        for q in 0..self.processes() {
            let (i, j) = self.position(q);
            area[self.host[q]] += self.rows(i, j).len() as f64 * self.cols(j).len() as f64;
        }
        area
    }

    fn rated(mut self, speeds: &[f64]) -> Self {
        self.efficiency = load_balance_efficiency(&self.area_per_node(speeds.len()), speeds);
        self
    }
}

/// The near-square grid for `p` processes: `P` the largest divisor of `p` with `P <= sqrt p`.
pub fn default_grid(p: usize) -> (usize, usize) {
    let rows = (1..=p)
        .take_while(|d| d * d <= p)
        .filter(|d| p % d == 0)
        .last()
        .unwrap_or(1);
    (rows, p / rows.max(1))
}

/// The layout of `strategy` for `N x N` matrices on nodes of marked speeds `speeds`; `grid`
/// defaults to [`default_grid`] of the nodes, HeHo's to `heho_grid`.
pub fn partition(
    strategy: Strategy,
    n: usize,
    speeds: &[f64],
    grid: Option<(usize, usize)>,
) -> Result<Layout> {
    check_speeds(speeds)?;
    crate::error::check_size("N", n, 1)?;
    let nodes = speeds.len();
    let layout = match strategy {
        Strategy::HeHo => {
            let grid = match grid {
                Some(grid) => grid,
                None => heho_grid(speeds)?,
            };
            check_heho_grid(grid, nodes)?;
            even(strategy, n, grid, heho_hosts(speeds, grid.0 * grid.1))
        }
        _ => {
            let grid = grid.unwrap_or_else(|| default_grid(nodes));
            check_grid(grid, nodes)?;
            match strategy {
                Strategy::HoHe1 => hohe1(n, speeds, grid)?,
                Strategy::HoHe2 => hohe2(n, speeds, grid)?,
                _ => even(strategy, n, grid, (0..nodes).collect()),
            }
        }
    };
    Ok(layout.rated(speeds))
}

fn check_grid((rows, cols): (usize, usize), processes: usize) -> Result<()> {
    if rows.checked_mul(cols) == Some(processes) && rows > 0 {
        return Ok(());
    }
    let (p, q) = default_grid(processes);
    Err(invalid(format!(
        "a {rows}x{cols} grid does not fit {processes} nodes: choose P x Q = {processes}, e.g. {p}x{q}"
    )))
}

/// A HeHo grid needs a process per node at least, and no more processes than HeHo allows.
fn check_heho_grid((rows, cols): (usize, usize), nodes: usize) -> Result<()> {
    let limit = MAX_HEHO_PROCESSES.max(nodes);
    match rows.checked_mul(cols) {
        Some(processes) if rows > 0 && processes >= nodes && processes <= limit => Ok(()),
        _ => Err(invalid(format!(
            "a {rows}x{cols} grid does not fit HeHo on {nodes} nodes: choose P x Q between {nodes} (one process per node) and {limit}"
        ))),
    }
}

/// HeHo's grid as Kalinov section 4.1 takes it, `P = Q = sqrt(p_h)`: the near-square
/// `P x Q` with `P = floor(sqrt S)`, `Q = floor(S / P)` for the `S = sum round(C_l / C_min)`
/// processes speed asks for. Rounding down never gives a node more processes than its speed
/// share (a process more would slow the slowest process); the exact count `S` is often prime,
/// and its only grid, `1 x S`, sends every panel around a ring of `S` processes. When that
/// leaves fewer processes than nodes (nearly equal speeds), `S`'s own grid.
fn heho_grid(speeds: &[f64]) -> Result<(usize, usize)> {
    let wanted: usize = heho_processes(speeds)?.iter().sum();
    let rows = wanted.isqrt().max(1);
    let cols = wanted / rows;
    Ok(if rows * cols >= speeds.len() {
        (rows, cols)
    } else {
        default_grid(wanted)
    })
}

/// The most logical processes a HeHo layout may have beyond one per node. Each superstep of
/// the pipeline visits every process once per panel in flight, so the bookkeeping grows as
/// processes times grid side, and `g_l = round(C_l / C_min)` grows without bound with the
/// speed ratio (a 1e9-fold ratio asked for a billion processes and an 8 GB allocation).
pub const MAX_HEHO_PROCESSES: usize = 16_384;

/// `g_l = round(C_l / C_min)` per node, refused when their sum exceeds
/// [`MAX_HEHO_PROCESSES`] (or `p`, on a machine of more nodes than that).
fn heho_processes(speeds: &[f64]) -> Result<Vec<usize>> {
    let slowest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
    // Summed in floating point: the counts themselves may not fit a usize.
    let total: f64 = speeds.iter().map(|s| (s / slowest).round().max(1.0)).sum();
    let limit = MAX_HEHO_PROCESSES.max(speeds.len());
    if total > limit as f64 {
        let fastest = speeds.iter().copied().fold(0.0, f64::max);
        return Err(invalid(format!(
            "HeHo would run {total:.3e} logical processes (g_l = round(C_l / C_min), the speeds differ {:.3e}-fold), more than {limit}: use strategy hohe1 or hohe2, or leave the slowest nodes out",
            fastest / slowest
        )));
    }
    Ok(Processors::new(speeds.to_vec())?.heho_processes())
}

/// Logical process `q` (row-major) runs on node `l` for `g_0 + ... + g_{l-1} <= q < ... + g_l`,
/// where `processes` are dealt one per node and then each to the node whose processes would
/// stay fastest, `C_l / (g_l + 1)` (D'Hondt's method): the slowest process is as fast as
/// whole processes allow, which is HeHo's `r'_min` (Kalinov section 4.1).
fn heho_hosts(speeds: &[f64], processes: usize) -> Vec<usize> {
    let mut counts = vec![1usize; speeds.len()];
    let mut next: BinaryHeap<Candidate> = speeds
        .iter()
        .enumerate()
        .map(|(pid, &speed)| Candidate::after(pid, speed, 1))
        .collect();
    for _ in speeds.len()..processes {
        let Some(best) = next.pop() else { break };
        counts[best.pid] += 1;
        next.push(Candidate::after(
            best.pid,
            speeds[best.pid],
            counts[best.pid],
        ));
    }
    counts
        .iter()
        .enumerate()
        .flat_map(|(pid, &g)| std::iter::repeat_n(pid, g))
        .collect()
}

/// A node's claim to one more HeHo process: the speed each of its processes would have.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    per_process: f64,
    pid: usize,
}

impl Candidate {
    fn after(pid: usize, speed: f64, processes: usize) -> Self {
        Self {
            per_process: speed / (processes + 1) as f64,
            pid,
        }
    }
}

impl Eq for Candidate {}

impl Ord for Candidate {
    /// Highest speed per process first; ties to the lower pid.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.per_process
            .total_cmp(&other.per_process)
            .then(other.pid.cmp(&self.pid))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

fn bounds(n: usize, weights: &[f64]) -> Result<Vec<usize>> {
    let counts = integer_shares(n, weights)?;
    Ok(std::iter::once(0)
        .chain(counts.iter().scan(0, |acc, &c| {
            *acc += c;
            Some(*acc)
        }))
        .collect())
}

fn even(strategy: Strategy, n: usize, (rows, cols): (usize, usize), host: Vec<usize>) -> Layout {
    let row_bounds = bounds(n, &vec![1.0; rows]).expect("equal weights");
    Layout {
        strategy,
        grid: (rows, cols),
        col_bounds: bounds(n, &vec![1.0; cols]).expect("equal weights"),
        row_bounds: vec![row_bounds; cols],
        host,
        efficiency: 0.0,
    }
}

fn hohe1(n: usize, speeds: &[f64], (rows, cols): (usize, usize)) -> Result<Layout> {
    let at = |i: usize, j: usize| speeds[i * cols + j];
    let column_speed: Vec<f64> = (0..cols)
        .map(|j| (0..rows).map(|i| at(i, j)).sum())
        .collect();
    let row_bounds = (0..cols)
        .map(|j| bounds(n, &(0..rows).map(|i| at(i, j)).collect::<Vec<_>>()))
        .collect::<Result<_>>()?;
    Ok(Layout {
        strategy: Strategy::HoHe1,
        grid: (rows, cols),
        col_bounds: bounds(n, &column_speed)?,
        row_bounds,
        host: (0..speeds.len()).collect(),
        efficiency: 0.0,
    })
}

fn hohe2(n: usize, speeds: &[f64], (rows, cols): (usize, usize)) -> Result<Layout> {
    let mut host: Vec<usize> = (0..speeds.len()).collect();
    host.sort_by(|&a, &b| speeds[b].total_cmp(&speeds[a]).then(a.cmp(&b)));
    let grid_speed: Vec<f64> = host.iter().map(|&pid| speeds[pid]).collect();
    let (heights, widths) = balance_true_grid(&grid_speed, rows, cols);
    let row_bounds = bounds(n, &heights)?;
    Ok(Layout {
        strategy: Strategy::HoHe2,
        grid: (rows, cols),
        col_bounds: bounds(n, &widths)?,
        row_bounds: vec![row_bounds; cols],
        host,
        efficiency: 0.0,
    })
}

/// Row heights and column widths (each summing to 1) minimising `max_ij h_i w_j / s_ij` by
/// alternating balancing; `s` is the row-major `rows x cols` grid of speeds.
fn balance_true_grid(s: &[f64], rows: usize, cols: usize) -> (Vec<f64>, Vec<f64>) {
    let at = |i: usize, j: usize| s[i * cols + j];
    let normalise = |v: Vec<f64>| {
        let total: f64 = v.iter().sum();
        v.into_iter().map(|x| x / total).collect::<Vec<f64>>()
    };
    let worst = |h: &[f64], w: &[f64]| {
        (0..rows)
            .flat_map(|i| (0..cols).map(move |j| (i, j)))
            .map(|(i, j)| h[i] * w[j] / at(i, j))
            .fold(0.0, f64::max)
    };
    let mut w = normalise(
        (0..cols)
            .map(|j| (0..rows).map(|i| at(i, j)).sum())
            .collect(),
    );
    let mut h = normalise(
        (0..rows)
            .map(|i| (0..cols).map(|j| at(i, j)).sum())
            .collect(),
    );
    let mut best = (worst(&h, &w), h.clone(), w.clone());
    for _ in 0..100 {
        h = normalise(
            (0..rows)
                .map(|i| {
                    (0..cols)
                        .map(|j| at(i, j) / w[j])
                        .fold(f64::INFINITY, f64::min)
                })
                .collect(),
        );
        w = normalise(
            (0..cols)
                .map(|j| {
                    (0..rows)
                        .map(|i| at(i, j) / h[i])
                        .fold(f64::INFINITY, f64::min)
                })
                .collect(),
        );
        let t = worst(&h, &w);
        if t < best.0 {
            best = (t, h.clone(), w.clone());
        }
    }
    (best.1, best.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(layout: &Layout, n: usize) {
        assert_eq!(layout.col_bounds.last(), Some(&n));
        assert!(layout.row_bounds.iter().all(|b| b.last() == Some(&n)));
        let total: f64 = layout
            .area_per_node(*layout.host.iter().max().unwrap() + 1)
            .iter()
            .sum();
        assert_eq!(total, (n * n) as f64);
    }

    #[test]
    fn every_strategy_tiles_the_matrix() {
        let speeds = [4.0, 1.0, 2.0, 1.0, 3.0, 1.0];
        for strategy in Strategy::ALL {
            for n in [1, 5, 37] {
                let layout = partition(strategy, n, &speeds, None).unwrap();
                covers(&layout, n);
                assert!(layout.efficiency > 0.0 && layout.efficiency <= 1.0 + 1e-12);
            }
        }
    }

    #[test]
    fn heterogeneous_strategies_beat_hoho_on_a_heterogeneous_machine() {
        let speeds = [4.0, 1.0, 2.0, 1.0, 3.0, 1.0];
        let eff = |s| partition(s, 600, &speeds, None).unwrap().efficiency;
        let hoho = eff(Strategy::HoHo);
        assert!(
            (hoho - 0.5).abs() < 1e-9,
            "HoHo is paced by the slowest: {hoho}"
        );
        assert!(eff(Strategy::HoHe1) > 0.99);
        assert!(eff(Strategy::HeHo) > 0.99);
        assert!(eff(Strategy::HoHe2) > hoho);
    }

    #[test]
    fn hohe2_is_exact_for_rank_one_speeds() {
        // Sorted into the grid [[6, 3], [2, 1]] = u v^T with u = (3, 1), v = (2, 1).
        let speeds = [6.0, 2.0, 3.0, 1.0];
        let layout = partition(Strategy::HoHe2, 1200, &speeds, Some((2, 2))).unwrap();
        assert!(layout.is_true_grid());
        assert!(layout.efficiency > 0.999, "{}", layout.efficiency);
        assert_eq!(layout.host, vec![0, 2, 1, 3]);
        assert_eq!(layout.row_bounds[0], vec![0, 900, 1200]);
        assert_eq!(layout.col_bounds, vec![0, 800, 1200]);
    }

    #[test]
    fn hohe1_is_not_a_true_grid_but_hohe2_is() {
        let speeds = [4.0, 1.0, 1.0, 4.0];
        assert!(
            !partition(Strategy::HoHe1, 100, &speeds, Some((2, 2)))
                .unwrap()
                .is_true_grid()
        );
        assert!(
            partition(Strategy::HoHe2, 100, &speeds, Some((2, 2)))
                .unwrap()
                .is_true_grid()
        );
    }

    #[test]
    fn heho_hosts_several_processes_per_fast_node() {
        let layout = partition(Strategy::HeHo, 64, &[3.0, 1.0], None).unwrap();
        assert_eq!(layout.grid, (2, 2));
        assert_eq!(layout.host, vec![0, 0, 0, 1]);
        assert!((layout.efficiency - 1.0).abs() < 1e-12);
    }

    #[test]
    fn heho_takes_a_near_square_grid_when_its_process_count_is_prime() {
        // 64 nodes cycling 4, 1, 2: round(C_l / C_min) sums to 151, a prime (grid 1x151).
        let speeds: Vec<f64> = (0..64).map(|i| [4.0, 1.0, 2.0][i % 3]).collect();
        let layout = partition(Strategy::HeHo, 1200, &speeds, None).unwrap();
        assert_eq!(layout.grid, (12, 12));
        let per_node = |pid| layout.host.iter().filter(|&&h| h == pid).count();
        // 144 processes: the 7 fewer than 151 come off the last fast and middle nodes, so no
        // process is slower than a slow node's one.
        assert_eq!((per_node(0), per_node(1), per_node(2)), (4, 1, 2));
        assert_eq!((per_node(60), per_node(61), per_node(62)), (3, 1, 1));
        assert_eq!((0..64).filter(|&pid| per_node(pid) == 4).count(), 18);
        assert!(layout.efficiency > 0.95, "{}", layout.efficiency);
        // A grid asked for is kept if it gives every node a process.
        let asked = partition(Strategy::HeHo, 1200, &speeds, Some((8, 10))).unwrap();
        assert_eq!(asked.processes(), 80);
        let err = partition(Strategy::HeHo, 1200, &speeds, Some((7, 9)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("choose P x Q between 64 (one process per node) and 16384"),
            "{err}"
        );
    }

    #[test]
    fn heho_refuses_a_process_count_the_speed_ratio_blows_up() {
        // 1e9-fold: a billion logical processes (this aborted allocating 8 GB).
        let err = partition(Strategy::HeHo, 64, &[1e9, 1.0], None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("HeHo would run 1.000e9 logical processes")
                && err.contains("use strategy hohe1 or hohe2")
                && !err.contains('\n'),
            "{err}"
        );
        assert!(partition(Strategy::HeHo, 64, &[f64::MAX, 1e-300], None).is_err());
        // Right at the limit it still runs; other strategies never multiply processes.
        let at_limit = [(MAX_HEHO_PROCESSES - 1) as f64, 1.0];
        assert_eq!(
            partition(Strategy::HeHo, 8, &at_limit, None)
                .unwrap()
                .processes(),
            MAX_HEHO_PROCESSES
        );
        assert!(partition(Strategy::HeHo, 8, &[MAX_HEHO_PROCESSES as f64, 1.0], None).is_err());
        assert_eq!(
            partition(Strategy::HoHe2, 64, &[1e9, 1.0], None)
                .unwrap()
                .processes(),
            2
        );
    }

    #[test]
    fn bad_grids_say_what_fits() {
        let err = partition(Strategy::HoHo, 8, &[1.0; 6], Some((2, 2)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("choose P x Q = 6, e.g. 2x3"), "{err}");
        // P Q overflowing usize is a grid that does not fit, not a wrapped product.
        let huge = 1usize << 33;
        let err = partition(Strategy::HoHo, 8, &[1.0; 6], Some((huge, huge)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("choose P x Q = 6"), "{err}");
        assert_eq!(default_grid(7), (1, 7));
        assert_eq!(default_grid(12), (3, 4));
    }
}
