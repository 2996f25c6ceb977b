#!/usr/bin/env python3
"""The table of validation/testbed.py under its frozen protocol
(validation/testbed-protocol.md): one row per declared (program, held-out configuration,
quantity, approach) from the JSON files the driver left in OUT, every row printed, misses and
missing predictions included, the measured side's own 95% interval beside each, then the
coverage, median hi/lo and interval score per quantity and approach and over every row,
beside the best fixed band around the same points, and the verdict against the protocol's
targets (coverage >= 85%, median hi/lo <= 1.6, no row without a prediction or a
measurement). An N row where neither side finds an N in range agrees when both find the
target on the same side of the range (no_n_agreement).

    python3 validation/testbed_table.py OUT
"""
import glob
import json
import math
import os
import re
import statistics
import sys

# The interval score and the fixed bands are the calibration benchmark's own.
from calibration import FIXED_BANDS, interval_score

PROGRAMS = ["ge", "mm", "conv2d", "jacobi"]
# The programs hetscale does not run: their (a) is approach 3 on their declared model
# (`predict --work ... --program`), not sim replaying a kernel's supersteps.
DECLARED = {"jacobi"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def point_p(point):
    if "p" in point:
        return point["p"]
    return point.get("configuration", {}).get("p")


def predicted_point(predict, p):
    if not predict:
        return None
    for point in predict.get("points", []):
        if point_p(point) == p and not point.get("measured"):
            return point
    return None


def measured_n(study, p):
    if not study:
        return None, None, "no study output"
    s = study["studies"][0]
    for point in (s.get("measured") or {}).get("points", []):
        if point.get("p") == p or point.get("configuration") == f"C_{p}":
            return point["n"], point.get("n_ci95"), None
    reasons = [f.get("reason") or f.get("message") or str(f)
               for f in (s.get("measured") or {}).get("failures", [])
               if f.get("configuration") in (None, f"C_{p}")]
    return None, None, "; ".join(str(r) for r in reasons) or "not settled"


def side_of_target(why):
    """Where the target lies for a search that found no N in its range, from its one-line
    reason: "above" when E_s exceeds the target from the range's first size on, "below" when
    no size reaches it; None for any other failure."""
    if not why:
        return None
    # A study's reason names E_s, predict's names speed-efficiency.
    above = "already exceeds the target" in why
    below = re.search(r"reaches (E_s|speed-efficiency) =", why) is not None
    return "above" if above and not below else "below" if below and not above else None


def unreached_reason(predict, p, error=None):
    """predict's reason that no size in its range holds the target on C_p, if it gave one:
    from its JSON's `unreached`, or, where no configuration was reached and predict exited
    with an error instead, from that error's part for `configuration P:`."""
    for u in (predict or {}).get("unreached", []):
        if u.get("p") == p:
            return u.get("reason")
    # A configuration is named by its nodes: a count ("4") or its hosts ("h1,h2,h3,h4").
    parts = re.split(r"configuration (\S+): ", error or "")
    for nodes, reason in zip(parts[1::2], parts[2::2]):
        if nodes == str(p) or len(nodes.split(",")) == p > 1:
            return reason.strip().rstrip(";").strip()
    return None


def no_n_agreement(row, pred_why, meas_why):
    """An N row where neither side found an N in range scores as agreement when both found
    the target on the same side of the whole range (the question "the first N in range
    holding the target" has the same answer on both), and as missing otherwise. Decided before
    the run that first used it, from the rows' definition; it never turns a size into a hit."""
    if row["pred"] is not None or row["meas"] is not None:
        return row
    side = side_of_target(pred_why)
    if side and side == side_of_target(meas_why):
        row["agree"] = side
        where = "above the target from the range's first size" if side == "above" \
            else "below the target over the whole range"
        row["note"] = f"both: no N in range, E_s {where}; " + row["note"]
    return row


def held_of(out):
    """The held-out host counts of this OUT, from any program's setup (C_4 if none ran)."""
    for prog in PROGRAMS:
        setup = load(os.path.join(out, f"{prog}-setup.json"))
        if setup:
            return setup["held"]
    return [4]


def fmt(x, kind):
    if x is None:
        return "n/a"
    if kind == "T":
        return f"{x:.3f} s" if x < 100 else f"{x:.0f} s"
    return f"{x:.0f}"


def a_n_interval(out, prog, p):
    """(a)'s interval for the N holding the target: the N that the sim studies at the
    target scaled by the T interval's ends hold (a measured T = k T_sim has E_s = E_s_sim / k,
    so the measured machine holds the target where sim holds k times it). An end whose sim
    study reaches its target at no size searched is that search's bound (as `predict` opens
    an interval to the bound a form reaches the target beyond)."""
    ends = [sim_n_or_bound(load(os.path.join(out, f"{prog}-a-study-{end}.json")), p)
            for end in ("lo", "hi")]
    return ends if None not in ends else None


def declared_n_or_bound(out, prog, end, p, a_range):
    """The N a declared program's (a) interval end (`predict --work` at the target times k,
    PROG-a-predict-END.json) holds on C_p, or, as `sim_n_or_bound` takes a kernel's, the bound
    of its search (`a_range`, [n_min, n_max]) when every size searched is on one side of its
    target."""
    predict = load(os.path.join(out, f"{prog}-a-predict-{end}.json"))
    point = predicted_point(predict, p)
    if point:
        return point["n"]
    why = unreached_reason(predict, p, a_error(out, prog, f"predict-{end}"))
    return bound_of(why, *a_range) if a_range else None


def bound_of(why, n_min, n_max):
    """The bound of a search that found no N, from its one-line reason: n_max when no size
    reaches the target, n_min when the first exceeds it; None for any other failure."""
    side = side_of_target(why)
    return n_max if side == "below" else n_min if side == "above" else None


def sim_n_or_bound(study, p):
    """The N a sim study found on C_p, or the bound of its search when every size searched
    is on one side of its target: n_max when none reaches it, n_min when the first exceeds
    it."""
    n, _, why = measured_n(study, p)
    if n is not None or not why or not study:
        return n
    spec = study["studies"][0]["spec"]
    return bound_of(why, spec["n_min"], spec["n_max"])


def predict_error(out, prog, approach, what):
    """Why an approach predicted nothing: predict's own one-line error in
    PROG-APPROACH-WHAT.err, if it left one ((b) is `predict --runs`, a declared program's (a)
    `predict --work`)."""
    command = "predict --runs" if approach == "b" else "predict --work"
    try:
        with open(os.path.join(out, f"{prog}-{approach}-{what}.err")) as f:
            lines = [l.strip() for l in f if l.startswith("hetscale:")]
    except OSError:
        lines = []
    return f"{command}: {lines[-1][len('hetscale: '):]}" if lines else f"{command} failed"


def b_error(out, prog, what="predict"):
    return predict_error(out, prog, "b", what)


def a_error(out, prog, what):
    return predict_error(out, prog, "a", what)


def measured_t(out, prog, p):
    """The measured T at N_FIX: the median of every sitting's runs (PROG-meas-t-P-nfix-S.json,
    S = 1, 2, ...; an older OUT's one PROG-meas-t-P-nfix.json counts as one sitting), the
    sittings' own medians, in order, and the median's distribution-free 95% interval."""
    paths = sorted(glob.glob(os.path.join(out, f"{prog}-meas-t-{p}-nfix-*.json")))
    paths = paths or [os.path.join(out, f"{prog}-meas-t-{p}-nfix.json")]
    runs, sittings = [], []
    for path in paths:
        meas = load(path)
        if meas:
            runs += meas.get("times_s") or [meas["time_s"]]
            sittings.append(meas["time_s"])
    return (statistics.median(runs) if runs else None), sittings, median_interval(runs)


def median_interval(values):
    """The distribution-free interval of a median from order statistics: the widest-in
    [x_(k), x_(m+1-k)] whose binomial coverage is at least 95% (for 9 runs, the 2nd and the
    8th, 96.1%); None for fewer than 6 values, which no such interval covers."""
    xs = sorted(values)
    m = len(xs)
    best = None
    for k in range(1, m // 2 + 1):
        below = sum(math.comb(m, i) for i in range(k)) / 2**m
        if 1 - 2 * below >= 0.95:
            best = (xs[k - 1], xs[m - k])
    return best


def sittings_note(sittings):
    if len(sittings) < 2:
        return ""
    return "sittings' medians " + ", ".join(f"{t:.3g}" for t in sittings) + " s"


def table(out):
    rows = []
    spreads = []  # per held-out T: its sittings' medians' range over the measured T
    for prog in PROGRAMS:
        setup = load(os.path.join(out, f"{prog}-setup.json"))
        if not setup:
            # Its declared rows are misses, none dropped.
            rows += [dict(prog=prog, p=p, quantity=q, approach=a, pred=None, meas=None,
                          ci=None, kind=q[0], note="not run")
                     for p in held_of(out) for q in ("T at N_FIX", "N at the target")
                     for a in ("a", "b")]
            continue
        nfix, target = setup["n_fix"], setup["target"]
        a_study = load(os.path.join(out, f"{prog}-a-study.json"))
        b_pred = load(os.path.join(out, f"{prog}-b-predict.json"))
        b_why = b_error(out, prog)
        b_time = load(os.path.join(out, f"{prog}-b-time.json"))
        held = load(os.path.join(out, f"{prog}-held-study.json"))
        for p in setup["held"]:
            # T at the fixed N
            t_meas, sittings, t_meas_ci = measured_t(out, prog, p)
            if t_meas and len(sittings) > 1:
                spreads.append((max(sittings) - min(sittings)) / t_meas)
            if prog in DECLARED:
                at = predicted_point(load(os.path.join(out, f"{prog}-a-time.json")), p)
                rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="a",
                                 pred=at["time_s"] if at else None, meas=t_meas,
                                 meas_ci=t_meas_ci,
                                 ci=at.get("time_s_ci95") if at else None, kind="T",
                                 note=sittings_note(sittings) if at else a_error(out, prog, "time")))
            else:
                sim = load(os.path.join(out, f"{prog}-a-sim-{p}.json"))
                rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="a",
                                 pred=sim["time_s"] if sim else None, meas=t_meas,
                                 meas_ci=t_meas_ci,
                                 ci=(sim or {}).get("time_interval_s"),
                                 kind="T",
                                 note=sittings_note(sittings) if sim else "sim run failed"))
            # T at the fixed N, the scaling model's (predict --time-at)
            bt = predicted_point(b_time, p)
            rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="b",
                             pred=bt["time_s"] if bt else None, meas=t_meas,
                             meas_ci=t_meas_ci,
                             ci=bt.get("time_s_ci95") if bt else None, kind="T",
                             note=sittings_note(sittings) if bt else b_error(out, prog, "time")))
            bp = predicted_point(b_pred, p)
            # the N holding the target
            q = f"N at E_s = {target}"
            n_meas, n_meas_ci, why = measured_n(held, p)
            if prog in DECLARED:
                a_pred = load(os.path.join(out, f"{prog}-a-predict.json"))
                an = predicted_point(a_pred, p)
                ends = [declared_n_or_bound(out, prog, e, p, setup.get("a_range"))
                        for e in ("lo", "hi")]
                a_why = a_error(out, prog, "predict")
                a_unreached = unreached_reason(a_pred, p, a_why)
                rows.append(no_n_agreement(
                    dict(prog=prog, p=p, quantity=q, approach="a",
                         pred=an["n"] if an else None, meas=n_meas, meas_ci=n_meas_ci,
                         ci=sorted(ends) if None not in ends else None,
                         kind="N",
                         note=(why or "") if an else (a_unreached or a_why)),
                    a_unreached, why))
            else:
                n_sim, _, sim_why = measured_n(a_study, p)
                rows.append(no_n_agreement(
                    dict(prog=prog, p=p, quantity=q, approach="a",
                         pred=n_sim, meas=n_meas, meas_ci=n_meas_ci, ci=a_n_interval(out, prog, p),
                         kind="N",
                         note=(why or "") if n_sim else f"sim: {sim_why}"),
                    sim_why, why))
            b_unreached = unreached_reason(b_pred, p, b_why)
            rows.append(no_n_agreement(
                dict(prog=prog, p=p, quantity=q, approach="b",
                     pred=bp["n"] if bp else None, meas=n_meas, meas_ci=n_meas_ci,
                     ci=bp.get("n_ci95") if bp else None, kind="N",
                     note=(why or "") if bp else (b_unreached or b_why)),
                b_unreached, why))

    print("| program | config | quantity | approach | predicted | measured | measured 95% | error % | 95% interval | hi/lo | interval score | covered | note |")
    print("|---|---|---|---|---:|---:|---|---:|---|---:|---:|:---:|---|")
    for r in rows:
        score_row(r)
        kind = r["kind"]
        ci = f"[{fmt(r['ci'][0], kind)}, {'open' if r['ci'][1] is None else fmt(r['ci'][1], kind)}]" \
            if r["ci"] else "none"
        meas_ci = f"[{fmt(r['meas_ci'][0], kind)}, {fmt(r['meas_ci'][1], kind)}]" if r.get("meas_ci") else "n/a"
        agreed = f"none ({r['agree']})" if r.get("agree") else None
        err = r["err"]
        print(f"| {r['prog']} | C_{r['p']} | {r['quantity']} | {r['approach']} "
              f"| {agreed or fmt(r['pred'], kind)} | {agreed or fmt(r['meas'], kind)} | {meas_ci} "
              f"| {'n/a' if err is None else f'{err:+.1f}'} | {ci} | {r['hi_lo']:.2f} "
              f"| {'n/a' if r['score'] is None else format(r['score'], '.2f')} "
              f"| {'yes' if r['covered'] else 'no'} | {r.get('note', '')} |")
    print()
    print(verdict(rows, spreads))


