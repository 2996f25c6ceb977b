//! Prints a platform file for this host whose nodes' marked speed is the measured one-thread
//! DGEMM speed (n = 1024, best of 10), one node per core:
//! `cargo run --release -p hetscale-kernels --example local_platform > local-measured.toml`
//! then `hetscale run mm --platform local-measured.toml --nodes 2 --n 2048`.

fn main() -> Result<(), hbsp::HbspError> {
    let mflops = hetscale_kernels::measure_dgemm_speed(1024, 10) / 1e6;
    let mut platform = hetscale_machine::presets::local(hetscale_machine::presets::cores());
    platform.name = "local-measured".into();
    platform.description = format!(
        "this host; marked_speed = one-thread faer DGEMM at n = 1024 ({mflops:.0} Mflop/s)"
    );
    platform
        .nodes
        .iter_mut()
        .for_each(|node| node.marked_speed = mflops);
    print!("{}", platform.to_toml_string()?);
    Ok(())
}
