#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The cache of cross-built dependencies that tools/win32/cross-build.sh
# keeps when PP_WIN32_CACHE names a folder:
#
#   depcache.sh key    print a key for what stdin holds (the inputs a build
#                      depends on: source versions, patches, the script)
#   depcache.sh valid DIR
#                      exit 0 when DIR holds a whole, readable build: its
#                      seal is there and every file it lists is as sealed
#   depcache.sh seal DIR
#                      list every file under DIR/prefix with its SHA-256
#                      and mark DIR whole; run last, after the build
#
# An entry is DIR = CACHE/deps-KEY: a build interrupted before its seal,
# a file changed or gone, or one that cannot be read is not valid, and
# cross-build.sh then builds the entry again from scratch.
set -eu

case ${1:-} in
key)
    # 16 hex digits are plenty to tell a handful of builds apart.
    sha256sum | cut -c1-16
    ;;
valid)
    dir=${2:?depcache.sh valid DIR}
    [ -f "$dir/SEALED" ] && [ -s "$dir/MANIFEST" ] && [ -d "$dir/prefix" ] || exit 1
    # Every file sealed is there and unchanged, and nothing was added
    # (a stray file in a prefix can change what a build finds).
    (cd "$dir" && sha256sum --quiet --strict -c MANIFEST) >/dev/null 2>&1 || exit 1
    [ "$(cd "$dir" && find prefix -type f | wc -l)" -eq "$(wc -l < "$dir/MANIFEST")" ] || exit 1
    ;;
seal)
    dir=${2:?depcache.sh seal DIR}
    [ -d "$dir/prefix" ] || { echo "depcache.sh: $dir/prefix is not a folder" >&2; exit 1; }
    rm -f "$dir/SEALED"
    (cd "$dir" && find prefix -type f -print0 | sort -z | xargs -0 -r sha256sum) \
        > "$dir/MANIFEST.tmp"
    mv -f "$dir/MANIFEST.tmp" "$dir/MANIFEST"
    : > "$dir/SEALED"
    ;;
*)
    echo "usage: depcache.sh key | valid DIR | seal DIR" >&2
    exit 2
    ;;
esac
