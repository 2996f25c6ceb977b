#!/usr/bin/env python3
"""Tests of the testbed validation's driver, validation/testbed.py, without a testbed: its
arguments, the commands of its dry run and their order, the specs it writes and the values it
reads from its runs' JSON.

    python3 -m unittest discover -s validation
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed  # noqa: E402
from runner import Unknown  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HS = f"{REPO}/target/release/hetscale"
M = "/run/hetscale-testbed/mpirun"
PROGRAMS = ["ge", "mm", "conv2d", "jacobi"]


def dry_run(*args):
    """The lines a dry run prints, and the commands among them (not comments or steps)."""
    lines = []
    cwd = os.getcwd()
    try:
        status = testbed.main(["--dry-run", *args], show=lines.append)
    finally:
        os.chdir(cwd)
    text = "\n".join(lines).splitlines()
    commands = [line for line in text if line and not line.startswith(("#", "=="))]
    return status, commands


def first(commands, fragment):
    return next(i for i, c in enumerate(commands) if fragment in c)


def last(commands, fragment):
    return max(i for i, c in enumerate(commands) if fragment in c)


class Arguments(unittest.TestCase):
    def test_hosts_and_out(self):
        args = testbed.parse_args([])
        self.assertEqual((args.hosts, args.out, args.dry_run), ("4", None, False))
        args = testbed.parse_args(["--dry-run", "8", "out"])
        self.assertEqual((args.hosts, args.out, args.dry_run), ("8", "out", True))
        v = testbed.validation_from(testbed.parse_args(["8"]), {})
        self.assertEqual((v.out, v.hetscale, v.held),
                         ("/tmp/hetscale-testbed-validation-8", HS, (4, 8)))
        self.assertEqual(testbed.validation_from(testbed.parse_args([]),
                                                 {"HETSCALE": "/x/hs"}).hetscale, "/x/hs")

    def test_relative_paths_become_absolute(self):
        # The commands run inside OUT: a relative HETSCALE is the caller's, a relative OUT
        # the repository's.
        repo = os.path.abspath(os.path.join(os.path.dirname(testbed.__file__), ".."))
        v = testbed.validation_from(testbed.parse_args(["4", "rel-out"]),
                                    {"HETSCALE": "target/release/hetscale"})
        self.assertEqual(v.out, os.path.join(repo, "rel-out"))
        self.assertEqual(v.hetscale, os.path.abspath("target/release/hetscale"))

    def test_bad_arguments_give_one_line(self):
        for argv in (["5"], ["4", "out", "extra"], ["--hosts", "4"]):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as end:
                testbed.parse_args(argv)
            self.assertEqual(end.exception.code, 2)
            self.assertEqual(len(err.getvalue().splitlines()), 1, err.getvalue())
            self.assertTrue(err.getvalue().startswith("testbed.py: "), err.getvalue())


class DryRun(unittest.TestCase):
    def test_four_hosts_key_commands(self):
        status, commands = dry_run("4", "/tmp/out")
        self.assertEqual(status, 0)
        expected = [
            f"{REPO}/testbed/hetscale-testbed up {REPO}/validation/validation4.toml",
            f"mpicc -O2 -o jacobi {REPO}/examples/jacobi/jacobi.c -lm",
            f"{M} -np 4 {HS} bench --backend mpi --runs 3 --platform "
            "/run/hetscale-testbed/platform.toml --write-platform platform.toml | tee bench.txt",
            f"{M} -np 2 {HS} probe --backend mpi --nodes 2 --platform platform.toml --p2p "
            "--write-platform platform.toml | tee probe-2.txt",
            f"{M} -np 4 {HS} probe --backend mpi --nodes 4 --platform platform.toml --p2p "
            "--write-platform platform.toml | tee probe-4.txt",
            f"{M} -np 2 {HS} run ge --backend mpi --platform platform.toml --nodes 2 --n 512 "
            "--runs 3 --warmup 0 --json > ge-target-run.json",
            f"{M} -np 1 {HS} run ge --backend mpi --platform platform.toml --nodes 1 --n 256 "
            "--runs 3 --warmup 0 --json > ge-cal-1-256.json",
            f"{HS} calibrate --runs ge-cal.csv --platform platform.toml --write-platform "
            "ge-calibrated.toml --json > ge-calibrate.json",
            f"{HS} run ge --backend sim --skip-compute --platform ge-calibrated.toml --nodes 4 "
            "--n 512 --json > ge-a-sim-4.json",
            f"{HS} study ge-a-sim.toml --db ge-a-sim.db --out ge-a-sim-out --quiet --json "
            "> ge-a-study.json",
            f"{HS} study ge-a-sim-lo.toml --db ge-a-sim-lo.db --out ge-a-sim-lo-out --quiet "
            "--json > ge-a-study-lo.json",
            f"{HS} predict --runs ge-runs.csv --platform platform.toml --nodes 4 --target "
            "GE_TARGET --tolerance 0.03 --n-min 128 --n-max 1200 --json > ge-b-predict.json "
            "2> ge-b-predict.err",
            f"{HS} predict --runs ge-runs.csv --platform platform.toml --nodes 4 --time-at 512 "
            "--json > ge-b-time.json 2> ge-b-time.err",
            f"{M} -np 4 {HS} run ge --backend mpi --platform platform.toml --nodes 4 --n 512 "
            "--runs 3 --warmup 0 --json > ge-meas-t-4-nfix-1.json",
            f"{HS} study ge-held.toml --db ge-held.db --out ge-held-out --quiet --json "
            "> ge-held-study.json",
            f"{HS} calibrate --runs jacobi-cal.csv --work '400*(n-2)^2' --communication "
            "'100*neighbours(8*n)' --partition equal --platform platform.toml --write-platform "
            "jacobi-calibrated.toml --json > jacobi-calibrate.json",
            f"{HS} predict --work '400*(n-2)^2' --communication '100*neighbours(8*n)' "
            "--partition equal --program jacobi --platform jacobi-calibrated.toml --nodes "
            "h1,h2,h3,h4 --json --target 'JACOBI_TARGET*JACOBI_K_HI' --n-min 512 --n-max 16384"
            " > jacobi-a-predict-hi.json 2> jacobi-a-predict-hi.err",
            f"{HS} run --command '{M} -np {{p}} --hostfile {{hostfile}} /tmp/out/jacobi {{n}} "
            "100' --work '400*(n-2)^2' --time-regex 'elapsed: (\\S+) s' --timeout 300 "
            "--platform platform.toml --nodes h1,h2,h3,h4 --n 2048 --runs 3 --warmup 0 --json "
            "> jacobi-meas-t-4-nfix-3.json",
            f"{sys.executable} {REPO}/validation/testbed_table.py /tmp/out | tee table.md",
            f"{REPO}/testbed/hetscale-testbed down > /dev/null",
            f"{REPO}/testbed/hetscale-testbed leftovers",
        ]
        for command in expected:
            self.assertIn(command, commands)
        self.assertEqual([commands.index(c) for c in expected],
                         sorted(commands.index(c) for c in expected))
        self.assertFalse([c for c in commands if "C_8" in c or "--nodes 8" in c or "-np 8" in c])

    def test_every_held_out_measurement_follows_the_programs_predictions(self):
        for hosts in ("4", "8"):
            _, commands = dry_run(hosts, "/tmp/out")
            for prog in PROGRAMS:
                predicted = max(last(commands, f"> {prog}-{what}")
                                for what in ("calibrate.json", "a-", "b-predict", "b-time"))
                measured = min(first(commands, f"> {prog}-meas-t-"),
                               first(commands, f"> {prog}-held-study"))
                self.assertLess(predicted, measured, (hosts, prog))
                # The fits see C_1 and C_2 only.
                fits = [c for c in commands if f"{prog}-cal.csv" in c or f"{prog}-runs.csv" in c]
                self.assertTrue(fits)

    def test_eight_hosts_hold_out_four_and_eight(self):
        _, commands = dry_run("8", "/tmp/out")
        self.assertIn(f"{REPO}/testbed/hetscale-testbed up {REPO}/validation/validation8.toml",
                      commands)
        probes = [c for c in commands if " probe " in c]
        self.assertEqual([c.split()[2] for c in probes], ["2", "4", "8"])
        self.assertIn(f"{HS} predict --runs mm-runs.csv --platform platform.toml --nodes 4 "
                      "--nodes 8 --target MM_TARGET --tolerance 0.03 --n-min 256 --n-max 3072 "
                      "--json > mm-b-predict.json 2> mm-b-predict.err", commands)
        sittings = [c for c in commands if "-meas-t-" in c]
        self.assertEqual(len(sittings), 3 * 4 * 2)
        # Every program's first sitting before any program's second.
        self.assertTrue(all("nfix-1" in c for c in sittings[:8]))


class Specs(unittest.TestCase):
    def validation(self):
        return testbed.validation_from(testbed.parse_args(["4", "/tmp/vh/out"]), {})

    def test_the_held_out_kernel_study(self):
        v = self.validation()
        v.state = "/tmp/vh/state"
        spec = testbed.study_spec(v, "ge-held", testbed.PROGRAMS[0], "0.092", 128, 1200, (4,))
        self.assertEqual(testbed.to_toml(spec), """name = "ge-held"
