#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Unix service example, end to end: start parkpoold on a Unix socket,
# feed it tasks, reload its plugin folder with SIGHUP, stop it with SIGTERM
# while tasks are queued, and check that every accepted task ran and the
# exit was clean; then a drain that runs out of time.
set -u
top_builddir=${top_builddir:-.}
ppd="$top_builddir/examples/service/unix/parkpoold"
work=$(mktemp -d) || exit 1
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
. "${top_srcdir:-$(dirname "$0")/../../..}/tests/support/testlib.sh"

mkdir "$work/plugins"
cp "$top_builddir/plugins/.libs/demo.so" "$top_builddir/plugins/.libs/hash.so" "$work/plugins/"
sock="unix:$work/ppd.sock"
: > "$work/ppd.sock"    # a stale socket file from an earlier run is replaced
"$ppd" -l "$sock" -P "$work/plugins" -j 2 -o "$work/out" -t 20 2> "$work/log" &
pid=$!
wait_for "$work/log" "ready" && ok "daemon starts and listens" || bad "daemon did not start: $(cat "$work/log")"

# --- tasks in; each line answered
i=0; : > "$work/jobs"
while [ $i -lt 500 ]; do echo "demo.echo line-$i" >> "$work/jobs"; i=$((i + 1)); done
printf 'demo.sleep 20\n# a comment\n\ndemo.nope x\nexec.sh echo hi\ndemo.echo\n' >> "$work/jobs"
"$ppd" --send "$sock" < "$work/jobs" > "$work/acks"
check "client exit status with refused lines" "$?" 1
check "accepted lines answered ok 1..501" "$(grep -c '^ok ' "$work/acks")" 501
check "last ok is 501" "$(grep '^ok ' "$work/acks" | tail -n 1)" "ok 501"
grep -q "^error: unknown task type 'demo.nope' (did you mean 'demo.echo'?)" "$work/acks" \
    && ok "unknown type refused with a suggestion" || bad "no suggestion: $(grep error "$work/acks")"
grep -q "^error: unknown task type 'exec.sh'" "$work/acks" \
    && ok "exec.sh unknown before the reload" || bad "exec.sh: $(grep exec "$work/acks")"
grep -q "^error: expected 'TYPE ARG'" "$work/acks" && ok "line without argument refused" \
    || bad "no error for a bare type"

# --- SIGHUP: the folder again, now with exec
cp "$top_builddir/plugins/.libs/exec.so" "$work/plugins/"
kill -HUP "$pid"
wait_for "$work/log" "task types from.*" && sleep 0.3
check "three plugins after SIGHUP" "$(grep -c 'task types from' "$work/log")" 2
grep -q "plugins: 2 old plugins unloaded" "$work/log" && ok "the old registry's plugins unloaded" \
    || bad "old plugins not unloaded: $(grep plugins: "$work/log")"
echo "exec.sh echo reloaded" | "$ppd" --send "$sock" > "$work/acks2"
check "exec.sh accepted after SIGHUP" "$(cat "$work/acks2")" "ok 502"
printf 'demo.echo  spaced \r\n' | "$ppd" --send "$sock" > "$work/acks2"
check "ARG as written, blanks kept, CR LF ending removed" "$(cat "$work/acks2")" "ok 503"

# --- SIGTERM with work queued: everything accepted runs, exit 0
i=0; : > "$work/jobs3"
while [ $i -lt 40 ]; do echo "demo.sleep 30" >> "$work/jobs3"; echo "demo.echo tail-$i" >> "$work/jobs3"; i=$((i + 1)); done
"$ppd" --send "$sock" < "$work/jobs3" > "$work/acks3"
check "80 more accepted" "$(grep -c '^ok ' "$work/acks3")" 80
kill -TERM "$pid"
wait "$pid"
check "SIGTERM exits 0" "$?" 0
pid=""
check "every accepted task ran" "$(sed -n 's/.*drained: \([0-9]*\) done, 0 failed, 0 cancelled.*/\1/p' "$work/log")" 583
check "result lines: 500 + 2 + 40" "$(wc -l < "$work/out" | tr -d ' ')" 542
i=0; : > "$work/want"
while [ $i -lt 500 ]; do echo "line-$i" >> "$work/want"; i=$((i + 1)); done
echo reloaded >> "$work/want"
echo ' spaced ' >> "$work/want"
i=0; while [ $i -lt 40 ]; do echo "tail-$i" >> "$work/want"; i=$((i + 1)); done
if [ "$(sort "$work/out")" = "$(sort "$work/want")" ]; then ok "every result line, once"; else bad "result lines differ"; fi
[ ! -e "$work/ppd.sock" ] && ok "socket removed at exit" || bad "socket left behind"
grep -q "stopped listening: 583 tasks accepted, 3 refused" "$work/log" && ok "accept counts logged" \
    || bad "no accept counts in: $(tail -n 5 "$work/log")"

# --- a drain that runs out of time: exit 1, what was queued cancelled
rm -f "$work/out"
"$ppd" -l "$sock" -P "$work/plugins" -j 1 -o "$work/out" -t 1 2> "$work/log2" &
pid=$!
wait_for "$work/log2" "ready" || bad "second daemon did not start"
printf 'demo.spin 1500000\ndemo.spin 1500000\ndemo.spin 1500000\n' | "$ppd" --send "$sock" > /dev/null
kill -TERM "$pid"
wait "$pid"
check "drain timeout exits 1" "$?" 1
pid=""
grep -q "drain timed out" "$work/log2" && ok "drain timeout logged" || bad "no timeout in: $(cat "$work/log2")"
grep -q "task demo.spin cancelled" "$work/log2" && ok "queued tasks reported cancelled" \
    || bad "no cancellation in: $(cat "$work/log2")"

# --- SIGINT drains as SIGTERM does, also for a daemon that a shell started
# in the background with SIGINT ignored (Linux delivers a blocked, ignored
# signal to sigwait anyway; POSIX leaves it open, hence the watcher's
# handler)
"$ppd" -l "$sock" -P "$work/plugins" -j 1 -t 5 2> "$work/log3" &
pid=$!
wait_for "$work/log3" "ready" || bad "third daemon did not start"
kill -INT "$pid"
if wait_for "$work/log3" "SIGINT: draining" 100; then
    wait "$pid"
    check "SIGINT to a background daemon exits 0" "$?" 0
else
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    bad "a background daemon ignored SIGINT"
fi
pid=""

summary
