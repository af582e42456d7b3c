#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Cross-build parkpool for 64-bit Windows with mingw-w64 on Debian, from
# scratch, and run its test suite and CLI tests under wine:
#
#   tools/win32/cross-build.sh [WORKDIR]        (default: ./build-win32)
#
# 1. installs what is missing: gcc-mingw-w64-x86-64, wine, cmake, ...
# 2. fetches APR, APR-util, expat, CUnit and OpenSSL sources from Debian's archive
#    (apt-get source; a deb-src entry for the configured suites is added
#    if there is none),
# 3. cross-builds them into WORKDIR/prefix (APR and APR-util with their
#    CMake builds and the patches beside this script; expat with CMake;
#    CUnit with its own configure; OpenSSL's libcrypto, static, with its
#    own Configure), once: later runs reuse them,
# 4. configures parkpool with --host=x86_64-w64-mingw32 (win32 park
#    backend), builds the DLL, the static library, parkpool.exe, the
#    bundled plugins as DLLs, the test plugins, pp_unit.exe and pp_api.exe,
# 5. runs pp_unit.exe and pp_api.exe (every suite), tests/sh/cli.sh, run.sh,
#    hash.sh and tests/sh/ppservice_wine.sh
#    (the service example under wine's service manager) under wine, and
#    fails unless every test passed.
#
# Extra configure flags for parkpool: PP_CONFIGURE_FLAGS.
#
# PP_WIN32_CACHE=DIR keeps the dependencies' built prefix (step 3) in DIR,
# outside WORKDIR, keyed by the Debian source versions apt would fetch,
# the patches beside this script, this script and the cross compiler:
# a run whose key matches a whole, readable entry (tools/win32/depcache.sh)
# builds none of them; any other builds them into a new entry, as a run
# without a cache builds them into WORKDIR/prefix.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mkdir -p "${1:-$top/build-win32}" && cd "${1:-$top/build-win32}" && pwd)
host=x86_64-w64-mingw32
jobs=$(nproc 2>/dev/null || echo 2)
prefix=$work/prefix
src=$work/src
say() { printf '\n--- win32: %s (%s)\n' "$*" "$(date -u +%H:%M:%S)"; }

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

# ------------------------------------------------------------ 1. packages
pkgs="gcc-mingw-w64-x86-64 wine wine64 cmake dpkg-dev patch bzip2 xz-utils \
build-essential autoconf automake libtool pkg-config"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing$missing"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

# ------------------------------------------------------------ 2. sources
deps="apr apr-util expat cunit openssl"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
deb_src() {   # make sure apt knows the sources of the configured suites
    if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        say "adding deb-src entries for the configured suites"
        # Security suites left out: the mirror may serve no sources for them
        # (seen: 404), and the main suite's versions are what we patch.
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] || continue
            awk 'BEGIN { RS = ""; ORS = "\n\n" }
                 /Types: *deb/ && !/security/ { sub(/Types: *deb/, "Types: deb-src"); print }' "$f"
        done | $sudo tee /etc/apt/sources.list.d/parkpool-deb-src.sources >/dev/null
        if [ -f /etc/apt/sources.list ]; then
            sed -n '/security/d; s/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list \
                | $sudo tee /etc/apt/sources.list.d/parkpool-deb-src.list >/dev/null
        fi
        $sudo apt-get update -qq
    fi
}

