#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stranger flooding impi-server's port, for tests/security/impi-flood.sh.

    flood.py PORT OUTDIR [--idle N] [--sources S] [--junk-per-s R]

Keeps N idle TCP connections to 127.0.0.1:PORT, opened from S loopback
addresses (127.0.2.1 ...; the server sees S different hosts): every one
the server closes is opened again after a pause. Meanwhile it opens R
junk connections a second from other addresses (127.0.3.x), each one of:
random bytes; a real AUTH method mask followed by a forged proof; the
header of a 16 MiB frame before any AUTH; one byte, then silence. Every byte
the server sends to any of them is appended to OUTDIR/received.bin.
OUTDIR/ready appears once N idle connections were established (the server
may have closed some since); on SIGTERM it writes OUTDIR/stats (counts)
and exits.
"""
import argparse
import os
import random
import selectors
import signal
import socket
import struct
import time

REOPEN_PAUSE = 0.5  # seconds before an idle connection closed by the server is opened again
HASHI_HMAC = 1 << 16


def junk_payloads():
    return [
        ("random", os.urandom(64)),
        ("mask, then a forged proof", b"AUTH" + struct.pack(">II", 4, HASHI_HMAC)),
        ("huge frame", b"HXBI" + struct.pack(">I", 16 << 20)),
        ("one byte", b"A"),
    ]


class Flood:
    def __init__(self, port, outdir, idle, sources, junk_per_s):
        self.port = port
        self.outdir = outdir
        self.idle_target = idle
        self.sources = sources
        self.junk_interval = 1.0 / junk_per_s if junk_per_s > 0 else None
        self.sel = selectors.DefaultSelector()
        self.received = open(os.path.join(outdir, "received.bin"), "ab")
        self.stats = {"idle_opened": 0, "idle_connected": 0, "idle_closed_by_server": 0, "junk_opened": 0,
                      "junk_closed_by_server": 0, "connect_failed": 0, "bytes_received": 0}
        self.reopen = []  # (when, source index)
        self.stop = False
        self.ready = False

    def open(self, src, kind, payload=b""):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((src, 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            self.stats["connect_failed"] += 1
            s.close()
            return False
        self.sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [kind, src, payload, False])
        return True

    def open_idle(self, i):
        src = "127.0.2.%d" % (1 + i % self.sources)
        if self.open(src, "idle"):
            self.stats["idle_opened"] += 1

    def open_junk(self):
        name, payload = random.choice(junk_payloads())
        src = "127.0.3.%d" % random.randint(1, 200)
        if self.open(src, "junk", payload):
            self.stats["junk_opened"] += 1

    def closed(self, key, by_server):
        kind, src = key.data[0], key.data[1]
        self.sel.unregister(key.fileobj)
        key.fileobj.close()
        if kind == "idle":
            if by_server:
                self.stats["idle_closed_by_server"] += 1
            self.reopen.append((time.monotonic() + REOPEN_PAUSE, int(src.rsplit(".", 1)[1]) - 1))
        elif by_server:
            self.stats["junk_closed_by_server"] += 1

    def run(self):
        for i in range(self.idle_target):
            self.open_idle(i)
        next_junk = time.monotonic()
        while not self.stop:
            now = time.monotonic()
            if not self.ready and self.stats["idle_connected"] >= self.idle_target:
                open(os.path.join(self.outdir, "ready"), "w").close()
                self.ready = True
            due = [r for r in self.reopen if r[0] <= now]
            self.reopen = [r for r in self.reopen if r[0] > now]
            for _, i in due:
                self.open_idle(i)
            if self.junk_interval is not None and now >= next_junk:
                self.open_junk()
                next_junk = now + self.junk_interval
            for key, events in self.sel.select(timeout=0.01):
                data = key.data
                if events & selectors.EVENT_WRITE and not data[3]:
                    err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err != 0:
                        self.stats["connect_failed"] += 1
                        self.closed(key, False)
                        continue
                    data[3] = True  # connected
                    if data[0] == "idle":
                        self.stats["idle_connected"] += 1
                    if data[2]:
                        try:
                            key.fileobj.send(data[2])
                        except OSError:
                            pass
                    self.sel.modify(key.fileobj, selectors.EVENT_READ, data)
                    continue
                if events & selectors.EVENT_READ:
                    try:
                        chunk = key.fileobj.recv(65536)
                    except OSError:
                        chunk = b""
                    if chunk:
                        self.received.write(chunk)
                        self.stats["bytes_received"] += len(chunk)
                        # A forged proof after the server's challenge.
                        if data[0] == "junk" and chunk.startswith(b"AUTH"):
                            try:
                                key.fileobj.send(b"AUTH" + struct.pack(">I", 64) + os.urandom(64))
                            except OSError:
                                pass
                    else:
                        self.closed(key, True)
        with open(os.path.join(self.outdir, "stats"), "w") as f:
            for k, v in self.stats.items():
                f.write("%s=%d\n" % (k, v))
        self.received.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("port", type=int)
    p.add_argument("outdir")
    p.add_argument("--idle", type=int, default=200)
    p.add_argument("--sources", type=int, default=100)
    p.add_argument("--junk-per-s", type=float, default=50)
    a = p.parse_args()
    flood = Flood(a.port, a.outdir, a.idle, a.sources, a.junk_per_s)

    def on_term(*_):
        flood.stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    flood.run()


if __name__ == "__main__":
    main()
