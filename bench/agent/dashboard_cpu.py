#!/usr/bin/env python3
"""What open web dashboards (docs/dashboard.md) cost the agent: its CPU (utime + stime from
/proc/PID/stat) over a window with no dashboard, then with N dashboards polling, and the
dashboard's payload (every file, uncompressed).

A dashboard here replays the requests the page makes (src/server/web/app.js), each over its own
keep-alive connection like a browser tab: at load the page, its files, 4 charts of 10 minutes per
GPU from /api/v1/history, /api/v1/gpus and /api/v1/topology; then /api/v1/latest?fields= (the
cards' seven fields) every sampling interval and, every 5 s, /api/v1/health, /api/v1/incidents,
/api/v1/events, /api/v1/diag and the history view's query (1 h at a 6 s step).

With CHROMIUM=1 in the environment the N dashboards are real headless Chromium tabs instead
(selenium + chromedriver, as tests/server/web_dashboard_test.py drives them).

Usage: dashboard_cpu.py GPUWARDEN_BINARY [N=5] [SECONDS=60] [SCENARIO=dgx-h100]
Run it on a release build (scripts/build release -> build/bin/gpuwarden)."""
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

gw = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60
scenario = sys.argv[4] if len(sys.argv) > 4 else "dgx-h100"
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
POLL_FIELDS = "gpu_util,fb_used,fb_total,gpu_temp,power_usage,sm_clock,mem_clock"  # app.js's
tck = os.sysconf("SC_CLK_TCK")

work = tempfile.mkdtemp()
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
env = dict(os.environ, GPUWARDEN_RUNTIME_DIR=os.path.join(work, "run"))
os.makedirs(env["GPUWARDEN_RUNTIME_DIR"], mode=0o700)
agent = subprocess.Popen([gw, "serve", "--simulate", scenario, "--listen", f"127.0.0.1:{port}", "--data-dir",
                          os.path.join(work, "data")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def cpu_seconds():
    with open(f"/proc/{agent.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tck  # utime, stime


class Tab:
    def __init__(self):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.requests = 0
        self.bytes = 0

    def get(self, path, accept="application/json"):
        for attempt in (0, 1):
            try:
                self.c.request("GET", path, headers={"Accept": accept})
                r = self.c.getresponse()
                body = r.read()
                self.requests += 1
                self.bytes += len(body)
                return r.status, body
            except (http.client.HTTPException, OSError):
                self.c.close()  # the agent closed a kept-alive connection: reconnect once
                if attempt:
                    raise
        return None, b""


def payload():
    t = Tab()
    total = 0
    for path, accept in (("/", BROWSER), ("/ui/app.js", "*/*"), ("/ui/app.css", "text/css"),
                         ("/ui/favicon.svg", "image/*")):
        status, body = t.get(path, accept)
        assert status == 200, (path, status)
        total += len(body)
    return total


def dashboard(stop, stats):
    t = Tab()
    for path, accept in (("/", BROWSER), ("/ui/app.css", "text/css"), ("/ui/app.js", "*/*"),
                         ("/ui/favicon.svg", "image/*")):
        t.get(path, accept)
    status, body = t.get("/api/v1/latest")
    latest = json.loads(body)
    interval = max(0.25, latest["sample_interval_ms"] / 1000)
    for g in latest["gpus"]:
        keys = {f["key"] for f in g["fields"]}
        for field in ("gpu_util", "fb_used", "gpu_temp", "power_usage"):
            if field in keys:
                t.get(f"/api/v1/history?gpu={g['gpu']['uuid']}&field={field}&since=10m&step=1s")
    t.get("/api/v1/gpus")
    t.get("/api/v1/topology")
    first = latest["gpus"][0]["gpu"]["uuid"]
    last_health = 0
    while not stop.is_set():
        begin = time.monotonic()
        t.get("/api/v1/latest?fields=" + POLL_FIELDS)
        if begin - last_health >= 5:
            last_health = begin
            for path in ("/api/v1/health", "/api/v1/incidents?state=open", "/api/v1/events?since=24h&limit=500",
                         "/api/v1/diag", f"/api/v1/history?gpu={first}&field=gpu_util&since=1h&step=6s"):
                t.get(path)
        stop.wait(max(0, interval - (time.monotonic() - begin)))
    stats.append((t.requests, t.bytes))


def measure_chromium(tabs):
    sys.path.append("/usr/lib/python3/dist-packages")  # Debian's python3-selenium
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    drivers = []
    try:
        for _ in range(tabs):
            o = webdriver.ChromeOptions()
            for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
                o.add_argument(a)
            d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
            d.get(f"http://127.0.0.1:{port}/")
            drivers.append(d)
        time.sleep(5)
        c0, w0 = cpu_seconds(), time.monotonic()
        time.sleep(seconds)
        c1, w1 = cpu_seconds(), time.monotonic()
        return (c1 - c0) / (w1 - w0) * 100, 0, 0
    finally:
        for d in drivers:
            d.quit()


def measure(tabs):
    if tabs and os.environ.get("CHROMIUM"):
        return measure_chromium(tabs)
    stop = threading.Event()
    stats = []
    threads = [threading.Thread(target=dashboard, args=(stop, stats)) for _ in range(tabs)]
    for th in threads:
        th.start()
    time.sleep(3)  # past the page loads: measure the steady polling
    c0, w0 = cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu_seconds(), time.monotonic()
    stop.set()
    for th in threads:
        th.join()
    return (c1 - c0) / (w1 - w0) * 100, sum(r for r, _ in stats), sum(b for _, b in stats)


try:
    for _ in range(200):
        try:
            if Tab().get("/api/v1/topology")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    time.sleep(2)
    print(f"dashboard payload: {payload()} bytes uncompressed (index.html + app.js + app.css + favicon.svg)")
    idle, _, _ = measure(0)
    print(f"agent CPU, no dashboard:      {idle:5.2f} % of one core over {seconds:.0f} s")
    busy, requests, nbytes = measure(n)
    how = (f"headless Chromium tabs" if os.environ.get("CHROMIUM") else
           f"replayed: {requests} requests, {nbytes / 1e6:.1f} MB answered, including the page loads")
    print(f"agent CPU, {n} dashboards:     {busy:5.2f} % of one core over {seconds:.0f} s ({how})")
    print(f"per dashboard:                {(busy - idle) / max(n, 1):5.2f} % of one core")
finally:
    agent.terminate()
    agent.wait(10)
    subprocess.run(["rm", "-rf", work])
