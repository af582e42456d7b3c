#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A build folder configured for one prefix, built, configured again for
# another and installed there: the installed tool must find its library
# (the run path libtool records at link time) and its plugins (the paths
# built into it), both under the second prefix. Not part of make check (it
# runs configure twice); .ci/run runs it. usage: reconfigure.sh SRCDIR WORKDIR
set -eu
top=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work/b"
cd "$work/b"
"$top/configure" -q --prefix="$work/first" >/dev/null
make -s -j2 >/dev/null 2>&1
"$top/configure" -q --prefix="$work/second" >/dev/null
make -s -j2 >/dev/null 2>&1
make -s install >/dev/null 2>&1
if "$work/second/bin/parkpool" plugins 2>&1 | grep -q "($work/second/lib/parkpool/plugins/demo.so)"; then
    echo "PASS: reconfigured for another prefix, the installed tool finds its library and plugins"
    echo "1 passed, 0 failed"
else
    echo "FAIL: after a reconfigure, the installed parkpool says:"
    "$work/second/bin/parkpool" plugins 2>&1 | head -5
    echo "0 passed, 1 failed"
    exit 1
fi
