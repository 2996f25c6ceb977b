#!/usr/bin/env bash
# hbsp's real-time figures side by side in one run, each with the load averages around it:
# hbsp on mpi against plain MPI (`mpi_bench`, 2 and 4 ranks), the threads backend's empty
# superstep (`sync_latency`) and 1 MiB h-relation against memcpy (`h_relation`), and what
# `hetscale probe` reports for L on the same machine at p = 2 and p = 16.
#
#   bash crates/hbsp/benches/side_by_side.sh [REPETITIONS]
#
# Needs OpenMPI (Debian: libopenmpi-dev openmpi-bin libclang-dev).
set -euo pipefail
cd "$(dirname "$0")/../../.."
repetitions="${1:-300}"
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cargo build --quiet --release -p hbsp --features mpi --examples
cargo build --quiet --release -p hetscale
cargo bench --quiet -p hbsp --bench sync_latency --bench h_relation --no-run 2>/dev/null

load() { echo "== $(date +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg): $1"; }

load start
for ranks in 2 4; do
    mpirun --oversubscribe -np "$ranks" target/release/examples/mpi_bench "$repetitions"
    load "after mpi_bench on $ranks ranks"
done
cargo bench --quiet -p hbsp --bench sync_latency -- --measurement-time 2 --warm-up-time 1 \
    'p/(2|16)$' 2>&1 | grep -E 'tail|time:|^sync'
load "after sync_latency"
cargo bench --quiet -p hbsp --bench h_relation -- --measurement-time 2 --warm-up-time 1 \
    '(p2|p2_recycle|copy)/1048576$' 2>&1 | grep -E 'thrpt:|time:|^h_relation|^memcpy'
load "after h_relation"
for p in 2 16; do
    echo "probe --backend threads --nodes $p --quick:"
    target/release/hetscale probe --backend threads --nodes "$p" --quick | grep -E '^L |not this'
done
load end
