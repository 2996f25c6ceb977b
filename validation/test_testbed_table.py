#!/usr/bin/env python3
"""Tests of testbed_table.py's scoring under the frozen protocol
(validation/testbed-protocol.md): every declared row counted, a missing one a miss; where
neither side finds an N in range, a row agrees only when both put the target on the same side
of the range; otherwise it is missing and fails the verdict.

    python3 -m unittest discover -s validation
"""
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed_table as table  # noqa: E402

ABOVE = "E_s = 0.0136 at N = 128 already exceeds the target 0.0086: lower n_min or raise the target"
BELOW = ("no N in [128, 2048] reaches E_s = 0.0086: the highest E_s reached is 0.0062 at "
         "N = 2048; raise n_max or lower the target")


def write(out, name, value):
    with open(os.path.join(out, name), "w") as f:
        json.dump(value, f)


def study(failures):
    """A measured-approach study's JSON that found no N, with these (configuration, reason)."""
    return {"studies": [{"spec": {"n_min": 128, "n_max": 2048},
                         "measured": {"points": [],
                                      "failures": [{"configuration": c, "message": m}
                                                   for c, m in failures]}}]}


def conv2d_out(out, measured_c4):
    """An OUT with conv2d's files only: C_4 held out, both predictions finding E_s above the
    target from the range's first size, the measured study's C_4 reason `measured_c4`."""
    write(out, "conv2d-setup.json",
          {"n_fix": 512, "target": 0.0086, "held": [4], "n_rows": "yes"})
    write(out, "conv2d-a-sim-4.json", {"time_s": 1.0, "time_interval_s": [0.9, 1.1]})
    write(out, "conv2d-meas-t-4-nfix-1.json", {"time_s": 1.0, "times_s": [1.0, 1.0, 1.0]})
    write(out, "conv2d-a-study.json", study([("C_4", ABOVE)]))
    write(out, "conv2d-b-predict.json",
          {"points": [], "unreached": [{"p": 4, "reason": ABOVE.replace("n_min", "--n-min")}]})
    # C_8's failure must not leak into C_4's reason.
    write(out, "conv2d-held-study.json", study([("C_4", measured_c4), ("C_8", BELOW)]))


def printed(out):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        table.table(out)
    return text.getvalue()


class SideOfTarget(unittest.TestCase):
    def test_reads_each_reason_and_nothing_else(self):
        self.assertEqual(table.side_of_target(ABOVE), "above")
        self.assertEqual(table.side_of_target(BELOW), "below")
        self.assertEqual(table.side_of_target(BELOW.replace("E_s", "speed-efficiency")), "below")
        self.assertIsNone(table.side_of_target("every run failed"))
        self.assertIsNone(table.side_of_target(None))
        # Two configurations' reasons joined: no side.
        self.assertIsNone(table.side_of_target(ABOVE + "; " + BELOW))


class UnreachedReason(unittest.TestCase):
    def test_from_the_json_or_from_each_configurations_part_of_the_error(self):
        self.assertEqual(table.unreached_reason({"unreached": [{"p": 4, "reason": "r4"}]}, 4), "r4")
        error = f"predict --runs: configuration h1,h2,h3,h4: {ABOVE}; configuration 8: {BELOW}"
        self.assertEqual(table.unreached_reason(None, 4, error), ABOVE)
        self.assertEqual(table.unreached_reason(None, 8, error), BELOW)
        self.assertIsNone(table.unreached_reason(None, 2, error))
        self.assertIsNone(table.unreached_reason(None, 4, "predict --runs failed"))


class NRows(unittest.TestCase):
    def test_both_sides_above_the_range_agree_and_count_as_covered_not_missing(self):
        with tempfile.TemporaryDirectory() as out:
            conv2d_out(out, ABOVE.replace("0.0136", "0.0116"))
            text = printed(out)
        rows = [line for line in text.splitlines() if "| conv2d | C_4 | N at" in line]
        self.assertEqual(len(rows), 2, text)
        for row in rows:
            self.assertIn("| none (above) | none (above) |", row)
            self.assertIn("| yes |", row)
        n_b = [line for line in text.splitlines() if "N holding E_s, approach b" in line]
        self.assertEqual(len(n_b), 1, text)
        # The three programs not run are misses; conv2d's agreeing row is not.
        self.assertIn("coverage 25% of 4 rows", n_b[0])
        self.assertIn("3 without a prediction or measurement", n_b[0])

    def test_sides_that_differ_are_missing_and_fail_the_verdict(self):
        with tempfile.TemporaryDirectory() as out:
            conv2d_out(out, BELOW)
            text = printed(out)
        self.assertNotIn("none (above)", text)
        n_b = [line for line in text.splitlines() if "N holding E_s, approach b" in line]
        self.assertIn("coverage 0% of 4 rows, median hi/lo inf", n_b[0])
        self.assertIn("4 without a prediction or measurement", n_b[0])
        self.assertIn("Verdict: not met", text)


