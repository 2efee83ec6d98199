# SPDX-License-Identifier: BSD-3-Clause
# The slurm launcher against a real Slurm: munged, slurmctld and slurmd
# from Debian's slurm-wlm and munge, started here with configuration, key,
# state and logs in the test's work directory and ports of their own, this
# machine as the one node (four CPUs, so four ranks). mpiexec inside salloc
# and inside sbatch takes the allocation's hosts and slots and starts each
# rank as an srun step; the ranks check their size and ranks. Everything is
# stopped at the end and nothing may be left running.
source "$HASHI_SRCDIR/tests/integration/lib.sh"

for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/salloc /usr/bin/sbatch /usr/bin/srun; do
    if [[ ! -x $p ]]; then
        say "SKIP: $p missing (scripts/install-deps installs slurm-wlm and munge)"
        exit 77
    fi
done
if [[ $(id -u) -ne 0 ]]; then
    say "SKIP: needs root to run slurmd, which starts job steps"
    exit 77
fi

# Daemons this test started, stopped by pid on every exit.
daemon_pids=()
stop_daemons() {
    for pid in "${daemon_pids[@]}"; do
        kill "$pid" 2>/dev/null
    done
    for pid in "${daemon_pids[@]}"; do
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    daemon_pids=()
}
trap stop_daemons EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# munged insists that its key is private and owned by who runs it.
mkdir -p munge slurm/state slurm/spool
chmod 700 munge
head -c 1024 /dev/urandom >munge/munge.key
chmod 600 munge/munge.key
/usr/sbin/munged --force --foreground --socket="$work/munge/munge.socket" --key-file="$work/munge/munge.key" \
    --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" --log-file="$work/munge/munged.log" \
    >munge/munged.out 2>&1 &
daemon_pids+=($!)

node=$(hostname -s)
export SLURM_CONF="$work/slurm/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=hashitest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/slurm/state
SlurmdSpoolDir=$work/slurm/spool
SlurmctldPidFile=$work/slurm/slurmctld.pid
SlurmdPidFile=$work/slurm/slurmd.pid
SlurmctldLogFile=$work/slurm/slurmctld.log
SlurmdLogFile=$work/slurm/slurmd.log
# No cgroups in a container: process groups track the steps.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# Four CPUs whatever this machine has, so a four-rank job fits one node.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=hashi Nodes=$node Default=YES MaxTime=5 State=UP
CONF

for _ in $(seq 1 50); do
    [[ -S munge/munge.socket ]] && break
    sleep 0.1
done
/usr/sbin/slurmctld -D -f "$SLURM_CONF" >slurm/slurmctld.out 2>&1 &
daemon_pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" >slurm/slurmd.out 2>&1 &
daemon_pids+=($!)
ready=0
for _ in $(seq 1 150); do
    if sinfo -h -N -o '%t' 2>/dev/null | grep -qx idle; then
        ready=1
        break
    fi
    sleep 0.2
done
if [[ $ready -eq 1 ]]; then pass "slurmctld and slurmd up, node $node idle"; else
    fail "Slurm did not come up"; tail -n 20 munge/munged.out slurm/*.out slurm/*.log
    finish
    exit 1
fi

compile mpicc "$programs/slurm_ranks.c" slurm_ranks
compile mpicc "$programs/segv.c" segv

# Outside an allocation: a clear refusal, nothing started.
run no-allocation -- env -u SLURM_JOB_ID -u SLURM_JOB_NODELIST -u SLURM_TASKS_PER_NODE mpiexec -launcher slurm -n 2 "$work/slurm_ranks" 2
expect_status no-allocation 2
expect_in no-allocation no-allocation.err "needs a Slurm allocation .*run mpiexec inside salloc or sbatch"

# Inside salloc, with no hosts and no launcher: Slurm's hosts and slots
# (no -n: every slot), each rank an srun step of the allocation.
run salloc-job -- salloc --quiet -n 4 --time=2 mpiexec -v "$work/slurm_ranks" 4
expect_status salloc-job 0
expect_count salloc-job salloc-job.out "^rank=[0-3] size=4 expected=4 job=[0-9]+ step=[0-9]+ ok$" 4
expect_count salloc-job salloc-job.out "^rank=0 " 1
expect_count salloc-job salloc-job.out "^rank=3 " 1
expect_in salloc-job salloc-job.err "mpiexec: rank 0 on $node: srun --nodes=1 --ntasks=1 --nodelist=$node "
jobs_seen=$(sed -n 's/.* job=\([0-9]*\) .*/\1/p' salloc-job.out | sort -u | wc -l)
steps_seen=$(sed -n 's/.* step=\([0-9]*\) .*/\1/p' salloc-job.out | sort -u | wc -l)
if [[ $jobs_seen -eq 1 && $steps_seen -eq 4 ]]; then pass "salloc-job: one allocation, four steps"; else
    fail "salloc-job: $jobs_seen jobs and $steps_seen steps, expected 1 and 4"; fi

# A batch job, -launcher slurm forced, fewer ranks than slots.
cat >batch.sh <<BATCH
#!/bin/sh
exec mpiexec -launcher slurm -n 3 "$work/slurm_ranks" 3
BATCH
run sbatch-job -- sbatch --wait --quiet -n 4 --time=2 --output="$work/sbatch-job.log" --chdir="$work" batch.sh
expect_status sbatch-job 0
expect_count sbatch-job sbatch-job.log "^rank=[0-2] size=3 expected=3 job=[0-9]+ step=[0-9]+ ok$" 3

# A rank that dies: its shim reports the signal through srun, the others
# are killed, and no rank outlives the job.
run salloc-segv -- salloc --quiet -n 4 --time=2 mpiexec -n 4 "$work/segv" 2
expect_status salloc-segv 139
expect_in salloc-segv salloc-segv.err "^mpiexec: rank 2 \(pid [0-9]+ on $node\) was killed by signal 11 \(SIGSEGV"

stop_daemons
sleep 0.5
# Processes, not zombies: this machine's init reaps the orphaned
# slurmstepd's exit some time later.
running() { ps -eo stat=,pid=,args= | awk '$1 !~ /^Z/' | grep -F -- "$1" | grep -v grep; }
for what in "$work/slurm_ranks" "$work/segv" slurmstepd "slurmd -D -f $SLURM_CONF" "slurmctld -D -f $SLURM_CONF" \
    "munged --force --foreground --socket=$work"; do
    if left=$(running "$what"); then fail "left running: $left"; else pass "nothing left of $what"; fi
done
finish
