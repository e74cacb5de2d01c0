#!/usr/bin/env python3
"""Latency of a running `gpuwarden serve` on the simulator, against the targets the functional
tests used to assert (they check states now; see docs/performance.md "Latency targets").

Usage: latency.py GPUWARDEN_BINARY   (run through bench/agent/latency.sh)
Environment: REPS (default 5) agents per measurement, SCRAPES (default 20) requests per agent,
DRIVER_AWAY (default 10) wall seconds the driver stays away before it returns.

Every fault is reached through the simulator's file clock (GPUWARDEN_SIM_CLOCK=file:PATH): the
agent is started at t=5 s and the clock file is moved into the fault once all eight GPUs are up,
so each repetition measures the same situation whatever the machine's load.
Prints one table: median and worst of each measurement, its target and PASS/FAIL (on the worst).
Exits 1 when a target is missed, 2 when a run could not be made.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BINARY = sys.argv[1]
REPS = int(os.environ.get("REPS", "5"))
SCRAPES = int(os.environ.get("SCRAPES", "20"))
DRIVER_AWAY = float(os.environ.get("DRIVER_AWAY", "10"))
STATE_BOUND = 30.0  # waiting for a state of the agent: only a failure takes this long

# The configuration of the functional tests (tests/server/test_util.h kFastAgentConfig), under
# which the targets were asserted.
CONFIG = """listen: 127.0.0.1:{port}
sampling:
  fast_interval: 200ms
  slow_interval: 1s
  call_deadline: 500ms
history:
  flush_interval: 500ms
