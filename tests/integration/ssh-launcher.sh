# SPDX-License-Identifier: BSD-3-Clause
# The ssh launcher against a real sshd: a private sshd on a free port with
# keys made for this run, two "hosts" (localhost and 127.0.0.1, so MPICH
# sees two nodes), PMI over TCP back to mpiexec, and a failing rank.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

if [[ ! -x /usr/sbin/sshd ]] || ! command -v ssh >/dev/null; then
    say "SKIP: sshd or ssh not installed (scripts/install-deps installs them)"
    exit 77
fi
if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to run a private sshd that accepts this user's key"
    exit 77
fi

mkdir -p ssh && chmod 700 ssh
ssh-keygen -q -t ed25519 -N '' -f ssh/host_key
ssh-keygen -q -t ed25519 -N '' -f ssh/user_key
cp ssh/user_key.pub ssh/authorized_keys
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > ssh/sshd_config <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/ssh/host_key
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/ssh/sshd.pid
AcceptEnv none
CONF
mkdir -p /run/sshd
/usr/sbin/sshd -f ssh/sshd_config -D -E "$work/ssh/sshd.log" &
sshd_pid=$!
trap 'kill $sshd_pid 2>/dev/null; wait $sshd_pid 2>/dev/null' EXIT
ssh_cmd="ssh -p $port -i $work/ssh/user_key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
for _ in $(seq 1 50); do
    $ssh_cmd 127.0.0.1 true 2>/dev/null && break
    sleep 0.1
done

compile mpicc "$programs/nodeinfo.c" nodeinfo
compile mpicc "$programs/show_env.c" show_env
compile mpicc "$programs/segv.c" segv

run ssh-job -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts localhost:2,127.0.0.1:2 -n 4 \
    -genv PATH "$PATH" "$work/nodeinfo"
expect_status ssh-job 0
expect_count ssh-job ssh-job.out "node_size=2 .*sum=10$" 4
expect_in ssh-job ssh-job.out "^rank=0 node=localhost "
expect_in ssh-job ssh-job.out "^rank=3 node=127.0.0.1 "

run ssh-env -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts 127.0.0.1 -n 1 -genv G "a b" \
    -wdir /tmp "$work/show_env" G PMI_PORT FI_PROVIDER
expect_status ssh-env 0
expect_in ssh-env ssh-env.out "^rank=0 cwd=/tmp G=a b PMI_PORT=[^ ]+:[0-9]+ FI_PROVIDER=hashi"

run ssh-segv -- mpiexec -launcher ssh -launcher-exec "$ssh_cmd" -hosts localhost:2,127.0.0.1:2 -n 4 "$work/segv" 3
# The shim reports the real cause; ssh by itself would only say 255.
expect_status ssh-segv 139
expect_in ssh-segv ssh-segv.err "^mpiexec: rank 3 \(pid [0-9]+ on 127.0.0.1\) was killed by signal 11 \(SIGSEGV"
sleep 0.5
if leftovers "$work/segv"; then fail "ranks left behind after ssh-segv: $(pgrep -af "$work/segv")"; else pass "no rank left behind"; fi
finish
