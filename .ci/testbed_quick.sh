#!/usr/bin/env bash
# CI's quick form of the hetscale testbed (issue 35): a 3-host heterogeneous cluster on this
# machine (network namespaces, tbf-shaped veth links, CPU quotas), and on it, through mpirun:
# a kernel verified and bit-identical to the threads backend, the C Jacobi program (its own
# check) and a command study of it over 1-3 hosts, hetscale bench and probe on every host.
# It prints its figures and asserts no timing. The testbed comes down in a trap, also when a
# step fails, and nothing of it may remain. Needs root, OpenMPI, gcc, iproute2.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CARGO_INCREMENTAL=0
start=$SECONDS
TB=testbed/hetscale-testbed
STATE=/run/hetscale-testbed
WORK=$(mktemp -d /tmp/hetscale-testbed-ci.XXXXXX)

finish() {
    status=$?
    set +e
    "$TB" down
    if ! "$TB" leftovers; then
        echo "testbed_quick: the testbed left something behind" >&2
        status=1
    fi
    rm -rf "$WORK"
    echo "testbed_quick: $([ $status -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
    exit $status
}
trap finish EXIT
trap 'exit 130' INT TERM

step() { echo; echo "== $* ($((SECONDS - start)) s)"; }

step "build hetscale with the mpi feature"
cargo build --release -p hetscale --features mpi 2>&1 | tail -n 1
HS=$PWD/target/release/hetscale

step "the testbed script's own tests (no root needed)"
python3 testbed/test_testbed.py

# A testbed left by an interrupted run is removed first.
"$TB" down > /dev/null
step "testbed up"
"$TB" up testbed/ci3.toml
"$TB" status
M=$STATE/mpirun
PLATFORM=$STATE/platform.toml

step "links and barrier (the testbed's own MPI check)"
mpicc -O2 -o "$WORK/mpi_check" testbed/mpi_check.c
"$M" -np 2 --host h1,h2 "$WORK/mpi_check" pingpong 4194304 5
"$M" -np 2 --host h1,h3 "$WORK/mpi_check" pingpong 4194304 2
"$M" -np 3 "$WORK/mpi_check" barrier 300

step "hetscale run ge and mm across the 3 hosts, verified and bit-identical to threads"
for kernel in ge mm; do
    "$M" -np 3 "$HS" run "$kernel" --backend mpi --platform "$PLATFORM" --nodes 3 --n 64 \
        --seed 7 --dump-result "$WORK/$kernel-mpi.npy" --json > "$WORK/$kernel.json"
    python3 - "$WORK/$kernel.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
assert run["backend"] == "mpi" and run["p"] == 3, run
assert run["verification"]["passed"] is True, run["verification"]
print(f"{run['kernel']} on mpi, 3 hosts: verified ({run['verification']['method']}), T = {run['time_s']:.4f} s")
PY
    "$HS" run "$kernel" --backend threads --platform "$PLATFORM" --nodes 3 --n 64 --seed 7 \
        --dump-result "$WORK/$kernel-threads.npy" > /dev/null
    cmp "$WORK/$kernel-mpi.npy" "$WORK/$kernel-threads.npy"
    echo "$kernel: the result is bit-identical to the threads backend's"
done

step "the C Jacobi program across the hosts (its own check)"
mpicc -O2 -o "$WORK/jacobi" examples/jacobi/jacobi.c -lm
"$M" -np 3 "$WORK/jacobi" 256 50 | tee "$WORK/jacobi.out"
grep -q 'check=serial recomputation: ok' "$WORK/jacobi.out"

step "hetscale bench --backend mpi on every host"
# Full sizes (2 timed runs): --quick's phases are shorter than a quota period, and a CPU quota
# does not slow what fits in one period's budget.
"$M" -np 3 "$HS" bench --backend mpi --runs 2 --platform "$PLATFORM" \
    --write-platform "$WORK/measured.toml"
"$HS" platform validate "$WORK/measured.toml"
for host in h1 h2 h3; do grep -q "name = \"$host\"" "$WORK/measured.toml"; done

step "hetscale probe --backend mpi across the hosts"
"$M" -np 3 "$HS" probe --backend mpi --nodes 3 --platform "$WORK/measured.toml" --quick \
    --write-platform "$WORK/measured.toml"
"$HS" platform validate "$WORK/measured.toml"

step "a command study of the Jacobi program over 1, 2 and 3 hosts ({hostfile} names them)"
cat > "$WORK/jacobi.toml" <<TOML
name = "jacobi-testbed-ci"
platform = "$WORK/measured.toml"
target = 0.03
n_min = 128
n_max = 1024
repetitions = 1
warmup = 0
approaches = ["measured"]

[command]
template = "$M -np {p} --hostfile {hostfile} $WORK/jacobi {n} 20"
work = "80*(n-2)^2"
time_regex = "elapsed: (\\\\S+) s"
timeout_s = 120

[[configuration]]
label = "C_1"
nodes = "h1"

[[configuration]]
label = "C_2"
nodes = "h1,h2"

[[configuration]]
label = "C_3"
nodes = "h1,h2,h3"
TOML
# Whether a configuration settles at this target depends on timing, which CI does not assert:
# exit 0, or 3 (settled none), with every run of every configuration stored as ok.
set +e
(cd "$WORK" && "$HS" study jacobi.toml --out study --quiet)
status=$?
set -e
[ $status -eq 0 ] || [ $status -eq 3 ] || { echo "study failed: exit $status" >&2; exit 1; }
test -s "$WORK/study/index.html"
python3 - "$WORK/study/study.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = dict(((c, s), k) for c, s, k in db.execute(
    "select configuration, status, count(*) from runs group by configuration, status"))
print("runs stored:", rows)
assert all(s == "ok" for _, s in rows), rows
assert {c for c, _ in rows} == {"C_1", "C_2", "C_3"}, rows
PY
