#!/bin/sh
# Builds the Debian packages (debian/) as a user would, with
# dpkg-buildpackage -us -uc -b on a copy of the source tree, unpacks them
# with dpkg -x into scratch roots (nothing is installed on this machine)
# and checks them:
#   - debian/changelog's version is the project's (project() in
#     CMakeLists.txt), and each package of debian/control was built;
#   - each package holds its key files, and no file is in two packages
#     (dpkg would refuse to install both);
#   - libultrapool-dev with only what it depends on among these packages:
#     find_package(ultrapool) finds the components pool, parallel and
#     openmp and reports mpi missing, and a program built with pkg-config
#     runs;
#   - all of them: the consumer project (tests/consumer) built by
#     find_package and by pkg-config against the root, its programs run
#     with LD_LIBRARY_PATH into it; find_package with every component; an
#     MPI program built with pkg-config ultrapool-mpi; gcc -fopenmp
#     programs on the packaged libgomp.so.1, through the packaged launcher
#     too; each packaged OpenMP backend module loaded from the root; and
#     ultrapool-topo --version.
# The copy is of the working tree (tracked files and untracked ones that
# git does not ignore), so that an edit is tested before it is committed.
# Skipped (77) where dpkg-buildpackage or debhelper is missing, or a build
# dependency (dpkg-checkbuilddeps names it). DEB_BUILD_OPTIONS is passed
# on when set (default: nocheck noddebs parallel=<CPUs>).
# Arguments: build dir, source dir.
set -eu
build=$1
src=$2
case $build in /*) ;; *) build=$(pwd -P)/$build ;; esac
work=$build/debian-package

for tool in dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb dpkg-architecture dh; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_debian_package: no $tool (Debian: dpkg-dev debhelper), skipped"
        exit 77
    fi
done

version=$(sed -n 's/^project(ultrapool VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || { echo "FAIL: no project(ultrapool VERSION ...) in $src/CMakeLists.txt"; exit 1; }
deb_version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
upstream=${deb_version#*:}
upstream=${upstream%-*}
echo "project version $version, debian/changelog $deb_version"
[ "$upstream" = "$version" ] ||
    { echo "FAIL: debian/changelog's version $deb_version is not the project's $version"; exit 1; }

rm -rf "$work"
copy=$work/ultrapool-$version
mkdir -p "$copy"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # --ignore-failed-read: a tracked file deleted in the working tree is
    # still listed; it is left out, as in the tree that is tested.
    git -C "$src" ls-files -z --cached --others --exclude-standard |
        (cd "$src" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
        tar -xf - -C "$copy"
else
    (cd "$src" && tar --exclude=./.git --exclude='./build*' --exclude='./install*' -cf - .) |
        tar -xf - -C "$copy"
fi

if ! missing=$(cd "$copy" && dpkg-checkbuilddeps 2>&1); then
    echo "test_debian_package: build dependencies missing, skipped: $missing"
    exit 77
fi

echo "== dpkg-buildpackage -us -uc -b"
t0=$(date +%s)
opts=${DEB_BUILD_OPTIONS:-"nocheck noddebs parallel=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)"}
# The package build sees none of this test run's search paths.
if ! (cd "$copy" && env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u CMAKE_PREFIX_PATH \
        -u LD_LIBRARY_PATH DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc -b \
        >"$work/build.log" 2>&1); then
    tail -40 "$work/build.log"
    echo "FAIL: dpkg-buildpackage (log: $work/build.log)"
    exit 1
fi
echo "built in $(($(date +%s) - t0)) s (DEB_BUILD_OPTIONS=\"$opts\"; log: $work/build.log)"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pkgs=$(sed -n 's/^Package: *//p' "$copy/debian/control" | tr '\n' ' ')
deb() { echo "$work/${1}_${deb_version#*:}_$arch.deb"; }
for p in $pkgs; do
    [ -f "$(deb "$p")" ] || { echo "FAIL: no $(deb "$p")"; exit 1; }
done
echo "packages: $pkgs"

