#!/usr/bin/env python3
"""The Grafana dashboard parses, and every metric its panels and variables query is one that
`gpuwarden serve` emits (read from a live agent on the simulated DGX H100).
Usage: dashboard_test.py DASHBOARD_JSON GPUWARDEN_BINARY"""
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

# DCGM profiling (DCP) metrics: NVML has no equivalent, so gpuwarden cannot emit them. The
# dashboard keeps 12239's tensor-core panel for query compatibility; it must say why it is empty.
NOT_EMITTED = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}
METRIC = re.compile(r"\b(DCGM_FI_[A-Z0-9_]+|gpuwarden_[a-z0-9_]+)\b")


def exprs(dashboard):
    out = []  # (panel title, expr, panel)
    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append((p.get("title", ""), t.get("expr", ""), p))
            walk(p.get("panels", []))
    walk(dashboard["panels"])
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query", "")
        if v.get("type") == "query":
            out.append(("variable " + v["name"], q or "", v))
    return out


def emitted(binary):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([binary, "serve", "--simulate", "dgx-h100", "--listen", f"127.0.0.1:{port}",
                              "--data-dir", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while True:
                try:
                    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
                    if "DCGM_FI_DEV_GPU_TEMP{" in body:
                        break
                except OSError:
                    pass
                if time.time() > deadline:
                    sys.exit("agent did not serve /metrics")
                time.sleep(0.2)
        finally:
            p.terminate()
            p.wait(10)
    names = set()
    for line in body.splitlines():
        if line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, 1)[0])
    return names


def main():
    dashboard = json.load(open(sys.argv[1]))
    names = emitted(sys.argv[2])
    failures = []
    all_exprs = exprs(dashboard)
    if len(all_exprs) < 10:
        failures.append(f"only {len(all_exprs)} queries found")
    for title, expr, panel in all_exprs:
        metrics = METRIC.findall(expr)
        if not metrics:
            failures.append(f"{title}: no gpuwarden/DCGM metric in {expr!r}")
        for m in metrics:
            if m in NOT_EMITTED:
                if m in names:
                    failures.append(f"{m} is emitted now: drop it from NOT_EMITTED")
                if "NVML" not in panel.get("description", ""):
                    failures.append(f"{title}: uses {m}, which gpuwarden cannot emit, without saying why")
            elif m not in names:
                failures.append(f"{title}: {m} is not emitted by gpuwarden")
    # The 12239 queries, verbatim.
    wanted = ['DCGM_FI_DEV_GPU_TEMP{instance=~"$instance", gpu=~"$gpu"}',
              'DCGM_FI_DEV_POWER_USAGE{instance=~"$instance", gpu=~"$gpu"}',
              'DCGM_FI_DEV_SM_CLOCK{instance=~"$instance", gpu=~"$gpu"} * 1000000',
              'DCGM_FI_DEV_GPU_UTIL{instance=~"$instance", gpu=~"$gpu"}',
              'DCGM_FI_DEV_FB_USED{instance=~"$instance", gpu=~"$gpu"}',
              'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~"$instance", gpu=~"$gpu"}']
    present = {e for _, e, _ in all_exprs}
    for w in wanted:
        if w not in present:
            failures.append(f"missing the 12239 query {w}")
    for m in ("gpuwarden_gpu_state", "gpuwarden_sample_lag_seconds", "gpuwarden_nvml_errors_total"):
        if not any(m in e for e in present):
            failures.append(f"no panel for {m}")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        sys.exit(1)
    print(f"PASS: {len(all_exprs)} queries, all on emitted metrics")


if __name__ == "__main__":
    main()
