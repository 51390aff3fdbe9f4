#!/usr/bin/env bash
# Starts (or checks) a single-node SLURM cluster on this machine for the SLURM tests and CI: munged,
# slurmctld and slurmd, with a slurm.conf for this host. Needs root and Debian's slurm-wlm and munge
# (.ci/run installs them). Idempotent: a running cluster with the same configuration is left alone.
# The node carries the features gpu40 and gpu80, so that a stage's --constraint picks a (fake) GPU type.
#   TUNEBENCH_SLURM_MAX_ARRAY  MaxArraySize (default 10, small so that the tests see arrays split)
set -euo pipefail

for cmd in slurmctld slurmd munged sbatch squeue scontrol sinfo; do
  command -v "$cmd" >/dev/null || { echo "cluster.sh: $cmd not found: apt-get install slurm-wlm munge" >&2; exit 1; }
done
[[ "$(id -u)" == 0 ]] || { echo "cluster.sh: needs root (it writes /etc/slurm and starts the daemons)" >&2; exit 1; }

host="$(hostname -s)"
node_line="$(slurmd -C | head -n 1 | sed -E 's/ UpTime=.*//')"
conf_dir=/etc/slurm
mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/lib/munge /var/log/munge /etc/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge 2>/dev/null || true

conf="$(cat <<CONF
# Written by test/slurm/cluster.sh: a single-node cluster for tunebench's SLURM tests.
ClusterName=tunebench
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ReturnToService=2
MaxArraySize=${TUNEBENCH_SLURM_MAX_ARRAY:-10}
MinJobAge=600
KillWait=5
InactiveLimit=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
${node_line} NodeAddr=127.0.0.1 Features=gpu40,gpu80 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
)"

changed=0
if [[ ! -f "$conf_dir/slurm.conf" ]] || [[ "$(cat "$conf_dir/slurm.conf")" != "$conf" ]]; then
  printf '%s\n' "$conf" > "$conf_dir/slurm.conf"
  changed=1
fi

if [[ ! -s /etc/munge/munge.key ]]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
if ! pgrep -x munged >/dev/null; then
  runuser -u munge -- /usr/sbin/munged
fi

if [[ "$changed" == 1 ]]; then
  pkill -x slurmctld 2>/dev/null || true
  pkill -x slurmd 2>/dev/null || true
  for _ in $(seq 1 50); do
    pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
    sleep 0.2
  done
fi
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
  state="$(sinfo --noheader --format=%T 2>/dev/null | head -n 1 || true)"
  case "$state" in
    idle|mixed|allocated|completing) echo "cluster.sh: SLURM is up: node ${host} ${state}, $(scontrol show config | grep -E '^MaxArraySize' | tr -s ' ')"; exit 0 ;;
    down*|drain*|drained*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 1
done
echo "cluster.sh: SLURM did not come up; see /var/log/slurm/slurmctld.log and slurmd.log:" >&2
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