# The protocol's targets (validation/testbed-protocol.md), per repeat.
COVERAGE_TARGET = 0.85
HI_LO_TARGET = 1.6
ERROR_TARGET = 10.0


def score_row(r):
    """A row's error, coverage, hi/lo and interval score, by the protocol's rules: a row
    without a prediction, a measurement or an interval is not covered and its hi/lo is
    infinite; a row where both sides find the target on the same side of the whole range
    (`agree`) is covered, its answer being right, with no error, and the hi/lo of the
    interval it gives (infinite where it gives none). An open upper end is
    infinite: it covers every measurement above its lower end, and has no interval score."""
    r["kind"] = r.get("kind") or ("T" if r["quantity"].startswith("T") else "N")
    pred, meas, ci = r["pred"], r["meas"], r["ci"]
    r["err"] = 100.0 * (pred - meas) / meas if pred is not None and meas else None
    has_ci = bool(ci) and ci[0] > 0
    upper = math.inf if not has_ci or ci[1] is None else ci[1]
    r["hi_lo"] = upper / ci[0] if has_ci else math.inf
    r["covered"] = bool(r.get("agree")) or (has_ci and meas is not None and ci[0] <= meas <= upper)
    r["score"] = interval_score(ci[0], upper, meas) if has_ci and meas and upper < math.inf else None
    return r


