#!/bin/sh
# Installs a build tree into a scratch prefix and checks the package files:
# the pkg-config modules (no system folder in them; what --static gives
# against what the static archives call; a fully static program where
# every archive is there; the MPI mode's module), find_package's components,
# versions and version ranges, the README's build and run from a
# prefix that is not a system one, and the man pages (installed, and
# rendering without warnings). Then builds and runs the consumer
# project (C and C++17, find_package and pkg-config, shared and static)
# against it; then again as a machine without hwloc's and libsde's
# development files would: pkg-config sees only the prefix, CMake cannot
# find the system's hwloc, and only the shared libraries are linked. Last,
# the Lmod module file the install writes: it names this prefix, and where
# Lmod is installed, `module load ultrapool` alone lets a pkg-config build
# find and run the libraries.
# Arguments: build dir, source dir [, prefix (default: build/consumer-prefix)].
set -eu
build=$1
src=$2
prefix=${3:-$build/consumer-prefix}
case $prefix in /*) ;; *) prefix=$(pwd -P)/$prefix ;; esac
out=$build/consumer-build
rm -rf "$prefix" "$out" "$out-nodev" "$out-module" "$out-pc" "$out-find"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name ultrapoolConfig.cmake | head -1)")
libdir=${libdir%/cmake/ultrapool}
[ -f "$libdir/libultrapool.so" ] || { echo "no libultrapool.so under $prefix"; exit 1; }

# No internal symbol leaves the installed shared libraries either.
if command -v nm >/dev/null 2>&1; then
    for lib in "$libdir/libultrapool.so" "$libdir/libultrapool_par.so"; do
        if nm -D --defined-only "$lib" | awk '{print $3}' | grep '^up__'; then
            echo "FAIL: $lib exports up__ symbols"
            exit 1
        fi
    done
fi

# The package files, checked one by one: each check below goes on after a
# failure, so that a run lists them all, and the script stops after the
# last of them when any failed. pc: pkg-config with the prefix first.
failures=0
bad() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
pc() { PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config "$@"; }
cc=${CC:-cc}
mkdir -p "$out-pc"
version=$(sed -n 's/^set(PACKAGE_VERSION "\([^"]*\)")$/\1/p' \
          "$libdir/cmake/ultrapool/ultrapoolConfigVersion.cmake")

# No installed .pc names a folder the compiler or pkg-config searches by
# default (-L/usr/lib/x86_64-linux-gnu ...): the modules' own folders are
# relative to ${pcfiledir}, a dependency's come from its own module.
echo "== the pkg-config modules"
sysdirs=$( {
    pkg-config --variable=pc_system_libdirs pkg-config 2>/dev/null || true
    pkg-config --variable=pc_system_includedirs pkg-config 2>/dev/null || true
    $cc -print-search-dirs 2>/dev/null | sed -n 's/^libraries: =//p'
    triple=$($cc -print-multiarch 2>/dev/null || true)
    echo "/usr/include /usr/lib /lib /usr/lib64 /lib64"
    [ -z "$triple" ] || echo "/usr/include/$triple /usr/lib/$triple /lib/$triple"
} | tr ':' '\n' | while read -r line; do
    for d in $line; do
        if [ -d "$d" ]; then (cd "$d" && pwd -P); fi
    done
done | sort -u)
for f in "$libdir"/pkgconfig/*.pc; do
    # shellcheck disable=SC2013 # the flags' words
    for w in $(sed -nE 's/^(Libs|Libs\.private|Cflags|Cflags\.private):(.*)$/\2/p' "$f"); do
        case $w in
            -L/*) d=${w#-L} ;;
            -I/*) d=${w#-I} ;;
            -isystem/*) d=${w#-isystem} ;;
            -Wl,-rpath,/*) d=${w#-Wl,-rpath,} ;;
            *) continue ;;
        esac
        [ -d "$d" ] || continue
        if echo "$sysdirs" | grep -qxF "$(cd "$d" && pwd -P)"; then
            bad "$(basename "$f") names the system folder $d ($w)"
        fi
    done
done

# pkg-config --static gives every library that the static archives call
# into: the archives' undefined symbols say which they need (threads: only
# where the C library alone does not have them; libdl: wherever there is
# one, as the build links it).
undefined() { nm -u "$1" | awk 'NF { print $NF }' | sort -u; }
has_lib() { # the compiler finds lib$1.so or lib$1.a by itself
    for ext in so a; do
        [ "$($cc -print-file-name="lib$1.$ext")" = "lib$1.$ext" ] || return 0
    done
    return 1
}
libc_links() { # a call of $1 links with no library named
    printf 'char %s(void);\nint main(void) { return %s(); }\n' "$1" "$1" >"$out-pc/libc_$1.c"
    $cc "$out-pc/libc_$1.c" -o "$out-pc/libc_$1" >/dev/null 2>&1
}
static_needs() { # module, why, words
    m=$1
    why=$2
    shift 2
    got=" $(pc --static --libs "$m" | tr -s ' \n' '  ') "
    for w in "$@"; do
        case $got in
            *" $w "*) ;;
            *) bad "pkg-config --static --libs $m lacks $w ($why):$got" ;;
        esac
    done
}
if command -v nm >/dev/null 2>&1; then
    for pair in ultrapool:libultrapool.a ultrapool-parallel:libultrapool_par.a; do
        m=${pair%%:*}
        syms=$(undefined "$libdir/${pair#*:}")
        echo "pkg-config --static --libs $m: $(pc --static --libs "$m")"
        if echo "$syms" | grep -qE '^dl(open|sym|close|error)$' && has_lib dl; then
            static_needs "$m" "it calls dlopen or dlsym" -ldl
        fi
        if echo "$syms" | grep -q '^pthread_' && ! libc_links pthread_create; then
            case " $(pc --static --libs "$m") " in
                *" -pthread "* | *" -lpthread "*) ;;
                *) bad "pkg-config --static --libs $m has neither -pthread nor -lpthread" ;;
            esac
        fi
        if echo "$syms" | grep -q '^hwloc_'; then
            # shellcheck disable=SC2046 # hwloc's own words, one by one
            static_needs "$m" "it calls hwloc: pkg-config --static --libs hwloc" \
                $(pkg-config --static --libs hwloc)
        fi
        if echo "$syms" | grep -q '^papi_sde_'; then
            static_needs "$m" "it calls libsde" -lsde
        fi
        if [ "$m" = ultrapool-parallel ]; then
            static_needs "$m" "it calls the pool library" -lultrapool
        fi
    done
fi

# A static program from pkg-config --static alone, where every library it
# names has its static archive on this machine.
missing=""
flags=$(pc --static --cflags --libs ultrapool-parallel)
for w in $flags; do
    case $w in -l*) ;; *) continue ;; esac
    n=${w#-l}
    [ -f "$libdir/lib$n.a" ] && continue
    [ "$($cc -print-file-name="lib$n.a")" != "lib$n.a" ] || missing="$missing lib$n.a"
done
if [ -n "$missing" ]; then
    echo "note: no fully static program: no static archive on this machine for:$missing"
else
    # shellcheck disable=SC2086 # the flags are words
    if $cc -static -O2 "$src/tests/consumer/consumer.c" $flags -o "$out-pc/consumer_static" \
            >"$out-pc/static.log" 2>&1; then
        printf 'a static program (cc -static ... pkg-config --static): '
        "$out-pc/consumer_static" || bad "the program linked with -static failed"
    else
        cat "$out-pc/static.log"
        bad "cc -static with pkg-config --static --cflags --libs ultrapool-parallel"
    fi
fi

# The MPI mode's module: a program links with pkg-config --libs
# ultrapool-mpi alone. Compiled by cc when the module names MPI's own
# module, by mpicc when this MPI has none (docs/mpi.md).
echo "== the MPI mode's pkg-config module"
if [ -f "$libdir/libultrapool_mpi.a" ]; then
    if pc --exists ultrapool-mpi; then
        mpi_cc=$cc
        pc --print-requires ultrapool-mpi | grep -qiE 'mpi|mpich' || mpi_cc=mpicc
        flags=$(pc --cflags --libs ultrapool-mpi)
        echo "$mpi_cc ... \$(pkg-config --cflags --libs ultrapool-mpi): $flags"
        # shellcheck disable=SC2086 # the flags are words
        if $mpi_cc -O2 "$src/tests/consumer/consumer_mpi.c" $flags -o "$out-pc/consumer_mpi" \
                >"$out-pc/mpi.log" 2>&1; then
            printf 'consumer_mpi (pkg-config): '
            env -u LD_LIBRARY_PATH "$out-pc/consumer_mpi" || bad "the MPI program built with pkg-config failed"
        else
            cat "$out-pc/mpi.log"
            bad "$mpi_cc with pkg-config --cflags --libs ultrapool-mpi does not build an MPI program"
        fi
    else
        bad "the install has libultrapool_mpi.a but pkg-config does not find ultrapool-mpi"
    fi
else
    [ ! -f "$libdir/pkgconfig/ultrapool-mpi.pc" ] || bad "ultrapool-mpi.pc without the MPI library"
    echo "note: no MPI mode in this install (a build with -DUP_WITH_MPI=ON checks its module)"
fi

# find_package requests: components, versions and version ranges. Each
# probe is a project of its own; it prints what find_package said.
echo "== find_package requests"
probe() { # name, CMake code after project(); prints the log as one line
    d=$out-find/$1
    mkdir -p "$d"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(probe_%s C)\n%s\n' "$1" "$2" >"$d/CMakeLists.txt"
    if cmake -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$prefix" >"$d.log" 2>&1; then
        echo "ok $(tr -s ' \n' '  ' <"$d.log")"
    else
        echo "failed $(tr -s ' \n' '  ' <"$d.log")"
    fi
}
expect() { # name, CMake code, expected words (a shell pattern) in the result
    got=$(probe "$1" "$2")
    # shellcheck disable=SC2254 # $3 is a pattern
    case $got in
        $3) echo "find_package probe $1: as expected" ;;
        *) bad "find_package probe $1: expected $3, got: $got" ;;
    esac
}
# shellcheck disable=SC2016 # CMake's ${...}, for CMake
report='message(STATUS "probe: found=${ultrapool_FOUND} pool=${ultrapool_pool_FOUND} parallel=${ultrapool_parallel_FOUND} mpi=${ultrapool_mpi_FOUND} openmp=${ultrapool_openmp_FOUND} why=[${ultrapool_NOT_FOUND_MESSAGE}]")'
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
expect components "find_package(ultrapool $major.$minor CONFIG REQUIRED COMPONENTS pool parallel)
$report" "ok *probe: found=1 pool=TRUE parallel=TRUE *"
expect unknown "find_package(ultrapool CONFIG QUIET COMPONENTS pool nosuch)
$report" "ok *probe: found=0 *why=\[*nosuch*\]*"
expect unknown_required "find_package(ultrapool CONFIG REQUIRED COMPONENTS nosuch)" \
    "failed *Reason given by package: *nosuch*"
if [ -f "$libdir/libultrapool_mpi.a" ]; then
    expect mpi "find_package(ultrapool CONFIG REQUIRED COMPONENTS mpi)
if(NOT TARGET MPI::MPI_C OR NOT TARGET ultrapool::mpi)
  message(FATAL_ERROR \"no ultrapool::mpi or MPI::MPI_C\")
endif()
$report" "ok *probe: found=1 *mpi=TRUE *"
else
    expect mpi_missing "find_package(ultrapool CONFIG QUIET COMPONENTS mpi)
$report" "ok *probe: found=0 *mpi=FALSE *why=\[*mpi*MPI*\]*"
    expect mpi_optional "find_package(ultrapool CONFIG REQUIRED OPTIONAL_COMPONENTS mpi)
$report" "ok *probe: found=1 *mpi=FALSE *"
fi
if [ -f "$libdir/ultrapool/omp/libgomp.so.1" ]; then
    expect openmp "find_package(ultrapool CONFIG REQUIRED COMPONENTS openmp)
$report" "ok *probe: found=1 *openmp=TRUE *"
else
    expect openmp_missing "find_package(ultrapool CONFIG QUIET COMPONENTS openmp)
$report" "ok *probe: found=0 *openmp=FALSE *why=\[*openmp*\]*"
fi
# Versions (docs/packaging.md): a later minor version is refused; in 0.x
# an earlier minor one is too; a range takes every version inside it.
expect version_next_minor "find_package(ultrapool $major.$((minor + 1)) CONFIG QUIET)
$report" "ok *probe: found=0 *"
if [ "$major" = 0 ] && [ "$minor" -gt 0 ]; then
    expect version_earlier_minor "find_package(ultrapool 0.$((minor - 1)) CONFIG QUIET)
$report" "ok *probe: found=0 *"
fi
cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
case $cmake_version in
    3.1[0-8].* | 3.[0-9].* | [0-2].*)
        echo "note: CMake $cmake_version takes no version ranges (3.19 does): not checked" ;;
    *)
        expect range "find_package(ultrapool $major.$minor...$((major + 1)).0 CONFIG REQUIRED)
$report" "ok *probe: found=1 *"
        expect range_exclusive "find_package(ultrapool $major.$minor...<$((major + 1)).0 CONFIG REQUIRED)
$report" "ok *probe: found=1 *"
        expect range_above "find_package(ultrapool $major.$((minor + 1))...$((major + 1)).0 CONFIG QUIET)
$report" "ok *probe: found=0 *" ;;
esac

# The documented words for a prefix outside the dynamic linker's search
# path (this scratch prefix is one): the sh blocks marked for this test,
# the README's (an rpath) then docs/packaging.md's (LD_LIBRARY_PATH), run
# one after the other as printed, with this prefix for <prefix> and Quick
# start 1 (the README's first C program) as app.c. Built without either
# remedy, the program cannot start here (exit status 127).
echo "== the README's build from a prefix that is not a system one"
doc_block() { # the lines of the sh block after the marker <!-- run.sh: $2 --> in file $1
    awk -v m="<!-- run.sh: $2 -->" '
        $0 == m { on = 1; next }
        on == 1 && /^```/ { on = 2; next }
        on == 2 && /^```/ { exit }
        on == 2 { print }' "$src/$1"
}
readme_app() { # the README's first C program
    awk '/^```c$/ { on = 1; buf = ""; next }
         on && /^```/ { if (buf ~ /int main\(/) { printf "%s", buf; exit } on = 0; next }
         on { buf = buf $0 "\n" }' "$src/README.md"
}
dir=$out-pc/readme
mkdir -p "$dir"
readme_app >"$dir/app.c"
lines=""
for block in README.md:rpath docs/packaging.md:ld-library-path; do
    got=$(doc_block "${block%%:*}" "${block#*:}")
    [ -n "$got" ] || bad "${block%%:*} has no sh block after <!-- run.sh: ${block#*:} -->"
    lines="$lines$got
"
done
lines=$(printf '%s' "$lines" | sed -e "s|<prefix>/lib/|$libdir/|g" -e "s|<prefix>|$prefix|g")
if [ -n "$lines" ]; then
    printf '%s\n' "$lines" | sed 's/^/  $ /'
    (cd "$dir" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR sh -eu -c "$lines") ||
        bad "the documented lines failed from $prefix"
fi
# shellcheck disable=SC2046 # the flags are words
if $cc -O2 "$dir/app.c" $(pc --cflags --libs ultrapool) -o "$dir/app-plain"; then
    rc=0
    env -u LD_LIBRARY_PATH "$dir/app-plain" >/dev/null 2>&1 || rc=$?
    echo "built without an rpath and run without LD_LIBRARY_PATH: exit status $rc"
    [ "$rc" = 127 ] || bad "expected 127: is $prefix searched by the dynamic linker?"
else
    bad "the plain pkg-config build of the README's program"
fi

# The man pages: ultrapool-topo(1) and ultrapool(7) (and ultrapool-omp(1)
# with its launcher) are installed in the man1 and man7 folders, and
# render without a warning (groff -ww, else man -l with man's warnings
# on), where either tool is there.
echo "== the man pages"
pages="man1/ultrapool-topo.1 man7/ultrapool.7"
[ -z "$(find "$prefix" -path "*/bin/ultrapool-omp" | head -1)" ] || pages="$pages man1/ultrapool-omp.1"
for page in $pages; do
    f=$(find "$prefix" -path "*/$page" | head -1)
    if [ -z "$f" ]; then
        bad "no $page under $prefix"
        continue
    fi
    echo "$f"
    if command -v groff >/dev/null 2>&1; then
        warn=$(groff -man -Tutf8 -ww "$f" 2>&1 >/dev/null) || bad "groff failed on $f"
    elif command -v man >/dev/null 2>&1; then
        warn=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null) || bad "man -l failed on $f"
    else
        echo "note: neither groff nor man is installed: $page not rendered"
        continue
    fi
    [ -z "$warn" ] || bad "$f renders with warnings: $warn"
