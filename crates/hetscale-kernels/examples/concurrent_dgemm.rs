//! The speed of one node's `mm` share (1024 x 2048 x 2048) alone and with a second one
//! running at the same time in another thread, as the two nodes of `hetscale run mm --nodes 2`
//! do. It shows how much of a core each node really gets on this host.
//! `cargo run --release -p hetscale-kernels --example concurrent_dgemm`

use hetscale_kernels::local::gemm;

/// Gflop/s of one `m x k` by `k x n` product.
fn timed_product((m, n, k): (usize, usize, usize), b: &[f64]) -> f64 {
    let a: Vec<f64> = (0..m * k).map(|i| (i % 17) as f64 * 0.1).collect();
    let mut c = vec![0.0; m * n];
    let start = std::time::Instant::now();
    gemm((m, n, k), &a, b, &mut c, false);
    2.0 * (m * n * k) as f64 / start.elapsed().as_secs_f64() / 1e9
}

fn main() {
    let shape = (1024, 2048, 2048);
    let b: Vec<f64> = (0..shape.1 * shape.2)
        .map(|i| (i % 13) as f64 * 0.1)
        .collect();
    for _ in 0..3 {
        let alone = timed_product(shape, &b);
        let (x, y) = std::thread::scope(|s| {
            let other = s.spawn(|| timed_product(shape, &b));
            let mine = timed_product(shape, &b);
            (other.join().expect("no panic"), mine)
        });
        println!("alone {alone:.1} Gflop/s; two at once {x:.1} + {y:.1} Gflop/s");
    }
}
