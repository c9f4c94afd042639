#!/usr/bin/env python3
"""The engine's folders (engine/src/*) must not include each other in cycles
(issue 57, item 6): a folder that includes another is built on it, and a
cycle makes two folders one. Reads every #include "folder/..." under
engine/src, groups the folders that reach each other (Tarjan's strongly
connected components) and fails on a group that KNOWN does not hold, naming
each include that makes it. KNOWN lists the cycles not yet broken; it only
shrinks, and a change that adds a cycle fails CI.
Usage: tools/layer_cycles.py [ROOT]   (ROOT: the checkout, default here)"""
import os
import re
import sys

# None left (2026-11-29): the tensor file formats moved from run/ to tensors/,
# torchvision's layers and networks from models/ to nets/, the detection data
# set and its augmentations from detection/ to data/, run_lineage and
# model_summary to train/. A new cycle fails.
KNOWN: list = []


def includes(src):
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    edges = {f: {} for f in folders}
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, errors="replace") as f:
                    for line in f:
                        m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
                        if m and m.group(1) in edges and m.group(1) != folder:
                            seen = edges[folder].setdefault(m.group(1), [])
                            if os.path.relpath(path, src) not in seen:
                                seen.append(os.path.relpath(path, src))
    return edges


def groups(edges):
    """Tarjan's strongly connected components of more than one folder."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(group)

    for v in edges:
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    edges = includes(os.path.join(root, "engine", "src"))
    failed = False
    for group in groups(edges):
        known = any(group <= k for k in KNOWN)
        print(f"layer cycle{' (known)' if known else ''}: {', '.join(sorted(group))}")
        if known:
            continue
        failed = True
        for a in sorted(group):
            for b in sorted(edges[a]):
                if b in group:
                    print(f"  {a} -> {b}: {', '.join(edges[a][b][:3])}"
                          f"{' and %d more' % (len(edges[a][b]) - 3) if len(edges[a][b]) > 3 else ''}")
    if failed:
        print("layer_cycles: a cycle between engine folders that tools/layer_cycles.py does not know; "
              "break it (move the shared part below both folders)")
        return 1
    print("layer_cycles: no new cycle between engine folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
