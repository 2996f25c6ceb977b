"""Tests of the calibration benchmark's truth and scores (validation/calibration.py)."""

import math
import unittest

import calibration as c


class Truth(unittest.TestCase):
    def test_a_mix_of_kinds_adds_up_to_its_node_count_and_speed(self):
        for p in (2, 4, 8, 16, 1024):
            self.assertEqual(sum(c.mix(p).values()), p)
        self.assertEqual(c.node_set(16), "fast:4,middle:4,slow:8")
        self.assertEqual(c.marked_speed(4), 2000e6 + 1000e6 + 2 * 500e6)
        self.assertEqual(c.slowest(2), 500e6)

    def test_the_size_solved_holds_the_target_and_an_unreachable_one_is_none(self):
        law = c.Law("2*n^3", "halo", equal_split=False, working_set=False, compute_factor=1.0)
        # E_s = 1 / (1 + 4e-6 n C / (2 n^3)): closed form n = sqrt(2e-6 C E / (1 - E)).
        speed, target = c.marked_speed(8), 0.5
        exact = math.sqrt(2e-6 * speed * target / (1 - target))
        self.assertAlmostEqual(c.solve_size(law, target, 8) / exact, 1.0, places=6)
        # An equal split on 8 nodes computes at 8 x 500 of 8000 Mflop/s: E_s stays below 0.5.
        equal = c.Law("2*n^3", "halo", equal_split=True, working_set=False, compute_factor=1.0)
        self.assertIsNone(c.solve_size(equal, 0.6, 8))


class Scores(unittest.TestCase):
    def test_the_interval_score_is_the_log_width_plus_the_penalised_miss(self):
        self.assertAlmostEqual(c.interval_score(1.0, math.e, 2.0), 1.0)
        self.assertAlmostEqual(c.interval_score(1.0, math.e, math.e**2), 1.0 + 40.0)

    def test_a_law_never_reaching_the_target_is_covered_only_by_an_open_end(self):
        def r(truth, point, lo, hi):
            return {"quantity": "N", "ratio": 2, "truth": truth, "point": point, "lo": lo, "hi": hi}

        rows = [r(100, 100, 90, 110), r(None, 100, 90, c.N_MAX), r(None, 100, 90, 200), r(100, None, None, None)]
        (band,) = [s for s in c.summary(rows) if s["quantity"] == "N" and s["ratio"] == 2]
        self.assertEqual((band["rows"], band["never"], band["missing"]), (4, 2, 1))
        self.assertEqual(band["coverage"], 0.5)


if __name__ == "__main__":
    unittest.main()
