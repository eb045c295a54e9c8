#!/bin/sh
# test_docs: the API reference builds from the public headers without a
# single warning (an undocumented public name is one). Runs the docs target
# of the build tree and fails on a failed build or any line that says
# "warning". Skipped (77) when CMake found no Doxygen: there is no target.
# Arguments: build dir, ON when the docs target exists.
set -eu
build=$1
if [ "${2:-OFF}" != ON ]; then
    echo "test_docs: no Doxygen found at configure time (Debian: doxygen), skipped"
    exit 77
fi
log=$build/docs/api/test_docs.log
mkdir -p "$build/docs/api"
rc=0
cmake --build "$build" --target docs >"$log" 2>&1 || rc=$?
if grep -i 'warning' "$log"; then
    echo "FAIL: the docs target gave the warnings above"
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    cat "$log"
    echo "FAIL: the docs target failed (exit status $rc)"
    exit 1
fi
[ -f "$build/docs/api/html/index.html" ] || { echo "FAIL: no html/index.html"; exit 1; }
echo "test_docs: the API reference built without warnings: $build/docs/api/html/index.html"
