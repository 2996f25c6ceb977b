#!/usr/bin/env python3
"""Held-out validation on the one-machine testbed: hetscale's predictions of the larger
configurations of a heterogeneous testbed, calibrated on its 1- and 2-host configurations
only, held against measurements of the larger ones.

    python3 validation/testbed.py [--dry-run] [HOSTS [OUT]]   (root; OpenMPI, gcc, iproute2)

HOSTS 4 (the default): validation/validation4.toml, CPU quotas 0.6, 0.45, 0.3, 0.15 of a
  core; C_4 held out.
HOSTS 8: validation/validation8.toml, quotas 0.32, 0.24, 0.16, 0.08 twice; C_4 and C_8 held
  out.
Every link is 100 Mbit/s; configuration C_p is the first p hosts (C_1 = h1, C_2 = h1,h2, ...).

OUT (default /tmp/hetscale-testbed-validation-HOSTS; a relative OUT is taken from the
repository's root) is emptied, then holds every command's output, steps.log, and table.md:
one row per (program, held-out configuration, quantity, approach), misses included, and the
verdict (validation/testbed_table.py). HETSCALE names the hetscale binary, built with
--features mpi (default: the repository's target/release/hetscale); a relative HETSCALE is
taken from where the driver is started.

--dry-run prints the commands in order without running any (no root, no testbed needed);
a value an earlier command's output would give is shown by its name (GE_TARGET, ...).

The steps are the functions from `bring_up` to `score`, in that order; each one's docstring
gives its rule and why it keeps the held-out configurations unseen by the predictions.
"""

import argparse
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field

from runner import Failed, OneLineParser, Runner, Unknown
from toml_writer import to_toml

# The prefix of the driver's own lines, as the shell driver printed them.
NAME = "testbed_validation"
STATE = "/run/hetscale-testbed"
# The held-out configurations' host counts, by the testbed's host count.
HELD = {4: (4,), 8: (4, 8)}
TOLERANCE = "0.03"
# The held-out T rows are measured in this many sittings of 3 runs (`measure_t`).
SITTINGS = 3
CSV_HEADER = "configuration,nodes,kernel,n,time_s\n"

# The C Jacobi program hetscale does not run, declared as its source reads. Its work: 4 flop
# per interior point, 100 iterations.
JACOBI_WORK = "400*(n-2)^2"
# Its messages: each iteration every rank sends a row of n doubles to the rank above and the
# rank below (two MPI_Sendrecv).
JACOBI_COMMUNICATION = "100*neighbours(8*n)"
# Its split: every rank gets (N-2)/p rows, whatever its speed.
JACOBI_PARTITION = "equal"
JACOBI_DECLARED = ("--work", JACOBI_WORK, "--communication", JACOBI_COMMUNICATION,
                   "--partition", JACOBI_PARTITION)
TIME_REGEX = r"elapsed: (\S+) s"


@dataclass(frozen=True)
class Program:
    """A program of the validation and its sizes, fixed before any prediction so that every
    run of interest lasts 0.1-5 s with phases of two CFS periods or more (the quotas hold):
    N_FIX, where T is predicted and measured, and the range [n_min, n_max] an N is searched
    in on the 4-host testbed (on more hosts n_max grows with them: the N holding a target
    grows with the processes)."""

    name: str
    n_fix: int
    n_min: int
    n_max: int

    @property
    def declared(self) -> bool:
        """A program hetscale does not run (a `[command]` study, its hosts through
        `{hostfile}`): its (a) is approach 3 on its declared model, not `sim` replaying a
        kernel's supersteps."""
        return self.name == "jacobi"


PROGRAMS = (
    Program("ge", 512, 128, 1200),
    Program("mm", 768, 256, 1536),
    Program("conv2d", 512, 128, 1024),
    Program("jacobi", 2048, 512, 4096),  # 100 iterations
)


