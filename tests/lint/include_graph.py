#!/usr/bin/env python3
"""Holds src/'s include graph to the layer table in docs/design.md.

The table's rows read `| `layer/` | what it owns | may use |`; "may use" lists layers (or says
"everything above" / "all of the above", meaning every layer in an earlier row, or "nvml
declarations only" for the simulator). Use is transitive: a layer may include what the layers it
uses may include. A source file in src/L/ may include "M/..." only when M is L or reachable from L.
The simulator may include nothing of ours but nvml/nvml_abi.h.

Usage: include_graph.py SRC_DIR DESIGN_MD   (exit 1 and one line per violation)
"""
import os
import re
import sys


def parse_table(design_md):
    rows = []
    in_layers = False
    for line in open(design_md, encoding="utf-8"):
        if line.startswith("## "):
            in_layers = line.strip().lower().startswith("## layers")
            continue
        if not in_layers:
            continue
        m = re.match(r"^\|\s*`([a-z_]+)/`\s*\|(.*)\|(.*)\|\s*$", line)
        if m:
            rows.append((m.group(1), m.group(3).strip()))
    if not rows:
        sys.exit(f"{design_md}: no layer table under '## Layers'")
    order = [name for name, _ in rows]
    uses = {}
    for i, (name, text) in enumerate(rows):
        low = text.lower()
        if "everything above" in low or "all of the above" in low:
            uses[name] = set(order[:i])
        elif low in ("—", "-", ""):
            uses[name] = set()
        else:
            words = re.findall(r"[a-z_]+", low)
            uses[name] = {w for w in words if w in order and w != name}
    return order, uses


def closure(uses):
    out = {}
    for name in uses:
        seen, todo = set(), list(uses[name])
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(uses.get(n, ()))
        out[name] = seen
    return out


INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def check(src_dir, design_md):
    order, uses = parse_table(design_md)
    allowed = closure(uses)
    problems = []
    for layer in sorted(os.listdir(src_dir)):
        path = os.path.join(src_dir, layer)
        if not os.path.isdir(path):
            continue
        if layer not in allowed:
            problems.append(f"src/{layer}/: not a layer of the table in {design_md}")
            continue
        for root, _, files in os.walk(path):
            for f in files:
                if not f.endswith((".h", ".cpp", ".cu", ".in")):
                    continue
                full = os.path.join(root, f)
                rel = os.path.relpath(full, src_dir)
                for n, line in enumerate(open(full, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    if target == layer or not os.path.isdir(os.path.join(src_dir, target)):
                        continue
                    if layer == "sim":
                        ok = target == "nvml" and m.group(2) == "nvml_abi.h"
                    else:
                        ok = target in allowed[layer]
                    if not ok:
                        problems.append(f"src/{rel}:{n}: {layer}/ may not include \"{target}/{m.group(2)}\" "
                                        f"({layer}/ may use: {', '.join(sorted(allowed[layer])) or 'nothing'})")
    return problems


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problems = check(sys.argv[1], sys.argv[2])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layer table")
        return 1
    print("include graph matches the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
