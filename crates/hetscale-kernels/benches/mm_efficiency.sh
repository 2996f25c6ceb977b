#!/usr/bin/env bash
# E_s of `mm` on the threads backend, 2 nodes, N = 2048, against the marked speed measured by
# the local one-thread DGEMM benchmark (n = 1024). Run from the workspace root on a quiet
# machine (both cores idle): bash crates/hetscale-kernels/benches/mm_efficiency.sh
set -euo pipefail
cargo build -q --release -p hetscale -p hetscale-kernels --example local_platform
platform="$(mktemp --suffix .toml)"
trap 'rm -f "$platform"' EXIT
./target/release/examples/local_platform > "$platform"
grep description "$platform"
uptime
for _ in 1 2 3 4 5; do
  ./target/release/hetscale run mm --platform "$platform" --nodes 2 --n 2048 | grep -E '^(T|E_s) '
done
