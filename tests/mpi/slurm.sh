#!/usr/bin/env bash
# A one-node Slurm started inside the test: munged, slurmctld and slurmd
# as root in a temporary folder, with a slurm.conf for this host's real
# CPUs (slurmd -C). It submits scripts/slurm/one-per-node.sbatch with two
# tasks on this node running test_mpi_farm through srun (--mpi=pmix, else
# pmi2), checks that the job completed and both ranks took part, and stops
# the daemons. Exits 77, saying why, when Slurm cannot run here.
#   tests/mpi/slurm.sh PATH/TO/test_mpi_farm
# Needs (Debian 12): slurmctld slurmd slurm-client munge (and Open MPI).
set -euo pipefail

skip() {
  echo "slurm.sh: skipped: $*" >&2
  exit 77
}
[ $# -eq 1 ] || { echo "usage: tests/mpi/slurm.sh PATH/TO/test_mpi_farm" >&2; exit 2; }
farm=$(realpath "$1")
[ -x "$farm" ] || { echo "slurm.sh: $1 is not a program" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
template=$here/scripts/slurm/one-per-node.sbatch

[ "$(id -u)" -eq 0 ] || skip "slurmd and slurmctld run as root here, and this is not root"
for c in munged slurmctld slurmd sbatch srun sinfo scontrol; do
  command -v "$c" >/dev/null || skip "no $c (Debian: apt-get install slurmctld slurmd slurm-client munge)"
done

tmp=$(mktemp -d /tmp/up-slurm.XXXXXX)
chmod 0700 "$tmp"
pids=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
# Why a daemon did not come up: the end of its log.
logtail() { tail -n 15 "$1" 2>/dev/null | sed 's/^/    /' >&2 || true; }

# munge with its own key and socket, so that no munged of the host is used.
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/results" "$tmp/tmpfs" "$tmp/pmix"
chmod 0700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$tmp/munge/munge.key"
sock=$tmp/munge/munge.socket
munged -F --force --key-file="$tmp/munge/munge.key" --socket="$sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/munged.seed" >"$tmp/munge/stdout" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
if [ ! -S "$sock" ]; then
  echo "munged did not start:" >&2
  logtail "$tmp/munge/stdout"
  logtail "$tmp/munge/munged.log"
  skip "munged would not start"
fi

# Ports of its own (not Slurm's 6817/6818, which a host's Slurm may hold),
# and job numbers and temporary folders of its own: two of these clusters
# on one host (two test runs at once) would otherwise both run job 1, whose
# PMIx folders in the shared /tmp carry only the job and step numbers, and
# one job's launch fails. Each cluster takes a block of 64 ports (the two
# daemons' and srun's range), spread by the process number so that two
# started together get different blocks, and skips a block where anything
# already listens (ss, when there).
listening=$(ss -Hltn 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' || true)
block_free() {
  local p
  for p in $(seq "$1" $(($1 + 63))); do
    grep -qx "$p" <<<"$listening" && return 1
  done
  return 0
}
for k in $(seq 0 311); do
  base=$((20000 + ($$ + k) % 312 * 64))
  block_free "$base" && break
done
block=$(((base - 20000) / 64))
first_job=$((block * 1000 + 1))
node=$(slurmd -C | head -n 1) # NodeName=<host> CPUs=... RealMemory=...
[[ $node == NodeName=* ]] || skip "slurmd -C did not describe this host: $node"
host=${node#NodeName=}
host=${host%% *}
# RealMemory as measured is fine; the rest of the line is the real topology.
cat >"$tmp/slurm.conf" <<EOF
ClusterName=uptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 63))
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
TmpFS=$tmp/tmpfs
FirstJobId=$first_job
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups (a VM or container may not delegate them): processes tracked
# through /proc, CPUs bound by sched_setaffinity.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
$node State=UNKNOWN NodeAddr=127.0.0.1
PartitionName=uptest Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=NO
EOF
# No cgroup plugin is used; a cgroup.conf beside slurm.conf keeps slurmd
# from probing the host's.
echo "CgroupPlugin=autodetect" >"$tmp/cgroup.conf"
# The PMIx plugin's folders for the job's processes, in this cluster's own.
echo "PMIxCliTmpDirBase=$tmp/pmix" >"$tmp/mpi.conf"
export SLURM_CONF=$tmp/slurm.conf

slurmctld -D -c -i -f "$SLURM_CONF" >"$tmp/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.stdout" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
if [ "$state" != idle ]; then
  echo "the node is '${state:-unknown}', not idle, after 20 s; slurmctld said:" >&2
  logtail "$tmp/slurmctld.log"
  echo "slurmd said:" >&2
  logtail "$tmp/slurmd.log"
  logtail "$tmp/slurmd.stdout"
  skip "slurmctld and slurmd did not bring this host up"
fi

# Which of Slurm's MPI plugins this Open MPI starts under.
mpis=$(srun --mpi=list 2>&1 || true)
tried=""
for mpi in pmix pmi2; do
  [[ $mpis == *"$mpi"* ]] || continue
  tried="$tried $mpi"
  rm -rf "$tmp/results"/*
  # Two tasks on this one node, a CPU each; the template's other lines stand.
  # --wait, for at most 3 minutes (a job that cannot start stays pending).
  if ! job=$(cd "$tmp" && RESULTS=$tmp/results SLURM_MPI_TYPE=$mpi timeout 180 \
    sbatch --parsable --wait --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=5 \
      --job-name=up-slurm-test "$template" "$farm" 2>"$tmp/sbatch.err"); then
    echo "sbatch --mpi=$mpi failed: $(cat "$tmp/sbatch.err")" >&2
  fi
  job=${job%%;*}
  out=$tmp/results/up-slurm-test-$job
  st=$(scontrol show job "$job" 2>/dev/null | grep -oE '(JobState|Reason)=[^ ]*' | paste -sd' ' - || true)
  if [[ $st == "JobState=COMPLETED "* ]] && grep -q '^2 ranks' "$out/rank-0.log" 2>/dev/null; then
    echo "slurm.sh: job $job completed under srun --mpi=$mpi with 2 ranks:"
    sed 's/^/    /' "$out/rank-0.log"
    exit 0
  fi
  echo "srun --mpi=$mpi: job ${job:-?} ${st:-not found}; its output:" >&2
  for f in "$tmp"/slurm-*.out "$out"/rank-*.log "$tmp/slurmd.log"; do
    [ -f "$f" ] && { echo "  $f:" >&2; logtail "$f"; }
  done
done
[ -n "$tried" ] || skip "srun offers neither pmix nor pmi2 ($mpis)"
echo "slurm.sh: test_mpi_farm failed under Slurm (tried:$tried)" >&2
exit 1