@dataclass
class Validation:
    """One validation's settings and its log; its commands run in OUT."""

    hosts: int
    out: str
    repo: str
    hetscale: str
    runner: Runner
    state: str = STATE
    start: float = field(default_factory=time.monotonic)

    @property
    def held(self) -> tuple:
        return HELD[self.hosts]

    @property
    def testbed(self) -> str:
        return f"{self.repo}/testbed/hetscale-testbed"

    @property
    def mpirun(self) -> str:
        return f"{self.state}/mpirun"

    @property
    def jacobi_template(self) -> str:
        return f"{self.mpirun} -np {{p}} --hostfile {{hostfile}} {self.out}/jacobi {{n}} 100"

    def n_max(self, prog: Program) -> int:
        """The end of `prog`'s search range on this testbed: the 4-host end times HOSTS/4."""
        return prog.n_max * self.hosts // 4

    def elapsed(self) -> int:
        return int(time.monotonic() - self.start)

    def run(self, argv, **redirects) -> int:
        return self.runner.run(argv, **redirects)

    def step(self, title: str) -> None:
        """Prints a step's title, with the time so far and the machine's load, and logs it."""
        if self.runner.dry_run:
            self.runner.show(f"\n== {title}")
            return
        print()
        self.log(f"== {title} ({self.elapsed()} s, load {load_average()})")

    def log(self, line: str) -> None:
        """Prints `line` and appends it to steps.log."""
        if self.runner.dry_run:
            self.runner.note(f"log: {line}")
            return
        print(line, flush=True)
        with open("steps.log", "a") as f:
            f.write(line + "\n")

    def log_failure(self, status: int, line: str) -> None:
        """Logs `line` when a command whose failure the validation survives failed."""
        if status != 0:
            self.log(line)


def load_average() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return ""


def hostlist(p: int) -> str:
    """The first p hosts, as a `[command]` program's nodes: h1,h2,...,hp."""
    return ",".join(f"h{i}" for i in range(1, p + 1))


def nodes_of(prog: Program, p: int) -> str:
    """C_p's nodes as `--nodes` takes them: a count for a kernel, the hosts for a program."""
    return hostlist(p) if prog.declared else str(p)


def nodes_args(v: Validation, prog: Program) -> list:
    return [arg for p in v.held for arg in ("--nodes", nodes_of(prog, p))]


def read_json(path: str):
    with open(path) as f:
        return json.load(f)


# --- The commands the steps share


def run_real(v: Validation, prog: Program, p: int, n: int, runs: int, stdout: str,
             check=False) -> int:
    """A run of `prog` on the real testbed's first p hosts at size n, `--runs` runs, its JSON
    in `stdout`."""
    if prog.declared:
        argv = [v.hetscale, "run", "--command", v.jacobi_template, "--work", JACOBI_WORK,
                "--time-regex", TIME_REGEX, "--timeout", "300", "--platform", "platform.toml",
                "--nodes", hostlist(p), "--n", n, "--runs", runs, "--warmup", "0", "--json"]
    else:
        argv = [v.mpirun, "-np", p, v.hetscale, "run", prog.name, "--backend", "mpi",
                "--platform", "platform.toml", "--nodes", p, "--n", n, "--runs", runs,
                "--warmup", "0", "--json"]
    return v.run(argv, stdout=stdout, check=check)


def study_spec(v: Validation, name: str, prog: Program, target, n_min: int, n_max: int,
               counts, backend="mpi", platform=None, repetitions=3) -> dict:
    """A measured-approach study of `prog` on the configurations of `counts` hosts, searching
    [n_min, n_max] for the N holding `target` within the tolerance; on the testbed's
    platform with mpi and 3 repetitions unless told otherwise."""
    spec = {
        "name": name,
        "platform": platform or f"{v.out}/platform.toml",
        "target": target if isinstance(target, Unknown) else float(target),
        "tolerance": float(TOLERANCE),
        "n_min": n_min,
        "n_max": n_max,
        "repetitions": repetitions,
        "warmup": 0,
        "approaches": ["measured"],
    }
    if prog.declared:
        spec["command"] = {"template": v.jacobi_template, "work": JACOBI_WORK,
                           "time_regex": TIME_REGEX, "timeout_s": 300}
    else:
        spec["kernel"] = prog.name
        spec["backend"] = backend
        if backend != "sim":
            spec["mpi"] = {"launcher": v.mpirun, "timeout_s": 300}
    spec["configuration"] = [{"label": f"C_{p}", "nodes": nodes_of(prog, p)} for p in counts]
    return spec


def write_spec(v: Validation, name: str, spec: dict) -> None:
    v.runner.write(f"{name}.toml", to_toml(spec), shown=True)


def run_study(v: Validation, name: str, json_out: str) -> int:
    return v.run([v.hetscale, "study", f"{name}.toml", "--db", f"{name}.db", "--out",
                  f"{name}-out", "--quiet", "--json"], stdout=json_out)


