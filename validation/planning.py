#!/usr/bin/env python3
"""The planned study's benchmark, the development set: how much machine time a study that
plans its own runs needs to pin N within ±10% at 8x and 32x the node count of a fixed
design's largest configuration, against that fixed design grown until it gets there, and
whether the intervals at the stop cover the truth.

    HETSCALE=target/release/hetscale python3 validation/planning.py [--programs K] [--seed S] [OUT_DIR]

The programs are the calibration benchmark's (validation/calibration.py: work and overhead
laws, equal and balanced splits, a working-set effect, five noise models), each run as a
command (validation/synthetic_program.py prints its time, which the study reads with
`time_regex`: that time is the machine time counted). The machine is `kalinov` (fast, middle
and slow nodes, 1:1:2) with configurations of 2, 4, 8, 16, 32 and 64 nodes; 8x is 64 nodes
(on the machine), 32x is 256 (four copies of it, `--replicate 8`).

For each program and each of the two scales, on its own:
- **planned**: `hetscale study SPEC --predict-nodes SET --precision 0.1 --budget-s B` on all
  six configurations: its machine time is its runs' when it reaches ±10%, else the budget;
- **grid**: today's fixed design on 2, 4 and 8 nodes (the measured and computed approaches)
  followed by `hetscale predict --from`, grown round by round (repetitions 3, 6, 12, ...; the
  computed approach's samples 4, 8, 16, ...) until its interval is within ±10% or its runs
  take the budget: its machine time is its last round's runs' (as if that design had been
  chosen at once), else the budget.

B is 300 times the time of one run at the size holding the target on 8 nodes. Per scale it
prints how often each reaches ±10%, the median ratio of machine times (planned over grid),
and the coverage of the truth by each one's 95% interval at its stop (a missing interval a
miss), then every row. OUT_DIR (default planning-benchmark) receives every study and
rows.json; `--tables` prints the tables of an OUT_DIR's rows.json again."""

import argparse
from concurrent.futures import ThreadPoolExecutor
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402
import scaling  # noqa: E402
from toml_writer import to_toml  # noqa: E402

PLANNED_NODES = (2, 4, 8, 16, 32, 64)
GRID_NODES = (2, 4, 8)
SCALES = {"8x": 64, "32x": 256}
PRECISION = 0.10
BUDGET_RUNS = 300
GRID_ROUNDS = 5
SEED = 2
PROGRAM = Path(__file__).resolve().parent / "synthetic_program.py"


@dataclass
class Subject:
    """What the benchmark plans for: a synthetic program or a kernel on `sim`. `spec(name,
    counts, extra, directory)` writes what its study needs into `directory` and returns the
    spec's TOML (`extra`: more top-level fields); `nodes(p)` is its configuration of p nodes;
    `truths` the true N per scale asked (None where unknown); `budget` the machine time each
    design may spend, s."""

    name: str
    kind: str
    spec: Callable
    nodes: Callable
    truths: dict
    budget: float
    noise: str = ""


def spec_text(name: str, program_json: Path, law: cal.Law, target: float, nodes: tuple,
              extra: dict | None = None) -> str:
    """A command study of the synthetic program on `nodes`, run by this Python itself (no
    launcher script between: a study makes hundreds of runs)."""
    table = {"name": name, "platform": "kalinov", "target": target, "n_min": 8, "n_max": cal.N_MAX,
             **(extra or {}),
             "command": {"template": f"{sys.executable} {PROGRAM} {program_json} {{n}} {{p}}",
                         "work": law.work, "time_regex": "time: (\\S+)"},
             "configuration": [{"label": f"C_{p}", "nodes": cal.node_set(p)} for p in nodes]}
    if law.equal_split:
        table["command"]["partition"] = "equal"
    return to_toml(table)


