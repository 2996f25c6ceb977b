"""Extra-P's own text reader loads `hetscale export --format extrap` of every study in the
default study's database and models each region (issue 17: exports their tools read).

Usage: python3 .ci/extrap_default_study.py HETSCALE DB
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main(hetscale: str, db: str) -> None:
    runs = json.loads(subprocess.run([hetscale, "export", db, "--format", "json"],
                                     check=True, capture_output=True, text=True).stdout)["runs"]
    studies = sorted({run["study"] for run in runs})
    if not studies:
        sys.exit(f"{db} holds no study to export")
    with tempfile.TemporaryDirectory() as tmp:
        for study in studies:
            file = Path(tmp) / f"{study}.txt"
            subprocess.run([hetscale, "export", db, "--format", "extrap", "--study", study,
                            "--output", str(file)], check=True)
            read = subprocess.run([sys.executable, "-m", "extrap", "--disable-progress", "--text",
                                   str(file), "--print", "{callpath}\t{model}"],
                                  capture_output=True, text=True)
            if read.returncode != 0:
                sys.exit(f"Extra-P could not load the export of {study}: {read.stderr}")
            models = dict(line.split("\t", 1) for line in read.stdout.splitlines() if "\t" in line)
            if "n" not in models.get(study, ""):
                sys.exit(f"Extra-P made no model in n of {study}: {read.stdout}")
            print(f"Extra-P models {study}: {models[study].strip()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
