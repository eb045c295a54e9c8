#!/bin/sh
# A report, never a failure: which symbols of libgomp.map the library
# defines and which it does not yet (they are simply not exported), and
# which host symbols GCC's own libgomp exports that the map does not list.
# Arguments: the library, the map.
set -u
lib=$1 map=$2
command -v nm >/dev/null 2>&1 || { echo "no nm: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The map's symbols: indented names ending in ';', not 'local:' or '*'.
sed 's,/\*.*\*/,,' "$map" | grep -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' |
    tr -d ' \t;' | sort -u >"$tmp/map"
nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$tmp/defined"
comm -23 "$tmp/map" "$tmp/defined" >"$tmp/missing"
echo "libgomp.map lists $(wc -l <"$tmp/map") symbols; the library defines $(comm -12 "$tmp/map" "$tmp/defined" | wc -l) of them"
if [ -s "$tmp/missing" ]; then
    echo "listed but not defined ($(wc -l <"$tmp/missing")):"
    tr '\n' ' ' <"$tmp/missing" | fold -s -w 100 | sed 's/^/  /'
fi
# GCC's libgomp, where the compiler finds it.
real=$(${CC:-gcc} -print-file-name=libgomp.so.1 2>/dev/null)
if [ -n "$real" ] && [ -f "$real" ] && command -v objdump >/dev/null 2>&1; then
    objdump -T "$real" | awk 'NF >= 7 && $4 == ".text" {print $(NF-1), $NF}' |
        grep -v -E '^(OACC|GOACC|GOMP_PLUGIN)' | awk '{print $2}' | sort -u >"$tmp/gcc"
    comm -23 "$tmp/gcc" "$tmp/map" >"$tmp/unlisted"
    echo "GCC's libgomp ($real) exports $(wc -l <"$tmp/gcc") host symbols (OpenACC and plugins aside); the map lacks $(wc -l <"$tmp/unlisted")"
    [ -s "$tmp/unlisted" ] && tr '\n' ' ' <"$tmp/unlisted" | fold -s -w 100 | sed 's/^/  /'
fi
exit 0
