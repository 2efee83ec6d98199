# SPDX-License-Identifier: BSD-3-Clause
# Strangers at an impi-relay's port, for relay.sh: each connects, sends what
# it sends, and records every byte the relay answers until SECONDS pass.
# Prints one line per stranger: name, bytes received, whether the relay
# closed the connection. A relay must answer none of them with a byte.
#   relay_stranger.py HOST PORT lan|wan SECONDS
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from watch_sockets import watch  # noqa: E402

host, port, side, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])


def card(cluster, ipv4, port):
    """A well-formed Hashi address (src/transport/address.hpp)."""
    return (b"HA\x01\x00" + struct.pack(">HH", cluster, port) + socket.inet_aton(ipv4) + os.urandom(8) +
            bytes(12))


mine, theirs = card(0, "10.0.0.11", 40000), card(1, "10.1.0.11", 40000)
if side == "lan":
    strangers = {
        # A route request of another job (a made-up job id): no challenge.
        "route-other-job": b"HRRQ\x01\x00\x00\x00" + struct.pack("<Q", 12345) + mine + theirs + os.urandom(16),
        "route-bad-version": b"HRRQ\x07\x00\x00\x00" + os.urandom(88),
        "junk": b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64),
        "idle": b"",
    }
else:
    strangers = {
        "trunk-other-job": b"HTRH\x01\x00\x00\x00" + struct.pack("<QHHHH", 12345, 1, 0, 0, 0) + os.urandom(16),
        "junk": os.urandom(200),
        "idle": b"",
    }
socks = {}
for name, data in strangers.items():
    s = socket.create_connection((host, port), timeout=5)
    if data:
        s.sendall(data)
    s.setblocking(False)
    socks[name] = s
end = time.time() + seconds
got, closed = watch(socks, lambda: time.time() >= end)
for name in socks:
    print("%s %s received=%d closed=%s" % (side, name, len(got[name]), "yes" if closed[name] else "no"))
