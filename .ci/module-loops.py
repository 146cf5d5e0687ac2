#!/usr/bin/env python3
"""Module loops inside each crate: each crate's modules must form a hierarchy.

An edge goes from module A to module B when a file of A names `crate::B…` or `super::…B` (in
`use` or in a path), outside comments and outside the trailing `#[cfg(test)]` module. Both ends
are lifted to the children of their lowest common ancestor, so a child using its parent's items
is not an edge; a loop is a strongly connected component of more than one sibling. Prints each
loop with its edges; exits 1 when there is one that KNOWN does not list.

Usage: python3 .ci/module-loops.py [repository root]"""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else '.'
bad = 0
# Loops left on purpose, each with its reason; an entry that no longer loops is reported too.
KNOWN: set = set()  # none at present; an entry: ('crate', ('a::b', 'c')), with its reason
seen = set()
for crate in sorted(os.listdir(os.path.join(root, 'crates'))):
    src = os.path.join(root, 'crates', crate, 'src')
    mods = {}
    for dp, _, fs in os.walk(src):
        for f in fs:
            if not f.endswith('.rs'): continue
            p = os.path.join(dp, f)
            rel = os.path.relpath(p, src)[:-3].split(os.sep)
            if rel[0] == 'bin': continue
            if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
            mods[tuple(rel)] = p
    edges = {}
    for m, p in mods.items():
        text = open(p).read()
        # drop #[cfg(test)] mod tests { ... } at the end (common layout) and comments
        text = re.sub(r'//[^\n]*', '', text)
        i = text.find('#[cfg(test)]')
        if i >= 0: text = text[:i]
        refs = set()
        for mt in re.finditer(r'\bcrate::((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)', text):
            refs.add(tuple(mt.group(1).split('::')))
        for mt in re.finditer(r'\b((?:super::)+)((?:[a-z_][a-z0-9_]*::)*[a-z_][a-z0-9_]*)?', text):
            ups = mt.group(1).count('super::')
            base = list(m[:len(m) - ups]) if ups <= len(m) else []
            rest = mt.group(2).split('::') if mt.group(2) else []
            refs.add(tuple(base + rest))
        # `use crate::{a, b::c}` groups
        for mt in re.finditer(r'\bcrate::\{([^}]*)\}', text):
            for part in mt.group(1).split(','):
                part = part.strip().split('::')
                if part and part[0]: refs.add(tuple(part))
        for r in refs:
            # deepest existing module prefix
            t = None
            for k in range(len(r), 0, -1):
                if r[:k] in mods: t = r[:k]; break
            if t is None or t == m: continue
            # lowest common ancestor
            k = 0
            while k < min(len(m), len(t)) and m[k] == t[k]: k += 1
            if k == len(m) or k == len(t): continue  # ancestor/descendant
            a, b = m[:k + 1], t[:k + 1]
            edges.setdefault(a, set()).add(b)
    # Tarjan
    idx = {}; low = {}; st = []; on = set(); comps = []; c = [0]
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in idx: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: comps.append(comp)
    for v in list(edges):
        if v not in idx: sc(v)
    for comp in comps:
        names = sorted('::'.join(x) for x in comp)
        key = (crate, tuple(names))
        if key in KNOWN:
            seen.add(key)
            print(f'{crate}: known loop between {", ".join(names)}')
            continue
        bad += 1
        print(f'{crate}: loop between {", ".join(names)}')
        for a in comp:
            for b in sorted(edges.get(a, ())):
                if b in comp: print(f'    {"::".join(a)} -> {"::".join(b)}')
for crate, names in sorted(KNOWN - seen):
    print(f'{crate}: the known loop between {", ".join(names)} is gone: remove it from KNOWN')
    bad += 1
sys.exit(1 if bad else 0)
