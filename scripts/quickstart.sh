#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Quick start, step one: install the Debian packages the build needs (only
# those missing), bootstrap, configure and build in ./build, then run the
# main job: parkpool hashing the licence texts every Debian machine has,
# with the bundled plugins found in the build tree. Extra configure flags:
# PP_CONFIGURE_FLAGS.
set -eu
cd "$(dirname "$0")/.."

pkgs="build-essential autoconf automake libtool pkg-config libapr1-dev libaprutil1-dev libssl-dev libcunit1-dev spin jq libhiredis-dev redis-server"
if command -v dpkg-query >/dev/null 2>&1; then
    missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' \
            || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        echo "quickstart: installing$missing"
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    fi
else
    echo "quickstart: not a Debian system; make sure these (or their equivalents) are installed:"
    echo "  $pkgs"
fi

./autogen.sh
mkdir -p build
cd build
# shellcheck disable=SC2086 # word splitting of the flags is intended
../configure ${PP_CONFIGURE_FLAGS:-}
make -j"$(nproc 2>/dev/null || echo 2)"
./parkpool run -j 4 hash.sha1 /usr/share/common-licenses/*
