#!/usr/bin/env python3
"""Checks the documentation: links resolve, the README is a front door, no README is a diary.

- Every relative link in README.md, docs/*.md and the crates' and examples' READMEs resolves to
  an existing file or directory, and a link's `#anchor` into a Markdown file to one of its
  headings (as GitHub names them).
- README.md has at most 250 lines and holds, in its first 10 lines, the main job
  `cargo run --release -p hetscale -- study` and the tests `cargo test --workspace --all-features`.
- No README (README.md, docs/README.md, crates/*/README.md, examples/*/README.md) and no page of
  docs/ contains a date (2026-11-24, "24 Nov", "Nov 2026"), "load" followed by a number, or a
  commit hash (7 to 40 hex digits with both letters and digits).

Prints what it checked; exits 1 naming each violation. Run from anywhere: `python3 .ci/check_docs.py`.
"""

import re
import sys
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
MAX_README_LINES = 250
COMMANDS = [
    "cargo run --release -p hetscale -- study",
    "cargo test --workspace",
    "sudo bash .ci/setup",
    "HETSCALE_STRICT_TESTS=1 cargo test --workspace --all-features",
]
HEAD_LINES = 10

MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
)
DATE_PATTERNS = [
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),  # 2026-11-24
    re.compile(rf"\b\d{{1,2}} {MONTH}(?![a-z])"),  # 24 Nov, 24 November
    re.compile(rf"\b{MONTH} \d{{1,4}}(?:st|nd|rd|th)?\b(?!\.\d)"),  # Nov 24, Nov 2026
]
LOAD_PATTERN = re.compile(
    r"\bload(?: average)?(?: of| at| about| around| was| is)?[ :=~]*\d", re.IGNORECASE
)
HEX_TOKEN = re.compile(r"(?<![\w.\-/])[0-9a-f]{7,40}(?![\w.\-])")
# Markdown links [text](target) and images ![alt](target); reference-style definitions.
LINK_PATTERN = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_PATTERN = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)


def is_commit_hash(token: str) -> bool:
    """A hex token that looks like an abbreviated or full commit hash, not a number."""
    if not re.search(r"[a-f]", token) or not re.search(r"\d", token):
        return False
    # 7408e10 is a float's tail (1.7408e10), not a hash.
    return not re.fullmatch(r"\d+e\d+", token)


def markdown_files() -> list[Path]:
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted(ROOT.glob("crates/**/README.md"))
    files += sorted(ROOT.glob("examples/**/README.md"))
    return [f for f in files if f.exists()]


def readmes(files: list[Path]) -> list[Path]:
    return [f for f in files if f.name == "README.md" or f.parent.name == "docs"]


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (lowercase, punctuation dropped,
    spaces as hyphens, `-1`, `-2` for repeats)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        match = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def check_links(path: Path, text: str, problems: list[str]) -> int:
    count = 0
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        targets = LINK_PATTERN.findall(line) + REF_PATTERN.findall(line)
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # an URL (http:, mailto:)
            if target.startswith("#"):
                if target[1:] not in github_anchors(text):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: no heading `{target}`")
                continue
            count += 1
            file_part, _, anchor = unquote(target).partition("#")
            resolved = (path.parent / file_part).resolve()
            if not resolved.exists():
                problems.append(
                    f"{path.relative_to(ROOT)}:{number}: link target `{target}` does not exist"
                )
            elif anchor and resolved.suffix == ".md":
                if anchor not in github_anchors(resolved.read_text(encoding="utf-8")):
                    problems.append(
                        f"{path.relative_to(ROOT)}:{number}: `{target}`: no heading "
                        f"`#{anchor}` in {resolved.relative_to(ROOT)}"
                    )
    return count


def check_diary(path: Path, text: str, problems: list[str]) -> None:
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{path.relative_to(ROOT)}:{number}"
        for pattern in DATE_PATTERNS:
            for match in pattern.finditer(line):
                problems.append(f"{where}: a date `{match.group(0)}`")
        for match in LOAD_PATTERN.finditer(line):
            problems.append(f"{where}: a machine load `{match.group(0)}`")
        for match in HEX_TOKEN.finditer(line):
            if is_commit_hash(match.group(0)):
                problems.append(f"{where}: a commit hash `{match.group(0)}`")


def main() -> int:
    problems: list[str] = []
    files = markdown_files()
    links = 0
    for path in files:
        links += check_links(path, path.read_text(encoding="utf-8"), problems)
    print(f"links: {links} relative links (and their anchors) in {len(files)} files checked")

    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    if len(lines) > MAX_README_LINES:
        problems.append(f"README.md: {len(lines)} lines, more than {MAX_README_LINES}")
    head = "\n".join(lines[:HEAD_LINES])
    for command in COMMANDS:
        if command not in head:
            problems.append(f"README.md: `{command}` is not in its first {HEAD_LINES} lines")
    print(
        f"README.md: {len(lines)} lines (at most {MAX_README_LINES}); "
        f"the main job and test commands looked for in its first {HEAD_LINES} lines"
    )

    checked = readmes(files)
    for path in checked:
        check_diary(path, path.read_text(encoding="utf-8"), problems)
    print(
        f"dates, load figures and commit hashes looked for in {len(checked)} files: "
        + ", ".join(str(p.relative_to(ROOT)) for p in checked)
    )

    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("docs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
