"""Replicates a platform file's nodes K times, as `hetscale predict --replicate K` does.

Usage: hetscale platform show sunwulf | python3 validation/replicate_platform.py 64 > sunwulf-x64.toml
(validation/scaling.py calls `replicate` itself.)

Copy k > 0 of node `name` is named `name~k`; copies follow one another, so a node set such
as `sunfire:32` takes the first copy's SunFires, then the second's. Works on the text, so
everything but the nodes (network, machine model) is kept as `platform show` prints it.
"""

import re
import sys


def replicate(text: str, copies: int) -> str:
    """A platform file's text with its nodes `copies` times, the copies renamed."""
    first = text.index("[[node]]")
    # The nodes end where the first table that is not a node starts.
    rest = re.search(r"^\[(?!\[node\]\])", text[first:], re.MULTILINE)
    end = first + rest.start() if rest else len(text)
    header, nodes, tail = text[:first], text[first:end], text[end:]
    name = re.search(r'^name = "(.*)"$', header, re.MULTILINE).group(1)
    header = re.sub(r'^name = "(.*)"$', rf'name = "\1 x{copies}"', header, count=1, flags=re.MULTILINE)
    header = re.sub(
        r'^description = ".*"$',
        f'description = "{copies} copies of every node of {name}"',
        header,
        count=1,
        flags=re.MULTILINE,
    )
    blocks = ["[[node]]" + b for b in nodes.split("[[node]]")[1:]]
    out = [header]
    for k in range(copies):
        for b in blocks:
            if k > 0:
                b = re.sub(r'^name = "(.*)"$', rf'name = "\1~{k}"', b, count=1, flags=re.MULTILINE)
            out.append(b)
    out.append(tail)
    return "".join(out)


def main() -> None:
    sys.stdout.write(replicate(sys.stdin.read(), int(sys.argv[1])))


if __name__ == "__main__":
    main()
