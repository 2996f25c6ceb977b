"""A campaign of bad and odd inputs against `predict`, `calibrate`, `export`, `report` and
`study`, run as a new user or an attacker would run them: each case must end in an answer
or a one-line error, never a panic, a hang, unbounded memory or a confident answer from
nonsense.

    HETSCALE=target/release/hetscale python3 validation/robustness.py [--only CATEGORY]

Each case runs in a scratch directory under a memory cap (RLIMIT_AS) and a time limit. It
prints one line per failing case and a table per category: cases, clean, and each kind of
failure."""

import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MEMORY_CAP_BYTES = 4 << 30
TIME_LIMIT_S = 60
HEADER = "configuration,nodes,kernel,n,time_s\n"
LONG_LINE_CHARS = 400


@dataclass
class Case:
    """One command line, the files it needs, and what must come of it: `refused` (an error
    in one line) or `answers` (exit 0); `absent` paths must not exist afterwards."""

    category: str
    name: str
    argv: list
    expect: str = "refused"
    files: dict = field(default_factory=dict)
    absent: list = field(default_factory=list)
    says: str = ""


def runs_csv(rows):
    return HEADER + "".join(f"{c},{nodes},prog,{n},{t}\n" for c, nodes, n, t in rows)


def good_rows(copies=1):
    """Runs of T = 2 n^3 / C + 1e-3 p on 1, 2 and 4 SunBlades (C = 57.33 Mflop/s each)."""
    rows = []
    for p in (1, 2, 4):
        for n in (64, 128, 256, 384):
            for rep in range(3 * copies):
                t = 2 * n**3 / (p * 57.33e6) * (1 + 0.01 * (rep % 3)) + 1e-3 * p
                rows.append((f"C_{p}", f"sunblade:{p}", n, f"{t:.6g}"))
    return rows


PREDICT = ["predict", "--runs", "r.csv", "--work", "2*n^3", "--platform", "sunwulf"]
CALIBRATE = ["calibrate", "--runs", "r.csv", "--work", "2*n^3", "--platform", "sunwulf"]
AT_16 = ["--nodes", "sunblade:16", "--target", "0.5"]