class Protocol(unittest.TestCase):
    def test_a_program_not_run_keeps_its_declared_rows_as_misses(self):
        with tempfile.TemporaryDirectory() as out:
            conv2d_out(out, ABOVE)
            text = printed(out)
        not_run = [line for line in text.splitlines() if line.endswith("| not run |")]
        # ge, mm and jacobi: T and N, approaches a and b, on C_4.
        self.assertEqual(len(not_run), 12, text)
        self.assertIn("every row: coverage", text)
        self.assertIn("of 16 rows", [l for l in text.splitlines() if "every row" in l][0])

    def test_a_row_without_an_interval_is_not_covered_and_infinitely_wide(self):
        row = table.score_row(dict(quantity="T at N = 512", pred=1.0, meas=1.0, ci=None))
        self.assertFalse(row["covered"])
        self.assertEqual(row["hi_lo"], float("inf"))
        self.assertIsNone(row["score"])
        hit = table.score_row(dict(quantity="T at N = 512", pred=1.0, meas=1.1, ci=[0.9, 1.2]))
        self.assertTrue(hit["covered"])
        self.assertAlmostEqual(hit["hi_lo"], 1.2 / 0.9)
        self.assertAlmostEqual(hit["score"], math.log(1.2 / 0.9))
        open_end = table.score_row(dict(quantity="N at E_s = 0.03", pred=900, meas=956, ci=[256, None]))
        self.assertTrue(open_end["covered"])
        self.assertEqual(open_end["hi_lo"], float("inf"))
        self.assertIsNone(open_end["score"])
        miss = table.score_row(dict(quantity="T at N = 512", pred=1.0, meas=1.5, ci=[0.9, 1.2]))
        self.assertAlmostEqual(miss["score"], math.log(1.2 / 0.9) + 40 * math.log(1.5 / 1.2))

    def test_an_open_upper_end_is_printed_as_open(self):
        with tempfile.TemporaryDirectory() as out:
            conv2d_out(out, ABOVE)
            write(out, "conv2d-b-predict.json",
                  {"points": [{"p": 4, "n": 300, "n_ci95": [200, None]}]})
            text = printed(out)
        row = [l for l in text.splitlines() if "| conv2d | C_4 | N at" in l and "| b |" in l][0]
        self.assertIn("| [200, open] | inf |", row)

    def test_a_missing_out_is_a_one_line_error_and_a_closed_pipe_no_traceback(self):
        import subprocess
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testbed_table.py")
        done = subprocess.run([sys.executable, script, "/nonexistent-out"], capture_output=True, text=True)
        self.assertNotEqual(done.returncode, 0)
        self.assertEqual(done.stderr.strip().count("\n"), 0, done.stderr)
        self.assertIn("no directory /nonexistent-out", done.stderr)
        with tempfile.TemporaryDirectory() as out:
            conv2d_out(out, ABOVE)
            piped = subprocess.run(f"{sys.executable} {script} {out} | head -1", shell=True,
                                   capture_output=True, text=True)
        self.assertNotIn("Traceback", piped.stderr)
        self.assertTrue(piped.stdout.startswith("| program |"))

    def test_the_median_interval_is_the_order_statistics_covering_95_percent(self):
        self.assertEqual(table.median_interval(list(range(1, 10))), (2, 8))
        self.assertIsNone(table.median_interval([1, 2, 3, 4, 5]))
        self.assertEqual(table.median_interval(list(range(1, 7))), (1, 6))

    def test_the_fixed_band_is_the_best_for_the_rows_and_covers_them(self):
        rows = [table.score_row(dict(quantity="T", pred=1.0, meas=m, ci=None))
                for m in (1.1, 0.9, 1.2, 1 / 1.2)]
        band, score, covered = table.fixed_band(rows + [table.score_row(
            dict(quantity="T", pred=None, meas=1.0, ci=None))])
        self.assertAlmostEqual(band, 1.2, delta=0.012)
        self.assertEqual(covered, 4 / 5)
        self.assertGreater(score, 2 * math.log(1.19))


class DeclaredInterval(unittest.TestCase):
    def test_an_end_that_reaches_the_target_nowhere_is_its_searchs_bound(self):
        reached = {"points": [{"configuration": {"p": 4}, "n": 1500}]}
        with tempfile.TemporaryDirectory() as out:
            # lo: C_4 reached, C_8 below its target over the range; hi: predict found no
            # configuration and left only its error.
            # predict's own wording: "reaches speed-efficiency", not a study's "reaches E_s".
            below = BELOW.replace("E_s", "speed-efficiency").replace("n_max", "--n-max")
            write(out, "jacobi-a-predict-lo.json",
                  dict(reached, unreached=[{"p": 8, "reason": below}]))
            with open(os.path.join(out, "jacobi-a-predict-hi.err"), "w") as f:
                f.write(f"hetscale: configuration h1,h2,h3,h4: {ABOVE}\n")
            bound = lambda end, p: table.declared_n_or_bound(out, "jacobi", end, p, [512, 32768])
            self.assertEqual(bound("lo", 4), 1500)
            self.assertEqual(bound("lo", 8), 32768)
            self.assertEqual(bound("hi", 4), 512)
            # A failure with no side, or no range to take a bound from: no end.
            self.assertIsNone(bound("hi", 8))
            self.assertIsNone(table.declared_n_or_bound(out, "jacobi", "lo", 8, None))


if __name__ == "__main__":
    unittest.main()
