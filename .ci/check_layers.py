#!/usr/bin/env python3
"""Module layering inside each crate: no import circle between modules, no source file above
1,000 lines under crates/*/src, and no command file of the command line above 400 lines (a
command parses its arguments, calls one library function and renders its result).

A module depends on another when it names it in a `use` or a path: `crate::a::b`, `super::x`,
`self::x`, or a child module by its bare name (`node::run` after `mod node;`). The module is the
longest existing prefix of the path. Inline `#[cfg(test)]` modules are left out (tests may reach
anything); `mod x;` declarations are no dependency. So a parent that re-exports its children
must not hold what they share: that goes in a child of its own (`common`, `base`, `data`).

Run from anywhere: python3 .ci/check_layers.py; exit status 1 lists every circle and long file.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 1000
MAX_COMMAND_LINES = 400
COMMANDS = ROOT / "crates" / "hetscale" / "src" / "cmd"

def module_of(src: Path, f: Path):
    rel = f.relative_to(src).with_suffix('')
    parts = list(rel.parts)
    if parts[-1] in ('mod', 'lib', 'main'):
        parts = parts[:-1]
    return tuple(parts)

def strip(text):
    # drop comments, strings and #[cfg(test)] items
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    # re.S: a string continued over lines (`\` at a line's end) is still one string.
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text, flags=re.S)
    out = []; i = 0
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{', text):
        if m.start() < i: continue
        out.append(text[i:m.start()])
        depth = 1; j = m.end()
        while j < len(text) and depth:
            if text[j] == '{': depth += 1
            elif text[j] == '}': depth -= 1
            j += 1
        i = j
    out.append(text[i:])
    return ''.join(out)

def expand_use(body):
    # `a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e]
    body = re.sub(r'\s+', '', body)
    def rec(s):
        m = re.match(r'^(.*?)\{(.*)\}$', s)
        if not m:
            return [s]
        prefix, inner = m.group(1), m.group(2)
        items, depth, cur = [], 0, ''
        for ch in inner:
            if ch == ',' and depth == 0:
                items.append(cur); cur = ''
                continue
            depth += ch == '{'; depth -= ch == '}'
            cur += ch
        items.append(cur)
        res = []
        for it in items:
            if it:
                res += [prefix + x for x in rec(it)]
        return res
    return rec(body)

def paths_in(text):
    paths = []
    for m in re.finditer(r'\buse\s+([^;]+);', text):
        paths += expand_use(m.group(1))
    for m in re.finditer(r'(?<![\w:])((?:crate|super|self)(?:::\w+)+)', text):
        paths.append(m.group(1))
    return paths

def resolve(path, here, modules):
    parts = [p for p in path.split(' as ')[0].split('::') if p]
    if not parts: return None
    if parts[0] == 'crate':
        base, parts = (), parts[1:]
    elif parts[0] == 'self':
        base, parts = here, parts[1:]
    elif parts[0] == 'super':
        base = here
        while parts and parts[0] == 'super':
            base = base[:-1]; parts = parts[1:]
    else:
        return None
    for k in range(len(parts), -1, -1):
        cand = base + tuple(parts[:k])
        if cand in modules:
            return cand
    return None

def graph(src: Path):
    files = {module_of(src, f): f for f in src.rglob('*.rs')}
    # a binary's main.rs and lib.rs are both roots; bin/ files are their own crates
    files = {m: f for m, f in files.items() if not (m and m[0] == 'bin')}
    edges = {m: set() for m in files}
    for m, f in files.items():
        text = strip(f.read_text())
        for p in paths_in(text):
            t = resolve(p, m, files)
            if t is not None and t != m and t != ():
                edges[m].add(t)
        # A path through a child module by its bare name: `node::run(..)` after `mod node;`.
        for child in re.findall(r'\bmod\s+(\w+)\s*;', text):
            if m + (child,) in files and re.search(r'(?<![\w:])' + child + r'::', text):
                edges[m].add(m + (child,))
    return files, edges

def cycles(edges):
    # Tarjan's strongly connected components
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)
    def strong(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in list(edges):
        if v not in index:
            strong(v)
    return out

def name(m):
    return '::'.join(m) or 'lib'

def main():
    problems = []
    for src in sorted(ROOT.glob('crates/*/src')):
        crate = src.parent.name
        files, edges = graph(src)
        for comp in cycles(edges):
            inside = set(comp)
            links = sorted(f'{name(a)} -> {name(b)}' for a in comp for b in edges[a] if b in inside)
            problems.append(f'{crate}: import circle between {", ".join(map(name, comp))}: ' + '; '.join(links))
        for f in sorted(src.rglob('*.rs')):
            n = sum(1 for _ in f.open())
            if n > MAX_LINES:
                problems.append(f'{f.relative_to(ROOT)}: {n} lines, above {MAX_LINES}; split it by concern')
            elif COMMANDS in f.parents and n > MAX_COMMAND_LINES:
                problems.append(f'{f.relative_to(ROOT)}: {n} lines, above {MAX_COMMAND_LINES} for a command; '
                                'move its logic to the library crate that owns it, its text to hetscale-report')
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print('layers: no import circle inside any crate, no source file above %d lines, '
          'no command above %d' % (MAX_LINES, MAX_COMMAND_LINES))

if __name__ == '__main__':
    main()