def cases():
    good = runs_csv(good_rows())
    files = {"r.csv": good}
    out = []

    def add(category, name, argv, **kw):
        kw.setdefault("files", files)
        out.append(Case(category, name, argv, **kw))

    # Inputs: sizes, encodings, special files.
    add("inputs", "dev-zero", PREDICT[:2] + ["/dev/zero"] + PREDICT[3:] + AT_16)
    add("inputs", "dev-null", PREDICT[:2] + ["/dev/null"] + PREDICT[3:] + AT_16)
    add("inputs", "directory", PREDICT[:2] + ["."] + PREDICT[3:] + AT_16)
    add("inputs", "missing", PREDICT[:2] + ["nosuch.csv"] + PREDICT[3:] + AT_16)
    add("inputs", "spec-dev-zero", ["study", "/dev/zero", "--out", "o"], absent=["o"])
    add("inputs", "platform-dev-zero", PREDICT[:6] + ["/dev/zero"] + AT_16)
    add("inputs", "bom-crlf", PREDICT + AT_16, expect="answers",
        files={"r.csv": "\ufeff" + good.replace("\n", "\r\n")})
    add("inputs", "non-utf8", PREDICT + AT_16, files={"r.csv": HEADER.encode() + b"C_1,sunblade:1,p,\xff\xfe,1\n"})
    add("inputs", "huge-field", PREDICT + AT_16,
        files={"r.csv": HEADER + "C_1,sunblade:1,prog,64," + "9" * 1_000_000 + "\n"})
    add("inputs", "huge-nodes", PREDICT + ["--nodes", "sunblade:1," * 10_000, "--target", "0.5"])
    add("inputs", "unbalanced-quote", PREDICT + AT_16,
        files={"r.csv": HEADER + 'C_1,"sunblade:1,prog,64,0.1\n'})
    add("inputs", "duplicates", PREDICT + AT_16, expect="answers", says="cop",
        files={"r.csv": runs_csv(good_rows() + good_rows())})
    # Values.
    for value in ("nan", "inf", "-1", "0", "1e300", "abc", ""):
        add("values", f"time-{value or 'empty'}", PREDICT + AT_16,
            files={"r.csv": good + f"C_1,sunblade:1,prog,64,{value}\n"})
    for value in ("nan", "-100", "0", "1.5", "1e30"):
        add("values", f"n-{value}", PREDICT + AT_16,
            files={"r.csv": good + f"C_1,sunblade:1,prog,{value},0.1\n"})
    for target in ("nan", "0", "-0.5", "1.5", "1e-300", "inf"):
        add("values", f"target-{target}", PREDICT + ["--nodes", "sunblade:16", "--target", target])
    add("values", "time-at-1", PREDICT + ["--nodes", "sunblade:16", "--time-at", "1"],
        expect="answers", says="caution")
    add("values", "one-configuration", PREDICT + AT_16, says="at least 2 configurations",
        files={"r.csv": runs_csv([r for r in good_rows() if r[0] == "C_1"])})
    add("values", "time-ignores-n", PREDICT + AT_16, expect="answers", says="rough guide",
        files={"r.csv": runs_csv([(c, nodes, n, "0.5") for c, nodes, n, _ in good_rows()])})
    add("values", "replicate-0", PREDICT + AT_16 + ["--replicate", "0"])
    add("values", "n-range-inverted", PREDICT + AT_16 + ["--n-min", "100", "--n-max", "10"])
    # Formulas.
    for option, formula in (("--work", "foo(n)"), ("--work", "n^"), ("--work", "2*m^3"),
                            ("--overhead", "neighbours(8)"), ("--overhead", "1e-3*(p"),
                            ("--communication", "neighbours(8*n) allreduce(8)"),
                            ("--communication", "3*nosuch(8)")):
        argv = PREDICT + AT_16 + ([option, formula] if option != "--work" else [])
        if option == "--work":
            argv = ["predict", "--runs", "r.csv", "--work", formula, "--platform", "sunwulf"] + AT_16
        add("formulas", f"{option}={formula}", argv)
    add("formulas", "negative-overhead", PREDICT + ["--overhead", "1e-3*(8-p)"] + AT_16)
    # Node sets.
    for nodes in ("", "sunblade:x", "sunblade:-1", "sunblade:0", "nosuch:4", "sunblade:99999",
                  "sunblade:1,,", "server*0:1"):
        add("nodes", f"nodes={nodes!r}", PREDICT + ["--nodes", nodes, "--target", "0.5"])
    # Calibrate.
    add("calibrate", "no-overhead", CALIBRATE)
    add("calibrate", "bad-nodes-first", CALIBRATE[:2] + ["bad.csv"] + CALIBRATE[3:],
        files={"bad.csv": HEADER + "C_1,nosuch:1,prog,64,0.1\n"})
    add("calibrate", "db-missing", ["calibrate", "--db", "nosuch.db"])
    add("calibrate", "db-not-a-db", ["calibrate", "--db", "r.csv"])
    add("calibrate", "write-over-other-platform",
        CALIBRATE + ["--overhead", "0", "--write-platform", "mine.toml"],
        files={"r.csv": good, "mine.toml": "name = \"mine\"\n[network]\ng = 1\nL = 1\n"})
    # Stores.
    for name in ("predict-from", "export", "report"):
        argv = {"predict-from": ["predict", "--from", "corrupt.db", "--nodes", "sunblade:16"],
                "export": ["export", "corrupt.db"],
                "report": ["report", "corrupt.db", "--out", "rep"]}[name]
        add("stores", f"{name}-corrupt", argv, files={"corrupt.db": "SQLite format 3\x00" + "x" * 5000})
        add("stores", f"{name}-not-a-db", [a.replace("corrupt.db", "r.csv") for a in argv])
        add("stores", f"{name}-foreign", [a.replace("corrupt.db", "foreign.db") for a in argv],
            files={"foreign.db": "@sqlite:create table t(x)"})
    # Outputs.
    add("outputs", "study-bad-db", ["study", "--command", "/bin/true", "--work", "n",
                                    "--platform", "local", "--nodes", "1", "--target", "0.5",
                                    "--n-max", "64", "--out", "s1", "--db", "r.csv"],
        absent=["s1"])
    add("outputs", "export-over-input", ["export", "r.csv", "-o", "r.csv"])
    add("outputs", "predict-dev-full", PREDICT + AT_16 + ["--json"], expect="refused-or-full")
    return out


