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
miss). OUT_DIR (default planning-benchmark) receives every study and rows.json."""

import argparse
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration as cal  # noqa: E402

PLANNED_NODES = (2, 4, 8, 16, 32, 64)
GRID_NODES = (2, 4, 8)
SCALES = {"8x": 64, "32x": 256}
PRECISION = 0.10
BUDGET_RUNS = 300
GRID_ROUNDS = 5
SEED = 2
PROGRAM = Path(__file__).resolve().parent / "synthetic_program.py"


def spec_text(name: str, program_json: Path, law: cal.Law, target: float, nodes: tuple,
              extra: list = ()) -> str:
    """A command study of the synthetic program on `nodes`, run by this Python itself (no
    launcher script between: a study makes hundreds of runs)."""
    lines = [f'name = "{name}"', 'platform = "kalinov"', f"target = {target!r}", "n_min = 8",
             f"n_max = {cal.N_MAX}", *extra, "", "[command]",
             f'template = "{sys.executable} {PROGRAM} {program_json} {{n}} {{p}}"', f'work = "{law.work}"',
             'time_regex = "time: (\\\\S+)"']
    if law.equal_split:
        lines.append('partition = "equal"')
    for p in nodes:
        lines += ["", "[[configuration]]", f'label = "C_{p}"', f'nodes = "{cal.node_set(p)}"']
    return "\n".join(lines) + "\n"


def write_program(directory: Path, program: cal.Program, seed: str) -> Path:
    """The program's JSON for synthetic_program.py, its run counter reset."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "program.json"
    path.write_text(json.dumps({"law": program.law.__dict__, "noise": program.noise,
                                "seed": seed, "expected_runs": 300}))
    path.with_suffix(".runs").unlink(missing_ok=True)
    return path


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


def planned(binary: str, directory: Path, program: cal.Program, p: int, budget: float, seed: str) -> dict:
    program_json = write_program(directory, program, seed)
    spec = directory / "planned.toml"
    spec.write_text(spec_text("planned", program_json, program.law, program.target, PLANNED_NODES))
    answer = run([binary, "study", str(spec), "--out", str(directory / "out"), "--quiet", "--json",
                  "--predict-nodes", cal.node_set(p), "--replicate", "8",
                  "--precision", str(PRECISION), "--budget-s", f"{budget:.6g}"])
    study = (answer or {}).get("planned", [{}])[0] if answer else {}
    point = (study.get("predicted") or [{}])[0]
    return {"reached": bool(study.get("precision_reached")), "cost_s": study.get("cost_s"),
            "n": point.get("n"), "n_ci95": point.get("n_ci95"), "runs": study.get("runs"),
            "steps": len(study.get("steps", [])), "stopped": study.get("stopped")}


def grid(binary: str, directory: Path, program: cal.Program, budget: float, seed: str) -> dict:
    """The fixed design grown round by round, asked at every scale after each round: per
    scale, its first round within ±10% (its runs' machine time), else its last."""
    results = {scale: {"reached": False, "cost_s": None, "n": None, "n_ci95": None, "rounds": 0}
               for scale in SCALES}
    for k in range(GRID_ROUNDS):
        round_dir = directory / f"grid-{k}"
        program_json = write_program(round_dir, program, seed)
        spec = round_dir / "grid.toml"
        extra = [f"repetitions = {3 * 2 ** k}", f"samples = {4 * 2 ** k}",
                 'approaches = ["measured", "computed"]']
        spec.write_text(spec_text("grid", program_json, program.law, program.target, GRID_NODES, extra))
        db = round_dir / "out" / "study.db"
        subprocess.run([binary, "study", str(spec), "--out", str(round_dir / "out"), "--quiet"],
                       capture_output=True, text=True, timeout=3600)
        cost = machine_time(db)
        for scale, p in SCALES.items():
            if results[scale]["reached"]:
                continue
            answer = db.exists() and run([binary, "predict", "--from", str(db), "--nodes", cal.node_set(p),
                                          "--replicate", "8", "--json"])
            point = ((answer or {}).get("points") or [{}])[0]
            results[scale] = {"reached": half_width(point.get("n"), point.get("n_ci95")) <= PRECISION,
                              "cost_s": cost, "n": point.get("n"), "n_ci95": point.get("n_ci95"),
                              "rounds": k + 1}
        if all(r["reached"] for r in results.values()) or cost is None or cost >= budget:
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


def score(binary: str, out: Path, programs: int, seed: int) -> list:
    rng = random.Random(seed)
    rows = []
    for index in range(programs):
        program = cal.make_program(index, rng)
        n8 = cal.solve_size(program.law, program.target, 8) or 512.0
        budget = BUDGET_RUNS * program.law.time_s(n8, 8)
        noise_seed = f"{seed}-{index}"
        # A program's studies start afresh: an earlier benchmark's runs are not resumed.
        shutil.rmtree(out / program.name, ignore_errors=True)
        grids = grid(binary, out / program.name, program, budget, noise_seed)
        for scale, p in SCALES.items():
            a = planned(binary, out / program.name / scale, program, p, budget, noise_seed)
            b = grids[scale]
            truth = cal.solve_size(program.law, program.target, p)
            rows.append({"program": program.name, "noise": program.noise, "scale": scale, "budget_s": budget,
                         "truth": truth, "planned": a, "grid": b,
                         "planned_s": spent(a, budget), "grid_s": spent(b, budget),
                         "planned_covered": covered(a, truth), "grid_covered": covered(b, truth)})
            print(f"{program.name} {scale}: planned {'reached' if a['reached'] else 'not reached'} in "
                  f"{a['cost_s']} s, grid {'reached' if b['reached'] else 'not reached'} in {b['cost_s']} s "
                  f"(budget {budget:.3g} s)", file=sys.stderr)
    return rows


def summary(rows: list) -> str:
    lines = ["| scale | programs | planned reaches ±10% | grid reaches ±10% | median machine time, planned / grid "
             "| planned covers truth at its stop | grid covers truth at its stop |", "|" + "---|" * 7]
    for scale in SCALES:
        these = [r for r in rows if r["scale"] == scale]
        if not these:
            continue
        ratio = statistics.median(r["planned_s"] / r["grid_s"] for r in these)
        pct = lambda k: f"{sum(k(r) for r in these) / len(these):.0%}"
        lines.append(f"| {scale} | {len(these)} | {pct(lambda r: r['planned']['reached'])} "
                     f"| {pct(lambda r: r['grid']['reached'])} | {ratio:.2f} "
                     f"| {pct(lambda r: r['planned_covered'])} | {pct(lambda r: r['grid_covered'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="planning-benchmark")
    parser.add_argument("--programs", type=int, default=24)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.programs < 1:
        parser.error(f"--programs {args.programs}: give at least 1 program")
    binary = os.environ.get("HETSCALE", "target/release/hetscale")
    if not Path(binary).exists():
        print(f"planning.py: no hetscale at {binary}: build it (cargo build --release -p hetscale) or set HETSCALE",
              file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = score(str(Path(binary).resolve()), out, args.programs, args.seed)
    (out / "rows.json").write_text(json.dumps(rows, indent=1))
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
