#!/usr/bin/env python3
"""gpuwarden top, the real program end to end.

  top_test.py GPUWARDEN tmux   in a detached tmux session (private socket) on the simulated DGX:
                               every GPU on screen with the simulator's values, keys, resizes down
                               to "too small" and back, q exits 0 and the pane is back at the shell
  top_test.py GPUWARDEN once   --once: a plain frame with every GPU and exact inventory values
  top_test.py GPUWARDEN agent  --agent against real `gpuwarden serve` agents (plain HTTP, and
                               TLS with basic auth), and an unreachable agent: exit 3

Everything waits for a state with a deadline; nothing sleeps a fixed time. A missing tmux or
openssl is a failure, not a skip (scripts/setup installs both).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import ssl

GW = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
WORK = tempfile.mkdtemp(prefix="gw-top-")
ENV = dict(os.environ, GPUWARDEN_RUNTIME_DIR=os.path.join(WORK, "run"),
           ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "detect_leaks=0"))
ENV.pop("GPUWARDEN_AGENT_AUTH", None)
ESC = re.compile(r"\x1b|\x9b")


def fail(msg):
    print("FAIL: " + msg)
    for name in sorted(os.listdir(WORK)):
        if name.endswith(".log"):
            with open(os.path.join(WORK, name), errors="replace") as f:
                print("--- " + name + "\n" + "".join(f.readlines()[-30:]))
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def wait_for(what, probe, seconds=60):
    """Calls probe() until it returns something true; returns it. Fails after `seconds`."""
    end = time.monotonic() + seconds
    last = None
    while time.monotonic() < end:
        last = probe()
        if last and last[0]:
            return last
        time.sleep(0.1)
    fail(f"{what}: not within {seconds} s; last state:\n{last[1] if last else ''}")


def gw(*args, env=None, timeout=60):
    return subprocess.run([GW, *args], capture_output=True, text=True, env=env or ENV, timeout=timeout)


def discovery():
    r = gw("discovery", "--simulate", "dgx-h100", "--json")
    check(r.returncode == 0, "discovery: " + r.stderr)
    return json.loads(r.stdout)["gpus"]


# A GPU row of the wide layout: index, name, util bar, memory bar, temperature, power/limit, clocks.
WIDE_ROW = re.compile(r"^\s*(\d+) (.{22}) \[\|*\s*(\d+)%\] \[\|*\s*([\d.]+)/([\d.]+)G\]\s+(\d+)C\s+(\d+)/(\d+)W"
                      r"\s+(\d+)/(\d+)$")


def wide_rows(text):
    return {int(m.group(1)): m for m in (WIDE_ROW.match(line) for line in text.splitlines()) if m}


def check_inventory(rows, gpus, where):
    check(sorted(rows) == [g["index"] for g in gpus], f"{where}: GPU rows {sorted(rows)}, not every GPU")
    for g in gpus:
        m = rows[g["index"]]
        check(m.group(2).strip() == g["name"], f"{where}: GPU {g['index']} named '{m.group(2).strip()}'")
        check(m.group(5) == f"{g['memory_total_mib'] / 1024:.1f}", f"{where}: GPU {g['index']} total {m.group(5)}G")
        check(int(m.group(8)) == round(g["power_limit_w"]), f"{where}: GPU {g['index']} limit {m.group(8)} W")


def check_live_values(rows, where):
    """The screen against the simulator read right after, by another command (gpuwarden query)."""
    r = gw("query", "--simulate", "dgx-h100", "--query-gpu",
           "index,utilization.gpu,memory.used,temperature.gpu,power.draw,clocks.mem",
           "--format", "csv,noheader,nounits")
    check(r.returncode == 0, "query: " + r.stderr)
    for line in r.stdout.strip().splitlines():
        idx, util, used, temp, power, mclk = [float(x) for x in line.split(",")]
        m = rows[int(idx)]
        check(abs(int(m.group(3)) - util) <= 10, f"{where}: GPU {idx:.0f} util {m.group(3)} vs {util}")
        check(abs(float(m.group(4)) - used / 1024) <= 0.15, f"{where}: GPU {idx:.0f} memory {m.group(4)}G vs {used} MiB")
        check(abs(int(m.group(6)) - temp) <= 10, f"{where}: GPU {idx:.0f} temp {m.group(6)} vs {temp}")
        check(abs(int(m.group(7)) - power) <= 40, f"{where}: GPU {idx:.0f} power {m.group(7)} vs {power}")
        check(int(m.group(10)) == round(mclk), f"{where}: GPU {idx:.0f} memory clock {m.group(10)} vs {mclk}")


def test_tmux():
    tmux = shutil.which("tmux")
    check(tmux is not None, "tmux is not installed (scripts/setup installs it); this test needs it")
    sock = os.path.join(WORK, "tmux.sock")
    t = lambda *a: subprocess.run([tmux, "-S", sock, *a], capture_output=True, text=True, env=ENV, timeout=10)
    gpus = discovery()
    try:
        r = t("new-session", "-d", "-s", "top", "-x", "120", "-y", "40", "env", "PS1=gw-shell$ ", "bash",
              "--norc", "--noprofile")
        check(r.returncode == 0, "tmux new-session: " + r.stderr)
        t("set-option", "-t", "top", "status", "off")
        pane = lambda: t("capture-pane", "-p", "-t", "top").stdout
        # A long interval: whatever changes on screen below is the answer to a key or a resize, not
        # the next refresh (each wait's deadline is shorter than the interval).
        t("send-keys", "-t", "top", f"'{GW}' top --simulate dgx-h100 -d 30; echo top-exit=$?", "Enter")

        def every_gpu():
            text = pane()
            return (len(wide_rows(text)) == len(gpus) and "q quit" in text, text)
        text = wait_for("every GPU on the 120x40 screen", every_gpu)[1]
        check_inventory(wide_rows(text), gpus, "120x40")
        check_live_values(wide_rows(text), "120x40")
        check(not ESC.search(text), "escape codes in the captured text")
        check(all(len(line) <= 120 for line in text.splitlines()), "a line wider than 120")
        for g in gpus:
            check(re.search(rf"^\s+\d+ \S+\s+{g['index']}\s+C\s+\d+\s+71680 MiB  python3$", text, re.M),
                  f"no process row on GPU {g['index']}:\n{text}")
        check("HISTORY  utilisation %" in text, "no history chart:\n" + text)

        # Keys: sort by SM, next chart, select and try to kill (refused: simulated processes).
        t("send-keys", "-t", "top", "s")
        wait_for("sort by SM", lambda: ("sorted by SM %" in pane(), pane()), 8)
        t("send-keys", "-t", "top", "c")
        wait_for("memory chart", lambda: ("HISTORY  memory used MiB" in pane(), pane()), 8)
        t("send-keys", "-t", "top", "Down")
        wait_for("a selected process", lambda: (re.search(r"^>\s*4100\d ", pane(), re.M), pane()), 8)
        t("send-keys", "-t", "top", "k")
        wait_for("kill refused", lambda: ("kill is refused under --simulate" in pane(), pane()), 8)

        # Narrower: the frame is laid out again for 60 columns (no name or clock column, every GPU).
        t("resize-window", "-t", "top", "-x", "60", "-y", "20")
        narrow = re.compile(r"^\s*\d \[\|*\s*\d+%\] \[\|*\s*[\d.]+/[\d.]+G\]\s+\d+C\s+\d+/\d+W$", re.M)

        def redrawn_60():
            text = pane()
            lines = text.splitlines()
            return (len(narrow.findall(text)) == len(gpus) and lines and lines[-1].startswith("q quit")
                    and len(lines) == 20 and all(len(line) <= 60 for line in lines), text)
        wait_for("the 60x20 layout", redrawn_60, 8)

        # Tiny: one "too small" line, no crash.
        t("resize-window", "-t", "top", "-x", "30", "-y", "8")
        wait_for("too small at 30x8", lambda: (pane().startswith("terminal too small"), pane()), 8)
        t("resize-window", "-t", "top", "-x", "20", "-y", "4")
        wait_for("too small at 20x4", lambda: (pane().startswith("terminal too sm"), pane()), 8)

        # Back to full size: every GPU again.
        t("resize-window", "-t", "top", "-x", "120", "-y", "40")
        wait_for("every GPU after growing back", every_gpu, 8)

        t("send-keys", "-t", "top", "q")
        exited = re.compile(r"^top-exit=(\d+)$", re.M)
        text = wait_for("top's exit", lambda: (exited.search(pane()), pane()), 15)[1]
        check(exited.search(text).group(1) == "0", "top did not exit 0:\n" + text)
        cmd = t("display-message", "-p", "-t", "top", "#{pane_current_command}").stdout.strip()
        check(cmd == "bash", f"the pane runs '{cmd}', not the shell, after q")
        check("gw-shell$" in text.strip().splitlines()[-1], "the shell prompt is not back:\n" + text)

        # A short interval: the screen refreshes by itself, and the history chart grows.
        t("send-keys", "-t", "top", "clear", "Enter")
        t("send-keys", "-t", "top", f"'{GW}' top --simulate dgx-h100 -d 0.3; echo top-again=$?", "Enter")
        chart0 = re.compile(r"^  0 ([ _.:=+*#@-]+?)\s+\d+$", re.M)

        def samples():
            m = chart0.search(pane())
            return len(m.group(1).strip()) if m else 0
        wait_for("every GPU, second run", every_gpu, 60)
        first = samples()
        wait_for("the history chart growing", lambda: (samples() >= first + 3, pane()), 10)
        t("send-keys", "-t", "top", "q")
        again = re.compile(r"^top-again=(\d+)$", re.M)
        text = wait_for("top's second exit", lambda: (again.search(pane()), pane()), 15)[1]
        check(again.search(text).group(1) == "0", "top did not exit 0 the second time:\n" + text)

        # Ctrl-C (SIGINT) ends it as q does: exit 0, the terminal given back.
        t("send-keys", "-t", "top", "clear", "Enter")
        t("send-keys", "-t", "top", f"'{GW}' top --simulate dgx-h100 -d 30; echo top-int=$?", "Enter")
        wait_for("every GPU, third run", every_gpu, 60)
        t("send-keys", "-t", "top", "C-c")
        interrupted = re.compile(r"^top-int=(\d+)$", re.M)
        text = wait_for("top's exit on Ctrl-C", lambda: (interrupted.search(pane()), pane()), 15)[1]
        check(interrupted.search(text).group(1) == "0", "Ctrl-C: top did not exit 0:\n" + text)
        check(t("display-message", "-p", "-t", "top", "#{alternate_on}").stdout.strip() == "0",
              "the terminal is still on curses' alternate screen after Ctrl-C")
    finally:
        t("kill-server")


def test_once():
    gpus = discovery()
    r = gw("top", "--simulate", "dgx-h100", "--once")
    check(r.returncode == 0, f"--once exit {r.returncode}: {r.stderr}")
    check(not ESC.search(r.stdout), "escape codes in --once output")
    check(r.stdout.startswith("gpuwarden top - simulated dgx-h100 - 8 GPUs - "), "title: " + r.stdout[:80])
    check(all(len(line) <= 120 for line in r.stdout.splitlines()), "a line wider than 120")
    rows = wide_rows(r.stdout)
    check_inventory(rows, gpus, "--once")
    for g in gpus:
        m = rows[g["index"]]
        check(m.group(4) == "70.0", f"GPU {g['index']}: memory used {m.group(4)}G (the scenario's 70 GiB process)")
        check(int(m.group(10)) == g["max_memory_clock_mhz"], f"GPU {g['index']} memory clock {m.group(10)}")
    procs = re.findall(r"^\s+(4100\d) -\s+(\d) +C +\d+ +71680 MiB  python3$", r.stdout, re.M)
    check(len(procs) == 8, "process rows:\n" + r.stdout)
    check("q quit" not in r.stdout, "keys in a one-shot frame")
    h = gw("top", "--help")
    check(h.returncode == 0 and "Keys: q quit" in h.stdout and "GPUWARDEN_AGENT_AUTH" in h.stdout
          and "Exit codes" in h.stdout, "top --help:\n" + h.stdout)
    narrow = gw("top", "--simulate", "dgx-h100", "--once", "--width", "60")
    check(narrow.returncode == 0 and all(len(line) <= 60 for line in narrow.stdout.splitlines()),
          "--width 60:\n" + narrow.stdout)
    check(len(re.findall(r"^\s+\d \[", narrow.stdout, re.M)) == 8, "--width 60 rows:\n" + narrow.stdout)
    # Bad arguments: exit 2 with a sentence.
    for args in (["-d", "0"], ["--width", "20"], ["--agent", "ftp://x"], ["--agent", "http://x", "--simulate", "a"]):
        bad = gw("top", "--once", *([] if "--simulate" in args else ["--simulate", "dgx-h100"]), *args)
        check(bad.returncode == 2 and bad.stderr.startswith("gpuwarden: "), f"{args}: exit {bad.returncode} {bad.stderr}")
    # A URL refused for its form is quoted without its credentials.
    for url, why, shown in (("https://alice:s3cret@/x", "names no host", "https:///x"),
                            ("ftp://alice:s3cret@host/x", "is not an http:// or https:// URL", "ftp://host/x")):
        bad = gw("top", "--once", "--agent", url)
        check(bad.returncode == 2 and bad.stderr == f"gpuwarden: --agent '{shown}' {why}\n",
              f"--agent {url}: exit {bad.returncode} {bad.stderr}")
    # Without a terminal and without --once: exit 2, pointing at --once.
    r = gw("top", "--simulate", "dgx-h100")
    check(r.returncode == 2 and "--once" in r.stderr, f"no terminal: exit {r.returncode} {r.stderr}")
    # A hung GPU is shown stalled without waiting out its hang (30 s), a lost one lost: exit 1.
    t0 = time.monotonic()
    r = gw("top", "--once", "--simulate", "fault-hang", env=dict(ENV, GPUWARDEN_SIM_START="15"))
    check(time.monotonic() - t0 < 20, "--once waited for the hung GPU")
    check(r.returncode == 1 and re.search(r"^  5 +stalled: no answer from NVML within \d+ ms$", r.stdout, re.M)
          and len(wide_rows(r.stdout)) == 7, f"hung GPU: exit {r.returncode}\n{r.stdout}")
    r = gw("top", "--once", "--simulate", "fault-gpu-lost", env=dict(ENV, GPUWARDEN_SIM_START="60"))
    check(r.returncode == 1 and re.search(r"^  3 +lost: .*GPU is lost", r.stdout, re.M)
          and len(wide_rows(r.stdout)) == 7, f"lost GPU: exit {r.returncode}\n{r.stdout}")
    # No NVML: exit 3.
    r = gw("top", "--once", "--nvml-lib", os.path.join(WORK, "missing.so"))
    check(r.returncode == 3 and r.stderr.count("\n") == 1, f"no NVML: exit {r.returncode} {r.stderr}")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_agent(name, extra=()):
    port = free_port()
    log = open(os.path.join(WORK, name + ".log"), "w")
    p = subprocess.Popen([GW, "serve", "--simulate", "dgx-h100", "--listen", f"127.0.0.1:{port}", "--data-dir",
                          os.path.join(WORK, name), *extra], stdout=log, stderr=subprocess.STDOUT, env=ENV)
    return p, port


def healthz(url, ctx=None):
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=2, context=ctx) as r:
            return (r.status == 200, r.status)
    except Exception as e:  # not up yet
        return (False, str(e))


def once_until_every_gpu(gpus, args, env=None):
    def probe():
        r = gw("top", "--once", *args, env=env)
        ok = r.returncode == 0 and len(wide_rows(r.stdout)) == len(gpus)
        return (ok, f"exit {r.returncode}\n{r.stdout}{r.stderr}", r.stdout)
    return wait_for(f"top --once {' '.join(args)} with every GPU", probe, 60)[2]


def test_agent():
    gpus = discovery()
    agents = []
    try:
        plain, port = start_agent("plain")
        agents.append(plain)
        url = f"http://127.0.0.1:{port}"
        wait_for("the agent's /healthz", lambda: healthz(url), 60)
        text = once_until_every_gpu(gpus, ["--agent", url])
        check(text.startswith(f"gpuwarden top - agent {url} - 8 GPUs"), "title: " + text[:80])
        check_inventory(wide_rows(text), gpus, "--agent")
        check("processes: not in the agent's API" in text, "no word on processes:\n" + text)

        # On screen (tmux): kill is refused as a local-only action; an agent that goes away is
        # said on screen, the last frame stays, and q still exits 0.
        tmux = shutil.which("tmux")
        check(tmux is not None, "tmux is not installed (scripts/setup installs it)")
        sock = os.path.join(WORK, "tmux.sock")
        t = lambda *a: subprocess.run([tmux, "-S", sock, *a], capture_output=True, text=True, env=ENV, timeout=10)
        pane = lambda: t("capture-pane", "-p", "-t", "top").stdout
        try:
            t("new-session", "-d", "-s", "top", "-x", "120", "-y", "40", "env", "PS1=gw-shell$ ", "bash", "--norc",
              "--noprofile")
            t("send-keys", "-t", "top", f"'{GW}' top --agent {url} -d 0.5; echo top-exit=$?", "Enter")
            wait_for("every GPU from the agent on screen", lambda: (len(wide_rows(pane())) == len(gpus), pane()), 60)
            t("send-keys", "-t", "top", "k")
            wait_for("kill refused with --agent", lambda: ("kill is a local-only action" in pane(), pane()), 10)
            plain.terminate()
            plain.wait(30)
            wait_for("the lost agent on screen",
                     lambda: (f"cannot reach the agent at {url}" in pane() and len(wide_rows(pane())) == len(gpus),
                              pane()), 15)
            t("send-keys", "-t", "top", "q")
            exited = re.compile(r"^top-exit=(\d+)$", re.M)
            text = wait_for("top's exit", lambda: (exited.search(pane()), pane()), 15)[1]
            check(exited.search(text).group(1) == "0", "top did not exit 0:\n" + text)
        finally:
            t("kill-server")

        # TLS and basic authentication (the agent's web configuration).
        for tool in ("openssl",):
            check(shutil.which(tool) is not None, f"{tool} is not installed (scripts/setup installs it)")
        os.chdir(WORK)
        sh = lambda cmd: subprocess.run(cmd, shell=True, check=True, capture_output=True)
        sh('openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=test CA"')
        sh('openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1"')
        with open("san.ext", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        sh("openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
           "-extfile san.ext")
        h = subprocess.run([GW, "hash-password", "--cost", "6"], input="s3cret", capture_output=True, text=True,
                           env=ENV)
        check(h.returncode == 0, "hash-password: " + h.stderr)
        with open("web.yml", "w") as f:
            f.write("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
                    f"basic_auth_users:\n  watcher: '{h.stdout.strip()}'\n")
        tls, tport = start_agent("tls", ["--web.config.file", os.path.join(WORK, "web.yml")])
        agents.append(tls)
        ctx = ssl.create_default_context(cafile=os.path.join(WORK, "ca.pem"))
        turl = f"https://127.0.0.1:{tport}"
        wait_for("the TLS agent's /healthz", lambda: healthz(turl, ctx), 60)
        ca = ["--cacert", os.path.join(WORK, "ca.pem")]
        text = once_until_every_gpu(gpus, ["--agent", f"https://watcher:s3cret@127.0.0.1:{tport}", *ca])
        check(f"agent {turl} " in text and "s3cret" not in text, "the title shows the password or not the URL")
        check_inventory(wide_rows(text), gpus, "--agent https")
        once_until_every_gpu(gpus, ["--agent", turl, *ca], env=dict(ENV, GPUWARDEN_AGENT_AUTH="watcher:s3cret"))
        r = gw("top", "--once", "--agent", f"https://watcher:wrong@127.0.0.1:{tport}", *ca)
        check(r.returncode == 3 and "refused the credentials (HTTP 401)" in r.stderr, f"wrong password: {r.returncode} {r.stderr}")
        r = gw("top", "--once", "--agent", f"https://watcher:s3cret@127.0.0.1:{tport}")
        check(r.returncode == 3 and "cannot reach the agent" in r.stderr, f"unknown CA: {r.returncode} {r.stderr}")
    finally:
        for p in agents:
            p.terminate()
        for p in agents:
            p.wait(30)

    # Nobody listens: exit 3 with one sentence.
    dead = f"http://127.0.0.1:{free_port()}"
    r = gw("top", "--once", "--agent", dead)
    check(r.returncode == 3, f"unreachable agent: exit {r.returncode}")
    check(r.stderr.startswith(f"gpuwarden: cannot reach the agent at {dead}: ") and r.stderr.count("\n") == 1,
          "unreachable agent: " + r.stderr)
    check(r.stdout == "", "a frame for an unreachable agent")

    # A hostile answer (any server can claim to be an agent): its nesting is bounded before
    # anything is built from it, and a document that is no object is named for what it is.
    import http.server
    import threading

    class Hostile(http.server.BaseHTTPRequestHandler):
        body = b""
        status = 200

        def do_GET(self):
            self.send_response(Hostile.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(Hostile.body)))
            self.end_headers()
            self.wfile.write(Hostile.body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        for body, why in ((b'{"x": ' + b"[" * 64 + b"]" * 64 + b"}", "JSON nested deeper than 64"),
                          (b"[1, 2]", "a array")):
            Hostile.body = body
            r = gw("top", "--once", "--agent", url)
            check(r.returncode == 3, f"hostile answer ({why}): exit {r.returncode}")
            check(r.stderr.startswith(f"gpuwarden: the answer of {url}/api/v1/") and
                  f"is not a JSON object ({why}): is this a gpuwarden agent?" in r.stderr,
                  f"hostile answer ({why}): " + r.stderr)
            check(r.stdout == "", f"a frame for a hostile answer ({why})")

        # An index that is no GPU's (a fraction past any integer, a negative one) is a wrong
        # answer, said as such; so is a list longer than any machine's.
        for index in ("1e300", "-1", "2.5"):
            Hostile.body = ('{"gpus": [{"index": %s, "name": "H100", "state": "up"}]}' % index).encode()
            r = gw("top", "--once", "--agent", url)
            check(r.returncode == 3 and r.stdout == "", f"index {index}: exit {r.returncode}\n" + r.stdout + r.stderr)
            check(f"the answer of {url}/api/v1/gpus is not gpuwarden's API" in r.stderr and
                  '"index" is not a whole number in range' in r.stderr, f"index {index}: " + r.stderr)
        Hostile.body = json.dumps({"gpus": [{"index": i, "name": "H100", "state": "up"} for i in range(1025)]}).encode()
        r = gw("top", "--once", "--agent", url)
        check(r.returncode == 3 and f"the answer of {url}/api/v1/gpus lists 1025 GPUs; at most 1024" in r.stderr,
              f"1025 GPUs: exit {r.returncode}\n" + r.stderr)

        # Terminal control in another machine's words is shown, never obeyed: a GPU name that
        # would retitle the window and clear the screen, a C1 CSI in a state's reason, and an
        # error body quoted in the refusal.
        Hostile.body = json.dumps({"gpus": [{"index": 0, "name": "\x1b]0;pwned\x07H100\x1b[2J", "state": "lost",
                                             "state_reason": "\x9b31m gone"}]}).encode()
        r = gw("top", "--once", "--agent", url)
        check(r.returncode == 1, f"a lost GPU's frame: exit {r.returncode}\n" + r.stdout + r.stderr)
        check(not ESC.search(r.stdout + r.stderr), "terminal control passed through:\n" + repr(r.stdout + r.stderr))
        check("  0 \\x1b]0;pwned\\x07H100" in r.stdout and "lost: \\u009b31m gone" in r.stdout,  # name cut at its column
              "the hostile name and reason, shown:\n" + r.stdout)
        Hostile.status, Hostile.body = 500, b"\x1b[2Jboom"
        r = gw("top", "--once", "--agent", url)
        check(r.returncode == 3, f"an HTTP 500: exit {r.returncode}")
        check(not ESC.search(r.stdout + r.stderr), "terminal control passed through:\n" + repr(r.stdout + r.stderr))
        check(f"the agent at {url} answered HTTP 500 to /api/v1/gpus: \\x1b[2Jboom" in r.stderr,
              "the error body, shown:\n" + r.stderr)
    finally:
        server.shutdown()


try:
    {"tmux": test_tmux, "once": test_once, "agent": test_agent}[MODE]()
    print("PASS: top " + MODE)
finally:
    shutil.rmtree(WORK, ignore_errors=True)
