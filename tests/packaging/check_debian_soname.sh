#!/bin/sh
# The Debian runtime package is named after the libraries' SONAME
# (docs/packaging.md, "Shared library versions"): libultrapool<N> holds
# libultrapool.so.<N> and libultrapool_par.so.<N>, where N is the
# SOVERSION the build gives them (the major version). So the version bump
# that changes N cannot leave debian/ behind: debian/control declares
# libultrapool<N> and no other libultrapool<digits> package, every package
# that depends on it names it, debian/libultrapool<N>.install installs the
# two libraries, and debian/rules writes its shlibs entry. Files only: no
# package is built (test_debian_package does that).
# Arguments: source dir, SOVERSION.
set -u
src=$1
so=$2
deb=$src/debian
pkg=libultrapool$so
fail=0
bad() {
    echo "FAIL: $*"
    fail=1
}
[ -f "$deb/control" ] || { echo "no $deb/control: skipped"; exit 77; }

# The runtime packages: libultrapool followed by digits only
# (libultrapool-openmp1 is named after libgomp.so.1's own SONAME).
runtime=$(sed -n 's/^Package: *\(libultrapool[0-9][0-9]*\) *$/\1/p' "$deb/control")
[ "$runtime" = "$pkg" ] ||
    bad "debian/control declares '$(echo "$runtime" | tr '\n' ' ' | sed 's/ $//')' as the runtime package; the SONAME says $pkg"
for f in "$deb/control" "$deb/rules"; do
    # shellcheck disable=SC2013 # package names, one word each
    for p in $(grep -o 'libultrapool[0-9][0-9]*' "$f" | sort -u); do
        [ "$p" = "$pkg" ] || bad "$(basename "$f") names $p; the SONAME says $pkg"
    done
done
if [ -f "$deb/$pkg.install" ]; then
    for lib in libultrapool.so libultrapool_par.so; do
        grep -q "/$lib\.\*\$" "$deb/$pkg.install" || bad "debian/$pkg.install does not install $lib.*"
    done
else
    bad "no debian/$pkg.install"
fi
for f in "$deb"/libultrapool[0-9]*.install "$deb"/libultrapool[0-9]*.symbols "$deb"/libultrapool[0-9]*.shlibs; do
    [ -e "$f" ] || continue
    case $(basename "$f") in "$pkg".*) ;; *) bad "debian/$(basename "$f") is named after another SONAME than $pkg" ;; esac
done
grep -qE -- "-p$pkg([^0-9]|\$)" "$deb/rules" || bad "debian/rules writes no shlibs entry for $pkg (dh_makeshlibs -p$pkg)"
[ "$fail" -eq 0 ] && echo "ok: debian/ names the runtime package $pkg after the SONAME libultrapool.so.$so"
exit $fail
