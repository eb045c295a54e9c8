#!/bin/sh
# The symbol versions of the installed shared libraries (cmake/Abi.cmake,
# docs/packaging.md "Shared library versions"), read with readelf.
#
# Arguments: the public node, the internal node, then the libraries:
#   lib=<file>   one of ultrapool's own libraries or modules. It defines
#                no version nodes but those two; every symbol it exports
#                carries one of them: up_layer_* (runtime/layer/up_layer_abi.h)
#                and up_omp_backend (the backend modules' entry,
#                pragmas/interop/up_omp_ops.h) the internal one, every
#                other up_ symbol the public one; it exports no up__
#                symbol and nothing without the up_ prefix;
#   user=<file>  a library built on them that keeps version nodes of its
#                own (libgomp.so.1, GCC's): only what it asks of them is
#                checked, as for every lib= too:
# every up_ symbol it takes from another library asks for a version, the
# internal node for up_layer_*, the public one for the rest, so that the
# loader pairs it only with a libultrapool.so of the same release.
# Exits 77 (skipped) where readelf is missing or a library is not ELF.
set -u
[ $# -ge 3 ] || { echo "usage: $0 PUBLIC_NODE INTERNAL_NODE lib=FILE|user=FILE..."; exit 2; }
public=$1
internal=$2
shift 2
readelf=${READELF:-readelf}
command -v "$readelf" >/dev/null 2>&1 || { echo "$readelf not found: skipped"; exit 77; }

# The node a symbol belongs in.
node_of() {
    case $1 in
    up_layer_* | up_omp_backend) echo "$internal" ;;
    *) echo "$public" ;;
    esac
}

fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}
for arg in "$@"; do
    kind=${arg%%=*}
    lib=${arg#*=}
    name=$(basename "$lib")
    case $kind in
    lib | user) ;;
    *) echo "usage: '$arg' is neither lib=FILE nor user=FILE"; exit 2 ;;
    esac
    if [ ! -f "$lib" ]; then
        bad "$lib does not exist"
        continue
    fi
    if ! "$readelf" -h "$lib" >/dev/null 2>&1; then
        echo "$name is not ELF: no symbol versions to check, skipped"
        exit 77
    fi

    # The dynamic symbols as "section name[@[@]version]": readelf -W prints
    # one per line, the section index (UND, ABS or a number) just before
    # the name, and " (n)" after the version of an undefined one.
    syms=$("$readelf" --dyn-syms -W "$lib" | sed 's/ ([0-9]*)$//' |
        awk '$1 ~ /^[0-9]+:$/ && ($5 == "GLOBAL" || $5 == "WEAK" || $5 == "UNIQUE") {print $(NF-1), $NF}')

    # What it asks of ultrapool's libraries.
    asked=0
    for s in $(echo "$syms" | awk '$1 == "UND" && $2 ~ /^up_/ {print $2}'); do
        base=${s%%@*}
        want=$(node_of "$base")
        if [ "$s" = "$base" ]; then
            bad "$name takes $base unversioned (expected $base@$want)"
        elif [ "${s#*@}" != "$want" ]; then
            bad "$name takes $s (expected $base@$want)"
        fi
        asked=$((asked + 1))
    done
    if [ "$kind" = user ]; then
        [ "$asked" -gt 0 ] || bad "$name takes no up_ symbol: is it linked to libultrapool.so?"
        echo "$name: $asked up_ symbols taken, each with its version"
        continue
    fi

    # Its version nodes: those of the version definition section, but for
    # the base one (the library's own name).
    nodes=$("$readelf" -V -W "$lib" |
        awk '/^Version definition section/ {d = 1; next} /^Version/ {d = 0}
             d && /Name:/ && !/Flags: BASE/ {sub(/.*Name: */, ""); print $1}')
    if [ -z "$nodes" ]; then
        bad "$name defines no version nodes (was it linked with its version script?)"
        continue
    fi
    for n in $nodes; do
        [ "$n" = "$public" ] || [ "$n" = "$internal" ] ||
            bad "$name defines the version node $n (expected $public or $internal)"
    done

    n_public=0
    n_internal=0
    for entry in $(echo "$syms" | awk '$1 != "UND" {print $1 "|" $2}'); do
        ndx=${entry%%|*}
        s=${entry#*|}
        base=${s%%@*}
        # The linker's own symbol for each node it defines.
        if [ "$ndx" = ABS ] && echo "$nodes" | grep -qxF "$base"; then
            continue
        fi
        case $base in
        up__*) bad "$name exports the internal symbol $s"; continue ;;
        up_*) ;;
        *) bad "$name exports $s, which lacks the up_ prefix"; continue ;;
        esac
        want=$(node_of "$base")
        case $s in
        "$base@@$want") ;;
        "$base") bad "$name exports $base unversioned (expected $base@@$want)"; continue ;;
        *) bad "$name exports $s (expected $base@@$want)"; continue ;;
        esac
        if [ "$want" = "$public" ]; then
            n_public=$((n_public + 1))
        else
            n_internal=$((n_internal + 1))
        fi
    done
    [ $((n_public + n_internal)) -gt 0 ] || bad "$name exports nothing"
    echo "$name: $n_public symbols in $public, $n_internal in $internal, $asked taken from elsewhere"
done
exit $fail
