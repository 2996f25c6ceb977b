"""Tests of the calibration benchmark's truth and scores (validation/calibration.py)."""

import math
import unittest

import calibration as c
import calibration_fit as f


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


class Runs(unittest.TestCase):
    def test_one_node_runs_are_at_the_two_node_sizes_on_one_fast_node(self):
        import random
        self.assertEqual(c.mix(1), {"fast": 1})
        program = c.make_program(0, random.Random(5))
        ones = c.one_node_runs(program, random.Random("x"))
        self.assertEqual(sorted({n for _, n, _ in ones}), program.sizes[2])
        self.assertEqual(len(ones), len(program.sizes[2]) * c.REPETITIONS)
        self.assertTrue(all(p == 1 and t > 0 for p, _, t in ones))

    def test_every_noise_keeps_a_time_near_the_law(self):
        import random
        rng = random.Random(1)
        for noise in c.NOISES:
            t = c.with_noise(1.0, noise, rng, 1.0, 0.5)
            self.assertTrue(0.5 < t < 3.0, (noise, t))
        # Drift slows a run by 10% over the study.
        self.assertGreater(c.with_noise(1.0, "drift", random.Random(2), 1.0, 1.0),
                           c.with_noise(1.0, "drift", random.Random(2), 1.0, 0.0))


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


    def test_an_open_upper_end_covers_every_larger_truth_and_scores_as_the_bound(self):
        open_row = {"quantity": "N", "ratio": 2, "truth": 5e6, "point": 100, "lo": 90, "hi": None}
        (band,) = [s for s in c.summary([open_row]) if s["quantity"] == "N" and s["ratio"] == 2]
        self.assertEqual((band["coverage"], band["open_upper"]), (1.0, 1))
        self.assertAlmostEqual(band["interval_score"], math.log(c.N_MAX / 90))

    def test_the_sharpest_median_covers_the_rows_of_smallest_need_and_counts_a_missing_point_infinite(self):
        def r(truth, point):
            return {"truth": truth, "point": point}

        # Needs 1.1, 1.2, 1.5, 2, inf: 90% of 5 rows is 5 covered, so the median need is 1.5.
        rows = [r(100, 110), r(120, 100), r(100, 150), r(200, 100), r(100, None)]
        self.assertAlmostEqual(c.sharpest_median_hi_lo(rows), 1.5)
        # At 60% the three smallest are covered and two rows are left at 1: [1, 1, 1.1, 1.2, 1.5].
        self.assertAlmostEqual(c.sharpest_median_hi_lo(rows, 0.6), 1.1)
        # A truth never reached needs an open end.
        self.assertEqual(c.sharpest_median_hi_lo([r(None, 100)] * 3), math.inf)


class Fit(unittest.TestCase):
    @staticmethod
    def predictive(**given) -> dict:
        base = {"compute_s": 3.0, "overhead_s": 1.0, "compute_fit_spread": 0.0, "overhead_fit_spread": 0.0,
                "doublings": 2.0, "fold_overhead_rate": 0.0, "compute_divergence": 0.0,
                "overhead_divergence": 0.0, "folds": [], "bagging": 0.0,
                "constants": {"set": "two node counts"}}
        return {**base, **given}

    def test_the_interval_puts_each_error_on_its_part_as_predictive_rs_does(self):
        # Only the overhead uncertain, 2 doublings at 0.5 each: e^(+-1.96) on it alone.
        lo, hi = f.interval(self.predictive(), 4.0, (0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0))
        self.assertAlmostEqual(hi, 3.0 + math.exp(f.Z_975), places=9)
        self.assertAlmostEqual(lo, 3.0 + math.exp(-f.Z_975), places=9)

    def test_the_bagged_point_moves_both_ends(self):
        # The same distribution around a bagged point 10% above the model's: both ends x1.1.
        lo, hi = f.interval(self.predictive(bagging=math.log(1.1)), 4.4, (0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0))
        self.assertAlmostEqual(hi, 1.1 * (3.0 + math.exp(f.Z_975)), places=9)
        self.assertAlmostEqual(lo, 1.1 * (3.0 + math.exp(-f.Z_975)), places=9)

    def test_a_divergence_moves_its_own_part(self):
        # Only the overhead's divergence, of deviation 0.5 x 0.2: the overhead by e^(+-1.96 x 0.1).
        lo, hi = f.interval(self.predictive(overhead_divergence=-0.2), 4.0, (0, 0, 0, 0, 0, 0, 0.5))
        self.assertAlmostEqual(hi, 3.0 + math.exp(f.Z_975 * 0.1), places=9)
        self.assertAlmostEqual(lo, 3.0 + math.exp(-f.Z_975 * 0.1), places=9)

    def test_the_fit_chooses_constants_that_cover_rows_whose_error_grows_with_the_doublings(self):
        rows = []
        for i in range(40):
            doublings = 1 + i % 4
            error = 0.2 * doublings * (1 if i % 2 else -1) * (i % 5) / 4
            predictive = self.predictive(compute_s=1.0, overhead_s=1.0, overhead_fit_spread=0.01,
                                         doublings=doublings)
            rows.append({"quantity": "T", "point": 2.0, "truth": 1.0 + math.exp(error),
                         "ratio": 2 ** doublings, "predictive": predictive})
        fitted = f.fit(rows)
        self.assertEqual(fitted["WITH_FOLDS"], {"rows": 0})
        self.assertEqual(fitted["ONE_NODE_COUNT"], {"rows": 0})
        without = fitted["TWO_NODE_COUNTS"]
        self.assertGreaterEqual(without["coverage"], 0.9)
        self.assertGreater(without["constants"]["overhead_rate"], 0.05)
        self.assertEqual(without["constants"]["divergence_scale"], 0.0)


if __name__ == "__main__":
    unittest.main()