# Key files of each package (docs/packaging.md, debian/README.Debian).
failures=0
bad() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
lib=usr/lib/$ma
has() { # package, files
    p=$1
    shift
    list=$(dpkg-deb -c "$(deb "$p")" | awk '{print $6}' | sed 's|^\./||')
    for f in "$@"; do
        echo "$list" | grep -qxF "$f" || bad "$p lacks $f"
    done
}
# The runtime package and the SONAME follow the major version
# (docs/packaging.md, "Shared library versions").
so=${version%%.*}
has "libultrapool$so" "$lib/libultrapool.so.$so" "$lib/libultrapool_par.so.$so"
has libultrapool-dev usr/include/ultrapool/pool.h usr/include/ultrapool/parallel.h \
    "$lib/libultrapool.so" "$lib/libultrapool_par.so" "$lib/libultrapool.a" \
    "$lib/libultrapool_par.a" "$lib/pkgconfig/ultrapool.pc" "$lib/pkgconfig/ultrapool-parallel.pc" \
    "$lib/pkgconfig/ultrapool-openmp.pc" "$lib/cmake/ultrapool/ultrapoolConfig.cmake" \
    "$lib/cmake/ultrapool/ultrapoolTargets.cmake"
has libultrapool-mpi-dev usr/include/ultrapool/mpi.h "$lib/libultrapool_mpi.a" \
    "$lib/pkgconfig/ultrapool-mpi.pc" "$lib/cmake/ultrapool/ultrapoolMpiTargets.cmake"
has libultrapool-openmp1 "$lib/ultrapool/omp/libgomp.so.1"
has libultrapool-omp-backends "$lib/libultrapool_omp_gomp.so" "$lib/libultrapool_omp_llvm.so"
has ultrapool-tools usr/bin/ultrapool-topo usr/bin/ultrapool-omp \
    usr/share/man/man1/ultrapool-topo.1.gz usr/share/man/man1/ultrapool-omp.1.gz usr/share/man/man7/ultrapool.7.gz
dups=$(for p in $pkgs; do
    dpkg-deb -c "$(deb "$p")" | awk '$1 !~ /^d/ {print $6}'
done | sort | uniq -d)
[ -z "$dups" ] || bad "files in more than one package: $dups"
[ "$failures" -eq 0 ] || { echo "FAIL: $failures checks of the packages' contents failed"; exit 1; }

# The packages among these that $1 needs: itself and its Depends, followed.
closure() {
    todo=$1
    seen=" "
    while [ -n "$todo" ]; do
        # shellcheck disable=SC2086 # a list of names
        set -- $todo
        p=$1
        shift
        todo="$*"
        case $seen in *" $p "*) continue ;; esac
        seen="$seen$p "
        for d in $(dpkg-deb -f "$(deb "$p")" Depends | tr ',|' '\n' | sed 's/(.*//; s/:.*//; s/ //g'); do
            case " $pkgs " in *" $d "*) todo="$todo $d" ;; esac
        done
    done
    # shellcheck disable=SC2086 # the names, without the outer spaces
    echo $seen
}
unpack() { # root, packages
    r=$1
    shift
    mkdir -p "$r"
    for p in "$@"; do
        dpkg -x "$(deb "$p")" "$r"
    done
}
real() { (cd "$1" && pwd -P); }

# find_package against a root: prints what it found, or fails.
cmake_probe() { # root, name, CMake code after project()
    d=$work/probe-$2
    mkdir -p "$d"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(probe C)\n%s\n' "$3" >"$d/CMakeLists.txt"
    if ! cmake -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$1/usr" >"$d.log" 2>&1; then
        cat "$d.log" >&2
        echo "FAIL: find_package probe $2" >&2
        exit 1
    fi
    grep 'probe:' "$d.log" | sed 's/^-- //'
}
# shellcheck disable=SC2016 # CMake's ${...}, for CMake
report='get_target_property(up_loc ultrapool::ultrapool LOCATION)
message(STATUS "probe: dir=${ultrapool_DIR} pool=${ultrapool_pool_FOUND} parallel=${ultrapool_parallel_FOUND} mpi=${ultrapool_mpi_FOUND} openmp=${ultrapool_openmp_FOUND} lib=${up_loc}")'
in_root() { # root, the probe's words: the package's folder and library lie in the root
    for w in $2; do
        case $w in
            dir=* | lib=*)
                case ${w#*=} in "$1"/*) ;; *) bad "$w is not in $1" ;; esac ;;
        esac
    done
}

