#!/usr/bin/env bash
# Local DGEMM side by side at n = 1024, one thread each: faer (hetscale-kernels) and OpenBLAS
# (numpy). Run from the workspace root: bash crates/hetscale-kernels/benches/compare_dgemm.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cargo run -q --release -p hetscale-kernels --example dgemm_speed
python3 "$here/dgemm_numpy.py"
cargo run -q --release -p hetscale-kernels --example dgemm_speed
python3 "$here/dgemm_numpy.py"
