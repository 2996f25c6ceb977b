"""The table of validation/scaling.py: predicted N on 16, 32 and 64 nodes against measured.

Usage: python3 validation/scaling_table.py OUT_DIR [PREDICTIONS]

Reads OUT_DIR/results/<kernel>-<machine>-full.json (`hetscale study --json`: the measured N on
every configuration) and OUT_DIR/PREDICTIONS/<kernel>-<machine>-p<P>.json (`hetscale predict
--from --json`, fitted on the 2, 4 and 8-node study; PREDICTIONS defaults to `predictions`) and prints Markdown: one row per held-out
configuration, the model each fit selected, and the verdict against issue 34's targets; then
the intervals of N and of T at the measured N (`...-p<P>-time.json`) per band (2x, 4x and 8x
the largest fitted node count), scored as the calibration benchmark scores its rows
(validation/calibration.py): coverage, median hi/lo, interval score, beside the best fixed
band around the same points.
"""

import json
import math
import statistics
import sys
from pathlib import Path

from calibration import N_MAX, best_fixed_band, interval_score

KERNELS = ["ge", "mm", "conv2d", "summa"]
MACHINES = ["sunwulf", "sunwulf-x64"]
HELD = [16, 32, 64]
MEDIAN_TARGET_PERCENT = 10.0
COVERAGE_TARGET = 0.90


def measured_by_p(out: Path, ident: str, p: int):
    """The measured N of the configuration labelled `p<p>` (the script's labels)."""
    study = json.loads((out / "results" / f"{ident}-full.json").read_text())["studies"][0]
    return next((pt["n"] for pt in study["measured"]["points"] if pt["configuration"] == f"p{p}"), None)


def measured_n(study_json: Path) -> dict:
    """The measured N of each configuration, by node set."""
    study = json.loads(study_json.read_text())["studies"][0]
    nodes = {c["label"]: c["nodes"] for c in study["configurations"]}
    return {nodes[pt["configuration"]]: pt["n"] for pt in study["measured"]["points"]}


def first_clause(message: str) -> str:
    """The reason in a one-line hetscale error, short enough for a table cell."""
    line = message.strip().splitlines()[-1] if message.strip() else "failed"
    line = line.removeprefix("hetscale: ")
    return line.split(": ", 1)[-1].split(";")[0].replace("|", "/")


def main() -> None:
    out = Path(sys.argv[1])
    predictions = sys.argv[2] if len(sys.argv) > 2 else "predictions"
    rows, models = [], []
    for kernel in KERNELS:
        for machine in MACHINES:
            ident = f"{kernel}-{machine}"
            measured = measured_n(out / "results" / f"{ident}-full.json")
            model = None
            for p in HELD:
                base = out / predictions / f"{ident}-p{p}"
                if base.with_suffix(".json").exists():
                    prediction = json.loads(base.with_suffix(".json").read_text())
                    model = prediction["model"]
                    pt = predicted_point(prediction)
                else:
                    # The model reaches no N holding the target there: a miss, kept as its
                    # message, counted as uncovered with an unbounded error.
                    pt = {"p": p, "nodes": None, "error": base.with_suffix(".error").read_text()}
                m = measured.get(pt["nodes"]) if pt["nodes"] else measured_by_p(out, ident, p)
                if m is None:
                    # The measured search found no N (unreachable target): nothing to compare.
                    rows.append((kernel, machine, p, None, pt, None, None))
                elif "error" in pt:
                    rows.append((kernel, machine, p, m, pt, math.inf, False))
                else:
                    lo, hi = pt["n_ci95"] if pt.get("n_ci95") else (pt["n"], pt["n"])
                    # An open upper end (null) covers every larger N.
                    hi = math.inf if hi is None else hi
                    # An interval without a point has no error: a miss for the median.
                    error = 100.0 * (pt["n"] - m) / m if pt["n"] else math.inf
                    rows.append((kernel, machine, p, m, pt, error, lo <= m <= hi))
            models.append((kernel, machine, model))

    print("| kernel | machine | p | measured N | predicted N [95%] | error % | covered |")
    print("|---|---|---:|---:|---:|---:|:---:|")
    for kernel, machine, p, m, pt, error, covered in rows:
        ci = pt.get("n_ci95")
        high = "open" if ci and ci[1] is None else (f"{ci[1]:.0f}" if ci else "")
        interval = f" [{ci[0]:.0f}, {high}]" if ci else ""
        point = pt.get("n") or "interval only:"
        predicted = "none: " + first_clause(pt["error"]) if "error" in pt else f"{point}{interval}"
        shown = "" if error is None else ("n/a" if math.isinf(error) else f"{error:+.1f}")
        print(
            f"| {kernel} | {machine} | {p} | {m if m is not None else 'none'} | "
            f"{predicted} | {shown} | "
            f"{'' if covered is None else ('yes' if covered else 'no')} |"
        )
    print()
    print("| kernel | machine | model selected on 2, 4, 8 nodes | cross-validated error |")
    print("|---|---|---|---:|")
    for kernel, machine, model in models:
        if model is None:
            print(f"| {kernel} | {machine} | (no prediction succeeded) | |")
        else:
            print(f"| {kernel} | {machine} | `{model['formula']}` | {model['cv_error_percent']:.1f}% |")
    print()

    compared = [r for r in rows if r[5] is not None]

    def verdict(label: str, subset: list) -> bool:
        if not subset:
            print(f"- {label}: no rows")
            return False
        median = statistics.median(abs(r[5]) for r in subset)
        coverage = sum(1 for r in subset if r[6]) / len(subset)
        ok = median <= MEDIAN_TARGET_PERCENT and coverage >= COVERAGE_TARGET
        print(
            f"- {label}: median |error| {median:.1f}% (target <= {MEDIAN_TARGET_PERCENT:.0f}%), "
            f"coverage {100 * coverage:.0f}% of {len(subset)} (target >= "
            f"{100 * COVERAGE_TARGET:.0f}%): {'met' if ok else 'not met'}"
        )
        return ok

    ok = verdict("all", compared)
    for machine in MACHINES:
        verdict(machine, [r for r in compared if r[1] == machine])
    for kernel in KERNELS:
        verdict(kernel, [r for r in compared if r[0] == kernel])
    missing = len(rows) - len(compared)
    if missing:
        print(f"- {missing} held-out configurations have no measured N (not compared)")
    worst = sorted(compared, key=lambda r: -abs(r[5]))[:3]
    print(
        "- worst rows: "
        + "; ".join(
            f"{r[0]} on {r[1]}, p = {r[2]}: "
            + (f"{'interval only' if r[4].get('n_ci95') else 'no N predicted'}" if math.isinf(r[5])
               else f"{r[5]:+.1f}%")
            for r in worst
        )
    )
    print(f"\nVerdict: {'met' if ok else 'not met'}")
    print()
    print(interval_table(out, predictions, rows))