def scaled_target(target, k) -> str:
    """The target times k, to four significant figures: where the measured machine holds the
    target if its T is k times the model's (E_s scales by 1/k)."""
    if isinstance(target, Unknown) or isinstance(k, Unknown):
        return Unknown(f"{target}*{k}")
    return f"{float(target) * k:.4g}"


# --- The steps, in order


def check_hetscale(v: Validation) -> bool:
    """hetscale must be built with the mpi backend: every measurement runs on it."""
    status, text = v.runner.output([v.hetscale, "bench", "--help"])
    return v.runner.dry_run or (status == 0 and "--backend" in text)


def check_no_testbed(v: Validation) -> bool:
    """Only one testbed can exist, and this validation brings up its own."""
    _, text = v.runner.output([v.testbed, "status"], merge_stderr=True)
    return v.runner.dry_run or text.split("\n", 1)[0] == "testbed: down"


def empty_out(v: Validation) -> None:
    """OUT starts empty, so that every file in it is this validation's."""
    if v.runner.dry_run:
        v.runner.note(f"rm -rf {v.out}; mkdir -p {v.out}; cd {v.out}")
        return
    if os.path.isdir(v.out) and not os.path.islink(v.out):
        shutil.rmtree(v.out)
    elif os.path.lexists(v.out):
        os.remove(v.out)
    os.makedirs(v.out, exist_ok=True)
    os.chdir(v.out)


def bring_up(v: Validation) -> None:
    """Brings up the testbed of HOSTS hosts (it comes down in `finish`, whatever happens) and
    builds the C program."""
    config = f"validation/validation{v.hosts}.toml"
    v.step(f"testbed up: {config}")
    v.run([v.testbed, "up", f"{v.repo}/{config}"], check=True)
    v.run(["mpicc", "-O2", "-o", "jacobi", f"{v.repo}/examples/jacobi/jacobi.c", "-lm"],
          check=True)


def marked_speeds(v: Validation) -> None:
    """The hosts' marked speeds: `hetscale bench --backend mpi` on every host at once. A
    benchmark of the machine, not of the programs, so it may touch every host."""
    v.step(f"marked speeds: bench --backend mpi on all {v.hosts} hosts at once")
    v.run([v.mpirun, "-np", v.hosts, v.hetscale, "bench", "--backend", "mpi", "--runs", "3",
           "--platform", f"{v.state}/platform.toml", "--write-platform", "platform.toml"],
          tee="bench.txt", check=True)


def network(v: Validation) -> None:
    """The network: `hetscale probe --backend mpi --p2p` on 2 hosts, then on every held-out
    count, the largest last. A microbenchmark of the machine, not of the programs, so it may
    touch every host; `--p2p` adds the ping-pong's point-to-point cost, piecewise-linear in
    message size from 8 B to 16 MiB (beyond the links' tbf bucket), which `sim` charges. The
    platform as measured is kept as platform-measured.toml."""
    for p in (2, *v.held):
        v.step(f"network: probe --backend mpi on {p} hosts")
        v.run([v.mpirun, "-np", p, v.hetscale, "probe", "--backend", "mpi", "--nodes", p,
               "--platform", "platform.toml", "--p2p", "--write-platform", "platform.toml"],
              tee=f"probe-{p}.txt", check=True)
    if v.runner.dry_run:
        v.runner.note("cp platform.toml platform-measured.toml")
    else:
        shutil.copy("platform.toml", "platform-measured.toml")


def half_speed_efficiency(path: str) -> str:
    """Half a run's E_s, to two significant figures, as text."""
    e = read_json(path)["speed_efficiency"] / 2
    return str(float(f"{e:.2g}"))


def program_target(v: Validation, prog: Program) -> str:
    """The target E_s, by a rule fixed before any prediction: half the E_s measured on C_2, a
    calibration configuration, at N_FIX (the median of 3 runs), to two significant figures.
    Written with the program's setup to PROG-setup.json."""
    v.step(f"{prog.name}: the target from C_2 at N = {prog.n_fix} (half its E_s)")
    run_real(v, prog, 2, prog.n_fix, 3, f"{prog.name}-target-run.json", check=True)
    target = v.runner.derive(
        f"{prog.name.upper()}_TARGET = half the speed_efficiency of {prog.name}-target-run.json,"
        " to 2 significant figures", half_speed_efficiency, f"{prog.name}-target-run.json",
        dry=Unknown(f"{prog.name.upper()}_TARGET"))
    v.log(f"{prog.name}: target E_s = {target}")
    held = ", ".join(str(p) for p in v.held)
    v.runner.write(f"{prog.name}-setup.json", f'{{"program": "{prog.name}", "n_fix": '
                   f'{prog.n_fix}, "target": {target}, "held": [{held}]}}\n')
    return target


