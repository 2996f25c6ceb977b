//! Prints the one-thread DGEMM speed of this host at n = 1024 (best of 10), the marked speed
//! the matrix kernels earn here. `cargo run --release -p hetscale-kernels --example dgemm_speed`

fn main() {
    let n = 1024;
    let flops = hetscale_kernels::measure_dgemm_speed(n, 10);
    println!(
        "faer dgemm n={n} one thread: {:.2} Gflop/s (best of 10)",
        flops / 1e9
    );
}
