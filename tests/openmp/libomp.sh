# Sourced by the test scripts: find_libomp prints the path of LLVM's
# libomp.so.5 (Debian's libomp-dev), or nothing when it is not installed.
find_libomp() {
    for f in /usr/lib/x86_64-linux-gnu/libomp.so.5 /usr/lib/aarch64-linux-gnu/libomp.so.5 \
             /usr/lib/llvm-*/lib/libomp.so.5; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
}
