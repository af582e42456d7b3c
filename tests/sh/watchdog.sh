#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The per-test watchdog of the CUnit programs (tests/support/watchdog.h):
# tests/pp_hang runs four tests of a third of the limit each, then one that
# never returns. The program must end within a bound, failed, with the
# hanging test's suite and title on stderr, and the four before it passed
# (each under the limit, together over it).
set -u
. "${top_srcdir:-.}/tests/support/testlib.sh"
prog=${top_builddir:-.}/tests/pp_hang
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

rc=0
PP_TEST_TIMEOUT=3 timeout 60 "$prog" >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then ok "a hang ends the program, failed ($rc)"
else bad "a hang ends the program, failed: status $rc"; fi
if grep -q '^HANG: watchdog / a test that never returns: still running after 3 s' "$out"
then ok "the hang is named by suite and title"
else bad "the hang is named by suite and title:"; cat "$out"; fi
check "the four tests under the limit passed" "$(grep -c 'passed$' "$out")" 4
if PP_TEST_TIMEOUT=soon timeout 2 "$prog" 2>&1 | grep -q 'PP_TEST_TIMEOUT=soon is not a number'
then ok "a bad PP_TEST_TIMEOUT is named"
else bad "a bad PP_TEST_TIMEOUT is named"; fi
summary
