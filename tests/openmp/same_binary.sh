#!/bin/sh
# One gcc -fopenmp executable on three OpenMP runtimes: GCC's libgomp (as
# linked), LLVM's libomp through its GOMP layer (a folder whose
# libgomp.so.1 is a link to libomp.so.5, first on the library path) and
# ultrapool's libgomp.so.1 (by the library path and through the
# ultrapool-omp launcher). The program checks which runtime it runs on
# and verifies its results (omp_kernels.c).
# Arguments: the program, the folder of ultrapool's libgomp.so.1, the
# ultrapool-omp launcher (ultrapool is run both ways).
# Exit status: 0 when every leg passed; 1 when one failed; 77 when the
# others passed but libomp.so.5 is not installed (its leg is skipped).
set -u
prog=$1 ours=$2 launcher=$3
fails=0 skipped=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# leg NAME HOW [VAR=value ...] [LAUNCHER]: runs the program for runtime
# NAME, in the environment given.
leg() {
    name=$1 how=$2
    shift 2
    if env -u LD_PRELOAD -u LD_LIBRARY_PATH "$@" "$prog" "$name" >"$tmp/out" 2>&1; then
        echo "ok   $name ($how): $(head -n1 "$tmp/out")"
    else
        echo "FAIL $name ($how):"
        sed 's/^/     /' "$tmp/out"
        fails=$((fails + 1))
    fi
}

leg libgomp "as linked"
. "$(dirname "$0")/libomp.sh"
libomp=$(find_libomp)
if [ -n "$libomp" ]; then
    mkdir "$tmp/libomp" && ln -s "$libomp" "$tmp/libomp/libgomp.so.1"
    leg libomp "libgomp.so.1 -> $libomp" LD_LIBRARY_PATH="$tmp/libomp"
else
    echo "skip libomp: no libomp.so.5 here (Debian: apt-get install libomp-dev)"
    skipped=1
fi
leg ultrapool "library path" LD_LIBRARY_PATH="$ours"
leg ultrapool "launcher" "$launcher"

if [ $fails -ne 0 ]; then
    echo "test_omp_kernels: $fails FAILED"
    exit 1
fi
[ $skipped -eq 0 ] || exit 77
echo "test_omp_kernels: the same binary verified on every runtime"