# pkg-config from the root: the .pc files find their prefix from their own
# folder (${pcfiledir}), so PKG_CONFIG_PATH into the root is all it takes
# (PKG_CONFIG_SYSROOT_DIR would put the root in front a second time).
pc() { # root, pkg-config arguments
    r=$1
    shift
    PKG_CONFIG_PATH=$r/$lib/pkgconfig pkg-config "$@"
}
cc=${CC:-cc}

echo "== libultrapool-dev alone (with what it depends on)"
devroot=$work/root-dev
dev_pkgs=$(closure libultrapool-dev)
echo "unpacked: $dev_pkgs"
case " $dev_pkgs " in *" libultrapool-mpi-dev "*) bad "libultrapool-dev pulls in the MPI package" ;; esac
# shellcheck disable=SC2086 # a list of names
unpack "$devroot" $dev_pkgs
devroot=$(real "$devroot")
got=$(cmake_probe "$devroot" dev "find_package(ultrapool $version CONFIG REQUIRED COMPONENTS pool parallel openmp)
$report")
echo "$got"
in_root "$devroot" "$got"
case $got in
    *"pool=TRUE parallel=TRUE mpi=FALSE openmp=TRUE "*) ;;
    *) bad "expected pool, parallel and openmp found and mpi missing: $got" ;;
esac
[ "$(real "$(pc "$devroot" --variable=libdir ultrapool-parallel)")" = "$devroot/$lib" ] ||
    bad "pkg-config ultrapool-parallel: libdir $(pc "$devroot" --variable=libdir ultrapool-parallel)"
mkdir -p "$work/dev-pc"
# shellcheck disable=SC2046 # the flags are words
$cc -O2 "$src/tests/consumer/consumer.c" $(pc "$devroot" --cflags --libs ultrapool-parallel) \
    -o "$work/dev-pc/consumer" || bad "a pkg-config build against libultrapool-dev alone"
if [ -x "$work/dev-pc/consumer" ]; then
    printf 'consumer (pkg-config, libultrapool-dev alone): '
    LD_LIBRARY_PATH=$devroot/$lib "$work/dev-pc/consumer" || bad "the consumer against libultrapool-dev alone"
fi
[ "$failures" -eq 0 ] || { echo "FAIL: $failures checks of libultrapool-dev alone failed"; exit 1; }

echo "== every package"
root=$work/root
# shellcheck disable=SC2086 # a list of names
unpack "$root" $pkgs
root=$(real "$root")
libdir=$root/$lib
got=$(cmake_probe "$root" all "find_package(ultrapool $version CONFIG REQUIRED COMPONENTS pool parallel mpi openmp)
$report")
echo "$got"
in_root "$root" "$got"
case $got in
    *"pool=TRUE parallel=TRUE mpi=TRUE openmp=TRUE "*) ;;
    *) bad "expected every component: $got" ;;
esac

# The consumer project: find_package and pkg-config, shared and static,
# C and C++, MPI, the OpenMP programs, the backend probes.
out=$work/consumer
if ! PKG_CONFIG_PATH=$libdir/pkgconfig cmake -S "$src/tests/consumer" -B "$out" \
        -DCMAKE_PREFIX_PATH="$root/usr" -DCMAKE_BUILD_TYPE=Release >"$out.log" 2>&1 ||
   ! cmake --build "$out" >>"$out.log" 2>&1; then
    cat "$out.log"
    echo "FAIL: the consumer project against $root"
    exit 1