done

[ "$failures" -eq 0 ] || { echo "FAIL: $failures checks of the installed package failed"; exit 1; }

run_all() {
    dir=$1
    n=0
    for exe in "$dir"/consumer_*; do
        [ -x "$exe" ] && [ -f "$exe" ] || continue
        printf '%s: ' "$(basename "$exe")"
        LD_LIBRARY_PATH=$libdir "$exe"
        n=$((n + 1))
    done
    echo "$n consumer programs ran in $dir"
    [ "$n" -ge "$2" ] || { echo "FAIL: expected at least $2 programs"; exit 1; }
}

echo "== consumers against $prefix"
PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
    cmake -S "$src/tests/consumer" -B "$out" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cmake --build "$out" >>"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
run_all "$out" 5

# ultrapool as the OpenMP runtime, when the install has it: the plain
# gcc -fopenmp program runs on GCC's libgomp, then on ultrapool through the
# launcher and through the library path (the installed libgomp.so.1 finds
# libultrapool.so by its RUNPATH, $ORIGIN/../..); the programs linked to
# ultrapool::openmp and ultrapool-openmp run on it as they are. Then the
# prefix is moved: the launcher finds the library beside itself.
if [ -x "$out/omp_consumer_plain" ]; then
    echo "== OpenMP programs on the installed libgomp.so.1"
    omp=$libdir/ultrapool/omp
    omp_run() { # expected runtime, command...
        want=$1
        shift
        got=$(env -u LD_LIBRARY_PATH "$@") || { echo "FAIL: $*"; exit 1; }
        echo "$*: $got"
        case $got in "runtime: $want "*) ;; *) echo "FAIL: expected $want"; exit 1 ;; esac
    }
    omp_run other "$out/omp_consumer_plain"
    omp_run ultrapool "$prefix/bin/ultrapool-omp" "$out/omp_consumer_plain"
    omp_run ultrapool env LD_LIBRARY_PATH="$omp" "$out/omp_consumer_plain"
    omp_run ultrapool "$out/omp_consumer_cmake"
    omp_run ultrapool "$out/omp_consumer_pkgconfig"
    if "$prefix/bin/ultrapool-omp" "$out/no-such-program" 2>/dev/null; then
        echo "FAIL: the launcher ran a missing program"; exit 1
    fi
    moved=$(mktemp -d)
    cp -a "$prefix/." "$moved/"
    where=$("$moved/bin/ultrapool-omp" --print-path)
    case $where in "$moved"/*) ;; *) echo "FAIL: the moved launcher uses $where"; rm -rf "$moved"; exit 1 ;; esac
    omp_run ultrapool "$moved/bin/ultrapool-omp" "$out/omp_consumer_plain"
    rm -rf "$moved"
fi

# Where the installed libraries find the OpenMP backend modules: the shared
# one beside itself, the static one through UP_BACKEND_PATH (its configured
# libdir is not this scratch prefix), and neither ever in the build tree,
# whose modules are still there: no folder of $build/pragmas may be loaded
# from or listed in an error.
echo "== backend modules from the installed tree"
real_dir() { (cd "$1" && pwd -P); }
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
modules=$(cd "$libdir" && ls libultrapool_omp_*.so 2>/dev/null |
          sed 's/^libultrapool_omp_\(.*\)\.so$/\1/') || true
probe() { # flavour, backend name, UP_BACKEND_PATH ("-": unset), expectation
    if [ "$3" = - ]; then
        got=$(env -u UP_BACKEND_PATH "$out/backend_probe_$1" "$2") || true
    else
        got=$(UP_BACKEND_PATH=$3 "$out/backend_probe_$1" "$2") || true
    fi
    echo "backend_probe_$1 $2 (UP_BACKEND_PATH=$3): $got"
    case $got in
        *"$build/pragmas"*) echo "FAIL: the installed library used the build tree"; exit 1 ;;
    esac
    case $4 in
        prefix)
            case $got in "loaded: "*) ;; *) echo "FAIL: not loaded"; exit 1 ;; esac
            file=${got#loaded: }
            [ "$(real_dir "$(dirname "$file")")" = "$(real_dir "$libdir")" ] ||
                { echo "FAIL: loaded from outside $libdir"; exit 1; } ;;
        lists-empty)
            case $got in
                "loaded: "*) ;; # found in the configured libdir: not the build tree
                *"$empty"*) ;;
                *) echo "FAIL: the error does not list $empty"; exit 1 ;;
            esac ;;
    esac
}
for name in ${modules:-gomp}; do
    if [ -n "$modules" ]; then
        probe shared "$name" - prefix
        probe static "$name" "$libdir" prefix
    fi
    probe static "$name" "$empty" lists-empty
    if [ -n "$modules" ]; then
        probe shared "$name" "$empty" prefix
    else
        probe shared "$name" "$empty" lists-empty
    fi
done

# The shared libraries on a machine without hwloc's .pc file and library
# where CMake and pkg-config look: PKG_CONFIG_LIBDIR replaces pkg-config's
# whole search path with the prefix, CMAKE_IGNORE_PATH hides the folders
# that hold hwloc and libsde from every find_* call. find_package needs
# neither. pkg-config needs hwloc's .pc file when ultrapool was built with
# hwloc (its modules name hwloc in Requires.private): there it must refuse
# them naming hwloc, and the pkg-config consumers are left out.
echo "== shared consumers without hwloc's or libsde's development files"
hide=""
for lib in hwloc sde; do
    for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib \
             /lib/x86_64-linux-gnu /lib/aarch64-linux-gnu /lib64 /lib /usr/local/lib \
             /usr/local/lib64; do
        if ls "$d/lib$lib".* >/dev/null 2>&1; then
            hide="$hide${hide:+;}$d;$d/pkgconfig"
        fi
    done
done
if PKG_CONFIG_LIBDIR=$libdir/pkgconfig PKG_CONFIG_PATH= pkg-config --exists hwloc; then
    echo "FAIL: hwloc is still visible to pkg-config"
    exit 1
fi
nodev_pc=ON
nodev_n=4
if pc --print-requires-private ultrapool | grep -q '^hwloc'; then
    if why=$(PKG_CONFIG_LIBDIR=$libdir/pkgconfig PKG_CONFIG_PATH='' \
             pkg-config --exists --print-errors ultrapool-parallel 2>&1); then
        echo "FAIL: pkg-config accepts ultrapool-parallel without hwloc's .pc"
        exit 1
    fi
    why=$(printf '%s' "$why" | tr -s ' \n' '  ')
    case $why in
        *hwloc*) echo "pkg-config without hwloc's .pc file: $why" ;;
        *) echo "FAIL: pkg-config does not name hwloc: $why"; exit 1 ;;
    esac
    nodev_pc=OFF
    nodev_n=2
fi
PKG_CONFIG_LIBDIR=$libdir/pkgconfig PKG_CONFIG_PATH= \
    cmake -S "$src/tests/consumer" -B "$out-nodev" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DUP_CONSUMER_SHARED_ONLY=ON -DCMAKE_IGNORE_PATH="$hide" \
    -DUP_CONSUMER_PKGCONFIG=$nodev_pc >"$out-nodev.log" 2>&1 || { cat "$out-nodev.log"; exit 1; }
cmake --build "$out-nodev" >>"$out-nodev.log" 2>&1 || { cat "$out-nodev.log"; exit 1; }
run_all "$out-nodev" $nodev_n

# The module file: <datadir>/modulefiles/ultrapool/<version>.lua, written
# for this prefix. Under Lmod, a program is then built with pkg-config and
# run with no path set by hand: the module alone provides them.
echo "== the module file"
modfile=$(find "$prefix" -path "*/modulefiles/ultrapool/$version.lua" | head -1)
if [ -z "$version" ] || [ ! -f "$modfile" ]; then
    echo "FAIL: no modulefiles/ultrapool/$version.lua under $prefix"
    exit 1
