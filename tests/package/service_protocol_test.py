#!/usr/bin/env python3
"""The agent under systemd's protocol, with the real binary and real sockets:
- sd_notify: READY=1 (with a STATUS naming where it serves) once /healthz answers, RELOADING=1 then
  READY=1 around a SIGHUP, STOPPING=1 on SIGTERM, and WATCHDOG=1 at least twice per WATCHDOG_USEC
  while it runs; and it runs as before without $NOTIFY_SOCKET.
- journald: with $JOURNAL_STREAM naming its stderr, each log line starts with its syslog priority
  (<6> info, <4> warning); without it, no prefix.
Usage: service_protocol_test.py GPUWARDEN_BINARY"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

GW = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_for(pred, seconds, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    failures.append("timed out waiting for " + what)
    print("FAIL: timed out waiting for", what)
    return None


def healthz(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return r.status == 200
    except Exception:
        return False


with tempfile.TemporaryDirectory() as tmp:
    sock_path = os.path.join(tmp, "notify")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(sock_path)
    srv.settimeout(0.2)
    messages = []

    def drain():
        while True:
            try:
                messages.append(srv.recv(4096).decode())
            except socket.timeout:
                return

    def ready_after_reload():
        drain()
        at = [i for i, m in enumerate(messages) if "RELOADING=1" in m.split("\n")]
        return bool(at) and any("READY=1" in m.split("\n") for m in messages[at[0] + 1:])

    def seen(state):
        drain()
        return any(state in m.split("\n") for m in messages)

    def longest_without_ping(seconds):
        """The longest stretch of the next `seconds` without a watchdog ping, its edges included:
        what systemd holds to WatchdogSec."""
        drain()
        messages.clear()
        start = last = time.monotonic()
        end = start + seconds
        longest = 0.0
        while time.monotonic() < end:
            try:
                m = srv.recv(4096).decode()
            except socket.timeout:
                continue
            messages.append(m)
            if "WATCHDOG=1" in m.split("\n"):
                now = time.monotonic()
                longest = max(longest, now - last)
                last = now
        return max(longest, time.monotonic() - last)

    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="2000000",
               GPUWARDEN_RUNTIME_DIR=os.path.join(tmp, "run"))
    err = open(os.path.join(tmp, "agent.log"), "w+")
    agent = subprocess.Popen([GW, "serve", "--simulate", "dgx-h100", "--listen", f"127.0.0.1:{port}",
                              "--data-dir", os.path.join(tmp, "data")], env=env, stderr=err)
    try:
        wait_for(lambda: seen("READY=1"), 60, "READY=1")
        check(healthz(port), "READY=1 came before /healthz answered")
        status = [l for m in messages for l in m.split("\n") if l.startswith("STATUS=")]
        check(status and f"127.0.0.1:{port}" in status[0], f"STATUS names the address: {status}")
        # WATCHDOG_USEC=2 s: a ping every second (half of it), never 2 s without one.
        gap = longest_without_ping(4)
        check(gap < 2, f"{gap:.2f} s without a watchdog ping at WatchdogSec=2s")
        messages.clear()
        agent.send_signal(1)  # SIGHUP
        wait_for(ready_after_reload, 20, "READY=1 after RELOADING=1")
        agent.terminate()
        check(agent.wait(timeout=60) == 0, "the agent did not stop with 0")
        check(seen("STOPPING=1"), "no STOPPING=1 on SIGTERM")
    finally:
        if agent.poll() is None:
            agent.kill()
    err.seek(0)
    plain_log = err.read()
    check(plain_log and not plain_log.startswith("<"), "a priority prefix without $JOURNAL_STREAM")

    # While the driver is away the agent keeps re-initialising NVML, and keeps the watchdog fed
    # while it does (else systemd would restart it for the driver's absence). The simulator's
    # manual clock (a file) takes the driver away: fault-driver-reload has none from 10 s to 20 s.
    clock = os.path.join(tmp, "sim-time")

    def set_clock(t):
        with open(clock + ".tmp", "w") as f:
            f.write(f"{t}\n")
        os.replace(clock + ".tmp", clock)

    set_clock(5)
    port = free_port()
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="2000000", GPUWARDEN_SIM_CLOCK="file:" + clock,
               GPUWARDEN_RUNTIME_DIR=os.path.join(tmp, "run3"))
    messages.clear()
    agent = subprocess.Popen([GW, "serve", "--simulate", "fault-driver-reload", "--listen", f"127.0.0.1:{port}",
                              "--data-dir", os.path.join(tmp, "data3")], env=env, stderr=err)
    try:
        wait_for(lambda: seen("READY=1"), 60, "READY=1 (driver reload)")
        set_clock(12)

        def driver_away():
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                return False
            except urllib.error.HTTPError as e:
                return e.code == 503
            except Exception:
                return False

        wait_for(driver_away, 60, "/healthz 503 with the driver away")
        # The watchdog checks every second (WATCHDOG_USEC/2); the re-initialising loop waits 0.5 s,
        # 1, 2, 4 s... between tries and beats through each wait, so no 2 s without a ping even
        # across the 4 s wait (3.5 s to 7.5 s into the absence).
        gap = longest_without_ping(7)
        check(gap < 2, f"{gap:.2f} s without a watchdog ping at WatchdogSec=2s while the driver was away")
        agent.terminate()
        check(agent.wait(timeout=60) == 0, "the agent did not stop with 0 (driver reload)")
    finally:
        if agent.poll() is None:
            agent.kill()

    # Without $NOTIFY_SOCKET the agent runs as before.
    port = free_port()
    env = dict(os.environ, GPUWARDEN_RUNTIME_DIR=os.path.join(tmp, "run2"))
    env.pop("NOTIFY_SOCKET", None)
    # journald: stderr is a pipe systemd would have handed it; $JOURNAL_STREAM names it.
    r, w = os.pipe()
    st = os.fstat(w)
    env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    agent = subprocess.Popen([GW, "serve", "--simulate", "dgx-h100", "--listen", f"127.0.0.1:{port}",
                              "--data-dir", os.path.join(tmp, "data2")], env=env, stderr=w)
    os.close(w)
    try:
        wait_for(lambda: healthz(port), 60, "/healthz without systemd")
        agent.terminate()
        agent.wait(timeout=60)
    finally:
        if agent.poll() is None:
            agent.kill()
    lines = os.read(r, 1 << 20).decode().splitlines()
    os.close(r)
    check(lines and all(l[:3] in ("<3>", "<4>", "<6>", "<7>") for l in lines), f"unprefixed journal lines: {lines[:3]}")
    check(any(l.startswith("<6>") and " info: " in l for l in lines), "no info line with <6>")
    check(all((" warning: " not in l) or l.startswith("<4>") for l in lines), "a warning without <4>")

print("service_protocol: " + ("ok" if not failures else f"{len(failures)} failures"))
sys.exit(1 if failures else 0)