fi
found=$(sed -n 's/^ultrapool_DIR:PATH=//p' "$out/CMakeCache.txt")
case $found in "$root"/*) ;; *) bad "the consumer project found ultrapool in $found" ;; esac
n=0
for exe in "$out"/consumer_*; do
    if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then continue; fi
    printf '%s: ' "$(basename "$exe")"
    LD_LIBRARY_PATH=$libdir "$exe" || bad "$exe"
    n=$((n + 1))
done
echo "$n consumer programs ran"
for want in consumer_c_cmake consumer_c_static consumer_c_pkgconfig consumer_c_mpi; do
    [ -x "$out/$want" ] || bad "the consumer project built no $want"
done
if command -v ldd >/dev/null 2>&1; then
    got=$(LD_LIBRARY_PATH=$libdir ldd "$out/consumer_c_cmake" | awk '$1 ~ /^libultrapool_par\.so/ {print $3}')
    [ "$(dirname "$got")" = "$libdir" ] || bad "consumer_c_cmake loads libultrapool_par from '$got'"
fi

# The MPI mode by pkg-config: ultrapool-mpi names MPI's own module.
mkdir -p "$work/mpi-pc"
# shellcheck disable=SC2046 # the flags are words
if $cc -O2 "$src/tests/consumer/consumer_mpi.c" $(pc "$root" --cflags --libs ultrapool-mpi) \
        -o "$work/mpi-pc/consumer_mpi"; then
    printf 'consumer_mpi (pkg-config ultrapool-mpi): '
    "$work/mpi-pc/consumer_mpi" || bad "the MPI program built with pkg-config"
else
    bad "cc with pkg-config --cflags --libs ultrapool-mpi"
fi

# gcc -fopenmp programs: the plain one on GCC's libgomp, then through the
# packaged launcher on the packaged libgomp.so.1 (which finds
# libultrapool.so.0 by its RUNPATH); the linked ones on it as they are.
omp_run() { # expected runtime, command...
    want=$1
    shift
    if ! got=$(env -u LD_LIBRARY_PATH "$@"); then
        bad "$*"
        return
    fi
    echo "$*: $got"
    case $got in "runtime: $want "*) ;; *) bad "expected $want" ;; esac
}
if [ -x "$out/omp_consumer_plain" ]; then
    where=$("$root/usr/bin/ultrapool-omp" --print-path)
    [ "$where" = "$libdir/ultrapool/omp" ] || bad "ultrapool-omp --print-path: $where"
    omp_run other "$out/omp_consumer_plain"
    omp_run ultrapool "$root/usr/bin/ultrapool-omp" "$out/omp_consumer_plain"
    omp_run ultrapool "$out/omp_consumer_cmake"
    omp_run ultrapool "$out/omp_consumer_pkgconfig"
else
    bad "the consumer project built no OpenMP programs (gcc -fopenmp)"
fi

# The backend modules: the shared library finds them beside itself, the
# static one through UP_BACKEND_PATH (the folder it knows is /usr's).
for name in gomp llvm; do
    got=$(env -u UP_BACKEND_PATH LD_LIBRARY_PATH="$libdir" "$out/backend_probe_shared" "$name") || true
    echo "backend_probe_shared $name: $got"
    [ "$got" = "loaded: $libdir/libultrapool_omp_$name.so" ] || bad "not loaded from $libdir"
    got=$(UP_BACKEND_PATH=$libdir "$out/backend_probe_static" "$name") || true
    echo "backend_probe_static $name (UP_BACKEND_PATH=$libdir): $got"
    [ "$got" = "loaded: $libdir/libultrapool_omp_$name.so" ] || bad "not loaded from $libdir"
done

got=$("$root/usr/bin/ultrapool-topo" --version) || bad "ultrapool-topo --version"
echo "ultrapool-topo --version: $got"
case $got in *"$version"*) ;; *) bad "ultrapool-topo --version does not say $version" ;; esac

[ "$failures" -eq 0 ] || { echo "FAIL: $failures checks of the unpacked packages failed"; exit 1; }
rm -rf "$copy"
echo "debian: $pkgs built, unpacked and used (the .deb files are in $work)"