def write_program(directory: Path, program: cal.Program, seed: str) -> Path:
    """The program's JSON for synthetic_program.py, its run counter reset."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "program.json"
    path.write_text(json.dumps({"law": program.law.__dict__, "noise": program.noise,
                                "seed": seed, "expected_runs": 300}))
    path.with_suffix(".runs").unlink(missing_ok=True)
    return path


def synthetic(program: cal.Program, seed: str) -> Subject:
    """A calibration-benchmark program as a subject: its truths from its law, its budget 300
    runs at the size holding its target on 8 nodes."""
    n8 = cal.solve_size(program.law, program.target, 8) or 512.0

    def spec(name: str, counts: tuple, extra: dict, directory: Path) -> str:
        program_json = write_program(directory, program, seed)
        return spec_text(name, program_json, program.law, program.target, counts, extra)

    return Subject(program.name, "synthetic", spec, cal.node_set,
                   {scale: cal.solve_size(program.law, program.target, p) for scale, p in SCALES.items()},
                   BUDGET_RUNS * program.law.time_s(n8, 8), program.noise)


def kernel_spec(kernel, name: str, counts: tuple, extra: dict) -> str:
    """A study of `kernel` (scaling.py's) on simulated Sunwulf, skeleton runs."""
    table = {"name": name, "kernel": kernel.name, "backend": "sim", "platform": "sunwulf",
             "skeleton": True, "target": kernel.target, "approaches": ["measured"],
             "n_min": kernel.n_min, "n_max": kernel.n_max, "repetitions": 1, **extra}
    if kernel.options:
        table["kernel_options"] = dict(kernel.options)
    table["configuration"] = [{"label": f"p{p}", "nodes": scaling.nodes_of("sunwulf", p)} for p in counts]
    return to_toml(table)


def kernel_subject(binary: str, kernel, directory: Path) -> Subject | None:
    """A kernel as a subject: its truth the N a measured study finds on 64 nodes, its budget
    300 runs at the N it finds on 8 (None where it finds none)."""
    directory.mkdir(parents=True, exist_ok=True)
    spec = directory / "truth.toml"
    # A tenth of the studies' tolerance: the truth is the crossing itself, not a size within
    # 1% of it in E_s.
    spec.write_text(kernel_spec(kernel, "truth", (8, 64), {"tolerance": 0.001}))
    answer = run([binary, "study", str(spec), "--out", str(directory / "truth"), "--quiet", "--json"])
    points = ((answer or {}).get("studies") or [{}])[0].get("measured", {}).get("points", [])
    found = {pt["configuration"]: pt for pt in points}
    if "p8" not in found:
        return None

    def make(name: str, counts: tuple, extra: dict, _directory: Path) -> str:
        return kernel_spec(kernel, name, counts, extra)

    truth = found.get("p64", {}).get("n")
    return Subject(kernel.name, "kernel", make, lambda p: scaling.nodes_of("sunwulf", p),
                   {"8x": truth}, BUDGET_RUNS * found["p8"]["time_s"])


def run(argv: list, timeout: int = 3600) -> dict | None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        print(f"  {' '.join(argv[:3])}...: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)


def half_width(n, interval) -> float:
    """An interval's larger relative distance from n; infinite without one, or open."""
    if not n or not interval or interval[1] is None:
        return math.inf
    lo, hi = interval
    return max(hi / n - 1, 1 - lo / n)


def planned(binary: str, directory: Path, subject: Subject, p: int) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    spec = directory / "planned.toml"
    spec.write_text(subject.spec("planned", PLANNED_NODES, {}, directory))
    answer = run([binary, "study", str(spec), "--out", str(directory / "out"), "--quiet", "--json",
                  "--predict-nodes", subject.nodes(p), "--replicate", "8",
                  "--precision", str(PRECISION), "--budget-s", f"{subject.budget:.6g}"])
    study = (answer or {}).get("planned", [{}])[0] if answer else {}
    point = (study.get("predicted") or [{}])[0]
    return {"reached": bool(study.get("precision_reached")), "cost_s": study.get("cost_s"),
            "n": point.get("n"), "n_ci95": point.get("n_ci95"), "runs": study.get("runs"),
            "steps": len(study.get("steps", [])), "stopped": study.get("stopped")}


def grid(binary: str, directory: Path, subject: Subject) -> dict:
    """The fixed design grown round by round, asked at every scale after each round: per
    scale, its first round within ±10% (its runs' machine time), else its last."""
    results = {scale: {"reached": False, "cost_s": None, "n": None, "n_ci95": None, "rounds": 0}
               for scale in subject.truths}
    for k in range(GRID_ROUNDS):
        round_dir = directory / f"grid-{k}"
        round_dir.mkdir(parents=True, exist_ok=True)
        spec = round_dir / "grid.toml"
        extra = {"repetitions": 3 * 2 ** k, "samples": 4 * 2 ** k, "approaches": ["measured", "computed"]}
        if subject.kind == "kernel":
            extra["repetitions"] = 1  # the simulator's times are exact: only sizes grow
        spec.write_text(subject.spec("grid", GRID_NODES, extra, round_dir))
        db = round_dir / "out" / "study.db"
        subprocess.run([binary, "study", str(spec), "--out", str(round_dir / "out"), "--quiet"],
                       capture_output=True, text=True, timeout=3600)
        cost = machine_time(db)
        for scale in subject.truths:
            if results[scale]["reached"]:
                continue
            answer = db.exists() and run([binary, "predict", "--from", str(db), "--nodes",
                                          subject.nodes(SCALES[scale]), "--replicate", "8", "--json"])
            point = ((answer or {}).get("points") or [{}])[0]
            results[scale] = {"reached": half_width(point.get("n"), point.get("n_ci95")) <= PRECISION,
                              "cost_s": cost, "n": point.get("n"), "n_ci95": point.get("n_ci95"),
                              "rounds": k + 1}
        if all(r["reached"] for r in results.values()) or cost is None or cost >= subject.budget:
            break
    return results


def machine_time(db: Path) -> float | None:
    """The sum of the study's sample runs' times, s."""
    if not db.exists():
        return None
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        (total,) = conn.execute("SELECT sum(time_s) FROM runs WHERE status = 'ok' AND purpose = 'sample'").fetchone()
    return total


def spent(result: dict, budget: float) -> float:
    """The machine time a design needed to reach the precision: the budget if it did not."""
    if not result["reached"] or result["cost_s"] is None:
        return budget
    return min(result["cost_s"], budget)


def covered(result: dict, truth) -> bool:
    interval = result.get("n_ci95")
    if truth is None or not interval:
        return False
    lo, hi = interval
    return lo <= truth <= (math.inf if hi is None else hi)


def score_subject(binary: str, directory: Path, subject: Subject) -> list:
    """The rows of one subject: per scale, each design's machine time and coverage."""
    rows = []
    grids = grid(binary, directory, subject)
    for scale, truth in subject.truths.items():
        a = planned(binary, directory / scale, subject, SCALES[scale])
        b = grids[scale]
        budget = subject.budget
        rows.append({"subject": subject.name, "kind": subject.kind, "noise": subject.noise, "scale": scale,
                     "budget_s": budget, "truth": truth, "planned": a, "grid": b,
                     "planned_s": spent(a, budget), "grid_s": spent(b, budget),
                     "planned_covered": covered(a, truth), "grid_covered": covered(b, truth)})
        print(f"{subject.name} {scale}: planned {'reached' if a['reached'] else 'not reached'} in "
              f"{a['cost_s']} s, grid {'reached' if b['reached'] else 'not reached'} in {b['cost_s']} s "
              f"(budget {budget:.3g} s)", file=sys.stderr)
    return rows


def score(binary: str, out: Path, programs: int, seed: int, kernels: bool = True, jobs: int = 2) -> list:
    """Every subject's rows, in order: the programs drawn with `seed`, then the kernels;
    `jobs` subjects at a time (each waits mostly on its runs' processes)."""
    rng = random.Random(seed)
    drawn = [cal.make_program(index, rng) for index in range(programs)]

    def program_rows(index: int) -> list:
        program = drawn[index]
        # A subject's studies start afresh: an earlier benchmark's runs are not resumed.
        shutil.rmtree(out / program.name, ignore_errors=True)
        return score_subject(binary, out / program.name, synthetic(program, f"{seed}-{index}"))

    def kernel_rows(kernel) -> list:
        directory = out / f"kernel-{kernel.name}"
        shutil.rmtree(directory, ignore_errors=True)
        subject = kernel_subject(binary, kernel, directory)
        if subject is None:
            print(f"{kernel.name}: no N holds its target on 8 nodes: not scored", file=sys.stderr)
            return []
        return score_subject(binary, directory, subject)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        parts = [pool.submit(program_rows, i) for i in range(programs)]
        parts += [pool.submit(kernel_rows, k) for k in (scaling.KERNELS if kernels else ())]
        return [row for part in parts for row in part.result()]


def summary(rows: list) -> str:
    lines = ["| subjects | scale | rows | planned reaches ±10% | grid reaches ±10% | machine time, planned / grid: "
             "median ratio | total ratio | median half-width at the stop, planned | grid "
             "| planned covers truth at its stop | grid covers truth at its stop |",
             "|" + "---|" * 11]
    for kind, scale in [(k, s) for k in ("synthetic", "kernel") for s in SCALES]:
        these = [r for r in rows if r.get("kind", "synthetic") == kind and r["scale"] == scale]
        if not these:
            continue
        ratio = statistics.median(r["planned_s"] / r["grid_s"] for r in these)
        total = sum(r["planned_s"] for r in these) / sum(r["grid_s"] for r in these)
        pct = lambda k: f"{sum(k(r) for r in these) / len(these):.0%}"
        name = "calibration programs" if kind == "synthetic" else "kernels on sim"
        width = lambda design: statistics.median(half_width(r[design].get("n"), r[design].get("n_ci95"))
                                                 for r in these)
        shown = lambda w: "open" if math.isinf(w) else f"±{w:.0%}"
        lines.append(f"| {name} | {scale} | {len(these)} | {pct(lambda r: r['planned']['reached'])} "
                     f"| {pct(lambda r: r['grid']['reached'])} | {ratio:.2f} | {total:.2f} "
                     f"| {shown(width('planned'))} | {shown(width('grid'))} "
                     f"| {pct(lambda r: r['planned_covered'])} | {pct(lambda r: r['grid_covered'])} |")
    return "\n".join(lines) + "\n"


def rows_table(rows: list) -> str:
    """Every row: the truth, and each design's N with its interval, whether it reached ±10%
    and the machine time it took."""
    def cell(r: dict) -> str:
        interval = r.get("n_ci95")
        shown = "none" if not interval else f"[{interval[0]}, {'open' if interval[1] is None else interval[1]}]"
        cost = "-" if r.get("cost_s") is None else f"{r['cost_s']:.3g} s"
        return f"{r.get('n') or 'none'} {shown} | {'yes' if r['reached'] else 'no'} | {cost}"
    lines = ["| subject | noise | scale | budget | true N | planned N [95%] | ±10% | its machine time "
             "| grid N [95%] | ±10% | its machine time |", "|" + "---|" * 11]
    for r in rows:
        truth = "none" if r["truth"] is None else f"{r['truth']:.0f}"
        lines.append(f"| {r['subject']} | {r['noise'] or 'sim'} | {r['scale']} | {r['budget_s']:.3g} s | {truth} "
                     f"| {cell(r['planned'])} | {cell(r['grid'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="planning-benchmark")
    parser.add_argument("--programs", type=int, default=24)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-kernels", action="store_true", help="the calibration programs only")
    parser.add_argument("--jobs", type=int, default=2, help="subjects run at a time (default 2)")
    parser.add_argument("--tables", action="store_true",
                        help="print the tables of OUT_DIR/rows.json again, running nothing")
    args = parser.parse_args(argv)
    if args.programs < 0 or (args.programs == 0 and args.no_kernels):
        parser.error(f"--programs {args.programs}: give at least 1 program, or leave the kernels in")
    if args.tables:
        rows = json.loads((Path(args.out) / "rows.json").read_text())
        print(summary(rows) + "\n" + rows_table(rows))
        return 0
    binary = os.environ.get("HETSCALE", "target/release/hetscale")
    if not Path(binary).exists():
        print(f"planning.py: no hetscale at {binary}: build it (cargo build --release -p hetscale) or set HETSCALE",
              file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = score(str(Path(binary).resolve()), out, args.programs, args.seed, not args.no_kernels,
                 max(args.jobs, 1))
    (out / "rows.json").write_text(json.dumps(rows, indent=1))
    print(summary(rows) + "\n" + rows_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
