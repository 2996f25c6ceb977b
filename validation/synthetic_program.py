#!/usr/bin/env python3
"""One run of a synthetic program of the calibration benchmark, as a command a study runs:

    python3 validation/synthetic_program.py PROGRAM.json N P

prints `time: T`, the time the program's law (validation/calibration.py's `Law`) gives at
size N on P nodes of `kalinov` (calibration.py's node mix), with the program's noise. Its
runs are numbered in a state file beside PROGRAM.json, so that repetitions draw new noise,
a configuration keeps its offset and a drift grows through the study, and the same sequence
of runs gives the same times. PROGRAM.json holds `law` (Law's fields), `noise`, `seed` and
`expected_runs` (the run count over which a drift reaches its full 10%)."""

import json
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration  # noqa: E402


def run_time(program: dict, n: int, p: int, run: int) -> float:
    """The time of run number `run` (from 0) of `program` at size `n` on `p` nodes."""
    law = calibration.Law(**program["law"])
    offset = math.exp(random.Random(f"{program['seed']}-offset-{p}").gauss(0.0, 0.05))
    progress = min(run / max(program["expected_runs"], 1), 1.0)
    rng = random.Random(f"{program['seed']}-run-{run}")
    return calibration.with_noise(law.time_s(n, p), program["noise"], rng, offset, progress)


def main(argv: list) -> int:
    if len(argv) != 4:
        print("usage: synthetic_program.py PROGRAM.json N P", file=sys.stderr)
        return 2
    path = Path(argv[1])
    program = json.loads(path.read_text())
    n, p = int(argv[2]), int(argv[3])
    state = path.with_suffix(".runs")
    run = int(state.read_text()) if state.exists() else 0
    state.write_text(str(run + 1))
    print(f"time: {run_time(program, n, p, run):.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
