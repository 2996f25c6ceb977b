#!/usr/bin/env python3
"""Unit tests of hetscale-slurm's slurm.conf and command wrappers; they need no root and start
nothing. Run: python3 testbed/test_slurm.py (CI's slurm_quick.sh does)."""

import importlib.machinery
import importlib.util
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the repository
HERE = Path(__file__).resolve().parent


def load(name: str, file: str):
    loader = importlib.machinery.SourceFileLoader(name, str(HERE / file))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


tb = load("hetscale_testbed", "hetscale-testbed")
sl = load("hetscale_slurm", "hetscale-slurm")


def conf_of(text: str) -> dict:
    """slurm.conf as {key: [values]}, comments dropped."""
    out: dict = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


class Conf(unittest.TestCase):
    def setUp(self):
        self.state = tb.load_config(HERE / "cluster4.toml")
        self.conf = conf_of(sl.slurm_conf(self.state, "vm"))

    def test_one_node_per_host_with_its_address_and_cpus(self):
        nodes = self.conf["NodeName"]
        self.assertEqual(len(nodes), 4)
        self.assertEqual(nodes[0], "h1 NodeAddr=10.77.0.1 CPUs=1 State=UNKNOWN")
        self.assertEqual(self.conf["SlurmctldHost"], ["vm(10.77.0.254)"])

    def test_the_facts_of_one_machine(self):
        c = {k: v[0] for k, v in self.conf.items()}
        self.assertEqual(c["TaskPlugin"], "task/none")
        self.assertEqual(c["ProctrackType"], "proctrack/linuxproc")
        self.assertEqual(c["AccountingStorageType"], "accounting_storage/none")
        for key in ("SlurmdSpoolDir", "SlurmdPidFile", "SlurmdLogFile", "TmpFS"):
            self.assertIn("%n", c[key], key)
            self.assertTrue(c[key].startswith(str(sl.DIR)), key)
        self.assertEqual(c["MpiDefault"], "pmix")
        self.assertEqual(c["AuthInfo"], f"socket={sl.DIR}/munge/munge.socket")

    def test_the_wrapper_runs_the_real_command_on_the_head(self):
        text = sl.wrapper(self.state, "/usr/bin/srun")
        last = text.strip().splitlines()[-1]
        self.assertEqual(last, f'exec nsenter --net=/run/netns/{sl.SWITCH_NS} -- /usr/bin/srun "$@"')
        self.assertIn(f"SLURM_CONF={sl.DIR}/slurm.conf", text)
        self.assertIn("OMPI_MCA_btl_tcp_if_include=10.77.0.0/24", text)


if __name__ == "__main__":
    unittest.main()