def calibration_sizes(prog: Program) -> tuple:
    return prog.n_fix // 2, prog.n_fix, 3 * prog.n_fix // 2


def calibration_rows(path: str, prog: Program, p: int, n: int) -> tuple:
    """A calibration run's lines: its median T (for PROG-cal.csv, which (a) fits) and every
    run's T (for PROG-runs.csv, which (b) fits, so that its bootstrap resamples runs)."""
    r = read_json(path)
    median = f"C_{p},{p},{prog.name},{n},{r['time_s']!r}\n"
    nodes = f'"{hostlist(p)}"' if prog.declared else str(p)
    runs = "".join(f"C_{p},{nodes},{prog.name},{n},{t!r}\n" for t in r["times_s"])
    return median, runs


def calibration_runs(v: Validation, prog: Program) -> None:
    """The calibration runs, on C_1 and C_2 only: N_FIX/2, N_FIX and 3 N_FIX/2, 3 runs each.
    Every prediction is fitted on these and nothing else; a run that fails is logged and
    left out."""
    sizes = calibration_sizes(prog)
    v.step(f"{prog.name}: calibration runs on C_1 and C_2 at N = "
           + ", ".join(str(n) for n in sizes))
    cal, runs = f"{prog.name}-cal.csv", f"{prog.name}-runs.csv"
    v.runner.write(cal, CSV_HEADER)
    v.runner.write(runs, CSV_HEADER)
    for p in (1, 2):
        for n in sizes:
            path = f"{prog.name}-cal-{p}-{n}.json"
            if run_real(v, prog, p, n, 3, path) != 0:
                v.log(f"{prog.name}: calibration run p={p} n={n} failed")
                continue
            if v.runner.dry_run:
                v.runner.note(f"append to {cal}: the median T of {path}; to {runs}: its runs")
                continue
            median, each = calibration_rows(path, prog, p, n)
            v.runner.write(cal, median, append=True)
            v.runner.write(runs, each, append=True)
    if v.runner.dry_run:
        v.runner.note(f"cat {cal}")
    else:
        with open(cal) as f:
            print(f.read(), end="", flush=True)


def record_range(v: Validation, prog: Program) -> None:
    """(a)'s search range, [n_min, 4 n_max], recorded in PROG-setup.json for the table. Every
    program has its N rows, whether or not its E_s grows with N on the calibration runs: the
    protocol (validation/testbed-protocol.md) declares every row in advance and drops none."""
    path = f"{prog.name}-setup.json"
    if v.runner.dry_run:
        v.runner.note(f"add a_range [{prog.n_min}, {4 * v.n_max(prog)}] to {path}")
        return
    setup = read_json(path)
    setup["a_range"] = [prog.n_min, 4 * v.n_max(prog)]
    with open(path, "w") as f:
        json.dump(setup, f)


def a_sim_study(v: Validation, prog: Program, target, suffix: str) -> None:
    """(a)'s N holding `target`: the measured approach on `sim` with the calibrated platform
    (the model whose T (a)'s rows check), not approach 3's HBSP^1 charges; JSON in
    PROG-a-studySUFFIX.json. It searches 4 times the measured search's n_max: a sim run costs
    no testbed time, and an interval end past the measured range is still an end (one past
    that is the search's bound, as `predict` takes it)."""
    name = f"{prog.name}-a-sim{suffix}"
    write_spec(v, name, study_spec(v, name, prog, target, prog.n_min, 4 * v.n_max(prog),
                                   v.held, backend="sim", repetitions=1,
                                   platform=f"{v.out}/{prog.name}-calibrated.toml"))
    status = run_study(v, name, f"{prog.name}-a-study{suffix}.json")
    v.log_failure(status, f"{prog.name}: sim study (a{suffix}) exit {status}")


def sim_interval_ratios(path: str):
    """(k_lo, k_hi): the ends of the 95% interval `run --backend sim` gave, over its T, or
    None where it gave none."""
    try:
        r = read_json(path)
        lo, hi = r.get("time_interval_s") or (None, None)
        return (lo / r["time_s"], hi / r["time_s"]) if lo else None
    except Exception:  # no sim run, or no interval: no interval rows
        return None


