"""Fits the predictive distribution's constants (hetscale-model's `scaling/predictive.rs`:
WITH_FOLDS, TWO_NODE_COUNTS and ONE_NODE_COUNT, each the module's A, B, Z, R_c, R_o, M, G) to the T rows of
the calibration benchmark drawn for fitting (`calibration.py --fit`).

Each T row carries the ingredients its interval was read from: the model's compute and
overhead parts at the point, the resamples' spreads of their logs, the doublings past the
fit, the nested folds' overhead error per doubling and each part's leave-largest-out divergence. For
any constants the interval follows in closed form (as predictive.rs reads it, around the
bagged point), so the constants are chosen, by coordinate descent over grids, to minimise
the rows' mean interval score (Winkler, log scale, alpha = 0.05) over the bands from 2x to
32x: a proper score for the 2.5% and 97.5% quantiles (Gneiting & Raftery, JASA 2007), so its
minimum is at calibrated ends, not at a coverage chosen by hand; subject to a coverage of at
least COVERAGE_FLOOR in each band (a shortfall costs PENALTY per unit), since a mean over the
bands may buy a sharper 2x with a coverage below the issue's 90% there, and a draw of fresh
programs covers a few points less than the draw fitted. Each set is fitted on the rows
whose distribution was read with it (the row's `constants.set`): WITH_FOLDS on the studies
with a nested fold (2+4+8 nodes), TWO_NODE_COUNTS on those of two node counts above one (4+8)
and ONE_NODE_COUNT on those of one (1+2); the last two have M and G held at 0, since such a
study has neither folds nor divergences. A missing row scores as in calibration.py: it is left to the summary, which
counts it a miss; the fit sees only rows that have an interval."""

import math

from calibration import interval_score

Z_975 = 1.959964
NAMES = ("compute_fit_scale", "overhead_fit_scale", "overhead_fit_growth", "compute_rate",
         "overhead_rate", "fold_scale", "divergence_scale")
# Each constant's grid: 0, then a geometric ladder from 0.002 to 10 fine enough (5% steps)
# that its best point moves an interval by less than the noise of the rows.
LADDER = [0.0] + [0.002 * 1.05**i for i in range(176)]
STARTS = ((2.0, 0.5, 0.05, 0.04, 0.1, 0.4, 0.4), (1.0, 1.0, 0.1, 0.05, 0.15, 0.1, 0.2),
          (3.0, 2.0, 0.3, 0.03, 0.2, 0.0, 0.0))
FITTED_BANDS = (2, 4, 8, 32)
COVERAGE_FLOOR = 0.93
PENALTY = 100.0


def interval(predictive: dict, point: float, constants: tuple) -> tuple:
    """The T interval of a row's predictive distribution under `constants` (NAMES' order), as
    predictive.rs's `factors`: each part's error at its share of the variance of ln T."""
    a, b, z, rate_c, rate_o, m, g = constants
    c, o, L = predictive["compute_s"], predictive["overhead_s"], predictive["doublings"]
    s_c, s_o = predictive["compute_fit_spread"], predictive["overhead_fit_spread"]
    d_c, d_o = (predictive[k] if L > 0 else 0.0 for k in ("compute_divergence", "overhead_divergence"))
    scales = (math.sqrt((a * s_c) ** 2 + (rate_c * L) ** 2 + (g * d_c) ** 2),
              math.sqrt((b * s_o) ** 2 + (z * s_o * L) ** 2 + (rate_o * L) ** 2
                        + (m * predictive["fold_overhead_rate"] * L) ** 2 + (g * d_o) ** 2))
    deviations = (scales[0] * c / (c + o), scales[1] * o / (c + o))
    spread = math.hypot(*deviations)
    bagging = predictive.get("bagging", 0.0)
    if spread == 0.0:
        return point, point
    # An end past a float's range is infinite, as in predictive.rs.
    end = lambda sign: sum(part * math.exp(min(sign * Z_975 * s * d / spread + bagging, 700.0))
                           for part, s, d in zip((c, o), scales, deviations))
    return min(end(-1.0), point), max(end(1.0), point)


SETS = {"WITH_FOLDS": "with folds", "TWO_NODE_COUNTS": "two node counts",
        "ONE_NODE_COUNT": "one node count"}


def usable(rows: list, constant_set: str) -> list:
    """The T rows of the fitted bands read with the constant set named `constant_set`."""
    return [r for r in rows if r["quantity"] == "T" and r["point"] and r["predictive"] and r["truth"]
            and r["ratio"] in FITTED_BANDS and r["predictive"]["constants"]["set"] == constant_set]


def mean_score(rows: list, constants: tuple) -> float:
    """The rows' mean interval score under `constants`, plus PENALTY per unit of coverage
    below COVERAGE_FLOOR in each band."""
    intervals = [(r, interval(r["predictive"], r["point"], constants)) for r in rows]
    score = sum(interval_score(lo, hi, r["truth"]) for r, (lo, hi) in intervals) / len(rows)
    for band in FITTED_BANDS:
        covered = [lo <= r["truth"] <= hi for r, (lo, hi) in intervals if r["ratio"] == band]
        if covered:
            score += PENALTY * max(0.0, COVERAGE_FLOOR - sum(covered) / len(covered))
    return score


def descend(rows: list, start: tuple, free: tuple) -> tuple:
    """Coordinate descent from `start`: each free constant in turn set to its grid's best,
    the others held, until none moves."""
    best = tuple(min(LADDER, key=lambda v: abs(v - s)) if i in free else 0.0 for i, s in enumerate(start))
    while True:
        moved = best
        for i in free:
            moved = min((moved[:i] + (v,) + moved[i + 1:] for v in LADDER), key=lambda k: mean_score(rows, k))
        if moved == best:
            return best
        best = moved


def fit_set(rows: list, constant_set: str) -> dict:
    """One constant set: the best of a coordinate descent from each of STARTS, and the
    coverage it gives."""
    rows = usable(rows, constant_set)
    if not rows:
        return {"rows": 0}
    free = tuple(range(7)) if constant_set == SETS["WITH_FOLDS"] else tuple(range(5))
    best = min((descend(rows, start, free) for start in STARTS), key=lambda k: mean_score(rows, k))
    covered = sum(lo <= r["truth"] <= hi for r in rows
                  for lo, hi in [interval(r["predictive"], r["point"], best)])
    return {"constants": dict(zip(NAMES, best)), "rows": len(rows),
            "mean_interval_score": mean_score(rows, best), "coverage": covered / len(rows)}


def fit(rows: list) -> dict:
    return {name: fit_set(rows, constant_set) for name, constant_set in SETS.items()}


def report(fitted: dict) -> str:
    lines = []
    for name, one in fitted.items():
        if not one["rows"]:
            lines.append(f"{name}: no T rows to fit")
            continue
        constants = ", ".join(f"{k} = {v:.4g}" for k, v in one["constants"].items())
        lines.append(f"{name}, fitted on {one['rows']} T rows: {constants} "
                     f"(objective {one['mean_interval_score']:.3f}: the mean interval score plus any coverage "
                     f"shortfall's penalty; coverage {one['coverage']:.0%})")
    return "\n".join(lines)
