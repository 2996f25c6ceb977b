#!/usr/bin/env python3
"""Tests of toml_writer.to_toml, the one writer of the validation drivers' study specs.

    python3 -m unittest discover -s validation
"""
import os
import sys
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from toml_writer import to_toml  # noqa: E402


class ToToml(unittest.TestCase):
    def test_plain_values_first_then_tables_then_lists_of_tables(self):
        spec = {"name": "ge-held", "target": 0.092, "n_min": 128, "skeleton": True,
                "approaches": ["measured"], "mpi": {"launcher": "/run/x/mpirun", "timeout_s": 300},
                "configuration": [{"label": "C_4", "nodes": "4"}, {"label": "C_8", "nodes": "8"}],
                "warmup": 0}
        self.assertEqual(to_toml(spec), "\n".join([
            'name = "ge-held"', "target = 0.092", "n_min = 128", "skeleton = true",
            'approaches = ["measured"]', "warmup = 0",
            "[mpi]", 'launcher = "/run/x/mpirun"', "timeout_s = 300",
            "[[configuration]]", 'label = "C_4"', 'nodes = "4"',
            "[[configuration]]", 'label = "C_8"', 'nodes = "8"', ""]))

    def test_reads_back_as_the_same_values(self):
        spec = {"a": 1, "b": -2.5e-07, "c": False, "d": [1, 2.0, "x"], "e": [],
                "f": {"g": "h", "i": {"j": 1}}, "k": [{"l": 1, "m": {"n": 2}}],
                "needs quotes": "v", "inf": float("inf")}
        self.assertEqual(tomllib.loads(to_toml(spec)), spec)

    def test_strings_are_escaped(self):
        text = 'elapsed: (\\S+) s "quoted"\ttab\nline\x01'
        self.assertEqual(to_toml({"r": r"elapsed: (\S+) s"}), 'r = "elapsed: (\\\\S+) s"\n')
        self.assertEqual(tomllib.loads(to_toml({"t": text}))["t"], text)

    def test_floats_keep_their_shortest_text(self):
        self.assertEqual(to_toml({"t": 0.0828, "u": 1e-05, "v": 0.03}),
                         "t = 0.0828\nu = 1e-05\nv = 0.03\n")

    def test_a_value_toml_has_no_form_for_is_an_error(self):
        with self.assertRaises(TypeError):
            to_toml({"x": None})


if __name__ == "__main__":
    unittest.main()
