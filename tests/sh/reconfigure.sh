#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A build folder configured for one prefix, built, configured again for
# another and installed there: the installed tool must find its library
# (the run path libtool records at link time) and its plugins (the paths
# built into it), both under the second prefix; parkpoold, its man page and
# its systemd unit too, the unit naming them. Not part of make check (it
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
passed=0
failed=0
ok()  { echo "PASS: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL: $1"; failed=$((failed + 1)); }
if "$work/second/bin/parkpool" plugins 2>&1 | grep -q "($work/second/lib/parkpool/plugins/demo.so)"; then
    ok "reconfigured for another prefix, the installed tool finds its library and plugins"
else
    bad "after a reconfigure, the installed parkpool says: $("$work/second/bin/parkpool" plugins 2>&1 | head -5)"
fi
# The daemon, its man page and its unit, with the second prefix's paths.
unit="$work/second/lib/systemd/system/parkpoold.service"
if [ -x "$work/second/sbin/parkpoold" ] && [ -f "$work/second/share/man/man8/parkpoold.8" ] \
   && grep -q "^ExecStart=$work/second/sbin/parkpoold .*-P $work/second/lib/parkpool/plugins" "$unit"; then
    ok "parkpoold, parkpoold.8 and parkpoold.service installed with this prefix's paths"
else
    bad "parkpoold not installed as it should be: $(ls -R "$work/second" | head -20); $(grep ExecStart "$unit" 2>&1)"
fi
# systemd's own check of the unit, where systemd is installed (not in
# every container): its syntax, and that the program it names exists
# (its Documentation= man page is not on the system's man path here).
if command -v systemd-analyze >/dev/null 2>&1; then
    if out=$(systemd-analyze verify "$unit" "${unit%.service}.socket" 2>&1 | grep -v "man parkpoold(8)"); [ -z "$out" ]; then
        ok "systemd-analyze verify: no complaint"
    else
        bad "systemd-analyze verify: $out"
    fi
    score=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for parkpoold.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
    case $score in
        *" OK"|*" SAFE"|*" PERFECT") ok "systemd-analyze security: $score" ;;
        "") ok "systemd-analyze security --offline: not supported by this systemd, skipped" ;;
        *) bad "systemd-analyze security: $score (want OK or better)" ;;
    esac
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