cached=""
if [ -n "${PP_WIN32_CACHE:-}" ]; then
    deb_src
    # What apt would fetch (file names and hashes, not the mirror's host),
    # the patches, this script and the compiler that builds them.
    key=$({ for pkg in $deps; do
                apt-get source --print-uris "$pkg" 2>/dev/null | awk '{ print $2, $4 }'
            done
            cat "$top"/tools/win32/*.patch "$top/tools/win32/cross-build.sh"
            $host-gcc --version | head -n 1; } | sh "$top/tools/win32/depcache.sh" key)
    entry=$PP_WIN32_CACHE/deps-$key
    prefix=$entry/prefix
    if sh "$top/tools/win32/depcache.sh" valid "$entry"; then
        say "dependencies from the cache: $entry"
        cached=1
    else
        [ -d "$entry" ] && say "cache entry $entry is not whole: building it again"
        # Other keys' entries are stale: one entry is kept.
        rm -rf "$PP_WIN32_CACHE"/deps-*
        mkdir -p "$prefix"
    fi
fi

mkdir -p "$src" "$prefix/lib/pkgconfig"
if [ -z "$cached" ] && ! ls "$src"/apr_*.orig.tar.* "$src"/apr-util_*.orig.tar.* \
        "$src"/cunit_*.orig.tar.* "$src"/expat_*.orig.tar.* "$src"/openssl_*.orig.tar.* \
        >/dev/null 2>&1; then
    deb_src
    say "fetching APR, APR-util, expat, CUnit and OpenSSL sources from Debian"
    for pkg in $deps; do
        # A security update's sources may be missing from the mirror: then
        # the release's own version.
        (cd "$src" && { apt-get source --download-only "$pkg" >/dev/null 2>&1 \
            || apt-get source --download-only "$pkg/$codename" >/dev/null 2>&1; }) || {
            echo "win32: apt-get source $pkg failed (is a deb-src entry configured?)" >&2; exit 1; }
    done
fi

unpack() {   # unpack NAME: extract NAME_*.orig.tar.*, print the folder
    tarball=$(ls "$src"/"$1"_*.orig.tar.* | grep -v '\.asc$' | head -n 1)
    dir=$src/unpacked/$1
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        tar xf "$tarball" -C "$dir"
    fi
    echo "$dir/$(ls "$dir" | head -n 1)"
}

export WINEPREFIX="$work/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
if [ ! -d "$WINEPREFIX" ]; then
    say "creating the wine prefix"
    wineboot -i >/dev/null 2>&1
fi

cat > "$work/mingw.cmake" <<EOF
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_C_COMPILER $host-gcc)
set(CMAKE_RC_COMPILER $host-windres)
set(CMAKE_FIND_ROOT_PATH /usr/$host $prefix)
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
EOF
cmake_build() {   # cmake_build NAME SOURCE-DIR CMAKE-ARGS...
    name=$1 dir=$2
    shift 2
    rm -rf "$work/b-$name"
    # Their warnings are theirs: kept in a log, shown if the build fails.
    { cmake -S "$dir" -B "$work/b-$name" -DCMAKE_TOOLCHAIN_FILE="$work/mingw.cmake" \
          -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release "$@" \
      && cmake --build "$work/b-$name" -j "$jobs" \
      && cmake --install "$work/b-$name"; } > "$work/b-$name.log" 2>&1 || {
        tail -n 40 "$work/b-$name.log" >&2; echo "win32: building $name failed" >&2; exit 1; }
}

# ------------------------------------------------------------ 3. dependencies
if [ ! -f "$prefix/.deps-done" ]; then
    apr=$(unpack apr)
    case $apr in */apr-1.7.2) ;; *) echo "win32: the APR patch is for 1.7.2, not $apr" >&2; exit 1 ;; esac
    [ -f "$apr/.patched" ] || { patch -s -p1 -d "$apr" < "$top/tools/win32/apr-1.7.2-mingw.patch"; : > "$apr/.patched"; }
    say "APR (CMake)"
    cmake_build apr "$apr" -DMIN_WINDOWS_VER=0x0A00 -DAPR_HAVE_IPV6=ON \
        -DCMAKE_C_FLAGS="-DCOM_NO_WINDOWS_H"

    say "expat (CMake, static)"
    expat=$(unpack expat)
    [ -f "$expat/CMakeLists.txt" ] || expat=$expat/expat    # Debian ships the git layout
    cmake_build expat "$expat" -DEXPAT_SHARED_LIBS=OFF -DEXPAT_BUILD_TOOLS=OFF \
        -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_DOCS=OFF

    apu=$(unpack apr-util)
    case $apu in */apr-util-1.6.3) ;; *) echo "win32: the APR-util patch is for 1.6.3, not $apu" >&2; exit 1 ;; esac
    [ -f "$apu/.patched" ] || { patch -s -p1 -d "$apu" < "$top/tools/win32/apr-util-1.6.3-mingw.patch"; : > "$apu/.patched"; }
    say "APR-util (CMake)"
    cmake_build apu "$apu" -DCMAKE_PREFIX_PATH="$prefix" \
        -DAPR_LIBRARIES="$prefix/lib/liblibapr-1.dll.a" -DAPU_HAVE_ODBC=OFF -DAPR_HAS_LDAP=OFF \
        -DCMAKE_C_FLAGS="-DCOM_NO_WINDOWS_H -DXML_STATIC"

    say "CUnit (its own configure, static)"
    cunit=$(unpack cunit)
    (cd "$cunit" && ./configure -q --host=$host --disable-shared --prefix="$prefix" \
        && make -j"$jobs" && make install) > "$work/b-cunit.log" 2>&1 || {
        tail -n 40 "$work/b-cunit.log" >&2; echo "win32: building CUnit failed" >&2; exit 1; }

    # APR's CMake build writes no pkg-config files; parkpool's configure
    # looks for apr-1 and apr-util-1 there first.
    cat > "$prefix/lib/pkgconfig/apr-1.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: APR
