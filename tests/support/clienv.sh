# SPDX-License-Identifier: Apache-2.0
# What every shell test of the parkpool tool starts with (tests/sh/cli.sh,
# run.sh, hash.sh): run from the build tree, so the bundled plugins are
# found without -P. tools/win32/cross-build.sh runs them under wine too:
# PP_CLI names the program, PP_WRAP the wrapper that runs it, PP_WINDOWS=1
# leaves out what only POSIX has (ptys, ulimit, SIGPIPE, odd file names).
# Source it; it sources testlib.sh.
set -u
ppbin="${PP_CLI:-${top_builddir:-.}/parkpool}"
case $ppbin in /*) ;; *) ppbin=$(pwd)/$ppbin ;; esac    # tests cd
windows="${PP_WINDOWS:-0}"
if [ "$windows" = 1 ]; then dso=.dll sep=';'; else dso=.so sep=:; fi
pp() { ${PP_WRAP:-} "$ppbin" "$@"; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/testlib.sh"
json_field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1" | tail -n 1; }
# contains FILE TEXT NAME: a PASS when FILE holds the fixed string TEXT
contains() { if grep -qF -- "$2" "$1"; then ok "$3"; else bad "$3: no '$2' in: $(head -c 600 "$1")"; fi; }
# Ctrl-C: the handler is in place once a task has run, so each run's first
# task prints "ready" and the signal waits for it (a background job
# ignores SIGINT until then). Run the program itself in the background
# (${PP_WRAP:-} "$ppbin" ... &), not pp, so that $! is its pid.
ready() {   # ready FILE: wait (30 s at most) for the run's first line in FILE (text or --json)
    n=0
    while ! grep -q '^ready$\|"output":\["ready"\]' "$1" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.1; n=$((n + 1))
    done
}
# sigint_until FILE TEXT PID: send SIGINT until TEXT is in FILE (20 s at most).
sigint_until() {
    n=0
    while ! grep -q "$2" "$1" 2>/dev/null && [ $n -lt 100 ]; do
        kill -INT "$3" 2>/dev/null; sleep 0.2; n=$((n + 1))
    done
}