def predicted_point(prediction: dict) -> dict:
    """The held-out configuration's answer: its point, else its interval without a point
    (`unreached` with `n_ci95`, `n` None), else its reason as an error."""
    point = next((pt for pt in prediction["points"] if not pt["measured"]), None)
    if point:
        return point
    unreached = prediction.get("unreached", [{}])[0]
    if unreached.get("n_ci95"):
        return {"p": unreached["p"], "nodes": unreached["nodes"], "n": None,
                "n_ci95": unreached["n_ci95"]}
    return {"p": unreached.get("p"), "nodes": unreached.get("nodes"),
            "error": unreached.get("reason", "no answer")}


def time_row(out: Path, predictions: str, kernel: str, machine: str, p: int) -> dict:
    """T at the measured N on `p` nodes: the prediction's point and interval (None where it
    gave none) and the time the full study measured there."""
    study = json.loads((out / "results" / f"{kernel}-{machine}-full.json").read_text())["studies"][0]
    truth = next((pt["time_s"] for pt in study["measured"]["points"] if pt["configuration"] == f"p{p}"), None)
    path = out / predictions / f"{kernel}-{machine}-p{p}-time.json"
    if not path.exists():
        return {"truth": truth, "point": None, "lo": None, "hi": None}
    pt = json.loads(path.read_text())["points"][0]
    return {"truth": truth, "point": pt["time_s"], "lo": pt["time_s_ci95"][0], "hi": pt["time_s_ci95"][1]}


def interval_table(out: Path, predictions: str, rows: list) -> str:
    """Per quantity and band, the intervals scored as the calibration benchmark scores them:
    coverage of every row (no answer, or no interval, is a miss), median hi/lo (infinite for
    a miss or an open end), mean interval score (an open end at the search bound), and the
    best fixed x/÷ band around the same points, chosen knowing the truth."""
    scored = []
    for kernel, machine, p, m, pt, _, _ in rows:
        if m is None:
            continue
        ci = pt.get("n_ci95")
        scored.append({"quantity": "N", "ratio": p // 8, "truth": m, "point": pt.get("n"),
                       "lo": ci[0] if ci else None, "hi": (ci[1] if ci[1] is not None else math.inf) if ci else None})
        scored.append({"quantity": "T", "ratio": p // 8, **time_row(out, predictions, kernel, machine, p)})
    lines = ["| quantity | ratio | rows | coverage | median hi/lo | interval score | best fixed band | its score | its coverage |",
             "|---|---|---|---|---|---|---|---|---|"]
    for quantity in ("N", "T"):
        for ratio in sorted({r["ratio"] for r in scored}):
            band = [r for r in scored if r["quantity"] == quantity and r["ratio"] == ratio and r["truth"]]
            if band:
                lines.append(band_line(quantity, ratio, band))
    return "\n".join(lines)


def band_line(quantity: str, ratio: int, band: list) -> str:
    answered = [r for r in band if r["lo"]]
    covered = sum(r["lo"] <= r["truth"] <= r["hi"] for r in answered)
    hi_lo = [r["hi"] / r["lo"] for r in answered] + [math.inf] * (len(band) - len(answered))
    scores = [interval_score(r["lo"], min(r["hi"], N_MAX), r["truth"]) for r in answered]
    pointed = [r for r in band if r["point"]]
    cell = "-"
    if pointed:
        best, fixed = best_fixed_band(pointed)
        inside = sum(r["point"] / best <= r["truth"] <= r["point"] * best for r in pointed) / len(band)
        cell = f"x/÷{best:.2f} | {fixed:.2f} | {inside:.0%}"
    score = f"{statistics.fmean(scores):.2f}" if scores else "-"
    return (f"| {quantity} | {ratio}x | {len(band)} | {covered / len(band):.0%} | "
            f"{statistics.median(hi_lo):.2f} | {score} | {cell if pointed else '- | - | -'} |")


if __name__ == "__main__":
    main()
