#!/bin/sh
# test_raw_atomics: the libraries touch atomics only through
# runtime/src/atomic.h, whose macros name each operation's memory order.
# Lists file:line for every raw C11 atomic operation (atomic_load,
# atomic_store, atomic_exchange, atomic_compare_exchange_*,
# atomic_fetch_*, the fences, atomic_flag_*, each with or without
# _explicit; kill_dependency) and every GCC __atomic_ or __sync_ builtin
# in the C sources and headers under runtime/, pragmas/ and mpi/ (the pool, the
# MPI mode, the layer interface, the parallel layer, its OpenMP ABI and
# backends, the tools) outside atomic.h, and fails when there is one.
# Comments count too: they name the up__ macro instead.
# atomic_init is allowed: it initialises an object no other thread can see
# yet, which is no atomic access and has no order to name. Tests,
# benchmarks and experiments are programs on the public API and may use
# <stdatomic.h> as any program does.
# Argument: the source tree.
set -u
src=${1:?usage: check_raw_atomics.sh SOURCE_DIR}
header=runtime/src/atomic.h
cd "$src" || exit 1
[ -f "$header" ] || { echo "FAIL: $src/$header does not exist"; exit 1; }
pattern='(^|[^A-Za-z0-9_])(atomic_(load|store|exchange|compare_exchange_(weak|strong)|fetch_(add|sub|or|xor|and)|thread_fence|signal_fence|flag_(test_and_set|clear))(_explicit)?|kill_dependency|__atomic_[A-Za-z0-9_]+|__sync_[A-Za-z0-9_]+)([^A-Za-z0-9_]|$)'
# The pattern must find atomic.h's own calls, or this grep reads it
# differently and a pass would mean nothing.
if ! grep -qE "$pattern" "$header"; then
    echo "FAIL: the pattern finds no atomic operation in $header: grep does not read it as meant"
    exit 1
fi
files=$(find runtime pragmas mpi -type f \( -name '*.c' -o -name '*.h' -o -name '*.in' \) \
    ! -path "$header" | sort)
[ -n "$files" ] || { echo "FAIL: no C sources under $src/runtime, $src/pragmas and $src/mpi"; exit 1; }
# shellcheck disable=SC2086 # the file names hold no blanks
hits=$(grep -nE "$pattern" $files)
if [ -n "$hits" ]; then
    echo "$hits"
    echo "FAIL: $(echo "$hits" | wc -l | tr -d ' ') line(s) above use atomics outside $header:" \
        "use its up__ macros (add one there, named after its order, if none fits)"
    exit 1
fi
echo "test_raw_atomics: $(echo "$files" | wc -l | tr -d ' ') files under runtime/, pragmas/ and mpi/" \
    "use atomics only through $header"
