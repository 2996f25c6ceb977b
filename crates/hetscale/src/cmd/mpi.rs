//! The MPI job a command runs in: `mpirun -np P hetscale run ... --backend mpi`.
//!
//! Without the cargo feature `mpi` this module only says how to get it.

use hbsp::{Backend, Machine, NodeSet, Platform};

/// Where the ranks' marked speeds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SpeedSource {
    /// The nodes `--nodes` selects from the platform, rank j = node j (as threads and sim).
    Nodes,
    /// Each rank's host name looked up among the platform's nodes.
    Host,
    /// Each rank runs the quick marked-speed benchmark at start-up.
    Bench,
}

/// MPI for this process, while a command runs on the mpi backend.
pub struct Job {
    #[cfg(feature = "mpi")]
    session: hbsp::MpiSession,
}

impl Job {
    /// Initialises MPI if `backend` is mpi; `None` for the other backends.
    pub fn start(backend: &Backend) -> anyhow::Result<Option<Job>> {
        if !matches!(backend, Backend::Mpi(_)) {
            return Ok(None);
        }
        #[cfg(feature = "mpi")]
        {
            Ok(Some(Job {
                session: hbsp::MpiSession::init()?,
            }))
        }
        #[cfg(not(feature = "mpi"))]
        anyhow::bail!(
            "this hetscale was built without MPI: build it with `cargo build --release -p hetscale --features mpi` (needs OpenMPI)"
        )
    }

    /// This process's rank; rank 0 prints and writes files.
    pub fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        return self.session.rank();
        #[cfg(not(feature = "mpi"))]
        0
    }

    /// Every rank's host name with its `values`, by rank (a collective call: every rank
    /// passes as many values, its own).
    pub fn gather_by_host(&self, values: &[f64]) -> anyhow::Result<Vec<(String, Vec<f64>)>> {
        #[cfg(feature = "mpi")]
        {
            let hosts = self.session.host_names()?;
            let columns: Vec<Vec<f64>> = values
                .iter()
                .map(|v| self.session.all_gather_f64(*v))
                .collect();
            Ok(hosts
                .into_iter()
                .enumerate()
                .map(|(rank, host)| (host, columns.iter().map(|c| c[rank]).collect()))
                .collect())
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = values;
            anyhow::bail!("this hetscale was built without MPI")
        }
    }

    /// The machine of this job: rank `j` is node `j` of the result.
    pub fn machine(
        &self,
        platform: &Platform,
        nodes: &NodeSet,
        source: SpeedSource,
    ) -> anyhow::Result<Machine> {
        #[cfg(feature = "mpi")]
        return Ok(match source {
            SpeedSource::Nodes => platform.select(nodes)?,
            SpeedSource::Host => self.session.machine_by_host(platform)?,
            SpeedSource::Bench => {
                let options = hetscale_study::speed::marked_speed::BenchOptions::quick();
                let speed = hetscale_study::speed::marked_speed::measure(&options)?.marked_speed;
                self.session.machine_measured(platform, speed)?
            }
        });
        #[cfg(not(feature = "mpi"))]
        {
            let _ = source;
            Ok(platform.select(nodes)?)
        }
    }
}
