//! Kernels by name: how the command line and study specs turn `"ge"` plus options into a
//! configured [`Kernel`], and how a user adds their own kernels ([`KernelRegistry`]).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::burg::{self, BurgKernel};
use crate::conv2d::Conv2dKernel;
use crate::error::{Result, invalid};
use crate::ge::GeKernel;
use crate::mm::MmKernel;
use crate::slalom::SlalomKernel;
use crate::summa::{SummaKernel, parse_strategy};
use crate::{KERNEL_NAMES, Kernel};

/// The options of the configurable kernels; each is ignored by kernels it does not apply to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KernelOptions {
    /// GE pivoting: `partial` or `none` (the paper's algorithm).
    pub pivoting: String,
    /// GE rows per block: 1 (the paper's row-cyclic program) or more (one broadcast of `b`
    /// pivot rows per block; needs pivoting `none`). Left out of the serialized options at
    /// 1, so specs and stored studies from before it read and compare as they did.
    #[serde(skip_serializing_if = "is_one")]
    pub block: usize,
    /// SUMMA strategy: `hoho`, `heho`, `hohe1` or `hohe2`.
    pub strategy: String,
    /// SUMMA grid `PxQ`; near-square when absent.
    pub grid: Option<String>,
    /// SUMMA panel width.
    pub nb: usize,
    /// Burg model order.
    pub order: usize,
    /// SLALOM layout: `rows` or `grid` (a square process grid).
    pub layout: String,
}

impl Default for KernelOptions {
    fn default() -> Self {
        Self {
            pivoting: "partial".into(),
            block: 1,
            strategy: "hoho".into(),
            grid: None,
            nb: 128,
            order: burg::DEFAULT_ORDER,
            layout: "rows".into(),
        }
    }
}

fn is_one(block: &usize) -> bool {
    *block == 1
}

/// Makes a configured kernel from the options a study spec or the command line gives.
pub type KernelFactory = Arc<dyn Fn(&KernelOptions) -> Result<Box<dyn Kernel>> + Send + Sync>;

/// The kernels a study spec or command line may name: the built-in ones and any a user adds.
///
/// ```
/// use hetscale_kernels::{Kernel, KernelRegistry, mm::MmKernel};
///
/// // A user kernel is any `Kernel`; here `mm` again under another name, for brevity.
/// let registry = KernelRegistry::builtin().with("my-mm", |_options| Ok(Box::new(MmKernel)))?;
/// assert_eq!(registry.get("my-mm", &Default::default())?.work(10), 2000.0);
/// assert!(registry.names().contains(&"ge".to_string()));
/// assert!(KernelRegistry::builtin().with("ge", |_| Ok(Box::new(MmKernel))).is_err());
/// # Ok::<(), hetscale_kernels::KernelError>(())
/// ```
#[derive(Clone, Default)]
pub struct KernelRegistry {
    added: Vec<(String, KernelFactory)>,
}

impl std::fmt::Debug for KernelRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelRegistry")
            .field("names", &self.names())
            .finish()
    }
}

impl KernelRegistry {
    /// The built-in kernels only ([`KERNEL_NAMES`]).
    pub fn builtin() -> Self {
        Self::default()
    }

    /// Adds the kernel `name`, made by `factory` from the options; `name` should be what the
    /// kernel's [`Kernel::name`] returns. A name already taken is refused.
    pub fn with(
        mut self,
        name: &str,
        factory: impl Fn(&KernelOptions) -> Result<Box<dyn Kernel>> + Send + Sync + 'static,
    ) -> Result<Self> {
        if name.trim().is_empty() || self.names().iter().any(|n| n == name) {
            return Err(invalid(format!(
                "kernel name \"{name}\" is empty or taken ({}): register it under another name",
                self.names().join(", ")
            )));
        }
        self.added.push((name.to_string(), Arc::new(factory)));
        Ok(self)
    }

