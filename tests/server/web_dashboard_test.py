#!/usr/bin/env python3
"""The node's web dashboard (docs/dashboard.md) in a real headless Chromium, against the real
`gpuwarden serve` on the simulator:

  * API clients (Accept */*, application/json, none) keep the JSON index at `/`; a browser gets
    the page, with its content types, Cache-Control, ETag (304) and Content-Security-Policy, and
    all of it within the 200 KB payload budget;
  * dgx-h100: one card per GPU (UUIDs from /api/v1/gpus), live charts with points, the topology
    matrix, the history view and its range picker, usable at phone width, no console error;
  * fault-straggler: only the idle GPU is marked "idle while peers busy";
  * fault-xid-79 with a hostile process name in the kernel log: the incident with its context
    charts, the event shown as text (no element made from it), no console error;
  * with basic authentication configured, the page and its files need the password.

Needs chromium, chromedriver and python3-selenium (scripts/setup installs them); without them the
test FAILS, it does not skip. Usage: web_dashboard_test.py GPUWARDEN_BINARY"""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

try:
    import selenium  # noqa: F401
except ImportError:  # Debian's python3-selenium, under another interpreter than Debian's python3
    sys.path.append("/usr/lib/python3/dist-packages")
try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:
    print(f"FAIL: python3-selenium is not installed ({e}); scripts/setup installs it")
    sys.exit(1)

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
HOSTILE = "<img src=x onerror=window.__pwned=1>"
FAILURES = []
# 1 s, not faster: the health engine merges samples closer than 900 ms, and at 500 ms its ring
# (so an incident's context) kept a single sample.
CONFIG = """sampling:
  fast_interval: 1s
  slow_interval: 2s
  call_deadline: 500ms
history:
  flush_interval: 500ms
"""


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)
    return cond


def wait_for(pred, seconds, what):
    """Polls pred() until it returns a true value or the deadline passes (then records a failure)."""
    end = time.time() + seconds
    last = None
    while time.time() < end:
        try:
            last = pred()
            if last:
                return last
        except Exception as e:  # the page or the agent not there yet
            last = e
        time.sleep(0.2)
    check(False, f"{what} (after {seconds} s; last: {last!r})")
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Agent:
    def __init__(self, binary, scenario, env=None, root=None, web_config=None):
        self.dir = tempfile.mkdtemp(prefix="gw-dash-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = os.path.join(self.dir, "agent.yaml")
        with open(config, "w") as f:
            f.write(CONFIG)
        args = [binary]
        if root:
            args += ["--root", root]
        args += ["serve", "--simulate", scenario, "--listen", f"127.0.0.1:{self.port}", "--config", config,
                 "--data-dir", os.path.join(self.dir, "data")]
        if web_config:
            args += ["--web.config.file", web_config]
        e = dict(os.environ, GPUWARDEN_RUNTIME_DIR=os.path.join(self.dir, "run"), **(env or {}))
        os.makedirs(e["GPUWARDEN_RUNTIME_DIR"], mode=0o700)
        self.log = open(os.path.join(self.dir, "agent.log"), "w+")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=e)
        ok = wait_for(lambda: self.status("/healthz") == 200, 30, f"{scenario}: agent answers /healthz")
        if not ok:
            raise RuntimeError(self.tail())

    def request(self, path, headers=None):
        req = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def status(self, path):
        try:
            return self.request(path)[0]
        except OSError:
            return None

    def json(self, path):
        status, _, body = self.request(path, {"Accept": "application/json"})
        if status != 200:
            raise RuntimeError(f"{path}: {status} {body[:200]!r}")
        return json.loads(body)

    def tail(self):
        self.log.flush()
        self.log.seek(0)
        return "".join(self.log.readlines()[-30:])

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def browser(width=1280, height=1800):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        print(f"FAIL: chromium ({chromium}) and chromedriver ({driver}) are needed; scripts/setup installs them")
        sys.exit(1)
    o = webdriver.ChromeOptions()
    o.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=o)


def severe(d):
    return [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]


def full_cards(d):
    return d.find_elements(By.CSS_SELECTOR, "#gpus article.card:not(.mig)")


def drawn_points(svg_path):
    """The number of points a chart path was drawn through."""
    d = svg_path.get_attribute("d") or ""
    return d.count("L") + d.count("M")


