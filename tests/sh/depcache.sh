#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tools/win32/depcache.sh, the cache of the Windows build's dependencies:
# an entry is valid only sealed and exactly as sealed; anything else
# (never sealed, a file changed, added, removed or unreadable) makes the
# cross build build it again. Keys follow their inputs.
set -u
. "${top_srcdir:-.}/tests/support/testlib.sh"
dc="${top_srcdir:-.}/tools/win32/depcache.sh"
work=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$work"; rm -rf "$work"' EXIT
e=$work/deps-x

valid() { sh "$dc" valid "$e" && echo valid || echo invalid; }
fresh() {
    rm -rf "$e"; mkdir -p "$e/prefix/lib/pkgconfig" "$e/prefix/bin"
    echo "Name: APR" > "$e/prefix/lib/pkgconfig/apr-1.pc"
    printf 'MZ\0\1' > "$e/prefix/bin/libapr-1.dll"
    echo x > "$e/prefix/bin/name with blanks.dll"
}

fresh
check "an entry never sealed is not valid" "$(valid)" invalid
sh "$dc" seal "$e"
check "a sealed entry is valid" "$(valid)" valid
echo more >> "$e/prefix/lib/pkgconfig/apr-1.pc"
check "a changed file makes it invalid" "$(valid)" invalid
fresh; sh "$dc" seal "$e"; echo y > "$e/prefix/bin/extra.dll"
check "an added file makes it invalid" "$(valid)" invalid
fresh; sh "$dc" seal "$e"; rm "$e/prefix/bin/libapr-1.dll"
check "a removed file makes it invalid" "$(valid)" invalid
fresh; sh "$dc" seal "$e"; rm "$e/SEALED"
check "an entry whose seal is gone is invalid" "$(valid)" invalid
fresh; sh "$dc" seal "$e"; : > "$e/MANIFEST"
check "an empty manifest is invalid" "$(valid)" invalid
fresh; sh "$dc" seal "$e"; rm "$e/prefix/bin/libapr-1.dll"; mkdir "$e/prefix/bin/libapr-1.dll"
check "a file that cannot be read as one is invalid" "$(valid)" invalid
if [ "$(id -u)" -ne 0 ]; then
    fresh; sh "$dc" seal "$e"; chmod 000 "$e/prefix/bin/libapr-1.dll"
    check "an unreadable file makes it invalid" "$(valid)" invalid
fi
rm -rf "$e"
check "a missing entry is invalid" "$(valid)" invalid

k1=$(echo "apr_1.7.2-3.dsc SHA256:aa" | sh "$dc" key)
k2=$(echo "apr_1.7.2-3.dsc SHA256:aa" | sh "$dc" key)
k3=$(echo "apr_1.7.2-4.dsc SHA256:bb" | sh "$dc" key)
check "the same inputs give the same key" "$k1" "$k2"
[ "$k1" != "$k3" ] && ok "other inputs give another key" || bad "other inputs give another key: $k1"
check "a key is 16 hex digits" "$(echo "$k1" | grep -cE '^[0-9a-f]{16}$')" 1
summary