Description: Apache Portable Runtime (mingw-w64 cross build)
Version: 1.7.2
Libs: -L\${libdir} -llibapr-1 -lws2_32 -lrpcrt4 -lmswsock
Cflags: -I\${includedir}
EOF
    cat > "$prefix/lib/pkgconfig/apr-util-1.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: APR-util
Description: APR utilities (mingw-w64 cross build)
Version: 1.6.3
Libs: -L\${libdir} -llibaprutil-1
Cflags: -I\${includedir}
EOF
    : > "$prefix/.deps-done"
fi

# libcrypto (the hash plugin's digests), as a DLL: libtool links a DLL only
# against DLLs. Its own marker, so that a work folder made before it was
# needed gets it too.
if [ ! -f "$prefix/.openssl-done" ]; then
    say "OpenSSL libcrypto (its Configure)"
    ossl=$(unpack openssl)
    (cd "$ossl" && ./Configure mingw64 no-tests no-module \
            --cross-compile-prefix=$host- --prefix="$prefix" --libdir=lib \
        && make -j"$jobs" build_libs && make install_dev install_runtime_libs) \
        > "$work/b-openssl.log" 2>&1 || {
        tail -n 40 "$work/b-openssl.log" >&2; echo "win32: building OpenSSL failed" >&2; exit 1; }
    : > "$prefix/.openssl-done"
fi
if [ -n "${PP_WIN32_CACHE:-}" ] && [ -z "$cached" ]; then
    sh "$top/tools/win32/depcache.sh" seal "$entry"
    say "dependencies kept in the cache: $entry"
fi

# ------------------------------------------------------------ 4. parkpool
say "parkpool: configure --host=$host, make, make check TESTS="
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh >/dev/null)
mkdir -p "$work/parkpool"
cd "$work/parkpool"
# -static-libgcc: no libgcc_s_seh-1.dll to ship beside the DLLs (the C11
# thread-locals go through libgcc's emutls).
# shellcheck disable=SC2086 # word splitting of the flags is intended
PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" "$top/configure" -q --host=$host \
    --prefix="$work/install" LDFLAGS="-static-libgcc" ${PP_CONFIGURE_FLAGS:-} >/dev/null
make -s -j"$jobs" >/dev/null
make -s -j"$jobs" check TESTS= >/dev/null
make -s install >/dev/null
for f in .libs/libparkpool-4.dll .libs/libparkpool.a .libs/libparkpool.dll.a parkpool.exe \
         plugins/.libs/hash.dll plugins/.libs/exec.dll plugins/.libs/demo.dll \
         tests/plugins/.libs/tp_good.dll .libs/ppservice.exe; do
    [ -f "$f" ] || { echo "win32: $f was not built" >&2; exit 1; }
done

# ------------------------------------------------------------ 5. tests under wine
export WINEPATH="$prefix/bin;$work/parkpool/.libs"
# pp_unit links the core statically, pp_api the DLL (so libtool puts
# the real program in .libs).
for t in pp_unit pp_api; do
    exe=tests/.libs/$t.exe
    [ -f "$exe" ] || exe=tests/$t.exe
    [ -f "$exe" ] || { echo "win32: $t.exe was not built" >&2; exit 1; }
    say "$t.exe under wine"
    rc=0
    wine "$exe" > "$t.log" 2>&1 || rc=$?
    sed -n '/Run Summary/,$p' "$t.log"
    # Both the exit status and CUnit's own summary: every test ran and passed.
    if [ "$rc" -ne 0 ] || ! awk '
            $1 == "suites"  { s = ($2 == $3 && $5 == 0) }
            $1 == "tests"   { t = ($2 == $3 && $2 == $4 && $5 == 0 && $2 > 0) }
            $1 == "asserts" { a = ($2 == $3 && $2 == $4 && $5 == 0) }
            END { exit !(s && t && a) }' "$t.log"; then
        grep -B2 -A8 'FAILED' "$t.log" | head -n 80 >&2 || true
        echo "win32: $t.exe failed under wine (exit $rc)" >&2
        exit 1
    fi
done

for t in cli run hash; do
    say "tests/sh/$t.sh against parkpool.exe under wine"
    PP_CLI=.libs/parkpool.exe PP_WRAP=wine PP_WINDOWS=1 sh "$top/tests/sh/$t.sh" > "$t.log" 2>&1 || {
        cat "$t.log" >&2; echo "win32: tests/sh/$t.sh failed under wine" >&2; exit 1; }
    grep -v '^PASS' "$t.log"
done

say "tests/sh/ppservice_wine.sh: the service under wine's service manager"
sh "$top/tests/sh/ppservice_wine.sh" "$work/parkpool" "$prefix" > service.log 2>&1 || {
    cat service.log >&2; echo "win32: service tests failed under wine" >&2; exit 1; }
grep -v '^PASS' service.log
say "all Windows tests passed"