    /// Every name this registry knows: the built-in kernels, then the added ones.
    pub fn names(&self) -> Vec<String> {
        KERNEL_NAMES
            .iter()
            .map(|n| n.to_string())
            .chain(self.added.iter().map(|(n, _)| n.clone()))
            .collect()
    }

    /// The kernel called `name`, configured with `options`.
    pub fn get(&self, name: &str, options: &KernelOptions) -> Result<Box<dyn Kernel>> {
        match self.added.iter().find(|(n, _)| n == name) {
            Some((_, factory)) => factory(options),
            None if KERNEL_NAMES.contains(&name) => kernel_by_name(name, options),
            None => Err(invalid(format!(
                "unknown kernel \"{}\": use one of {}",
                hetscale_out::echoed(name),
                self.names().join(", ")
            ))),
        }
    }
}

/// The built-in kernel called `name`, configured with `options`.
pub fn kernel_by_name(name: &str, options: &KernelOptions) -> Result<Box<dyn Kernel>> {
    Ok(match name {
        "mm" => Box::new(MmKernel),
        "ge" => {
            let ge = GeKernel {
                pivoting: options.pivoting.parse()?,
                block: options.block,
            };
            ge.check_options()?;
            Box::new(ge)
        }
        "conv2d" => Box::new(Conv2dKernel),
        "summa" => Box::new(SummaKernel {
            strategy: parse_strategy(&options.strategy)?,
            grid: options.grid.as_deref().map(parse_grid).transpose()?,
            nb: options.nb,
        }),
        "burg" => Box::new(BurgKernel {
            order: options.order,
        }),
        "slalom" => Box::new(SlalomKernel {
            layout: options.layout.parse()?,
        }),
        other => {
            return Err(invalid(format!(
                "unknown kernel \"{}\": use one of {}",
                hetscale_out::echoed(other),
                KERNEL_NAMES.join(", ")
            )));
        }
    })
}

/// Parses a SUMMA grid `PxQ`, e.g. `2x3`.
pub fn parse_grid(text: &str) -> Result<(usize, usize)> {
    let parsed = text
        .split_once(['x', 'X'])
        .and_then(|(p, q)| Some((p.trim().parse().ok()?, q.trim().parse().ok()?)));
    match parsed {
        Some((p, q)) if p > 0 && q > 0 => Ok((p, q)),
        _ => Err(invalid(format!(
            "grid \"{text}\" is not PxQ: write e.g. 2x3"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_and_unknown_names_are_listed() {
        for name in KERNEL_NAMES {
            assert_eq!(
                kernel_by_name(name, &KernelOptions::default())
                    .unwrap()
                    .name(),
                name
            );
        }
        // `unwrap_err` would need `dyn Kernel: Debug`.
        let Err(err) = kernel_by_name("fft", &KernelOptions::default()) else {
            panic!("\"fft\" is not a kernel");
        };
        let err = err.to_string();
        assert!(err.contains("fft") && err.contains("conv2d"), "{err}");
    }

    #[test]
    fn ge_blocks_need_one_row_and_no_pivoting() {
        let options = |pivoting: &str, block| KernelOptions {
            pivoting: pivoting.into(),
            block,
            ..KernelOptions::default()
        };
        assert!(kernel_by_name("ge", &options("none", 64)).is_ok());
        for (pivoting, block, says) in [
            ("none", 0, "block 0"),
            ("partial", 8, "partial pivoting needs block = 1"),
        ] {
            let Err(err) = kernel_by_name("ge", &options(pivoting, block)) else {
                panic!("{pivoting} with block {block} is refused");
            };
            let err = err.to_string();
            assert!(err.contains(says) && !err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn grids_parse_or_say_how_to_write_them() {
        assert_eq!(parse_grid("2x3").unwrap(), (2, 3));
        assert!(parse_grid("0x3").is_err());
        assert!(parse_grid("2-3").unwrap_err().to_string().contains("PxQ"));
    }
}
