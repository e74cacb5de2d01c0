#!/usr/bin/env python3
"""What a password check costs the agent, right beside wrong: the time of one authenticated
request for a right password, a wrong one and an unknown user, each seen for the first time
(one bcrypt) and again (the remembered verdict). They must match within the noise.

Usage: auth_cost.py GPUWARDEN_BINARY [N]   (default N=10 samples of each; bcrypt cost 10)
"""
import base64
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

gw = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
work = tempfile.mkdtemp()
users = {}
for i in range(n):
    h = subprocess.run([gw, "hash-password"], input=f"pw{i}", capture_output=True, text=True, check=True).stdout.strip()
    users[f"u{i}"] = h
with open(os.path.join(work, "web.yml"), "w") as f:
    f.write("basic_auth_users:\n" + "".join(f"  {u}: '{h}'\n" for u, h in users.items()))
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
agent = subprocess.Popen([gw, "serve", "--simulate", "dgx-h100", "--listen", f"127.0.0.1:{port}", "--data-dir",
                          os.path.join(work, "data"), "--web.config.file", os.path.join(work, "web.yml")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except Exception:
            time.sleep(0.1)

    def timed(user, password):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1",
                                     headers={"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()})
        t0 = time.perf_counter()
        try:
            code = urllib.request.urlopen(req, timeout=10).status
        except urllib.error.HTTPError as e:
            code = e.code
        return (time.perf_counter() - t0) * 1000, code

    rows = {"right, first": [], "wrong, first": [], "unknown user, first": [], "right, again": [], "wrong, again": []}
    for i in range(n):
        for label, (u, p, want) in (("right, first", (f"u{i}", f"pw{i}", 200)),
                                    ("wrong, first", (f"u{i}", f"nope{i}", 401)),
                                    ("unknown user, first", (f"x{i}", f"pw{i}", 401)),
                                    ("right, again", (f"u{i}", f"pw{i}", 200)),
                                    ("wrong, again", (f"u{i}", f"nope{i}", 401))):
            ms, code = timed(u, p)
            assert code == want, (label, code)
            rows[label].append(ms)
    for label, v in rows.items():
        print(f"{label:20s} median {statistics.median(v):7.2f} ms   min {min(v):7.2f}   max {max(v):7.2f}")
finally:
    agent.terminate()
    agent.wait()