fi
echo "$modfile"
mandir=$(dirname "$(dirname "$(find "$prefix" -path "*/man1/ultrapool-topo.1" | head -1)")")
for want in "local root = \"$prefix\"" "setenv(\"ULTRAPOOL_ROOT\", root)" \
            "prepend_path(\"PATH\", \"$prefix/bin\")" \
            "prepend_path(\"LD_LIBRARY_PATH\", \"$libdir\")" \
            "prepend_path(\"PKG_CONFIG_PATH\", \"$libdir/pkgconfig\")" \
            "prepend_path(\"CMAKE_PREFIX_PATH\", root)" \
            "prepend_path(\"MANPATH\", \"$mandir\")"; do
    grep -qxF "$want" "$modfile" || { echo "FAIL: $modfile lacks the line: $want"; exit 1; }
done
moddir=${modfile%/ultrapool/*}
lmod_init=""
for f in ${LMOD_PKG:+"$LMOD_PKG/init/sh"} /usr/share/lmod/lmod/init/sh \
         /opt/apps/lmod/lmod/init/sh /usr/local/lmod/lmod/init/sh; do
    if [ -f "$f" ]; then
        lmod_init=$f
        break
    fi
done
if [ -n "$lmod_init" ]; then
    (
        set +eu # Lmod's shell code reads unset variables and tests statuses
        unset PKG_CONFIG_PATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH ULTRAPOOL_ROOT
        # shellcheck source=/dev/null # Lmod's own
        . "$lmod_init"
        module use "$moddir"
        module load "ultrapool/$version"
        echo "module load ultrapool/$version (Lmod): ULTRAPOOL_ROOT=${ULTRAPOOL_ROOT-}"
        [ "${ULTRAPOOL_ROOT-}" = "$prefix" ] || { echo "FAIL: ULTRAPOOL_ROOT is not $prefix"; exit 1; }
        [ "$(command -v ultrapool-topo)" = "$prefix/bin/ultrapool-topo" ] ||
            { echo "FAIL: ultrapool-topo on PATH is $(command -v ultrapool-topo)"; exit 1; }
        mkdir -p "$out-module"
        exe=$out-module/consumer_c_module
        flags=$(pkg-config --cflags --libs ultrapool-parallel) ||
            { echo "FAIL: pkg-config does not find ultrapool-parallel"; exit 1; }
        echo "pkg-config --cflags --libs ultrapool-parallel: $flags"
        # shellcheck disable=SC2086 # the flags are words
        ${CC:-cc} -std=c11 -O2 "$src/tests/consumer/consumer.c" $flags -o "$exe" ||
            { echo "FAIL: the pkg-config build"; exit 1; }
        if command -v ldd >/dev/null 2>&1; then
            got=$(ldd "$exe" | awk '$1 ~ /^libultrapool_par\.so/ {print $3}')
            [ "$(dirname "$got")" = "$libdir" ] ||
                { echo "FAIL: $exe loads libultrapool_par from '$got'"; exit 1; }
        fi
        printf '%s: ' "$(basename "$exe")"
        "$exe" || { echo "FAIL: $exe"; exit 1; }
    ) || exit 1
else
    echo "note: Lmod is not installed (Debian: lmod); the module file was checked, not loaded"
fi
echo "consumer: all programs built and ran against the installed tree"
