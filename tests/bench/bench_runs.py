#!/usr/bin/env python3
"""Runs one Google Benchmark binary once through (a tiny min time) and checks that every
benchmark it lists ran at least one iteration without an error. The benchmarks are built in the
test configuration so that they cannot rot unseen (scripts/build's release build, the README's
first command, builds them); their timings are not judged here.

Usage: bench_runs.py BINARY"""
import json
import subprocess
import sys


def main() -> int:
    binary = sys.argv[1]
    listed = subprocess.run([binary, "--benchmark_list_tests=true"], check=True, capture_output=True,
                            text=True, timeout=120).stdout.split()
    if not listed:
        print(f"{binary}: lists no benchmark")
        return 1
    run = subprocess.run([binary, "--benchmark_min_time=0.001", "--benchmark_format=json"],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        print(f"{binary}: exit {run.returncode}\n{run.stderr[-4000:]}")
        return 1
    results = {b["name"]: b for b in json.loads(run.stdout)["benchmarks"]}
    bad = []
    for name in listed:
        b = results.get(name)
        if b is None:
            bad.append(f"{name}: no result")
        elif b.get("error_occurred"):
            bad.append(f"{name}: {b.get('error_message', 'error')}")
        elif int(b.get("iterations", 0)) < 1:
            bad.append(f"{name}: no iteration")
    for line in bad:
        print(f"{binary}: {line}")
    print(f"{binary}: {len(listed) - len(bad)} of {len(listed)} benchmarks ran")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