"""


class BenchError(Exception):
    pass


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wall_ms():
    return int(time.time() * 1000)


def wait_until(what, pred, bound=STATE_BOUND, every=0.02):
    end = time.monotonic() + bound
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(every)
    if not pred():
        raise BenchError(f"no {what} within {bound:.0f} s")


class Agent:
    """`gpuwarden serve` on SCENARIO in its own folder, on the file clock at START."""

    def __init__(self, work, scenario, start=None):
        self.dir = tempfile.mkdtemp(dir=work)
        self.port = free_port()
        config = os.path.join(self.dir, "agent.yaml")
        with open(config, "w") as f:
            f.write(CONFIG.format(port=self.port))
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUWARDEN_SIM_")}
        self.clock = None
        if start is not None:
            self.clock = os.path.join(self.dir, "sim-time")
            self.set_time(start)
            env["GPUWARDEN_SIM_CLOCK"] = "file:" + self.clock
        self.log = open(os.path.join(self.dir, "agent.log"), "w")
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--simulate", scenario, "--config", config, "--data-dir", os.path.join(self.dir, "data")],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until("answer on /healthz", lambda: self.get("/healthz", timeout=2) is not None)
            wait_until("eight GPUs up and sampled", lambda: self.sampled_after(range(8), 0))
        except BenchError:
            self.close()
            raise

    def set_time(self, t):
        with open(self.clock + ".tmp", "w") as f:
            f.write(f"{t}\n")
        os.replace(self.clock + ".tmp", self.clock)

    def get(self, path, timeout=30.0):
        """(status, body, seconds from connect to the last byte) on a fresh connection; None on error."""
        t0 = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            c.request("GET", path)
            r = c.getresponse()
            body = r.read()
            seconds = time.perf_counter() - t0
            c.close()
            return r.status, body.decode(), seconds
        except (OSError, http.client.HTTPException):
            return None

    def gpus(self):
        r = self.get("/api/v1/gpus", timeout=10)
        if not r or r[0] != 200:
            return None
        return json.loads(r[1])

    def state(self, gpu):
        j = self.gpus()
        return j["gpus"][gpu]["state"] if j and gpu < len(j["gpus"]) else None

    def sampled_after(self, which, after_ms):
        j = self.gpus()
        if not j or len(j["gpus"]) < 8:
            return False
        return all(j["gpus"][g]["state"] == "up" and (j["gpus"][g]["last_sample_ms"] or 0) > after_ms for g in which)

    def stop(self):
        """Seconds from SIGTERM to exit; the exit code must be 0."""
        t0 = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise BenchError("still running 120 s after SIGTERM")
        took = time.perf_counter() - t0
        if rc != 0:
            raise BenchError(f"exit {rc} after SIGTERM")
        return took

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


LAG = re.compile(r'^gpuwarden_sample_lag_seconds\{[^}]*gpu="(\d+)"[^}]*\} (\S+)$', re.M)


def worst_lag(body, gpus):
    lags = {int(g): float(v) for g, v in LAG.findall(body)}
    missing = [g for g in gpus if g not in lags]
    if missing:
        raise BenchError(f"no sample lag for GPUs {missing}")
    return max(lags[g] for g in gpus)


def scrape_rounds(a, healthy, out_scrape, out_lag, out_api=None):
    """SCRAPES rounds 100 ms apart: /metrics latency, the worst lag of `healthy`, /api/v1/gpus."""
    for _ in range(SCRAPES):
        r = a.get("/metrics")
        if not r or r[0] != 200:
            raise BenchError(f"/metrics answered {r[0] if r else 'nothing'}")
        out_scrape.append(r[2])
        out_lag.append(worst_lag(r[1], healthy))
        if out_api is not None:
            r = a.get("/api/v1/gpus")
            if not r or r[0] != 200:
                raise BenchError("/api/v1/gpus did not answer")
            out_api.append(r[2])
        time.sleep(0.1)


def main(work):
    m = {k: [] for k in ("scrape", "lag", "hang_scrape", "hang_api", "hang_lag", "hang_stop", "lost_lag", "reinit",
                         "stop")}
    hang_age = []  # how long GPU 5 had been hung at SIGTERM: a stop must come before its 30 s call ends
    for _ in range(REPS):
        a = Agent(work, "dgx-h100")
        try:
            scrape_rounds(a, range(8), m["scrape"], m["lag"])
            m["stop"].append(a.stop())
        finally:
            a.close()

        # fault-hang: from t=10 s every call on GPU 5 blocks for 30 s (the clock stays in the hang).
        a = Agent(work, "fault-hang", start=5)
        try:
            hung_at = time.perf_counter()
            a.set_time(12)
            wait_until("GPU 5 stalled", lambda: a.state(5) == "stalled")
            scrape_rounds(a, [0, 1, 2, 3, 4, 6, 7], m["hang_scrape"], m["hang_lag"], m["hang_api"])
            hang_age.append(time.perf_counter() - hung_at)
            m["hang_stop"].append(a.stop())
        finally:
            a.close()

        # fault-gpu-lost: GPU 3 falls off the bus at t=20 s.
        a = Agent(work, "fault-gpu-lost", start=5)
        try:
            a.set_time(25)
            wait_until("GPU 3 lost", lambda: a.state(3) == "lost")
            scrape_rounds(a, [0, 1, 2, 4, 5, 6, 7], [], m["lost_lag"])
        finally:
            a.close()

        # fault-driver-reload: the driver is away from t=10 s to t=20 s.
        a = Agent(work, "fault-driver-reload", start=5)
        try:
            a.set_time(12)
            wait_until("/healthz 503", lambda: (a.get("/healthz", timeout=10) or (0,))[0] == 503)
            time.sleep(DRIVER_AWAY)
            back_ms = wall_ms()
            t0 = time.perf_counter()
            a.set_time(25)
            wait_until("re-initialised, eight GPUs sampled after the driver came back",
                       lambda: a.sampled_after(range(8), back_ms) and (a.gpus() or {}).get("driver_up"))
            m["reinit"].append(time.perf_counter() - t0)
        finally:
            a.close()

    # (label, samples, target in seconds or None, where the target was asserted)
    rows = [
        ("/metrics scrape, dgx-h100", m["scrape"], 1.0, "server_test SlowClient…: r.seconds < 1.0"),
        ("sample lag, dgx-h100 (worst of 8)", m["lag"], 2.0, "server_test: sample_lag < 2.0"),
        ("SIGTERM to exit, dgx-h100", m["stop"], None, "(for comparison)"),
        ("/metrics scrape, GPU 5 hung", m["hang_scrape"], 1.0, "agent_process_test HungCall…: worst < 1.0"),
        ("/api/v1/gpus, GPU 5 hung", m["hang_api"], 1.0, "agent_process_test HungCall…: api.seconds < 1.0"),
        ("sample lag of the 7 others, GPU 5 hung", m["hang_lag"], 1.0, "agent_process_test HungCall…: lag < 1.0"),
        ("SIGTERM to exit, GPU 5 hung", m["hang_stop"], 5.0, "agent_process_test HungCall…: stop < 5.0"),
        ("sample lag of the 7 others, GPU 3 lost", m["lost_lag"], 1.0, "agent_process_test LostGpu…: lag < 1.0"),
        (f"driver back (after {DRIVER_AWAY:g} s) to re-initialised", m["reinit"], 11.0,
         "design: backoff ceiling 10 s + 1 s"),
    ]
    print(f"gpuwarden latency on the simulator: {REPS} agents per measurement, {SCRAPES} requests each, "
          f"sampling every 200 ms, call deadline 500 ms")
    print("| measurement | n | median | worst | target | verdict |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = False
    for label, xs, target, _ in rows:
        med, worst = statistics.median(xs), max(xs)
        verdict = "—" if target is None else ("PASS" if worst < target else "FAIL")
        failed |= verdict == "FAIL"
        tgt = "—" if target is None else f"< {target:g} s"
        print(f"| {label} | {len(xs)} | {fmt(med)} | {fmt(worst)} | {tgt} | {verdict} |")
    print()
    print("targets: what the functional tests used to assert")
    for label, _, target, origin in rows:
        if target is not None:
            print(f"  {label}: {origin}")
    print(f"GPU 5 had been hung {min(hang_age):.1f}-{max(hang_age):.1f} s at SIGTERM (each hung call lasts 30 s)")
    return 1 if failed else 0


def fmt(s):
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


if __name__ == "__main__":
    work = tempfile.mkdtemp(prefix="gw-latency-")
    try:
        rc = main(work)
    except BenchError as e:
        print(f"latency: {e} (the agents' folders and logs are kept in {work})", file=sys.stderr)
        sys.exit(2)
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(rc)
