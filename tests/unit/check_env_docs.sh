#!/bin/sh
# test_env_docs: docs/env.md and the environment registry
# (runtime/src/env_registry.c) name the same variables.
#
# Arguments: the test_env_registry program (its --list prints the table,
# one "NAME LAYERS" line per entry, a prefix as NAME*, LAYERS - for a name
# reserved for the tools) and docs/env.md.
#
# docs/env.md documents a variable with a "### NAME" heading or a table
# row whose first cell starts with `NAME` (`UP_TEST_*` for a prefix);
# names merely mentioned in the text do not count. The check:
#  - every registered name is documented;
#  - every documented name is registered;
#  - the names documented under "## Reserved names" are exactly the
#    table's reserved ones (read by no library).
# UP_TEST_EMULATOR, when set (a cross build), runs the program.
set -eu
prog=$1
doc=$2
tmp=${TMPDIR:-/tmp}/test_env_docs.$$
trap 'rm -f "$tmp".*' EXIT INT TERM

${UP_TEST_EMULATOR:-} "$prog" --list >"$tmp.table" || {
    echo "FAIL: $prog --list failed"
    exit 1
}
[ -s "$tmp.table" ] || { echo "FAIL: $prog --list printed nothing"; exit 1; }

# NAME<TAB>SECTION for every documented name, outside code blocks.
awk '
    /^```/ { code = !code; next }
    code { next }
    /^## / { section = substr($0, 4); next }
    /^### [A-Z][A-Z0-9_]*[ \t]*$/ { name = $2; print name "\t" section; next }
    /^\| *`/ {
        cell = $0
        sub(/^\| *`/, "", cell)
        sub(/`.*/, "", cell)
        if (cell ~ /^[A-Z][A-Z0-9_]*\*?$/)
            print cell "\t" section
    }
' "$doc" >"$tmp.doc"

fail=0
while read -r name layers; do
    if ! cut -f1 "$tmp.doc" | grep -qxF "$name"; then
        echo "FAIL: $name ($layers) is in the registry but not documented in $doc"
        fail=1
    fi
    if [ "$layers" = - ] && ! grep -qxF "$name	Reserved names" "$tmp.doc"; then
        echo "FAIL: $name is reserved in the registry but not listed under \"Reserved names\" in $doc"
        fail=1
    fi
done <"$tmp.table"

while IFS='	' read -r name section; do
    layers=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp.table")
    if [ -z "$layers" ]; then
        echo "FAIL: $doc documents $name (under \"$section\"), which the registry (runtime/src/env_registry.c) lacks"
        fail=1
    elif [ "$section" = "Reserved names" ] && [ "$layers" != - ]; then
        echo "FAIL: $doc lists $name under \"Reserved names\", but the registry says $layers reads it"
        fail=1
    fi
done <"$tmp.doc"

if [ "$fail" -ne 0 ]; then
    exit 1
fi
echo "test_env_docs: the $(wc -l <"$tmp.table" | tr -d ' ') registry entries and the $(sort -u "$tmp.doc" | cut -f1 | sort -u | wc -l | tr -d ' ') names $doc documents agree"