def machine_model(v: Validation, prog: Program, target: str) -> None:
    """(a) the calibrated machine model of a kernel: `hetscale calibrate --runs` on the
    C_1 and C_2 medians (its default fit, rate_fraction,run_overhead_s, on the benched and
    probed platform), then `run --backend sim` for T at N_FIX on each held-out
    configuration, with the 95% interval `run` prints from the calibration's errors on
    configurations it predicted from smaller ones (C_2's runs from a fit on C_1's). Sim
    studies give the N holding the target, and the interval's ends: a
    measured T of k times sim's has E_s = sim's / k, so the N where sim holds the target
    times k. Nothing held out is measured before these are written."""
    v.step(f"{prog.name}: (a) the calibrated machine model, fitted on the C_1 and C_2 runs")
    status = v.run([v.hetscale, "calibrate", "--runs", f"{prog.name}-cal.csv", "--platform",
                    "platform.toml", "--write-platform", f"{prog.name}-calibrated.toml",
                    "--json"], stdout=f"{prog.name}-calibrate.json")
    v.log_failure(status, f"{prog.name}: calibrate exit {status}")
    for p in v.held:
        status = v.run([v.hetscale, "run", prog.name, "--backend", "sim", "--skip-compute",
                        "--platform", f"{prog.name}-calibrated.toml", "--nodes", p, "--n",
                        prog.n_fix, "--json"], stdout=f"{prog.name}-a-sim-{p}.json")
        v.log_failure(status, f"{prog.name}: sim (a) p={p} exit {status}")
    a_sim_study(v, prog, target, "")
    first = f"{prog.name}-a-sim-{v.held[0]}.json"
    upper = prog.name.upper()
    ks = v.runner.derive(f"{upper}_K_LO, {upper}_K_HI = time_interval_s / time_s of {first}",
                         sim_interval_ratios, first,
                         dry=(Unknown(f"{upper}_K_LO"), Unknown(f"{upper}_K_HI")))
    if ks:
        a_sim_study(v, prog, scaled_target(target, ks[0]), "-lo")
        a_sim_study(v, prog, scaled_target(target, ks[1]), "-hi")


def declared_interval_ratio(path: str, end: str):
    """One end of the 95% interval of `predict --work --time-at` on the first configuration,
    over its T, or None where it gave none."""
    try:
        point = read_json(path)["points"][0]
        lo, hi = point["time_s_ci95"] or (None, None)
        if lo is None:
            return None
        return (lo if end == "-lo" else hi) / point["time_s"]
    except Exception:  # no prediction, or no interval: no interval end
        return None


def declared_model(v: Validation, prog: Program, target: str) -> None:
    """(a) the calibrated machine model of the declared program: approach 3 on its declared
    model (work, messages, partition), its compute rate and start-up fitted by `calibrate
    --runs ... --work ...` to the same C_1 and C_2 medians; `predict --work --program` then
    gives T at N_FIX with its interval and the N holding the target and its interval as the kernels' (a) makes it (the target times the T interval's ends),
    searched over the kernels' (a) range, 4 times the measured n_max; an end that holds its
    target at no size searched is that range's bound (the table). Nothing held out is
    measured before these are written."""
    v.step(f"{prog.name}: (a) the calibrated machine model of its declared program, fitted on"
           " the C_1 and C_2 runs")
    status = v.run([v.hetscale, "calibrate", "--runs", f"{prog.name}-cal.csv",
                    *JACOBI_DECLARED, "--platform", "platform.toml", "--write-platform",
                    f"{prog.name}-calibrated.toml", "--json"],
                   stdout=f"{prog.name}-calibrate.json")
    v.log_failure(status, f"{prog.name}: calibrate exit {status}")
    predict = [v.hetscale, "predict", *JACOBI_DECLARED, "--program", prog.name, "--platform",
               f"{prog.name}-calibrated.toml", *nodes_args(v, prog), "--json"]
    status = v.run(predict + ["--time-at", prog.n_fix], stdout=f"{prog.name}-a-time.json",
                   stderr=f"{prog.name}-a-time.err")
    v.log_failure(status, f"{prog.name}: predict --work --time-at exit {status}")
    for end in ("", "-lo", "-hi"):
        k = 1
        if end:
            name = f"{prog.name.upper()}_K{end.replace('-', '_').upper()}"
            k = v.runner.derive(f"{name} = time_s_ci95 {end[1:]} / time_s of the first point"
                                f" of {prog.name}-a-time.json", declared_interval_ratio,
                                f"{prog.name}-a-time.json", end, dry=Unknown(name))
        if k is None:
            continue
        status = v.run(predict + ["--target", scaled_target(target, k), "--n-min", prog.n_min,
                                  "--n-max", 4 * v.n_max(prog)],
                       stdout=f"{prog.name}-a-predict{end}.json",
                       stderr=f"{prog.name}-a-predict{end}.err")
        v.log_failure(status, f"{prog.name}: predict --work (a{end}) exit {status}")


