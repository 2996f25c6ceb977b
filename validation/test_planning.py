#!/usr/bin/env python3
"""Tests of the planned study's benchmark, validation/planning.py, and of its synthetic
program, validation/synthetic_program.py, without running hetscale: the specs it writes, how
it scores a design, and the program's times.

    python3 -m unittest discover -s validation
"""
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibration as cal  # noqa: E402
import planning  # noqa: E402
import synthetic_program  # noqa: E402

LAW = cal.Law("2*n^3", "halo", equal_split=True, working_set=False, compute_factor=1.5, scale=2.0)


class Specs(unittest.TestCase):
    def test_the_planned_spec_offers_every_configuration_and_reads_the_printed_time(self):
        text = planning.spec_text("planned", Path("/x/program.json"), LAW, 0.3, planning.PLANNED_NODES)
        spec = tomllib.loads(text)
        self.assertEqual(spec["platform"], "kalinov")
        self.assertEqual([c["nodes"] for c in spec["configuration"]],
                         [cal.node_set(p) for p in (2, 4, 8, 16, 32, 64)])
        self.assertEqual(spec["command"]["work"], "2*n^3")
        self.assertEqual(spec["command"]["partition"], "equal")
        self.assertEqual(spec["command"]["template"].split()[0], sys.executable)
        self.assertIn("/x/program.json {n} {p}", spec["command"]["template"])
        self.assertRegex("time: 0.25", spec["command"]["time_regex"])

    def test_the_grid_spec_grows_its_repetitions_and_samples(self):
        extra = {"repetitions": 12, "samples": 16, "approaches": ["measured", "computed"]}
        spec = tomllib.loads(planning.spec_text("grid", Path("p.json"), LAW, 0.3, planning.GRID_NODES, extra))
        self.assertEqual((spec["repetitions"], spec["samples"]), (12, 16))
        self.assertEqual(len(spec["configuration"]), 3)


class Scoring(unittest.TestCase):
    def test_a_half_width_is_the_larger_side_and_open_or_missing_is_infinite(self):
        self.assertAlmostEqual(planning.half_width(100, [95, 108]), 0.08)
        self.assertEqual(planning.half_width(100, [95, None]), math.inf)
        self.assertEqual(planning.half_width(None, [95, 108]), math.inf)

    def test_a_design_that_never_reaches_the_precision_needs_its_whole_budget(self):
        self.assertEqual(planning.spent({"reached": False, "cost_s": 3.0}, 10.0), 10.0)
        self.assertEqual(planning.spent({"reached": True, "cost_s": 3.0}, 10.0), 3.0)
        self.assertEqual(planning.spent({"reached": True, "cost_s": None}, 10.0), 10.0)

    def test_a_missing_interval_is_a_miss_and_an_open_end_covers_above(self):
        self.assertTrue(planning.covered({"n_ci95": [90, 110]}, 100))
        self.assertFalse(planning.covered({"n_ci95": [90, 110]}, 120))
        self.assertTrue(planning.covered({"n_ci95": [90, None]}, 1e6))
        self.assertFalse(planning.covered({"n_ci95": None}, 100))
        self.assertFalse(planning.covered({"n_ci95": [90, 110]}, None))

    def test_the_summary_counts_every_row(self):
        row = lambda kind, scale, a, s: {"kind": kind, "scale": scale,
                                         "planned": {"reached": a, "n": 100, "n_ci95": [95, 105 if a else 150]},
                                         "grid": {"reached": False, "n": 100, "n_ci95": [50, None]},
                                         "planned_s": s, "grid_s": 4.0, "planned_covered": a, "grid_covered": True}
        text = planning.summary([row("synthetic", "8x", True, 1.0), row("synthetic", "8x", False, 4.0),
                                 row("synthetic", "32x", False, 4.0), row("kernel", "8x", True, 2.0)])
        self.assertIn("| calibration programs | 8x | 2 | 50% | 0% | 0.62 | 0.62 | ±28% | open | 50% | 100% |", text)
        self.assertIn("| calibration programs | 32x | 1 | 0% | 0% | 1.00 | 1.00 | ±50% | open | 0% | 100% |", text)
        self.assertIn("| kernels on sim | 8x | 1 | 100% | 0% | 0.50 | 0.50 | ±5% | open | 100% | 100% |", text)

    def test_a_kernels_spec_is_a_skeleton_study_on_simulated_sunwulf(self):
        import scaling
        kernel = scaling.KERNELS[0]
        spec = tomllib.loads(planning.kernel_spec(kernel, "planned", planning.PLANNED_NODES, {}))
        self.assertEqual((spec["kernel"], spec["backend"], spec["platform"], spec["skeleton"]),
                         (kernel.name, "sim", "sunwulf", True))
        self.assertEqual(spec["configuration"][-1]["nodes"], "server*2:1,sunblade:63")


class SyntheticProgram(unittest.TestCase):
    def program(self, noise):
        return {"law": LAW.__dict__, "noise": noise, "seed": "s", "expected_runs": 10}

    def test_a_run_is_the_law_with_its_noise_and_the_same_run_the_same_time(self):
        program = self.program("lognormal-3%")
        t = synthetic_program.run_time(program, 512, 8, 0)
        self.assertEqual(t, synthetic_program.run_time(program, 512, 8, 0))
        self.assertNotEqual(t, synthetic_program.run_time(program, 512, 8, 1))
        self.assertLess(abs(math.log(t / LAW.time_s(512, 8))), 0.2)

    def test_runs_are_numbered_in_a_state_file_beside_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "program.json"
            path.write_text(json.dumps(self.program("drift")))
            printed = []
            for _ in range(2):
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    self.assertEqual(synthetic_program.main(["x", str(path), "512", "8"]), 0)
                printed.append(float(out.getvalue().split("time: ")[1]))
            self.assertEqual(path.with_suffix(".runs").read_text(), "2")
            # The drift grows through the study: the second run is the law's at run 1.
            expected = synthetic_program.run_time(self.program("drift"), 512, 8, 1)
            self.assertAlmostEqual(printed[1] / expected, 1.0, places=8)


if __name__ == "__main__":
    unittest.main()
