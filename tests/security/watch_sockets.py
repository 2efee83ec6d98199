# SPDX-License-Identifier: BSD-3-Clause
# What the strangers of the security tests share: watching their
# non-blocking sockets until `done()` says so, recording every byte each
# one receives and whether the other side closed it.
import time


def watch(socks, done):
    """socks: name -> non-blocking socket; done(): True to stop.
    Returns (got, closed): name -> bytes received, name -> bool."""
    got = {name: b"" for name in socks}
    closed = {name: False for name in socks}
    while not done() and not all(closed.values()):
        for name, s in socks.items():
            if closed[name]:
                continue
            try:
                data = s.recv(65536)
                if data:
                    got[name] += data
                else:
                    closed[name] = True
            except BlockingIOError:
                pass
            except OSError:
                closed[name] = True
        time.sleep(0.05)
    return got, closed
