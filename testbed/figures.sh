#!/usr/bin/env bash
# The figures of docs/testbed.md, measured on a testbed that is up (hetscale-testbed up
# testbed/cluster4.toml): link bandwidth by MPI ping-pong against each link's set rate, a
# 4-rank barrier, the hosts' marked speeds against their quotas, GE, MM and conv2d verified on
# 4 hosts and bit-identical to threads, and the probe. Usage: testbed/figures.sh HETSCALE [DIR]
# (HETSCALE built with --features mpi; DIR keeps the files, default a temporary directory).
set -euo pipefail
HS=$(realpath "$1")
WORK=${2:-$(mktemp -d /tmp/hetscale-figures.XXXXXX)}
mkdir -p "$WORK"
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
STATE=/run/hetscale-testbed
M=$STATE/mpirun
test -x "$M" || { echo "figures.sh: no testbed is up: testbed/hetscale-testbed up testbed/cluster4.toml" >&2; exit 2; }
testbed/hetscale-testbed status
show() { echo; echo "\$ $*"; "$@"; }

mpicc -O2 -o "$WORK/mpi_check" testbed/mpi_check.c
echo; echo "== ping-pong bandwidth (16 MiB messages) against the set rates"
show "$M" -np 2 --host h1,h2 "$WORK/mpi_check" pingpong 16777216 10
show "$M" -np 2 --host h1,h3 "$WORK/mpi_check" pingpong 16777216 2
show "$M" -np 2 --host h3,h4 "$WORK/mpi_check" pingpong 16777216 2

echo; echo "== a 4-rank barrier across the hosts"
show "$M" -np 4 "$WORK/mpi_check" barrier 2000

echo; echo "== marked speeds on every host at once, against the quotas"
show "$M" -np 4 "$HS" bench --backend mpi --runs 5 --platform "$STATE/platform.toml" \
    --write-platform "$WORK/testbed4.toml"
python3 - "$WORK/testbed4.toml" "$STATE/state.json" <<'PY'
import json, sys, tomllib
platform = tomllib.load(open(sys.argv[1], "rb"))
quota = {h["name"]: h["cpu_quota"] for h in json.load(open(sys.argv[2]))["hosts"]}
nodes = platform["node"]
s0, q0 = nodes[0]["marked_speed"], quota[nodes[0]["name"]]
print(f"{'host':<6} {'Mflop/s':>9} {'quota':>6} {'speed ratio':>12} {'quota ratio':>12} {'error':>7}")
for n in nodes:
    sr, qr = n["marked_speed"] / s0, quota[n["name"]] / q0
    print(f"{n['name']:<6} {n['marked_speed']:>9.1f} {quota[n['name']]:>6.2f} {sr:>12.3f} {qr:>12.3f} {100 * (sr / qr - 1):>+6.1f}%")
PY

echo; echo "== the network: hetscale probe across 2, 3 and 4 hosts (L(p) at each, g and r_j at 4)"
for p in 2 3 4; do
    show "$M" -np $p "$HS" probe --backend mpi --nodes $p --platform "$WORK/testbed4.toml" \
        --write-platform "$WORK/testbed4.toml"
done

echo; echo "== GE, MM and conv2d on 4 hosts: verified, and bit-identical to threads"
for kernel in ge mm conv2d; do
    "$M" -np 4 "$HS" run "$kernel" --backend mpi --platform "$WORK/testbed4.toml" --nodes 4 \
        --n 512 --seed 7 --dump-result "$WORK/$kernel-mpi.npy" --json > "$WORK/$kernel.json"
    "$HS" run "$kernel" --backend threads --platform "$WORK/testbed4.toml" --nodes 4 --n 512 \
        --seed 7 --dump-result "$WORK/$kernel-threads.npy" > /dev/null
    python3 - "$WORK/$kernel.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = r["verification"]
print(f"{r['kernel']:<7} p={r['p']} N=512 T={r['time_s']:.3f} s E_s={r['speed_efficiency']:.4f} verified={v['passed']} ({v['method']} = {v['error']:.2e})")
PY
    cmp "$WORK/$kernel-mpi.npy" "$WORK/$kernel-threads.npy" && echo "        result bit-identical to --backend threads"
done
echo; echo "files in $WORK"
