#!/bin/sh
# die.sh MPIEXEC NP MODE PROGRAM [MPIEXEC_FLAGS...]: runs PROGRAM MODE on NP
# ranks and checks that the job ends non-zero within 60 s, that a
# surviving rank reported rank 1 (when killed: its watcher, from its
# process being gone) with the chunk it stopped in, that no report calls
# another rank dead, and prints how long after the victim's death the job
# ended and its exit status. kill-short: kill with a heartbeat timeout of
# 300 ms. In mode hang (every rank's grabs and heartbeat reads stop
# returning) a watchdog must also have said so.
set -u
mpiexec=$1 np=$2 mode=$3 prog=$4
shift 4
log=$(mktemp)
trap 'rm -f "$log" "$log.fresh"' EXIT
timeout 60 "$mpiexec" "$@" -np "$np" "$prog" "$mode" >"$log" 2>&1
rc=$?
ended=$(date +%s.%N)
cat "$log"
if [ "$rc" -eq 0 ]; then echo "die.sh: the job exited 0"; exit 1; fi
if [ "$rc" -eq 124 ]; then echo "die.sh: the job hung (killed after 60 s)"; exit 1; fi
at=$(sed -n 's/.*UP_TEST_VICTIM_AT=\([0-9.]*\).*/\1/p' "$log" | head -1)
[ -n "$at" ] || { echo "die.sh: the victim never struck"; exit 1; }
grep -q "up_mpi_for returned" "$log" && { echo "die.sh: a rank returned from the farm"; exit 1; }
if [ "$mode" = hang ] && ! grep -q "ultrapool mpi: rank [0-9]*: a call on the farm's window has not returned" "$log"; then
  echo "die.sh: no watchdog reported the calls that never returned"; exit 1
fi
# A killed rank's process is gone from the node: its watcher (rank 0) must
# say so itself, before the launcher's teardown (whose SIGTERM a loaded
# rank may not get to handle before the SIGKILL behind it). (kill-short:
# its 300 ms heartbeat may tell first; any report naming rank 1 will do.)
case $mode in kill)
  if ! grep -Eq "ultrapool mpi: rank 1 died during a farm \(its process [0-9]+ on this node has ended\)" "$log"; then
    echo "die.sh: rank 0 did not report rank 1's death"; exit 1
  fi ;;
esac
# Only rank 1 is dead or silent: no report may say so of another rank (a
# rank ending the job after its report is silent inside MPI_Abort).
if grep -Eq "ultrapool mpi: rank ([02-9]|[1-9][0-9]+) (has been silent|died during)" "$log"; then
  echo "die.sh: a report calls a live rank dead or silent"; exit 1
fi
# Any report: the watcher's (heartbeat, or its process gone), the SIGTERM
# handler's or rank 0's watchdog's.
if ! grep -Eq "ultrapool mpi: rank 1 (died during|has been silent)|rank 1,? last heard [0-9]+ ms ago, holding" "$log"; then
  echo "die.sh: no report names rank 1"; exit 1
fi
# The reports read from rank 1's words at the watcher's tick (dead or
# silent, not "last seen") name the chunks rank 1 published, each before
# starting it (its block, when static): the victim's index lies in one
# (or, holding several, lies from the first to the last). The other
# reports give the watcher's last view, which may predate even its first.
victim=$(sed -n 's/.*victim rank 1 at index \([0-9]*\):.*/\1/p' "$log" | head -1)
grep -E "ultrapool mpi: rank 1 (died during|has been silent)" "$log" | grep -v "last seen holding" >"$log.fresh"
while IFS= read -r line; do
  case $line in *"holding no chunk"*)
    echo "die.sh: a report read from rank 1's words says it held no chunk: $line"; exit 1 ;;
  esac
  [ -n "$victim" ] || continue
  named=${line%% of \[0, *}
  case $named in *"several chunks"*) span=1 ;; *) span=0 ;; esac
  if ! printf '%s\n' "$named" | grep -oE "\[[0-9]+, [0-9]+\)" | tr -d '[)' | tr ',' ' ' |
    awk -v v="$victim" -v span="$span" '
      NR == 1 { lo = $1 } { hi = $2 }
      $1 <= v && v < $2 { found = 1 }
      END { exit (found || (span && lo <= v && v < hi)) ? 0 : 1 }'; then
    echo "die.sh: a report does not name the chunk rank 1 stopped in (index $victim): $line"; exit 1
  fi
done <"$log.fresh"
awk -v a="$at" -v b="$ended" -v rc="$rc" 'BEGIN { printf "die.sh: job ended %.2f s after the victim, exit %d\n", b - a, rc }'
awk -v a="$at" -v b="$ended" 'BEGIN { exit (b - a < 20) ? 0 : 1 }' || { echo "die.sh: took too long"; exit 1; }
exit 0
