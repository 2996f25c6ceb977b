//! # hetscale-kernels
//!
//! The papers' algorithms as verified HBSP programs: every kernel distributes its data in
//! proportion to the nodes' marked speeds, declares each block of local computation with its
//! exact operation count (`ctx.compute(ops, ...)`, so a simulator can charge `ops / C_j`),
//! runs unchanged on every `hbsp` backend and checks its result against a sequential
//! reference.
//!
//! ```
//! use hbsp::{Backend, Platform};
//! use hetscale_kernels::{Kernel, mm::MmKernel};
//!
//! // C = A B on three UCF workstations of different speeds, rows in proportion to speed.
//! let machine = Platform::load("ucf-cluster")?.select(&"3".parse()?)?;
//! let inputs = MmKernel.generate(50, 7)?;
//! let run = MmKernel.run(&inputs, &Backend::threads(), &machine)?;
//! assert!(run.verification.passed);
//! assert_eq!(run.work, 2.0 * 50f64.powi(3));
//! assert_eq!(run.result.shape, vec![50, 50]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | kernel | module | distribution | `W(N)` |
//! |---|---|---|---|
//! | matrix multiplication | [`mm`] | heterogeneous row blocks (JPDC 4.1.2) | `2 N^3` |
//! | Gaussian elimination | [`ge`] | heterogeneous row-cyclic (JPDC 4.1.1), partial or no pivoting | `2/3 N^3 - 1/2 N^2 - 19/6 N + 3` |
//! | 2D convolution | [`conv2d`] | heterogeneous row blocks, all-to-all transposes (JPDC 4.1.3) | `66 N^2 lg N + 21 N^2 + 84 N lg N` |
//! | SUMMA | [`summa`] | HoHo, HeHo, HoHe1, HoHe2 on a `P x Q` grid (Kalinov) | `2 N^3` |
//! | Burg AR fit | [`burg`] | series already in blocks, one shift and one global sum per order (Sun & Rover IV-B) | `10 K N - 4 K (K + 1)` |
//! | SLALOM radiosity | [`slalom`] | heterogeneous row-cyclic setup, then `ge`'s solve (Sun & Rover IV-C) | `18 (N^2 - sum_f n_f^2) + 2/3 N^3 + 3/2 N^2 + 5/6 N` |
//!
//! Each implements [`Kernel`]: name, `W(N)`, the exact count of its own operations, memory
//! per node, an overhead model `T_o(N, p, platform)` with sequential fraction, seeded inputs,
//! and `run`, which returns a [`KernelRun`] (time, work, result, [`Verification`]). Inputs and
//! results are [`Array`]s, which [`read_npy`] and [`write_npy`] move to and from `.npy`
//! files. Local computation is single-threaded: faer with `Par::Seq` ([`local::gemm`]) and
//! rustfft.

pub mod array;
pub mod burg;
mod charges;
pub mod conv2d;
pub mod declared;
mod error;
pub mod ge;
mod input;
pub mod kernel;
pub mod local;
pub mod matrix;
pub mod memory;
pub mod mm;
mod npy;
pub mod partition;
mod registry;
pub mod run_inputs;
pub mod slalom;
mod slalom_grid;
pub mod summa;
mod verify;

pub use array::{Array, ArrayData};
pub use error::{KernelError, Result};
pub use kernel::{
    Kernel, KernelRun, Overhead, Timed, Verification, flops_per_unit, inputs_for, root_result,
    size_only, size_only_n, skeleton, skeleton_size, speeds, timed_run,
};
pub use local::measure_dgemm_speed;
pub use matrix::{ComplexMatrix, Matrix};
pub use npy::{read_npy, write_npy};
pub use registry::{KernelFactory, KernelOptions, KernelRegistry, kernel_by_name, parse_grid};

/// The largest problem size `N` the kernels' models take: sizes are `f64` in the models and
/// the root finding, which represent every integer exactly up to `2^53`.
pub const MAX_N: u64 = 1 << 53;

/// The kernels' names, as the command line spells them.
pub const KERNEL_NAMES: [&str; 6] = ["mm", "ge", "conv2d", "summa", "burg", "slalom"];
