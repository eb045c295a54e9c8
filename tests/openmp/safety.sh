#!/bin/sh
# ultrapool's libgomp.so.1 refuses to be mixed with another OpenMP runtime
# and names what it refuses; a missing entry point is named too.
# Arguments: the folder of ultrapool's libgomp.so.1, omp_safety_probe,
# omp_missing_symbol, the ultrapool-omp launcher.
set -u
dir=$1 probe=$2 missing=$3 launcher=$4
fails=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect NAME STATUS(zero|nonzero) TEXT COMMAND...: runs COMMAND, checks the
# exit status and that stdout+stderr contain TEXT.
expect() {
    name=$1 want=$2 text=$3
    shift 3
    "$@" >"$out" 2>&1
    rc=$?
    ok=1
    if [ "$want" = zero ] && [ $rc -ne 0 ]; then ok=0; fi
    if [ "$want" = nonzero ] && [ $rc -eq 0 ]; then ok=0; fi
    grep -F -q -- "$text" "$out" || ok=0
    if [ $ok = 1 ]; then
        echo "ok   $name (exit $rc): $(grep -F -m1 -- "$text" "$out")"
    else
        echo "FAIL $name (exit $rc, wanted $want and \"$text\"):"
        sed 's/^/     /' "$out"
        fails=$((fails + 1))
    fi
}

# The probe runs on ultrapool through the launcher and the library path.
expect "launcher" zero "on ultrapool" "$launcher" "$probe"
expect "library path" zero "on ultrapool" env LD_LIBRARY_PATH="$dir" "$probe"
expect "launcher, no such program" nonzero "no-such-program" "$launcher" ./no-such-program

# UP_BACKEND=gomp or llvm under ultrapool's libgomp: refused at load.
for b in gomp llvm; do
    expect "UP_BACKEND=$b" nonzero "UP_BACKEND=$b" env UP_BACKEND=$b LD_LIBRARY_PATH="$dir" "$probe"
done
expect "UP_BACKEND=ultrapool" zero "on ultrapool" env UP_BACKEND=ultrapool LD_LIBRARY_PATH="$dir" "$probe"

# LLVM's libomp already in the process (preloaded): named at load.
. "$(dirname "$0")/libomp.sh"
libomp=$(find_libomp)
if [ -n "$libomp" ]; then
    # A probe built with AddressSanitizer needs its runtime first in the
    # process: it is preloaded ahead of libomp.
    asan=$(ldd "$probe" 2>/dev/null | awk '/libasan/ {print $3; exit}')
    expect "libomp preloaded" nonzero "libomp" env LD_PRELOAD="${asan:+$asan }$libomp" LD_LIBRARY_PATH="$dir" "$probe"
else
    echo "skip libomp preloaded: no libomp.so.5 here"
fi

# GCC's libgomp running the program, then ultrapool's loaded by path:
# named. Not with a ThreadSanitizer probe: GCC's libgomp is not
# instrumented, so its region's synchronisation is invisible to the
# sanitizer, which reports a race in the probe before ours is loaded.
if ldd "$probe" 2>/dev/null | grep -q libtsan; then
    echo "skip GCC's libgomp, then ultrapool's: GCC's libgomp is not instrumented for ThreadSanitizer"
else
    expect "GCC's libgomp, then ultrapool's" nonzero "another libgomp" env -u LD_LIBRARY_PATH \
        "$probe" "$dir/libgomp.so.1"
fi

# A missing entry point: the loader names the symbol and its version, at
# the call (lazy binding) and at load (LD_BIND_NOW); never a run past it.
expect "missing symbol, lazy" nonzero "acc_get_num_devices" env LD_LIBRARY_PATH="$dir" "$missing"
grep -q "before the call" "$out" || { echo "FAIL the lazy case stopped before main"; fails=$((fails + 1)); }
expect "missing symbol, bind now" nonzero "acc_get_num_devices" \
    env LD_BIND_NOW=1 LD_LIBRARY_PATH="$dir" "$missing"
if grep -q "before the call" "$out"; then
    echo "FAIL LD_BIND_NOW: main ran"; fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "test_omp_safety: ok" || echo "test_omp_safety: $fails FAILED"
[ $fails -eq 0 ]
