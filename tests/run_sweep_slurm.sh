#!/usr/bin/env bash
# run_sweep_slurm.sh CTPU: the Slurm path of `ctpu sweep` (docs/sweep.md). Runs a 4-point
# sweep of fmnist-rescnn locally (GNU parallel), writes the same sweep's sweep.sbatch into
# another folder, starts a private Slurm cluster of one node (slurmctld + slurmd in the
# foreground, a slurm.conf in a temporary folder, auth/none: no munge, ports of its own),
# submits the array job, waits for it, rebuilds results.csv and checks that it is identical,
# byte for byte, to the local run's; every point ran once, as array task i = point i.
# Exits 77 without ../shared, GNU parallel or Slurm (Debian slurm-wlm).
set -uo pipefail
NAME=sweep_slurm
# shellcheck source=tests/sweep_setup.sh
source "$(dirname "$0")/sweep_setup.sh"
export PATH=$PATH:/usr/sbin:/sbin
for p in slurmctld slurmd sbatch sinfo scontrol; do
  command -v $p >/dev/null || { echo "$NAME: skipped: $p is absent (Debian package slurm-wlm)"; rm -rf "$t"; exit 77; }
done
pids=()
cleanup() {
  scontrol shutdown >/dev/null 2>&1
  sleep 1
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "${CT_KEEP_TEST_TMP:-}" ] || rm -rf "$t"
}
trap cleanup EXIT
fail() {
  echo "$NAME: FAIL: $*"
  tail -n 5 "$t"/slurmctld.log "$t"/slurmd.log 2>/dev/null
  exit 1
}
spec "$t/spec.json" '"BF16"'
"$ctpu" sweep "$t/spec.json" -o "$t/local" --jobs 2 2> "$t/local.log" || { cat "$t/local.log"; fail "local run"; }
"$ctpu" sweep "$t/spec.json" -o "$t/slurm" --slurm 2> "$t/slurm.log" || { cat "$t/slurm.log"; fail "--slurm"; }
grep -q '^#SBATCH --array=0-3$' "$t/slurm/sweep.sbatch" || fail "sweep.sbatch has no --array=0-3"
[ -e "$t/slurm/points/0000/summary.json" ] && fail "--slurm ran a point itself"

# a one-node cluster of our own
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
mkdir -p "$t/state" "$t/spool"
user=$(id -un)
cat > "$t/slurm.conf" <<CONF
ClusterName=ctpusweep
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=$user
SlurmdUser=$user
StateSaveLocation=$t/state
SlurmdSpoolDir=$t/spool
SlurmctldPidFile=$t/slurmctld.pid
SlurmdPidFile=$t/slurmd.pid
SlurmctldLogFile=$t/slurmctld.log
SlurmdLogFile=$t/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=sweep Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$t/slurm.conf
slurmctld -D -i -f "$t/slurm.conf" > "$t/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" -f "$t/slurm.conf" > "$t/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  sinfo -h -o '%t' 2>/dev/null | grep -qE '^idle' && break
  sleep 0.5
done
sinfo -h -o '%t' | grep -qE '^idle' || fail "the Slurm node did not come up: $(sinfo 2>&1 | tail -2)"

s0=$(date +%s.%N)
timeout 300 sbatch --wait "$t/slurm/sweep.sbatch" > "$t/sbatch.out" 2>&1 || fail "sbatch --wait: $(cat "$t/sbatch.out")"
echo "$NAME: array job done in $(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
"$ctpu" sweep "$t/spec.json" -o "$t/slurm" --slurm 2> "$t/collect.log" || { cat "$t/collect.log"; fail "collect"; }
grep -q "4 done" "$t/collect.log" || fail "after the array job: $(cat "$t/collect.log")"
[ "$(ls "$t"/slurm/slurm/*.out | wc -l)" = 4 ] || fail "not 4 array task logs"
cmp "$t/local/results.csv" "$t/slurm/results.csv" || fail "Slurm rows differ from the local run's"
python3 "$root/tests/sweep_check.py" "$t/slurm" 4 || fail "Slurm results.csv vs its point folders"
echo "$NAME: ok: 4 points as a Slurm array job on a private slurmctld/slurmd; results.csv identical to the local run"
