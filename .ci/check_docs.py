#!/usr/bin/env python3
"""Checks the documentation: links resolve, the README is a front door, the guide is a reference.

The guide is README.md, docs/*.md and the crates' and examples' READMEs. The record is the lab
notes, docs/notes/*.md, and CHANGELOG.md: history kept on purpose, so only its links are checked.

- Every relative link in the guide and the record resolves to an existing file or directory,
  and a link's `#anchor` into a Markdown file to one of its headings (as GitHub names them).
- README.md has at most 250 lines and holds, in its first 10 lines, the main job
  `cargo run --release -p hetscale -- study` and the tests `cargo test --workspace` (with or
  without `--all-features`).
- No page of the guide is a diary: none contains a date (2026-11-24, "24 Nov", "Nov 2026"),
  "load" followed by a number, or a commit hash (7 to 40 hex digits with both letters and
  digits).
- No page of the guide tells the story of runs. These phrases are narrative (case ignored
  except for session tags); each names what it catches:
  - `the run before`: "the run(s) before/after it|that|this|them", "the previous run(s)";
  - `the earlier run`: "the/an/a earlier [word] run(s)" ("the earlier 8-host run");
  - `issue N`: "issue 36", "issues 34, 35" (an issue number of the tracker);
  - `#N`: "#36" standing alone (not a link's `](#anchor)`, not `owner/repo#5196`, not a
    colour of six digits);
  - `session`: "this/last/previous/next/earlier session(s)", "an earlier/a later session";
  - `session tag`: "s51", a lowercase s and two or three digits standing alone;
  - `how it got there`: "how it/they/the X [Y] got there|here".
  A phrase that wraps across lines is caught too. What happened is told in CHANGELOG.md
  (user-visible changes) or docs/notes/ (lab notes).

Prints what it checked; exits 1 naming each violation. `--self-test` only checks that each
narrative pattern fires on a sample line and stays quiet on a reference sentence (the plain run
does that first too; .ci/test_check_docs.py runs the same samples as unit tests). Run from
anywhere: `python3 .ci/check_docs.py [--self-test]`.
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

# Narrative in the guide: (name, pattern, a line it must catch, a reference line it must not).
NARRATIVE = [
    (
        "the run before",
        re.compile(
            r"\bthe (?:runs?|sessions?) (?:before|after) (?:it|that|this|them)\b"
            r"|\bthe previous (?:runs?|sessions?)\b",
            re.IGNORECASE,
        ),
        "The run before it, on the same model, also met the targets.",
        "Each run benches and probes the machine before it predicts the held-out hosts.",
    ),
    (
        "the earlier run",
        re.compile(r"\b(?:the|an?) earlier (?:[\w-]+ )?runs?\b", re.IGNORECASE),
        "In the earlier 8-host run that missed the targets, the rows were below.",
        "An earlier configuration is never refitted: every run is scored by step 5.",
    ),
    (
        "issue N",
        re.compile(r"\bissues? \d+\b", re.IGNORECASE),
        "Issue 36's held-out check on the testbed.",
        "A known issue of CPU quotas: a phase shorter than a period runs at a core's speed.",
    ),
    (
        "#N",
        re.compile(r"(?<![\w/&#])(?<!\]\()#\d{1,5}(?![\w-])"),
        "The held-out rows (#36) met the targets.",
        "See [the probe](#the-probe) and clap-rs/clap#5196; the bars are drawn in #336699.",
    ),
    (
        "session",
        re.compile(
            r"\b(?:this|last|previous|next|earlier|an earlier|a later) sessions?\b", re.IGNORECASE
        ),
        "The figures were measured in this session, the others in the last session.",
        "`MpiSession::init()` starts MPI; `down` also cleans up after a crashed session.",
    ),
    (
        "session tag",
        re.compile(r"(?<![\w.\-/])s\d{2,3}(?![\w.\-])"),
        "The 8-host rows (s51) met the targets.",
        "Samples of 2 s, runs of 10 s to 100 s on x86_64, s = 0.5 and s_per_byte = 8e-8.",
    ),
    (
        "how it got there",
        re.compile(
            r"\bhow (?:it|they|the [\w-]+(?: [\w-]+)?) got (?:there|here)\b", re.IGNORECASE
        ),
        "How the machine model got here, run by run.",
        "How the machine model charges a superstep, and where each constant comes from.",
    ),
]
# Markdown links [text](target) and images ![alt](target); reference-style definitions.
LINK_PATTERN = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_PATTERN = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)


def is_commit_hash(token: str) -> bool:
    """A hex token that looks like an abbreviated or full commit hash, not a number."""
    if not re.search(r"[a-f]", token) or not re.search(r"\d", token):
        return False
    # 7408e10 is a float's tail (1.7408e10), not a hash.
    return not re.fullmatch(r"\d+e\d+", token)


def guide_files() -> list[Path]:
    """The guide: the pages that must read as a reference."""
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted(ROOT.glob("crates/**/README.md"))
    files += sorted(ROOT.glob("examples/**/README.md"))
    return [f for f in files if f.exists() and "target" not in f.relative_to(ROOT).parts]


def record_files() -> list[Path]:
    """The record: lab notes and the changelog, history on purpose; only their links count."""
    files = sorted((ROOT / "docs" / "notes").glob("*.md")) + [ROOT / "CHANGELOG.md"]
    return [f for f in files if f.exists()]


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


def narrative_in(text: str) -> list[tuple[int, str, str]]:
    """Each narrative phrase in the text: its line, the pattern's name and what it caught. A
    phrase may wrap: the text is searched with its line breaks read as spaces."""
    flat = text.replace("\n", " ")
    found = []
    for name, pattern, _, _ in NARRATIVE:
        for match in pattern.finditer(flat):
            line = text.count("\n", 0, match.start()) + 1
            found.append((line, name, match.group(0)))
    return sorted(found)


def check_narrative(path: Path, text: str, problems: list[str]) -> None:
    for number, name, caught in narrative_in(text):
        problems.append(
            f"{path.relative_to(ROOT)}:{number}: narrative ({name}) `{caught}`: "
            "history goes to CHANGELOG.md or docs/notes/"
        )


def self_test() -> list[str]:
    """Each narrative pattern fires on its sample line and on no reference sentence."""
    failures = []
    for name, pattern, fires, quiet in NARRATIVE:
        if not pattern.search(fires):
            failures.append(f"pattern `{name}` does not fire on {fires!r}")
        for _, other, _, reference in NARRATIVE:
            if pattern.search(reference):
                failures.append(f"pattern `{name}` fires on the reference line {reference!r}")
    return failures


def main() -> int:
    failures = self_test()
    for failure in failures:
        print(f"self-test: {failure}", file=sys.stderr)
    print(f"self-test: {len(NARRATIVE)} narrative patterns, {len(failures)} failure(s)")
    if failures or "--self-test" in sys.argv[1:]:
        return 1 if failures else 0

    problems: list[str] = []
    guide = guide_files()
    record = record_files()
    links = 0
    for path in guide + record:
        links += check_links(path, path.read_text(encoding="utf-8"), problems)
    print(
        f"links: {links} relative links (and their anchors) in {len(guide)} guide files and "
        f"{len(record)} record files (lab notes, changelog) checked"
    )

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

    for path in guide:
        text = path.read_text(encoding="utf-8")
        check_diary(path, text, problems)
        check_narrative(path, text, problems)
    print(
        f"dates, load figures, commit hashes and {len(NARRATIVE)} narrative patterns looked for "
        f"in {len(guide)} guide files: " + ", ".join(str(p.relative_to(ROOT)) for p in guide)
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
