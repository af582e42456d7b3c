# SPDX-License-Identifier: Apache-2.0
# Helpers of the shell tests (tests/sh/cli.sh, tests/sh/daemon.sh,
# tests/sh/ppservice_wine.sh): PASS/FAIL lines, counts, and waiting for a log.
# Source it, then end with `summary`.
passed=0
failed=0
ok()    { echo "PASS: $1"; passed=$((passed + 1)); }
bad()   { echo "FAIL: $1"; failed=$((failed + 1)); }
check() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }
# wait_for FILE PATTERN [TENTHS]: until PATTERN is in FILE (15 s by default)
wait_for() {
    _i=0
    while [ $_i -lt "${3:-150}" ]; do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1; _i=$((_i + 1))
    done
    return 1
}
summary() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
