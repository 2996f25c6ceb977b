#!/usr/bin/env python3
"""Tests of the scaling model's held-out benchmark, validation/scaling.py, without running
hetscale: the commands of its dry run, the specs it writes, and the replicated platform.

    python3 -m unittest discover -s validation
"""
import os
import sys
import tomllib
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scaling  # noqa: E402
from replicate_platform import replicate  # noqa: E402
from runner import Runner  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HS = f"{REPO}/target/release/hetscale"


def dry_run(*args):
    lines = []
    status = scaling.main(["--dry-run", *args], show=lines.append)
    return status, [line for line in lines if not line.startswith("#")]


class DryRun(unittest.TestCase):
    def test_the_studies_fit_only_2_4_8_nodes_and_predict_16_32_64(self):
        status, commands = dry_run("out")
        self.assertEqual(status, 0)
        expected = [
            f"{HS} platform show sunwulf",
            f"{HS} platform validate out/sunwulf-x64.platform.toml > /dev/null",
            f"{HS} study out/specs/ge-sunwulf-full.toml --db out/db/ge-sunwulf-full.db --out "
            "out/results/ge-sunwulf-full --json --quiet > out/results/ge-sunwulf-full.json",
            f"{HS} study out/specs/ge-sunwulf-fit.toml --db out/db/ge-sunwulf-fit.db --out "
            "out/results/ge-sunwulf-fit --json --quiet > out/results/ge-sunwulf-fit.json",
            f"{HS} predict --from out/db/ge-sunwulf-fit.db --nodes 'server*2:1,sunblade:15' "
            "--json > out/predictions/ge-sunwulf-p16.json 2> out/predictions/ge-sunwulf-p16.error",
            f"{HS} predict --from out/db/ge-sunwulf-fit.db --nodes 'server*2:1,sunblade:15' "
            "--normal-form --json > out/predictions-normal-form/ge-sunwulf-p16.json "
            "2> out/predictions-normal-form/ge-sunwulf-p16.error",
            f"{HS} predict --from out/db/summa-sunwulf-x64-fit.db --nodes "
            "server:1,sunblade:31,sunfire:32 --normal-form --json > "
            "out/predictions-normal-form/summa-sunwulf-x64-p64.json "
            "2> out/predictions-normal-form/summa-sunwulf-x64-p64.error",
            f"{sys.executable} {REPO}/validation/scaling_table.py out predictions",
            f"{sys.executable} {REPO}/validation/scaling_table.py out predictions-normal-form",
        ]
        for command in expected:
            self.assertIn(command, commands)
        self.assertEqual([commands.index(c) for c in expected],
                         sorted(commands.index(c) for c in expected))
        self.assertEqual(len([c for c in commands if " study " in c]), 4 * 2 * 2)
        # N on each held-out count, and T at the N the full study measured there, both ways.
        self.assertEqual(len([c for c in commands if " predict " in c]), 4 * 2 * 3 * 2 * 2)
        self.assertIn(f"{HS} predict --from out/db/ge-sunwulf-fit.db --nodes 'server*2:1,sunblade:15' "
                      "--json --time-at N_MEASURED > out/predictions/ge-sunwulf-p16-time.json "
                      "2> out/predictions/ge-sunwulf-p16-time.error", commands)
        # Every prediction reads the fit's database, never the full study's.
        self.assertFalse([c for c in commands if " predict " in c and "-full" in c])


class Specs(unittest.TestCase):
    def test_the_fit_study_on_the_replicated_machine(self):
        b = scaling.Benchmark(out="out", hetscale="hetscale", runner=Runner())
        spec = scaling.study_spec(b, "ge-sunwulf-x64-fit", scaling.KERNELS[0], "sunwulf-x64",
                                  scaling.FIT_NODES)
        self.assertEqual(tomllib.loads(scaling.to_toml(spec)), {
            "name": "ge-sunwulf-x64-fit", "kernel": "ge", "backend": "sim",
            "platform": os.path.abspath("out/sunwulf-x64.platform.toml"), "skeleton": True,
            "target": 0.3, "approaches": ["measured"], "n_min": 16, "n_max": 32768,
            "repetitions": 1, "kernel_options": {"pivoting": "none"},
            "configuration": [
                {"label": "p2", "nodes": "server:1,sunfire:1"},
                {"label": "p4", "nodes": "server:1,sunblade:1,sunfire:2"},
                {"label": "p8", "nodes": "server:1,sunblade:3,sunfire:4"}]})

    def test_nodes_of_each_machine(self):
        self.assertEqual(scaling.nodes_of("sunwulf", 64), "server*2:1,sunblade:63")
        self.assertEqual(scaling.nodes_of("sunwulf-x64", 64), "server:1,sunblade:31,sunfire:32")


class Replicate(unittest.TestCase):
    def test_copies_follow_one_another_and_the_rest_is_kept(self):
        text = ('name = "m"\ndescription = "d"\n\n[[node]]\nname = "a"\n\n[[node]]\nname = "b"\n'
                '\n[network]\nlatency = 1\n')
        platform = tomllib.loads(replicate(text, 2))
        self.assertEqual([n["name"] for n in platform["node"]], ["a", "b", "a~1", "b~1"])
        self.assertEqual((platform["name"], platform["description"], platform["network"]),
                         ("m x2", "2 copies of every node of m", {"latency": 1}))


if __name__ == "__main__":
    unittest.main()