def materialise(directory: Path, files: dict):
    for name, text in files.items():
        path = directory / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        elif text.startswith("@sqlite:"):
            with sqlite3.connect(path) as db:
                db.executescript(text[len("@sqlite:"):])
        else:
            path.write_text(text, encoding="utf-8", errors="surrogateescape")


def cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))


def verdict(case: Case, proc, directory: Path) -> str:
    """`clean`, or what went wrong."""
    err = proc.stderr.decode("utf-8", "replace")
    lines = [l for l in err.splitlines() if l.strip() and not l.startswith(("warning", "caution", "note"))]
    if "panicked" in err or "RUST_BACKTRACE" in err:
        return "panic"
    if proc.returncode < 0 or proc.returncode >= 128:
        return "killed"
    for path in case.absent:
        if (directory / path).exists():
            return "left-behind"
    if case.expect == "answers":
        if proc.returncode != 0:
            return "refused"
        text = proc.stdout.decode("utf-8", "replace") + err
        return "clean" if case.says.lower() in text.lower() else "unsaid"
    if case.expect == "refused-or-full":
        return "clean" if proc.returncode != 0 and len(lines) == 1 else "answered"
    if proc.returncode == 0:
        return "answered"
    if len(lines) != 1:
        return "many-lines"
    if len(lines[0]) > LONG_LINE_CHARS:
        return "long-echo"
    if case.says and case.says not in lines[0]:
        return "unsaid"
    if "wlog" in lines[0] or "disk image is malformed" == lines[0].split(": ")[-1]:
        return "internals"
    return "clean"


def run(binary: str, case: Case) -> tuple:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        materialise(directory, case.files)
        stdout = subprocess.PIPE
        sink = None
        if case.expect == "refused-or-full":
            sink = open("/dev/full", "wb")
            stdout = sink
        try:
            proc = subprocess.run([binary] + case.argv, cwd=directory, stdout=stdout,
                                  stderr=subprocess.PIPE, timeout=TIME_LIMIT_S,
                                  preexec_fn=cap_memory)
        except subprocess.TimeoutExpired:
            return "hang", ""
        finally:
            if sink:
                sink.close()
        if proc.stdout is None:
            proc.stdout = b""
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return verdict(case, proc, directory), (err[-1][:160] if err else "")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run one category")
    parser.add_argument("--verbose", action="store_true", help="print every case's last line")
    args = parser.parse_args(argv)
    binary = os.environ.get("HETSCALE", "target/release/hetscale")
    if not shutil.which(binary) and not Path(binary).exists():
        print(f"robustness.py: no hetscale at {binary}: build it (cargo build --release) or set HETSCALE", file=sys.stderr)
        return 2
    binary = str(Path(binary).resolve())
    table = {}
    for case in cases():
        if args.only and case.category != args.only:
            continue
        outcome, last = run(binary, case)
        table.setdefault(case.category, {}).setdefault(outcome, 0)
        table[case.category][outcome] += 1
        if outcome != "clean" or args.verbose:
            print(f"{outcome:12} {case.category}/{case.name}: {last}")
    print(f"\n{'category':12} {'cases':>5} {'clean':>5}  failures")
    total = clean = 0
    for category, outcomes in table.items():
        n = sum(outcomes.values())
        ok = outcomes.get("clean", 0)
        total, clean = total + n, clean + ok
        bad = ", ".join(f"{k} {v}" for k, v in outcomes.items() if k != "clean") or "-"
        print(f"{category:12} {n:5} {ok:5}  {bad}")
    print(f"{'all':12} {total:5} {clean:5}")
    return 0 if clean == total else 1


if __name__ == "__main__":
    sys.exit(main())