def fixed_band(rows):
    """The best fixed x/÷ band around the same points, chosen knowing the measurements (the
    lowest mean interval score over the rows with a point and a measurement): its factor,
    mean score and coverage over every row (a row without a point is not covered)."""
    pointed = [r for r in rows if r["pred"] and r["meas"]]
    if not pointed:
        return None, None, 0.0
    mean_score = lambda f: statistics.fmean(
        interval_score(r["pred"] / f, r["pred"] * f, r["meas"]) for r in pointed)
    best = min(FIXED_BANDS, key=mean_score)
    covered = sum(r["pred"] / best <= r["meas"] <= r["pred"] * best for r in pointed)
    return best, mean_score(best), covered / len(rows)


def summary_line(label, rows):
    """Coverage, median hi/lo, mean interval score and median |error| of `rows`, every row
    counted, beside the fixed band."""
    if not rows:
        return f"- {label}: no rows", True
    covered = sum(r["covered"] for r in rows) / len(rows)
    hi_lo = statistics.median(r["hi_lo"] for r in rows)
    scores = [r["score"] for r in rows if r["score"] is not None]
    errs = [abs(r["err"]) for r in rows if r["err"] is not None]
    missing = sum(1 for r in rows if r["err"] is None and not r.get("agree"))
    band, band_score, band_covered = fixed_band(rows)
    met = covered >= COVERAGE_TARGET and hi_lo <= HI_LO_TARGET and missing == 0
    text = (f"- {label}: coverage {100 * covered:.0f}% of {len(rows)} rows, median hi/lo "
            f"{hi_lo:.2f}, interval score {f'{statistics.fmean(scores):.2f}' if scores else 'n/a'}"
            f" over {len(scores)}; median |error| "
            f"{f'{statistics.median(errs):.1f}%' if errs else 'n/a'} over {len(errs)}"
            f"{f', {missing} without a prediction or measurement' if missing else ''}; "
            f"fixed band {'n/a' if band is None else f'x/÷{band:.2f}'} scores "
            f"{'n/a' if band_score is None else f'{band_score:.2f}'}, covers "
            f"{100 * band_covered:.0f}%")
    return text, met


