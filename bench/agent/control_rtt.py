#!/usr/bin/env python3
"""Round trip of the agent's control socket: connect, send one request, read the reply, close.

Usage: control_rtt.py SOCKET [N] [OP]   (default N=2000, OP=ping)
Prints the median, p90, p99 and max in microseconds. Run it against `gpuwarden serve`; the agent
logs its socket path at start ("control socket ...").
"""
import json
import socket
import statistics
import sys
import time


def once(path, payload):
    t0 = time.perf_counter_ns()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(payload)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    t1 = time.perf_counter_ns()
    reply = json.loads(buf)
    if not reply.get("ok"):
        sys.exit(f"agent refused: {reply}")
    return (t1 - t0) / 1000.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    op = sys.argv[3] if len(sys.argv) > 3 else "ping"
    payload = (json.dumps({"op": op}) + "\n").encode()
    for _ in range(50):
        once(path, payload)  # warm up
    us = sorted(once(path, payload) for _ in range(n))
    q = lambda p: us[min(len(us) - 1, int(p * len(us)))]
    print(f"{op}: n={n} median={statistics.median(us):.0f} us p90={q(0.90):.0f} us "
          f"p99={q(0.99):.0f} us max={us[-1]:.0f} us")


if __name__ == "__main__":
    main()
