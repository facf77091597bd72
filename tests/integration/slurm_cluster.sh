#!/usr/bin/env bash
# A single-node SLURM cluster on localhost for the integration test.
#   slurm_cluster.sh install          apt-get install slurm-wlm and munge when they are missing (root)
#   slurm_cluster.sh start STATE_DIR  write slurm.conf, start munged, slurmctld, slurmd; wait until idle
#   slurm_cluster.sh stop STATE_DIR   stop the daemons by the PIDs recorded in STATE_DIR
# srun inside a batch job reads /etc/slurm/slurm.conf (SLURM_CONF is not passed into jobs), so
# start links it there and stop removes the link; a slurm.conf that is not ours is never touched.
set -euo pipefail

cmd=${1:?usage: slurm_cluster.sh install|start|stop [STATE_DIR]}

case "$cmd" in
install)
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
        exit 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
    ;;
start)
    state=$(realpath -m "${2:?state dir}")
    mkdir -p "$state"/{slurmctld,slurmd,munge}
    # the node declares what a cluster's GPU node has (16 CPUs, 128 GB, one GPU as a generic
    # resource with no device file) so that the shipped profile's requests are schedulable as they
    # are; config_overrides keeps slurmd from draining a node that has less than it declares
    cpus=16
    mem=131072
    cat >"$state/gres.conf" <<GRES
NodeName=localhost Name=gpu File=/dev/null
GRES
    cat >"$state/slurm.conf" <<CONF
ClusterName=medbias-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
MinJobAge=600
SlurmctldPort=16817
SlurmdPort=16818
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmdSpoolDir=$state/slurmd
StateSaveLocation=$state/slurmctld
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
NodeName=localhost CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    munged --force --socket="$state/munge/munge.socket" --pid-file="$state/munged.pid" \
        --log-file="$state/munged.log" --seed-file="$state/munge/munged.seed"
    if [ -e /etc/slurm/slurm.conf ] && [ ! -L /etc/slurm/slurm.conf ]; then
        echo "/etc/slurm/slurm.conf exists and is not ours: refusing to replace a real cluster's config" >&2
        exit 3
    fi
    mkdir -p /etc/slurm
    ln -sfn "$state/slurm.conf" /etc/slurm/slurm.conf
    ln -sfn "$state/gres.conf" /etc/slurm/gres.conf
    export SLURM_CONF="$state/slurm.conf"
    slurmctld -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF" -N localhost
    for _ in $(seq 60); do
        if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix)'; then
            echo "slurm cluster up (SLURM_CONF=$SLURM_CONF)"
            exit 0
        fi
        sleep 1
    done
    echo "slurm cluster did not become idle within 60 s; see $state/slurmctld.log and $state/slurmd.log" >&2
    exit 1
    ;;
stop)
    state=$(realpath -m "${2:?state dir}")
    for daemon in slurmd slurmctld munged; do
        if [ -f "$state/$daemon.pid" ]; then
            pid=$(cat "$state/$daemon.pid")
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    if [ "$(readlink /etc/slurm/slurm.conf 2>/dev/null)" = "$state/slurm.conf" ]; then
        rm -f /etc/slurm/slurm.conf
    fi
    if [ "$(readlink /etc/slurm/gres.conf 2>/dev/null)" = "$state/gres.conf" ]; then
        rm -f /etc/slurm/gres.conf
    fi
    ;;
*)
    echo "unknown command $cmd" >&2
    exit 2
    ;;
esac