def verdict(rows, spreads):
    """The protocol's summary: per quantity and approach, then every row; the verdict is the
    targets on every row together (coverage >= 85%, median hi/lo <= 1.6, none missing)."""
    lines = []
    for label, kind in (("T at fixed N", "T"), ("N holding E_s", "N")):
        for appr in ("a", "b"):
            lines.append(summary_line(f"{label}, approach {appr}",
                                      [r for r in rows if r["kind"] == kind and r["approach"] == appr])[0])
    text, met = summary_line("every row", rows)
    lines.append(text)
    errs = [abs(r["err"]) for r in rows if r["err"] is not None]
    if spreads:
        lines.append(f"- the testbed's own spread: a T row's sittings' medians span "
                     f"{100 * statistics.median(spreads):.0f}% of its measured T at the median "
                     f"row ({100 * max(spreads):.0f}% at most, over {len(spreads)} rows)")
    lines.append("")
    lines.append(f"Verdict: {'met' if met else 'not met'} (coverage >= {100 * COVERAGE_TARGET:.0f}%, "
                 f"median hi/lo <= {HI_LO_TARGET}, no row without a prediction or measurement"
                 f"; median |error| {f'{statistics.median(errs):.1f}%' if errs else 'n/a'} "
                 f"against issue 36's {ERROR_TARGET:.0f}%, shown, not part of this verdict)")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if not os.path.isdir(sys.argv[1]):
        sys.exit(f"testbed_table.py: no directory {sys.argv[1]}: give the OUT that validation/testbed.py wrote")
    try:
        table(sys.argv[1])
    except BrokenPipeError:
        # A reader that stops early (| head) ends the table, not with a traceback.
        sys.stderr.close()


if __name__ == "__main__":
    main()
