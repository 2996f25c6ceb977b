//! `hetscale predict --runs` on large CSV files, side by side in one run: 1,000, 10,000 and
//! 100,000 runs of a long campaign (4 configurations of Sunwulf's SunBlades, 8 sizes each,
//! every size repeated), each fitted and bootstrapped for 16 SunBlades; the wall time of each
//! and its ratio to the smallest's. The fit's cost follows the points measured (a size on a
//! configuration), not their repetitions: what grows with the rows is reading them. Target:
//! 100,000 rows in under 10 s.
//!
//! `cargo bench -p hetscale --bench predict_runs` (arguments: the row counts, default
//! `1000 10000 100000`).

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

/// The configurations' SunBlade counts and the sizes measured on each.
const NODES: [usize; 4] = [1, 2, 4, 8];
const SIZES: [u64; 8] = [100, 150, 200, 300, 400, 600, 800, 1200];
/// A SunBlade's marked speed, flop/s.
const SUNBLADE_FLOPS: f64 = 20.29e6;

fn main() {
    let rows: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rows = if rows.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        rows
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut first = None;
    println!("{:>8}  {:>8}  {:>6}", "rows", "time (s)", "ratio");
    for count in rows {
        let csv = dir.path().join(format!("runs{count}.csv"));
        std::fs::write(&csv, runs_csv(count)).expect("the runs written");
        let start = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_hetscale"))
            .args(["predict", "--runs"])
            .arg(&csv)
            .args(["--work", "2*n^3", "--platform", "sunwulf"])
            .args(["--nodes", "sunblade:16", "--target", "0.5"])
            .output()
            .expect("hetscale runs");
        let seconds = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "{stderr}");
        let base = *first.get_or_insert(seconds);
        println!("{count:>8}  {seconds:>8.2}  {:>6.1}", seconds / base);
    }
}

/// `rows` runs (rounded down to whole repetitions of every size) of `T = W/C + 1e-6 n^2 p`,
/// `W = 2 n^3`, each repetition 2% from the law at most.
fn runs_csv(rows: usize) -> String {
    let repetitions = (rows / (NODES.len() * SIZES.len())).max(1);
    let mut noise = Lcg(7);
    // Numbered repetitions, as `hetscale export` writes them: no two rows are copies.
    let mut csv = String::from("configuration,nodes,kernel,n,repetition,time_s\n");
    for p in NODES {
        for n in SIZES {
            let x = n as f64;
            let law = 2.0 * x.powi(3) / (p as f64 * SUNBLADE_FLOPS) + 1e-6 * x * x * p as f64;
            for repetition in 0..repetitions {
                let time = law * (1.0 + 0.04 * (noise.unit() - 0.5));
                let _ = writeln!(csv, "C_{p},sunblade:{p},prog,{n},{repetition},{time:.6}");
            }
        }
    }
    csv
}

/// A small seeded generator: the same file every run.
struct Lcg(u64);

impl Lcg {
    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}
