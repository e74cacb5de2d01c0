#!/usr/bin/env python3
"""Whole-process timings taken in turn: one run of each command, then the next round, so that a
shared machine's load drifts over all of them alike (hyperfine runs each command's runs in one
block). Prints each command's median, 10th percentile and fastest run, and its ratio to the first.

Usage: bench/interleave.py [-n RUNS] [-w WARMUP] NAME=COMMAND [NAME=COMMAND ...]
(COMMAND is split as a shell would, without a shell; the environment is inherited)."""
import argparse
import shlex
import statistics
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--runs", type=int, default=300)
    ap.add_argument("-w", "--warmup", type=int, default=10)
    ap.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    cmds = []
    for c in a.commands:
        name, sep, line = c.partition("=")
        if not sep or not name or not line.strip():
            ap.error(f"'{c}' is not NAME=COMMAND")
        cmds.append((name, shlex.split(line)))
    times = {name: [] for name, _ in cmds}
    for i in range(a.warmup + a.runs):
        for name, argv in cmds:
            start = time.perf_counter()
            r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            took = (time.perf_counter() - start) * 1000
            if r.returncode != 0:
                print(f"{name}: exit {r.returncode}", file=sys.stderr)
                return 1
            if i >= a.warmup:
                times[name].append(took)
    base = statistics.median(times[cmds[0][0]])
    print(f"{'command':<12}{'median':>10}{'p10':>10}{'fastest':>10}{'ratio':>8}   ({a.runs} runs each, in turn)")
    for name, _ in cmds:
        t = sorted(times[name])
        med = statistics.median(t)
        print(f"{name:<12}{med:>8.2f}ms{t[len(t) // 10]:>8.2f}ms{t[0]:>8.2f}ms{med / base:>7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
