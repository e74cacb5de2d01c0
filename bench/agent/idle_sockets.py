#!/usr/bin/env python3
"""Holds N idle TCP connections to HOST:PORT open, reopening any the server closes, until killed.

Usage: idle_sockets.py PORT [N]   (default N=1000). Prints "holding N" once all are open.
"""
import resource
import selectors
import socket
import sys

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))
sel = selectors.DefaultSelector()


def open_one():
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_READ)


for _ in range(n):
    open_one()
print(f"holding {n}", flush=True)
while True:
    for key, _ in sel.select():
        s = key.fileobj
        sel.unregister(s)
        s.close()
        try:
            open_one()
        except OSError:
            pass