# --- API clients and the HTTP side of the page -------------------------------------------------

def test_http(a):
    for accept in (None, "*/*", "application/json", "text/html;q=0.5, application/json", "text/html;q=x"):
        status, headers, body = a.request("/", {"Accept": accept} if accept else {})
        if check(status == 200 and headers.get("Content-Type", "").startswith("application/json"),
                 f"GET / with Accept {accept!r}: {status} {headers.get('Content-Type')}"):
            endpoints = json.loads(body)["endpoints"]
            check("/api/v1/topology" in endpoints and "/api/v1/latest" in endpoints,
                  f"the index lists the new endpoints: {endpoints}")
    status, headers, body = a.request("/api/v1", {"Accept": BROWSER_ACCEPT})
    check(status == 200 and "endpoints" in json.loads(body), "/api/v1 stays JSON for a browser")

    status, headers, page = a.request("/", {"Accept": BROWSER_ACCEPT})
    check(status == 200 and headers.get("Content-Type") == "text/html; charset=utf-8",
          f"a browser gets the page: {status} {headers.get('Content-Type')}")
    csp = headers.get("Content-Security-Policy", "")
    check("default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp,
          f"the page's CSP forbids inline script: {csp!r}")
    check(headers.get("Cache-Control") == "no-cache" and headers.get("ETag", "").startswith('"'),
          f"Cache-Control and ETag: {headers.get('Cache-Control')} {headers.get('ETag')}")
    check("Accept" in headers.get("Vary", ""), f"Vary: Accept on /: {headers.get('Vary')}")
    check(b'name="viewport"' in page and b"<script" in page and b"<script>" not in page,
          "the page has a viewport and only external scripts")
    status, _, body = a.request("/", {"Accept": BROWSER_ACCEPT, "If-None-Match": headers.get("ETag", "x")})
    check(status == 304 and body == b"", f"If-None-Match with the page's tag: {status}")
    # A list of tags (a cache holding several versions): any one of them, weak or strong, matches;
    # a list without it is answered with the page.
    tag = headers.get("ETag", "x")
    status, _, body = a.request("/", {"Accept": BROWSER_ACCEPT, "If-None-Match": f'"old", W/{tag}'})
    check(status == 304 and body == b"", f"If-None-Match with the page's tag second in a list: {status}")
    status, _, body = a.request("/", {"Accept": BROWSER_ACCEPT, "If-None-Match": '"old", "older"'})
    check(status == 200 and body == page, f"If-None-Match with a list of other tags: {status}")

    total = len(page)
    for name, ctype in (("app.js", "text/javascript; charset=utf-8"), ("app.css", "text/css; charset=utf-8"),
                        ("favicon.svg", "image/svg+xml")):
        status, headers, body = a.request("/ui/" + name)
        check(status == 200 and headers.get("Content-Type") == ctype and headers.get("ETag"),
              f"/ui/{name}: {status} {headers.get('Content-Type')}")
        with open(os.path.join(SOURCE_WEB, name), "rb") as f:
            check(body == f.read(), f"/ui/{name} is the file of src/server/web")
        total += len(body)
    check(total <= 200 * 1024, f"all the dashboard's files: {total} bytes, budget 200 KB")
    print(f"dashboard payload: {total} bytes uncompressed")
    # What the page polls: every GPU's latest values with the interval to poll at, each element the
    # document of /api/v1/gpus/{id}/latest; and the matrix `gpuwarden topo -m --json` prints.
    latest = a.json("/api/v1/latest")
    check(latest["sample_interval_ms"] == 1000 and latest["count"] == 8 and len(latest["gpus"]) == 8,
          f"/api/v1/latest: interval {latest['sample_interval_ms']}, {latest['count']} GPUs")
    one = a.json("/api/v1/gpus/0/latest")
    check(set(latest["gpus"][0]) == set(one) | {"idle_while_peers_busy"} and
          set(latest["gpus"][0]["gpu"]) == set(one["gpu"]), "/api/v1/latest elements are the per-GPU documents")
    # (Waited for: right after the start a GPU may not have answered every field yet.)
    wait_for(lambda: all(sorted(f["key"] for f in g["fields"]) == ["gpu_temp", "gpu_util", "power_usage"]
                         for g in a.json("/api/v1/latest?fields=gpu_util,temperature.gpu,DCGM_FI_DEV_POWER_USAGE")
                         ["gpus"]), 10, "/api/v1/latest?fields= keeps only those fields")
    for bad in ("nope", "gpu_util,", "uuid"):
        status, _, body = a.request("/api/v1/latest?fields=" + bad)
        check(status == 400 and json.loads(body)["field"] == "fields", f"fields={bad}: {status}")
    topo = wait_for(lambda: a.json("/api/v1/topology"), 20, "/api/v1/topology")
    cli = subprocess.run([BINARY, "--simulate", "dgx-h100", "--json", "topo", "-m"], capture_output=True,
                         env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    check(cli.returncode == 0 and json.loads(cli.stdout) == topo, "/api/v1/topology is what topo -m --json prints")
    status, headers, _ = a.request("/ui/nope.js")
    check(status == 404 and headers.get("Content-Type", "").startswith("application/json"), f"/ui/nope.js: {status}")
    status, _, _ = a.request("/ui/app.js?x=1")
    check(status == 400, f"/ui/app.js with an unknown parameter: {status}")


# --- the page in the browser -----------------------------------------------------------------

def test_page(a):
    gpus = wait_for(lambda: a.json("/api/v1/gpus"), 20, "/api/v1/gpus")
    uuids = {g["uuid"] for g in gpus["gpus"]}
    check(len(uuids) == 8, f"dgx-h100 has 8 GPUs: {len(uuids)}")
    wait_for(lambda: a.status("/api/v1/topology") == 200, 20, "/api/v1/topology is read")
    d = browser()
    try:
        d.get(a.url + "/")
        shown = wait_for(lambda: {c.get_attribute("data-uuid") for c in full_cards(d)} == uuids and uuids, 30,
                         "one card per GPU of /api/v1/gpus")
        if shown:
            for c in full_cards(d):
                uuid = c.get_attribute("data-uuid")
                check(c.find_element(By.CSS_SELECTOR, ".uuid").text == uuid, f"card shows its UUID {uuid}")
                check("H100" in c.find_element(By.CSS_SELECTOR, ".gpu-name").text, "card shows the GPU name")
                check(c.find_element(By.CSS_SELECTOR, ".badge").text == "up", f"card {uuid} state up")
        # Live charts: each card's utilisation chart has a line through several points, and grows.
        def chart_points():
            counts = []
            for c in full_cards(d):
                paths = c.find_elements(By.CSS_SELECTOR, '.chart[data-field="gpu_util"] path.line')
                counts.append(drawn_points(paths[0]) if paths else 0)
            return counts
        first = wait_for(lambda: (lambda n: n if len(n) == 8 and min(n) >= 3 else None)(chart_points()), 30,
                         "every card's utilisation chart has points")
        if first:
            wait_for(lambda: sum(chart_points()) > sum(first), 15, "the charts follow the polls")
        for field in ("fb_used", "gpu_temp", "power_usage"):
            check(len(d.find_elements(By.CSS_SELECTOR, f'#gpus .chart[data-field="{field}"] path.line')) == 8,
                  f"a {field} chart on every card")
        check(not d.find_elements(By.CSS_SELECTOR, "#gpus .card.idle-peers"), "no GPU marked idle on a busy node")
        # Topology: an 8x8 matrix over NVSwitch.
        rows = wait_for(lambda: (lambda r: r if len(r) == 9 else None)(d.find_elements(By.CSS_SELECTOR, "#topology tr")),
                        20, "the topology matrix")
        if rows:
            cells = [td.text for td in d.find_elements(By.CSS_SELECTOR, "#topology td.nv")]
            check(len(cells) == 56 and all(c.startswith("NV") for c in cells), f"56 NVLink cells: {cells[:8]}")
        # History: a chart, then another range.
        wait_for(lambda: drawn_points(d.find_element(By.CSS_SELECTOR, "#history-chart path.line")) >= 2, 20,
                 "the history chart")
        d.find_element(By.CSS_SELECTOR, '#history-ranges button[data-range="24h"]').click()
        wait_for(lambda: "24h" in d.find_element(By.CSS_SELECTOR, "#history-chart svg title").get_attribute(
            "textContent"), 10, "the 24h range redraws the history chart")
        check(len(d.find_elements(By.CSS_SELECTOR, "#history-ranges button")) == 5, "five ranges")
        # Phone width: nothing wider than the screen.
        d.set_window_size(390, 844)
        wait_for(lambda: d.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1"), 10,
            "no horizontal scrolling at 390 px")
        errors = severe(d)
        check(not errors, f"no console errors: {errors}")
    finally:
        d.quit()


def test_straggler(binary):
    a = Agent(binary, "fault-straggler", env={"GPUWARDEN_SIM_START": "40"})
    try:
        idle_uuid = wait_for(lambda: [g["gpu"]["uuid"] for g in a.json("/api/v1/latest")["gpus"]
                                      if g["idle_while_peers_busy"]], 20, "/api/v1/latest marks the straggler")
        check(idle_uuid and len(idle_uuid) == 1 and a.json("/api/v1/gpus/5/latest")["gpu"]["uuid"] == idle_uuid[0],
              f"only GPU 5 is idle while its peers are busy: {idle_uuid}")
        # The same rule marks the same GPU in `gpuwarden dmon` (one home: health/idle_peers.h).
        dmon = subprocess.run([BINARY, "--simulate", "fault-straggler", "dmon", "-c", "1", "--format", "json"],
                              capture_output=True, text=True,
                              env=dict(os.environ, GPUWARDEN_SIM_START="40", ASAN_OPTIONS="detect_leaks=0"))
        rows = json.loads(dmon.stdout.splitlines()[-1])["gpus"] if dmon.stdout.strip() else []
        check([r["gpu"] for r in rows if r["straggler"]] == [5], f"dmon marks GPU 5 too: {dmon.stdout[-400:]}")
        d = browser()
        try:
            d.get(a.url + "/")
            marked = wait_for(lambda: [c.get_attribute("data-uuid")
                                       for c in d.find_elements(By.CSS_SELECTOR, "#gpus .card.idle-peers")], 30,
                              "the dashboard marks the straggler")
            check(marked == idle_uuid, f"the marked card is GPU 5: {marked} vs {idle_uuid}")
            if marked:
                badge = d.find_element(By.CSS_SELECTOR, "#gpus .card.idle-peers .badge.idle")
                check(badge.is_displayed() and badge.text == "idle while peers busy", "the idle badge is shown")
            check(len(d.find_elements(By.CSS_SELECTOR, "#gpus .badge.idle")) == 8 and
                  len([b for b in d.find_elements(By.CSS_SELECTOR, "#gpus .badge.idle") if b.is_displayed()]) == 1,
                  "only one idle badge visible")
            errors = severe(d)  # read once: reading empties the log
            check(not errors, f"no console errors: {errors}")
        finally:
            d.quit()
    finally:
        a.stop()


def test_incident(binary):
    root = tempfile.mkdtemp(prefix="gw-dash-root-")
    os.makedirs(root + "/dev")
    # A kernel-log Xid naming a hostile process: the name is what the kernel printed, untrusted.
    with open(root + "/dev/kmsg", "w") as f:
        f.write(f"4,100,5000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=77, name={HOSTILE}, Graphics Exception\n")
    # Ten seconds before GPU 3 falls off the bus (t=30 s): a context window with samples in it.
    a = Agent(binary, "fault-xid-79", env={"GPUWARDEN_SIM_START": "20"}, root=root)
    try:
        wait_for(lambda: any(i["rule"] == "xid" and i["gpu_index"] == 3
                             for i in a.json("/api/v1/incidents?state=open")["incidents"]), 30,
                 "the Xid 79 incident opens")
        wait_for(lambda: any(e.get("process") == HOSTILE for e in a.json("/api/v1/events?since=24h")["events"]), 20,
                 "the kernel-log Xid 13 with its process name is an event")
        d = browser()
        try:
            d.get(a.url + "/")
            box = wait_for(lambda: [b for b in d.find_elements(By.CSS_SELECTOR, "#incidents .incident")
                                    if " xid" in b.find_element(By.CSS_SELECTOR, "h3").text], 30,
                           "the incident is shown")
            if box:
                b = box[0]
                check("GPU 3" in b.text and b.find_element(By.CSS_SELECTOR, ".summary").text, "incident names GPU 3")
                charts = b.find_elements(By.CSS_SELECTOR, ".context .chart")
                check(len(charts) >= 2, f"context charts: {len(charts)}")
                lines = b.find_elements(By.CSS_SELECTOR, ".context path.line")
                check(lines and max(drawn_points(p) for p in lines) >= 5,
                      "the context charts draw the minute before")
                check(b.find_elements(By.CSS_SELECTOR, ".context line.mark"), "the moment is marked")
            cell = wait_for(lambda: [td for td in d.find_elements(By.CSS_SELECTOR, "#events td.process")
                                     if td.text == HOSTILE], 20, "the hostile process name is shown as text")
            check(cell, "the event's process column holds the literal text")
            check(not d.find_elements(By.CSS_SELECTOR, "#events img, #incidents img, #gpus img"),
                  "no element made from API text")
            check(d.execute_script("return window.__pwned === undefined"), "no script ran from API text")
            check(d.find_elements(By.CSS_SELECTOR, "#events-timeline circle.dot.xid"), "Xids on the timeline")
            check(d.find_element(By.ID, "overall").text == "fatal", "overall health fatal")
            errors = severe(d)  # read once: reading empties the log
            check(not errors, f"no console errors: {errors}")
        finally:
            d.quit()
    finally:
        a.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_auth(binary):
    hashed = subprocess.run([binary, "hash-password"], input=b"s3cret", capture_output=True, check=True).stdout
    wdir = tempfile.mkdtemp(prefix="gw-dash-web-")
    web = os.path.join(wdir, "web.yml")
    with open(web, "w") as f:
        f.write("basic_auth_users:\n  ops: " + hashed.decode().strip() + "\n")
    a = Agent(binary, "dgx-h100", web_config=web)
    try:
        good = {"Authorization": "Basic " + base64.b64encode(b"ops:s3cret").decode()}
        bad = {"Authorization": "Basic " + base64.b64encode(b"ops:wrong").decode()}
        for path in ("/", "/ui/app.js", "/ui/app.css", "/api/v1/latest", "/api/v1/topology"):
            for who, h in (("nobody", {}), ("a wrong password", bad)):
                status, headers, _ = a.request(path, dict(h, Accept=BROWSER_ACCEPT))
                check(status == 401 and "WWW-Authenticate" in headers, f"{path} for {who}: {status}")
        status, headers, _ = a.request("/", dict(good, Accept=BROWSER_ACCEPT))
        check(status == 200 and headers.get("Content-Type", "").startswith("text/html"), f"/ with the password: {status}")
        status, _, _ = a.request("/ui/app.js", good)
        check(status == 200, f"/ui/app.js with the password: {status}")
    finally:
        a.stop()
        shutil.rmtree(wdir, ignore_errors=True)


def test_mig(binary):
    """A MIG node: one card per MIG device besides the GPUs' own, each naming its parent's profile."""
    a = Agent(binary, "mig-h100")
    try:
        gpus = a.json("/api/v1/gpus")["gpus"]
        migs = sorted(m["uuid"] for g in gpus for m in g["mig_devices"])
        check(migs, "mig-h100 has MIG devices in /api/v1/gpus")
        d = browser()
        try:
            d.get(a.url + "/")
            shown = wait_for(lambda: sorted(c.get_attribute("data-uuid")
                                            for c in d.find_elements(By.CSS_SELECTOR, "#gpus article.card.mig"))
                             or None, 30, "MIG cards drawn")
            check(shown == migs, f"one card per MIG device: {shown} vs {migs}")
            check(len(full_cards(d)) == len(gpus), f"one card per GPU besides: {len(full_cards(d))} vs {len(gpus)}")
            labels = [c.text for c in d.find_elements(By.CSS_SELECTOR, "#gpus article.card.mig")]
            check(all("MIG " in t for t in labels), f"MIG cards say so: {labels[:2]}")
            errors = severe(d)
            check(not errors, f"no console errors on a MIG node: {errors}")
        finally:
            d.quit()
    finally:
        a.stop()


def main():
    global SOURCE_WEB, BINARY
    binary = BINARY = sys.argv[1]
    SOURCE_WEB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../src/server/web")
    a = Agent(binary, "dgx-h100")
    try:
        test_http(a)
        test_page(a)
    finally:
        a.stop()
    test_straggler(binary)
    test_mig(binary)
    test_incident(binary)
    test_auth(binary)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("PASS: the dashboard in Chromium")


if __name__ == "__main__":
    main()
