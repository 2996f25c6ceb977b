"""Fits the predictive distribution's four constants (hetscale-model's
`scaling/predictive.rs`: PRIOR_COMPUTE_RATE, PRIOR_OVERHEAD_RATE, PRIOR_FOLDS,
FIT_SPREAD_SCALE) to the T rows of the calibration benchmark drawn for fitting
(`calibration.py --fit`).

Each T row carries the ingredients its interval was read from: the model's compute and
overhead parts at the point, the resamples' spreads of their logs, the doublings past the fit, and
the nested folds. For any constants the interval follows in closed form (as predictive.rs
reads it), so the constants are chosen, by coordinate descent over grids, to minimise the
rows' mean interval score (Winkler, log scale, alpha = 0.05): a proper score for the 2.5% and 97.5% quantiles
(Gneiting & Raftery, JASA 2007), so its minimum is at calibrated ends, not at a coverage
chosen by hand. A missing row scores as in calibration.py: it is left to the summary, which
counts it a miss; the fit sees only rows that have an interval."""

import math
from functools import lru_cache

from calibration import FIT_NODES, fit_label, interval_score

ALPHA = 0.05
COMPUTE_RATES = [0.0] + [0.002 * 1.2**i for i in range(35)]
OVERHEAD_RATES = [0.01 * 1.15**i for i in range(40)]
FOLDS = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0, 128.0, 256.0, 1024.0]
SCALES = [0.25 * 1.1**i for i in range(30)]
GRIDS = (COMPUTE_RATES, OVERHEAD_RATES, FOLDS, SCALES)
STARTS = ((0.05, 0.2, 4.0, 1.0), (0.01, 0.5, 1.0, 2.0), (0.2, 0.1, 16.0, 0.5))


def t_pdf(x: float, dof: float) -> float:
    log_c = math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2) - 0.5 * math.log(dof * math.pi)
    return math.exp(log_c - (dof + 1) / 2 * math.log1p(x * x / dof))


@lru_cache(maxsize=None)
def t_quantile_975(dof: float) -> float:
    """The 97.5% quantile of Student's t, by Simpson's rule on the density and bisection."""

    def cdf_above_zero(x: float) -> float:
        steps = 2000
        h = x / steps
        inner = sum((4 if i % 2 else 2) * t_pdf(i * h, dof) for i in range(1, steps))
        return h / 3 * (t_pdf(0.0, dof) + inner + t_pdf(x, dof))

    lo, hi = 0.0, 1000.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if cdf_above_zero(mid) < 0.475 else (lo, mid)
    return 0.5 * (lo + hi)


def posterior(folds: list, prior_compute: float, prior_overhead: float, prior_folds: float) -> tuple:
    """The compute and overhead rates per doubling and the degrees of freedom after the
    nested folds (each cut one observation of (d / L)^2, its predicted configurations
    averaged), as predictive.rs."""
    cuts = {}
    for f in folds:
        doublings = math.log2(f["predicted_nodes"] / f["fitted_nodes"])
        cuts.setdefault(f["fitted_nodes"], []).append(
            ((f["compute_error"] / doublings) ** 2, (f["overhead_error"] / doublings) ** 2))
    m = len(cuts)
    seen = [sum(sum(v[i] for v in c) / len(c) for c in cuts.values()) for i in (0, 1)]
    rate = lambda prior, s: math.sqrt((prior_folds * prior**2 + s) / (prior_folds + m))
    return rate(prior_compute, seen[0]), rate(prior_overhead, seen[1]), prior_folds + m


def interval(predictive: dict, point: float, constants: tuple) -> tuple:
    """The T interval of a row's predictive distribution under `constants`: each part's
    error at its share of the variance of ln T, as predictive.rs's `factors`."""
    prior_compute, prior_overhead, prior_folds, spread_scale = constants
    compute_rate, overhead_rate, dof = posterior(predictive["folds"], prior_compute, prior_overhead, prior_folds)
    c, o, L = predictive["compute_s"], predictive["overhead_s"], predictive["doublings"]
    scales = (math.hypot(spread_scale * predictive["compute_fit_spread"], compute_rate * L),
              math.hypot(spread_scale * predictive["overhead_fit_spread"], overhead_rate * L))
    deviations = (scales[0] * c / (c + o), scales[1] * o / (c + o))
    spread = math.hypot(*deviations)
    if spread == 0.0:
        return point, point
    q = t_quantile_975(dof)
    end = lambda sign: sum(part * math.exp(sign * q * s * d / spread)
                           for part, s, d in zip((c, o), scales, deviations))
    return min(end(-1.0), point), max(end(1.0), point)


# The fits the constants are fitted on: the three-configuration ones (the two-configuration
# fits are scored, not fitted on).
FITTED_ON = fit_label(FIT_NODES)


def usable(rows: list) -> list:
    return [r for r in rows if r["quantity"] == "T" and r["point"] and r["predictive"] and r["truth"]
            and r.get("configurations", FITTED_ON) == FITTED_ON]


def mean_score(rows: list, constants: tuple) -> float:
    return sum(interval_score(*interval(r["predictive"], r["point"], constants), r["truth"]) for r in rows) / len(rows)


def descend(rows: list, start: tuple) -> tuple:
    """Coordinate descent from `start`: each constant in turn set to its grid's best, the
    others held, until no constant moves."""
    best = tuple(min(grid, key=lambda v: abs(v - s0)) for grid, s0 in zip(GRIDS, start))
    while True:
        moved = best
        for i, grid in enumerate(GRIDS):
            moved = min((moved[:i] + (v,) + moved[i + 1:] for v in grid), key=lambda k: mean_score(rows, k))
        if moved == best:
            return best
        best = moved


def fit(rows: list) -> dict:
    """The constants minimising the mean interval score of `rows`' T rows (the best of a
    coordinate descent from each of STARTS), and the coverage they give."""
    rows = usable(rows)
    best = min((descend(rows, start) for start in STARTS), key=lambda k: mean_score(rows, k))
    covered = sum(lo <= r["truth"] <= hi for r in rows
                  for lo, hi in [interval(r["predictive"], r["point"], best)])
    return {"prior_compute_rate": best[0], "prior_overhead_rate": best[1], "prior_folds": best[2],
            "fit_spread_scale": best[3], "rows": len(rows), "mean_interval_score": mean_score(rows, best),
            "coverage": covered / len(rows) if rows else None}


def report(fitted: dict) -> str:
    return (f"fitted on {fitted['rows']} T rows: PRIOR_COMPUTE_RATE = {fitted['prior_compute_rate']:.4g}, "
            f"PRIOR_OVERHEAD_RATE = {fitted['prior_overhead_rate']:.4g}, PRIOR_FOLDS = {fitted['prior_folds']:g}, "
            f"FIT_SPREAD_SCALE = {fitted['fit_spread_scale']:.4g} "
            f"(mean interval score {fitted['mean_interval_score']:.3f}, coverage {fitted['coverage']:.0%})")
