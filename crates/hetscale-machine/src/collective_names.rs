//! The collectives' names (those `hbsp::collectives` implements), which platforms' measured
//! collective entries may name.

/// The name of every collective `hbsp::collectives` implements: what a platform's measured
/// `[[network.collective]]` and `[[machine.collective]]` entries may name.
pub const NAMES: [&str; 10] = [
    "broadcast",
    "scatter",
    "scatterv",
    "gather",
    "gatherv",
    "allgather",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
];
