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
got = {name: b"" for name in socks}
closed = {name: False for name in socks}
end = time.time() + timeout
while time.time() < end and not os.path.exists(done_file):
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
        except ConnectionResetError:
            closed[name] = True
    time.sleep(0.05)
for name in socks:
    print(f"{name} got={got[name]!r} closed={closed[name]}")
