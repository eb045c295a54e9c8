#!/bin/sh
# ultrapool-topo on this machine: the plan covers exactly the CPUs this
# process may use (nproc reads the same affinity mask), the table has a row
# for shard 0 with its CPUs, and the steal order starts shard 0 at itself.
# Argument: the ultrapool-topo binary.
set -u
out=$("$1" --order) || { echo "ultrapool-topo failed"; exit 1; }
echo "$out"
n=$(nproc)
cpus="CPUs"
[ "$n" = 1 ] && cpus="CPU"
echo "$out" | grep -Eq "^[a-z ,-]+: [0-9]+ shards? over $n $cpus," || { echo "FAIL: not a plan over $n $cpus"; exit 1; }
echo "$out" | grep -Eq '^[|] 0 [|] [0-9]' || { echo "FAIL: no table row for shard 0"; exit 1; }
echo "$out" | grep -Eq '^  shard 0: 0( |$)' || { echo "FAIL: shard 0 does not steal from itself first"; exit 1; }
echo "ok"
