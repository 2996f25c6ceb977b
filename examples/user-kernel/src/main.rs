//! `user-kernel`: the whole `hetscale` command line with the `dot` kernel added, e.g.
//! `cargo run -p user-kernel -- study examples/user-kernel/dot.toml`.

use std::process::ExitCode;

fn main() -> ExitCode {
    match user_kernel::registry() {
        Ok(registry) => hetscale::main_with(registry),
        Err(e) => {
            eprintln!("user-kernel: {e}");
            ExitCode::FAILURE
        }
    }
}