def error_text(path: str) -> str:
    """A file's text without its trailing newlines, as a shell's $(cat FILE) gives it."""
    if not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        return f.read().decode(errors="replace").rstrip("\n")


def scaling_model(v: Validation, prog: Program, target: str) -> None:
    """(b) the scaling model: `hetscale predict --runs` fitted to every calibration run (C_1
    and C_2, each repetition on its own line, so that its bootstrap resamples runs), the
    declared program with its work, its messages (which the probed network charges) and its
    equal split of rows (which makes its compute W/(p C_min)). It is asked the measured
    search's question, the first N in [n_min, n_max] holding the target within the
    tolerance, with its 95% interval, and (`--time-at`) T at N_FIX, the size (a)'s T row is
    at. Nothing held out is measured before these are written."""
    v.step(f"{prog.name}: (b) the scaling model, fitted on the C_1 and C_2 runs")
    predict = [v.hetscale, "predict", "--runs", f"{prog.name}-runs.csv",
               *(JACOBI_DECLARED if prog.declared else ()), "--platform", "platform.toml",
               *nodes_args(v, prog)]
    err = f"{prog.name}-b-predict.err"
    status = v.run(predict + ["--target", target, "--tolerance", TOLERANCE, "--n-min",
                              prog.n_min, "--n-max", v.n_max(prog), "--json"],
                   stdout=f"{prog.name}-b-predict.json", stderr=err)
    if status != 0:
        v.log(f"{prog.name}: predict --runs exit {status}: {error_text(err)}")
    err = f"{prog.name}-b-time.err"
    status = v.run(predict + ["--time-at", prog.n_fix, "--json"],
                   stdout=f"{prog.name}-b-time.json", stderr=err)
    if status != 0:
        v.log(f"{prog.name}: predict --runs --time-at exit {status}: {error_text(err)}")


def measure_t(v: Validation, prog: Program, sitting: int) -> None:
    """Sitting S of the measured T on every held-out configuration at N_FIX: 3 runs, JSON in
    PROG-meas-t-P-nfix-S.json; the row's measured T is the median of every sitting's runs.
    The first sitting comes after the program's predictions are written."""
    for p in v.held:
        v.step(f"{prog.name}: measured T on C_{p} at N = {prog.n_fix} (sitting {sitting} of"
               f" {SITTINGS})")
        status = run_real(v, prog, p, prog.n_fix, 3,
                          f"{prog.name}-meas-t-{p}-nfix-{sitting}.json")
        v.log_failure(status, f"{prog.name}: run p={p} n={prog.n_fix} (sitting {sitting})"
                              " failed")


def held_out_n(v: Validation, prog: Program, target: str) -> None:
    """The measured N holding the target: a study of the held-out configurations alone,
    measured approach, over [n_min, n_max] within the tolerance, after the program's
    predictions are written."""
    v.step(f"{prog.name}: measured N holding E_s = {target} on the held-out configurations")
    name = f"{prog.name}-held"
    write_spec(v, name, study_spec(v, name, prog, target, prog.n_min, v.n_max(prog), v.held))
    status = run_study(v, name, f"{prog.name}-held-study.json")
    v.log_failure(status, f"{prog.name}: held-out study exit {status}")


def validate_program(v: Validation, prog: Program) -> None:
    """One program's calibration, predictions and first measurements, in an order that keeps
    the held-out configurations out of every prediction: its target and calibration runs on
    C_1 and C_2, (a)'s range recorded, (a) and (b) written to files, then its held-out T
    (first sitting) and its held-out N."""
    target = program_target(v, prog)
    calibration_runs(v, prog)
    record_range(v, prog)
    if prog.declared:
        declared_model(v, prog, target)
    else:
        machine_model(v, prog, target)
    scaling_model(v, prog, target)
    measure_t(v, prog, 1)
    held_out_n(v, prog, target)


