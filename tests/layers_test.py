#!/usr/bin/env python3
"""The library's files call downwards only (docs/DESIGN.md, Layers): no object file of libhpcz calls one
that calls it back, directly or round a loop. From the symbols each object defines and needs (nm).

Usage: layers_test.py NM OBJECT...
"""
import collections
import os
import subprocess
import sys


def symbols(nm, obj, *flags):
    out = subprocess.run([nm, *flags, obj], capture_output=True, text=True, check=True).stdout  # mangled: no spaces
    return [line.split(None, 2) for line in out.splitlines() if line.strip()]


def main():
    nm, objs = sys.argv[1], sys.argv[2:]
    defined = collections.defaultdict(set)
    for o in objs:
        for kind, name in ((f[1], f[2]) for f in symbols(nm, o, "--defined-only", "-g") if len(f) == 3):
            if kind in "TDBR":  # strong definitions: an inline function's weak copies tie no two files
                defined[name].add(o)
    calls = {o: {d for f in symbols(nm, o, "-u") for d in defined.get(f[-1], ()) if d != o} for o in objs}
    # Tarjan's strongly connected components: any with more than one object is a loop.
    index, low, stack, on, loops = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in calls[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                loops.append(part)

    sys.setrecursionlimit(10000)
    for o in objs:
        if o not in index:
            visit(o)
    name = lambda o: os.path.basename(o).removesuffix(".o")  # noqa: E731
    for part in loops:
        print("layers: these files call each other:", ", ".join(sorted(map(name, part))))
        for a in part:
            for b in sorted(calls[a] & set(part)):
                print(f"  {name(a)} -> {name(b)}")
    if not loops:
        print(f"layers: {len(objs)} object files, no calls round a loop")
    return 1 if loops else 0


if __name__ == "__main__":
    sys.exit(main())