platform = "/tmp/vh/out/platform.toml"
target = 0.092
tolerance = 0.03
n_min = 128
n_max = 1200
repetitions = 3
warmup = 0
approaches = ["measured"]
kernel = "ge"
backend = "mpi"
[mpi]
launcher = "/tmp/vh/state/mpirun"
timeout_s = 300
[[configuration]]
label = "C_4"
nodes = "4"
""")

    def test_the_held_out_command_study(self):
        v = self.validation()
        v.state = "/tmp/vh/state"
        spec = testbed.study_spec(v, "jacobi-held", testbed.PROGRAMS[3], "0.13", 512, 4096, (4,))
        self.assertEqual(testbed.to_toml(spec), """name = "jacobi-held"
platform = "/tmp/vh/out/platform.toml"
target = 0.13
tolerance = 0.03
n_min = 512
n_max = 4096
repetitions = 3
warmup = 0
approaches = ["measured"]
[command]
template = "/tmp/vh/state/mpirun -np {p} --hostfile {hostfile} /tmp/vh/out/jacobi {n} 100"
work = "400*(n-2)^2"
time_regex = "elapsed: (\\\\S+) s"
timeout_s = 300
[[configuration]]
label = "C_4"
nodes = "h1,h2,h3,h4"
""")

    def test_a_sim_study_on_the_calibrated_platform(self):
        v = self.validation()
        spec = testbed.study_spec(v, "ge-a-sim-lo", testbed.PROGRAMS[0], "0.0828", 128, 4800,
                                  (4,), backend="sim", repetitions=1,
                                  platform="/tmp/vh/out/ge-calibrated.toml")
        self.assertEqual(spec["backend"], "sim")
        self.assertNotIn("mpi", spec)
        self.assertEqual((spec["target"], spec["repetitions"], spec["platform"]),
                         (0.0828, 1, "/tmp/vh/out/ge-calibrated.toml"))


class ReadValues(unittest.TestCase):
    def setUp(self):
        self.cwd = os.getcwd()
        self.dir = tempfile.TemporaryDirectory()
        os.chdir(self.dir.name)

    def tearDown(self):
        os.chdir(self.cwd)
        self.dir.cleanup()

    def write(self, name, value):
        with open(name, "w") as f:
            json.dump(value, f)

    def test_target_is_half_the_speed_efficiency_to_two_figures(self):
        self.write("r.json", {"speed_efficiency": 0.18456})
        self.assertEqual(testbed.half_speed_efficiency("r.json"), "0.092")
        self.write("r.json", {"speed_efficiency": 0.00002})
        self.assertEqual(testbed.half_speed_efficiency("r.json"), "1e-05")

    def test_calibration_rows(self):
        self.write("r.json", {"time_s": 1.5, "times_s": [1.25, 1.5, 2.0]})
        self.assertEqual(testbed.calibration_rows("r.json", testbed.PROGRAMS[3], 2, 1024),
                         ("C_2,2,jacobi,1024,1.5\n",
                          'C_2,"h1,h2",jacobi,1024,1.25\nC_2,"h1,h2",jacobi,1024,1.5\n'
                          'C_2,"h1,h2",jacobi,1024,2.0\n'))
        self.assertEqual(testbed.calibration_rows("r.json", testbed.PROGRAMS[0], 1, 256)[1],
                         "C_1,1,ge,256,1.25\nC_1,1,ge,256,1.5\nC_1,1,ge,256,2.0\n")

    def test_interval_ratios(self):
        self.write("sim.json", {"time_s": 2.0, "time_interval_s": [1.5, 3.0]})
        self.assertEqual(testbed.sim_interval_ratios("sim.json"), (0.75, 1.5))
        self.write("sim.json", {"time_s": 2.0})
        self.assertIsNone(testbed.sim_interval_ratios("sim.json"))
        self.assertIsNone(testbed.sim_interval_ratios("missing.json"))
        self.write("t.json", {"points": [{"time_s": 2.0, "time_s_ci95": [1.0, 4.0]}]})
        self.assertEqual(testbed.declared_interval_ratio("t.json", "-lo"), 0.5)
        self.assertEqual(testbed.declared_interval_ratio("t.json", "-hi"), 2.0)
        self.write("t.json", {"points": [{"time_s": 2.0, "time_s_ci95": None}]})
        self.assertIsNone(testbed.declared_interval_ratio("t.json", "-lo"))

    def test_scaled_target_has_four_figures(self):
        self.assertEqual(testbed.scaled_target("0.092", 0.9), "0.0828")
        self.assertEqual(testbed.scaled_target("0.13", 1), "0.13")
        self.assertEqual(testbed.scaled_target(Unknown("T"), Unknown("K")), "T*K")


if __name__ == "__main__":
    unittest.main()
