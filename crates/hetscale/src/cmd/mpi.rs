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
                let options = hetscale_study::marked_speed::BenchOptions::quick();
                let speed = hetscale_study::marked_speed::measure(&options)?.marked_speed;
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