def later_sittings(v: Validation) -> None:
    """The later sittings of the measured T, every program in turn, so that each row's runs
    spread over the validation's hour rather than coming back to back: the testbed's time
    varies by more from one sitting to the next than within one."""
    for sitting in range(2, SITTINGS + 1):
        for prog in PROGRAMS:
            measure_t(v, prog, sitting)


def score(v: Validation) -> None:
    """The table: one row per (program, held-out configuration, quantity, approach), misses
    included, and the verdict against the targets (validation/testbed_table.py), also in
    table.md."""
    v.step("the table")
    v.run([sys.executable, f"{v.repo}/validation/testbed_table.py", v.out], tee="table.md",
          check=True)


def finish(v: Validation, status: int) -> int:
    """Takes the testbed down whatever happened; it must leave nothing behind (`leftovers`),
    or the validation fails."""
    v.run([v.testbed, "down"], stdout=os.devnull)
    if v.run([v.testbed, "leftovers"]) != 0:
        print(f"{NAME}: the testbed left something behind", file=sys.stderr)
        status = 1
    if not v.runner.dry_run:
        print(f"{NAME}: {'FAILED' if status else 'done'} in {v.elapsed()} s; "
              f"outputs in {v.out}", flush=True)
    return status


def validate(v: Validation) -> None:
    """Every step, in order."""
    empty_out(v)
    bring_up(v)
    marked_speeds(v)
    network(v)
    for prog in PROGRAMS:
        validate_program(v, prog)
    later_sittings(v)
    score(v)


class Interrupted(Exception):
    """SIGTERM: the validation stops as on Ctrl-C, the testbed still taken down."""


def interrupted(signum, frame):
    raise Interrupted()


def parse_args(argv):
    parser = OneLineParser(prog="testbed.py", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true",
                        help="print the commands in order, run none")
    parser.add_argument("hosts", metavar="HOSTS", nargs="?", default="4", choices=["4", "8"],
                        help="the testbed's hosts: 4 or 8 (default 4)")
    parser.add_argument("out", metavar="OUT", nargs="?",
                        help="the output directory "
                        "(default /tmp/hetscale-testbed-validation-HOSTS)")
    return parser.parse_args(argv)


def validation_from(args, environ, show=print) -> Validation:
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    hosts = int(args.hosts)
    # The commands run inside OUT, so both paths are made absolute here: HETSCALE as the
    # caller wrote it (from where they stand), OUT from the repository's root as documented.
    out = os.path.join(repo, args.out or f"/tmp/hetscale-testbed-validation-{hosts}")
    hetscale = os.path.abspath(environ.get("HETSCALE") or f"{repo}/target/release/hetscale")
    return Validation(hosts=hosts, out=out, repo=repo, hetscale=hetscale,
                      runner=Runner(dry_run=args.dry_run, show=show))


def main(argv=None, show=print) -> int:
    v = validation_from(parse_args(argv), os.environ, show)
    # Paths are taken from the repository's root, a relative OUT too.
    os.chdir(v.repo)
    os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    sys.stdout.reconfigure(line_buffering=True)
    if v.runner.dry_run:
        v.runner.note(f"dry run of testbed.py {v.hosts} {v.out}: the commands in order, "
                      "from the repository's root; none is run")
    if not check_hetscale(v):
        print("needs hetscale built with --features mpi", file=sys.stderr)
        return 2
    v.start = time.monotonic()
    if not check_no_testbed(v):
        print("a testbed is up already (testbed/hetscale-testbed status); only one can exist",
              file=sys.stderr)
        return 2
    if not v.runner.dry_run:
        signal.signal(signal.SIGTERM, interrupted)
    status = 0
    try:
        validate(v)
    except Failed as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        status = e.status
    except (KeyboardInterrupt, Interrupted):
        status = 130
    except Exception as e:  # an unreadable output the validation cannot go on without
        if v.runner.dry_run:  # nothing to take down; e.g. a reader that stopped (| head)
            raise
        print(f"{NAME}: {type(e).__name__}: {e}", file=sys.stderr)
        status = 1
    return finish(v, status)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # a dry run's reader stopped early (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
