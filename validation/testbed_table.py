#!/usr/bin/env python3
"""The table of validation/testbed.py (issue 36): one row per (program, held-out
configuration, quantity, approach) from the JSON files the driver left in OUT, every row
printed, misses and missing predictions included, then the verdict against issue 36's targets
(median |error| <= 10% for T at fixed N and for the N holding E_s; 95% intervals covering the
measured value in >= 80% of the rows). An N row where neither side finds an N in range
agrees when both find the target on the same side of the range, and is missing otherwise
(no_n_agreement).

    python3 validation/testbed_table.py OUT
"""
import glob
import json
import os
import re
import statistics
import sys

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
    S = 1, 2, ...; an older OUT's one PROG-meas-t-P-nfix.json counts as one sitting), and the
    sittings' own medians, in order."""
    paths = sorted(glob.glob(os.path.join(out, f"{prog}-meas-t-{p}-nfix-*.json")))
    paths = paths or [os.path.join(out, f"{prog}-meas-t-{p}-nfix.json")]
    runs, sittings = [], []
    for path in paths:
        meas = load(path)
        if meas:
            runs += meas.get("times_s") or [meas["time_s"]]
            sittings.append(meas["time_s"])
    return (statistics.median(runs) if runs else None), sittings


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
            rows.append(dict(prog=prog, p="-", quantity="-", approach="-", pred=None,
                             meas=None, ci=None, note="not run"))
            continue
        nfix, target = setup["n_fix"], setup["target"]
        a_study = load(os.path.join(out, f"{prog}-a-study.json"))
        b_pred = load(os.path.join(out, f"{prog}-b-predict.json"))
        b_why = b_error(out, prog)
        b_time = load(os.path.join(out, f"{prog}-b-time.json"))
        held = load(os.path.join(out, f"{prog}-held-study.json"))
        for p in setup["held"]:
            # T at the fixed N
            t_meas, sittings = measured_t(out, prog, p)
            if t_meas and len(sittings) > 1:
                spreads.append((max(sittings) - min(sittings)) / t_meas)
            if prog in DECLARED:
                at = predicted_point(load(os.path.join(out, f"{prog}-a-time.json")), p)
                rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="a",
                                 pred=at["time_s"] if at else None, meas=t_meas,
                                 ci=at.get("time_s_ci95") if at else None, kind="T",
                                 note=sittings_note(sittings) if at else a_error(out, prog, "time")))
            else:
                sim = load(os.path.join(out, f"{prog}-a-sim-{p}.json"))
                rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="a",
                                 pred=sim["time_s"] if sim else None, meas=t_meas,
                                 ci=(sim or {}).get("time_interval_s"),
                                 kind="T",
                                 note=sittings_note(sittings) if sim else "sim run failed"))
            # T at the fixed N, the scaling model's (predict --time-at)
            bt = predicted_point(b_time, p)
            rows.append(dict(prog=prog, p=p, quantity=f"T at N = {nfix}", approach="b",
                             pred=bt["time_s"] if bt else None, meas=t_meas,
                             ci=bt.get("time_s_ci95") if bt else None, kind="T",
                             note=sittings_note(sittings) if bt else b_error(out, prog, "time")))
            bp = predicted_point(b_pred, p)
            # the N holding the target
            q = f"N at E_s = {target}"
            n_rows = setup.get("n_rows", "yes")
            if n_rows != "yes":
                rows.append(dict(prog=prog, p=p, quantity=q, approach="a, b", pred=None,
                                 meas=None, ci=None, kind=None,
                                 note=f"no N row: E_s does not grow with N ({n_rows})"))
                continue
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
                         pred=an["n"] if an else None, meas=n_meas,
                         ci=sorted(ends) if None not in ends else None,
                         kind="N",
                         note=(why or "") if an else (a_unreached or a_why)),
                    a_unreached, why))
            else:
                n_sim, _, sim_why = measured_n(a_study, p)
                rows.append(no_n_agreement(
                    dict(prog=prog, p=p, quantity=q, approach="a",
                         pred=n_sim, meas=n_meas, ci=a_n_interval(out, prog, p),
                         kind="N",
                         note=(why or "") if n_sim else f"sim: {sim_why}"),
                    sim_why, why))
            b_unreached = unreached_reason(b_pred, p, b_why)
            rows.append(no_n_agreement(
                dict(prog=prog, p=p, quantity=q, approach="b",
                     pred=bp["n"] if bp else None, meas=n_meas,
                     ci=bp.get("n_ci95") if bp else None, kind="N",
                     note=(why or "") if bp else (b_unreached or b_why)),
                b_unreached, why))

    print("| program | config | quantity | approach | predicted | measured | error % | 95% interval | covered | note |")
    print("|---|---|---|---|---:|---:|---:|---|:---:|---|")
    for r in rows:
        kind = r.get("kind") or ("T" if r["quantity"].startswith("T") else "N")
        err = None
        if r["pred"] is not None and r["meas"]:
            err = 100.0 * (r["pred"] - r["meas"]) / r["meas"]
        r["err"] = err
        covered = None
        if r["ci"] and r["meas"] is not None:
            covered = r["ci"][0] <= r["meas"] <= r["ci"][1]
        r["covered"] = covered
        ci = f"[{fmt(r['ci'][0], kind)}, {fmt(r['ci'][1], kind)}]" if r["ci"] else "none"
        agreed = f"none ({r['agree']})" if r.get("agree") else None
        print(f"| {r['prog']} | C_{r['p']} | {r['quantity']} | {r['approach']} "
              f"| {agreed or fmt(r['pred'], kind)} | {agreed or fmt(r['meas'], kind)} | {'n/a' if err is None else f'{err:+.1f}'} | {ci} "
              f"| {'n/a' if covered is None else ('yes' if covered else 'no')} | {r.get('note', '')} |")
    print()
    ok = True
    for label, sel in [("T at fixed N", lambda r: r.get("kind") == "T"),
                       ("N holding E_s", lambda r: r.get("kind") == "N")]:
        for appr in ["a", "b", "all"]:
            rs = [r for r in rows if sel(r) and (appr == "all" or r["approach"] == appr)]
            errs = [abs(r["err"]) for r in rs if r["err"] is not None]
            agree = sum(1 for r in rs if r.get("agree"))
            missing = len(rs) - len(errs) - agree
            med = statistics.median(errs) if errs else None
            met = med is not None and med <= 10 and missing == 0
            if appr == "all":
                ok = ok and met
            print(f"- {label}, approach {appr}: median |error| "
                  f"{'n/a' if med is None else f'{med:.1f}%'} over {len(errs)} rows"
                  f"{f', {agree} where both sides find no N in range, on the same side' if agree else ''}"
                  f"{f', {missing} without a prediction or measurement' if missing else ''} "
                  f"(target <= 10%): {'met' if met else 'not met'}")
    with_ci = [r for r in rows if r.get("kind") and r["meas"] is not None and r["pred"] is not None]
    cov = [r for r in with_ci if r["covered"]]
    only_ci = [r for r in with_ci if r["ci"]]
    frac = len(cov) / len(with_ci) if with_ci else 0.0
    print(f"- coverage: {len(cov)} of {len(with_ci)} rows with a prediction and a measurement "
          f"({100 * frac:.0f}%; a row without an interval counts as not covered; "
          f"{len(cov)} of {len(only_ci)} rows that have one) (target >= 80%): "
          f"{'met' if frac >= 0.8 else 'not met'}")
    ok = ok and frac >= 0.8
    if spreads:
        print(f"- the testbed's own spread: a T row's sittings' medians span "
              f"{100 * statistics.median(spreads):.0f}% of its measured T at the median row "
              f"({100 * max(spreads):.0f}% at most, over {len(spreads)} rows)")
    print()
    print(f"Verdict: {'met' if ok else 'not met'}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    table(sys.argv[1])


if __name__ == "__main__":
    main()
