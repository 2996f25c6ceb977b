#!/usr/bin/env python3
"""Unit tests of hetscale-testbed's description, platform skeleton and launcher arguments; they
need no root and make nothing. Run: python3 testbed/test_testbed.py (CI's testbed_quick.sh does)."""

import importlib.machinery
import importlib.util
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the repository
HERE = Path(__file__).resolve().parent
loader = importlib.machinery.SourceFileLoader("hetscale_testbed", str(HERE / "hetscale-testbed"))
spec = importlib.util.spec_from_loader(loader.name, loader)
tb = importlib.util.module_from_spec(spec)
loader.exec_module(tb)


def config(text: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        return tb.load_config(Path(f.name))
    finally:
        Path(f.name).unlink()


def refused(text: str) -> str:
    try:
        config(text)
    except tb.TestbedError as err:
        return str(err)
    raise AssertionError("accepted: " + text)


class Description(unittest.TestCase):
    def test_the_repository_testbeds_load_with_addresses_in_order(self):
        cfg = tb.load_config(HERE / "cluster4.toml")
        self.assertEqual([h["name"] for h in cfg["hosts"]], ["h1", "h2", "h3", "h4"])
        self.assertEqual([h["address"] for h in cfg["hosts"]], [f"10.77.0.{i}" for i in range(1, 5)])
        self.assertEqual(cfg["head_address"], "10.77.0.254")
        self.assertEqual([h["cpu_quota"] for h in cfg["hosts"]], [0.6, 0.45, 0.3, 0.15])
        self.assertEqual(cfg["hosts"][0]["link_rate"], 1_000_000_000)
        self.assertEqual(cfg["hosts"][2]["link_rate"], 100_000_000)
        # 1 Gbit/s needs a bucket of at least 128 KiB.
        self.assertGreaterEqual(cfg["hosts"][0]["burst_bytes"], 128 * 1024)
        self.assertEqual(len(tb.load_config(HERE / "ci3.toml")["hosts"]), 3)

    def test_pinning_is_optional(self):
        cfg = config('[[node]]\nname = "a"\ncores = "0"\n[[node]]\nname = "b"\ncores = 0\n[[node]]\nname = "c"\n')
        self.assertEqual([h["cores"] for h in cfg["hosts"]], ["0", "0", None])

    def test_rates(self):
        self.assertEqual(tb.parse_rate("100mbit"), 100_000_000)
        self.assertEqual(tb.parse_rate("1gbit"), 1_000_000_000)
        self.assertEqual(tb.parse_rate("2.5Gbit"), 2_500_000_000)
        self.assertEqual(tb.parse_rate(50_000_000), 50_000_000)
        for bad in ("fast", "100mb", "10kbit"):
            with self.assertRaises(tb.TestbedError):
                tb.parse_rate(bad)

    def test_bad_descriptions_are_refused_in_one_line_naming_the_problem(self):
        cases = {
            'name = "x"\n': "no [[node]]",
            '[[node]]\nname = "A b"\n': 'name "A b" must be',
            '[[node]]\nname = "a"\n[[node]]\nname = "a"\n': "appears twice",
            '[[node]]\nname = "a"\nspeed = 5\n': "unknown key 'speed'",
            '[[node]]\nname = "a"\ncpu_quota = 0.001\n': "cpu_quota 0.001 is outside",
            '[[node]]\nname = "a"\nlink_rate = "fast"\n': 'node a: link_rate "fast"',
            '[[node]]\nname = "a"\nburst_bytes = 10\n': "burst_bytes 10 is below",
            '[[node]]\nname = "a"\ncores = "999"\n': 'cores "999" is not a list',
            '[[node]]\nname = "a"\ncores = "0;1"\n': 'cores "0;1" is not a list',
            '[testbed]\nsubnet = "8.8.8.0/24"\n[[node]]\nname = "a"\n': "must be a private IPv4",
            '[testbed]\nsubnet = "10.0.0.0/30"\n[[node]]\nname = "a"\n[[node]]\nname = "b"\n': "do not fit",
            '[testbed]\nperiod = 5\n[[node]]\nname = "a"\n': "unknown key testbed.period",
            'colour = 1\n[[node]]\nname = "a"\n': "unknown key 'colour'",
            "[[node]\n": "not TOML",
        }
        for text, expected in cases.items():
            message = refused(text)
            self.assertIn(expected, message, text)
            self.assertNotIn("\n", message)


class Outputs(unittest.TestCase):
    def test_the_platform_skeleton_is_the_description_without_the_testbeds_keys(self):
        cfg = tb.load_config(HERE / "cluster4.toml")
        platform = tomllib.loads(tb.platform_skeleton(cfg))
        self.assertEqual(platform["name"], "testbed4")
        self.assertEqual(set(platform), {"name", "description", "speed_unit", "network", "node"})
        self.assertEqual([n["name"] for n in platform["node"]], ["h1", "h2", "h3", "h4"])
        self.assertEqual(platform["node"][1]["kind"], "q45-1g")
        for node in platform["node"]:
            self.assertEqual(set(node) & tb.TESTBED_NODE_KEYS, set())
        # Placeholder speeds in the quotas' ratio until bench measures them.
        self.assertEqual([n["marked_speed"] for n in platform["node"]], [600.0, 450.0, 300.0, 150.0])
        self.assertAlmostEqual(platform["network"]["g_s_per_byte"], 8e-9)
        # A description's own speeds and network are kept.
        cfg = config(
            'name = "y"\n[network]\ng_s_per_byte = 1e-8\nL = { base_s = 1e-3 }\n'
            '[[node]]\nname = "a"\nmarked_speed = 42.0\ncpu_quota = 0.5\n'
        )
        platform = tomllib.loads(tb.platform_skeleton(cfg))
        self.assertEqual(platform["network"], {"g_s_per_byte": 1e-8, "L": {"base_s": 1e-3}})
        self.assertEqual(platform["node"][0]["marked_speed"], 42.0)

    def test_the_launcher_arguments_restrict_mpi_to_the_testbed(self):
        cfg = tb.load_config(HERE / "ci3.toml")
        args = tb.mpirun_args(cfg)
        text = " ".join(args)
        for expected in (
            f"--mca plm_rsh_agent {tb.STATE_DIR}/rsh",
            "--bind-to none",
            "--mca btl tcp,self",
            "--mca btl_tcp_if_include 10.77.0.0/24",
            "--mca oob_tcp_if_include 10.77.0.0/24",
            "--mca mpi_yield_when_idle 1",
            f"-x LD_PRELOAD={tb.STATE_DIR}/yield_sleep.so",
            f"--hostfile {tb.STATE_DIR}/hostfile",
        ):
            self.assertIn(expected, text)
        self.assertNotIn("--hostfile", tb.mpirun_args(cfg, hostfile=False))


if __name__ == "__main__":
    unittest.main()
