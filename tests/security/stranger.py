# SPDX-License-Identifier: BSD-3-Clause
# Strangers on mpiexec's PMI port, for pmi-hijack.sh: each connects before
# any real rank, sends what it sends, then the script creates READY_FILE
# (which lets the real ranks start) and records every byte each stranger
# receives until the job is over (DONE_FILE appears) or TIMEOUT passes.
# Prints one line per stranger: name, bytes received (Python repr), and
# whether mpiexec closed the connection.
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_sockets import watch  # noqa: E402

host, port, ready_file, done_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
timeout = 30.0
forged = "cmd=hashi_auth v=1 pmiid=1 channel=pmi nonce=" + "00" * 32 + " proof=" + "11" * 32 + "\n"
strangers = {
    "hijack": b"cmd=initack pmiid=1\n",  # what MPICH's own client would send
    "lifeline": b"cmd=lifeline pmiid=1\n",  # the shim's line before authentication
    "forged": forged.encode(),
    "junk": b"GET / HTTP/1.0\r\n\r\n" + os.urandom(64),
    "long": b"x" * 5000,
    "idle": b"",
}
socks = {}
for name, data in strangers.items():
    s = socket.create_connection((host, port))
    s.sendall(data)
    s.setblocking(False)
    socks[name] = s
time.sleep(0.5)  # mpiexec reads all of them before the first real rank connects
open(ready_file, "w").close()
end = time.time() + timeout
got, closed = watch(socks, lambda: time.time() >= end or os.path.exists(done_file))
for name in socks:
    print(f"{name} got={got[name]!r} closed={closed[name]}")
