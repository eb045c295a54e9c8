#!/bin/sh
# Installs the build tree into a scratch prefix, then configures, builds and
# runs the consumer project against it. Arguments: build dir, source dir.
set -eu
build=$1
src=$2
prefix=$build/consumer-prefix
rm -rf "$prefix" "$build/consumer-build"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib* | head -1)
PKG_CONFIG_PATH=$libdir/pkgconfig cmake -S "$src/tests/consumer" -B "$build/consumer-build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build/consumer-build" >/dev/null
LD_LIBRARY_PATH=$libdir "$build/consumer-build/consumer_cmake"
LD_LIBRARY_PATH=$libdir "$build/consumer-build/consumer_pkgconfig"
