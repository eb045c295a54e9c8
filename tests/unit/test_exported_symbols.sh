#!/bin/sh
# The shared libraries export their public API and nothing else.
#
# Arguments: pairs of a shared library and the folder of the public headers
# that declare its API. For each library:
#  - every dynamic symbol it defines starts with up_ (the linker's own
#    _init, _fini, _edata, _end and __bss_start excepted), none with up__
#    (internal), and the up_layer_ names (the internal ABI between the two
#    libraries, runtime/layer/up_layer_abi.h) only from libultrapool.so;
#  - every function its public headers declare is exported, so a
#    declaration without UP_API (hidden, unusable from outside) fails here;
#  - it needs no up__ symbol from elsewhere (one library calling a hidden
#    function of the other would fail only when a program loads it).
# Exits 77 (skipped) when nm is missing.
set -u
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
fail=0
while [ $# -ge 2 ]; do
    lib=$1
    headers=$2
    shift 2
    name=$(basename "$lib")
    if [ ! -f "$lib" ]; then
        echo "FAIL: $lib does not exist"
        fail=1
        continue
    fi
    # GNU ld adds an absolute symbol named after each version node the
    # library defines (ULTRAPOOL_1.0 ...: test_symbol_versions checks those).
    defined=$(nm -D --defined-only "$lib" | awk 'NF >= 3 && !($2 == "A" && $3 ~ /^ULTRAPOOL_/) {print $3}' |
        sed 's/@.*//' | sort -u)
    if [ -z "$defined" ]; then
        echo "FAIL: $name exports nothing (nm -D --defined-only is empty)"
        fail=1
        continue
    fi
    for s in $defined; do
        case "$s" in
        _init | _fini | _edata | _end | __bss_start) ;;
        up__*) echo "FAIL: $name exports the internal symbol $s"; fail=1 ;;
        up_layer_*)
            if [ "$name" != "${name#libultrapool.so}" ]; then :; else
                echo "FAIL: $name exports the layer symbol $s"; fail=1
            fi ;;
        up_*) ;;
        *) echo "FAIL: $name exports $s, which lacks the up_ prefix"; fail=1 ;;
        esac
    done
    # Top-level function declarations of the public headers: a line that
    # starts with a return type and names up_something( .
    # (mpi.h, of the MPI mode's own library, lives in mpi/include.)
    declared=$(cat "$headers"/*.h | grep -E '^(UP_API )?[a-z][a-z0-9_ ]*[ *]up_[a-z0-9_]+\(' |
        grep -vE '^(typedef|static|return) ' | sed -E 's/^[^(]*[ *](up_[a-z0-9_]+)\(.*/\1/' | sort -u)
    if [ -z "$declared" ]; then
        echo "FAIL: no declarations found in $headers"
        fail=1
    fi
    for d in $declared; do
        echo "$defined" | grep -qx "$d" || { echo "FAIL: $name does not export $d ($headers)"; fail=1; }
    done
    undef=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | grep '^up__' || true)
    for u in $undef; do
        echo "FAIL: $name needs the hidden symbol $u"
        fail=1
    done
    echo "$name: $(echo "$defined" | wc -l) symbols exported, $(echo "$declared" | wc -l) declared in $headers"
done
exit $fail
