//! The inputs of one run of a kernel (`hetscale run KERNEL`): generated from a seed or read
//! from `.npy` files, each refused, in one line, before it is made if the run cannot fit in
//! memory.

use std::path::PathBuf;

use hbsp::{Backend, Machine};

use crate::array::Array;
use crate::error::{Result, invalid};
use crate::kernel::{Kernel, inputs_for};
use crate::memory::{check_fits, check_run_fits, run_memory};
use crate::npy::read_npy;

/// Where a run's inputs come from, and what the run holds beside them.
#[derive(Debug, Clone, Default)]
pub struct RunInputs {
    /// The problem size N; with `files`, it must match the first file's first dimension.
    pub n: Option<usize>,
    /// Input `.npy` files instead of generated data.
    pub files: Vec<PathBuf>,
    /// The seed of generated inputs.
    pub seed: u64,
    /// When the run's trace is exported (`--trace`, `--report`): the bytes the export takes
    /// per byte of trace, counted beside the run.
    pub export_per_trace_byte: Option<f64>,
}

impl RunInputs {
    /// The generated or read inputs of `kernel` on `machine` and `backend`, once the run is
    /// known to fit in memory (refused before anything is generated; read files are checked
    /// before the run multiplies them).
    pub fn make(
        &self,
        kernel: &dyn Kernel,
        machine: &Machine,
        backend: &Backend,
    ) -> Result<Vec<Array>> {
        if self.files.is_empty() {
            let n = self.n.ok_or_else(|| {
                invalid("give the problem size with --n N, or input files with --input")
            })?;
            self.check_fits(kernel, n, machine, backend)?;
            return inputs_for(kernel, n, self.seed, backend);
        }
        let arrays = self
            .files
            .iter()
            .map(read_npy)
            .collect::<Result<Vec<_>>>()?;
        if let (Some(n), Some(first)) = (self.n, arrays.first()) {
            if first.shape.first() != Some(&n) {
                return Err(invalid(format!(
                    "--n {n} does not match {}, whose shape is {:?}: drop --n or fix it",
                    first.name, first.shape
                )));
            }
        }
        if let Some(&n) = arrays.first().and_then(|a| a.shape.first()) {
            self.check_fits(kernel, n, machine, backend)?;
        }
        Ok(arrays)
    }

    /// Refuses, in one line, a run that does not fit, or whose trace export would not fit
    /// beside it.
    fn check_fits(
        &self,
        kernel: &dyn Kernel,
        n: usize,
        machine: &Machine,
        backend: &Backend,
    ) -> Result<()> {
        check_run_fits(kernel, n, machine, backend)?;
        let Some(per_trace_byte) = self.export_per_trace_byte else {
            return Ok(());
        };
        let export = per_trace_byte * kernel.trace_bytes(n, machine)?;
        let needed = run_memory(kernel, n, machine, backend)? + export;
        let what = format!(
            "{} at N = {n} on {} nodes with its trace exported",
            kernel.name(),
            machine.p()
        );
        check_fits(
            &what,
            needed,
            "drop --trace and --report, or use a smaller N or fewer nodes",
        )
    }
}
