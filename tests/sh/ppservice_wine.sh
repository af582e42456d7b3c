#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Windows service example under wine's own service manager: sc create,
# net start, tasks over TCP, net stop while tasks are queued (reported
# SERVICE_STOP_PENDING with a wait hint, then SERVICE_STOPPED, exit code 0,
# every accepted task run); a drain that runs out of time (service exit
# code 1); and console mode stopped by Ctrl-C, which wine delivers from
# SIGINT. Run by tools/win32/cross-build.sh with WINEPREFIX set:
#
#   tests/sh/ppservice_wine.sh BUILD-DIR PREFIX
set -u
build=$1
prefix=$2
work=$(mktemp -d) || exit 1
keeper=""
cleanup() {
    wine sc stop parkpool >/dev/null 2>&1
    wine sc delete parkpool >/dev/null 2>&1
    [ -n "$keeper" ] && kill "$keeper" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/testlib.sh"
# The service's state from sc query: "STOPPED", "STOP_PENDING", ...
state() { wine sc query parkpool 2>/dev/null | tr -d '\r' | sed -n 's/.*STATE *: *[0-9]* *\([A-Z_]*\).*/\1/p'; }
field() { wine sc query parkpool 2>/dev/null | tr -d '\r' | sed -n "s/.*$1 *: *\([0-9]*\).*/\1/p"; }

# A service finds its DLLs beside its program, as on a real installation.
mkdir -p "$work/svc/plugins"
cp "$build/.libs/ppservice.exe" "$build"/.libs/libparkpool-*.dll "$prefix"/bin/*.dll \
    "$work/svc/"
cp "$build"/plugins/.libs/*.dll "$work/svc/plugins/"
dir=$(winepath -w "$work/svc")
# wine ends its service manager with the last ordinary process: keep one.
wine ping -n 600 127.0.0.1 >/dev/null 2>&1 &
keeper=$!
sleep 1

create() {   # create TIMEOUT JOBS
    wine sc delete parkpool >/dev/null 2>&1
    wine sc create parkpool binPath= "$dir\\ppservice.exe service -l tcp:127.0.0.1:7171 -P $dir\\plugins -o $dir\\results.txt -L $dir\\ppservice.log -t $1 -j $2" >/dev/null
}
send() { wine "$work/svc/ppservice.exe" --send tcp:127.0.0.1:7171 --no-wait | tr -d '\r'; }

# --- start, tasks, stop with work queued
create 20 2
check "sc create" "$?" 0
wine net start parkpool >/dev/null 2>&1
check "net start" "$?" 0
wait_for "$work/svc/ppservice.log" "ready (service)" && ok "service running" \
    || bad "service did not start: $(cat "$work/svc/ppservice.log" 2>/dev/null)"
check "state RUNNING" "$(state)" RUNNING
i=0; : > "$work/jobs"
while [ $i -lt 200 ]; do echo "demo.echo w-$i" >> "$work/jobs"; i=$((i + 1)); done
i=0; while [ $i -lt 60 ]; do echo "demo.sleep 100" >> "$work/jobs"; i=$((i + 1)); done
echo "demo.nope x" >> "$work/jobs"
send < "$work/jobs" > "$work/acks"
check "260 tasks accepted" "$(grep -c '^ok ' "$work/acks")" 260
grep -q "^error: unknown task type 'demo.nope'" "$work/acks" && ok "bad type refused" || bad "no refusal"
wine sc stop parkpool > "$work/stop" 2>&1
tr -d '\r' < "$work/stop" | grep -q 'STOP_PENDING' && ok "stop answered STOP_PENDING" \
    || bad "stop did not report STOP_PENDING: $(cat "$work/stop")"
hint=$(tr -d '\r' < "$work/stop" | sed -n 's/.*WAIT_HINT *: *0x\([0-9a-f]*\).*/\1/p')
[ -n "$hint" ] && [ "$((0x$hint))" -gt 0 ] && ok "stop pending with a wait hint ($((0x$hint)) ms)" \
    || bad "no wait hint in: $(cat "$work/stop")"
# While it drains (60 sleeps of 100 ms on 2 workers), the checkpoint rises.
top=0; i=0
while [ $i -lt 300 ]; do
    q=$(wine sc query parkpool 2>/dev/null | tr -d '\r')
    echo "$q" | grep -q STOPPED && break
    cp=$(echo "$q" | sed -n 's/.*CHECKPOINT *: *0x\([0-9a-f]*\).*/\1/p')
    [ -n "$cp" ] && [ "$((0x$cp))" -gt "$top" ] && top=$((0x$cp))
    sleep 0.2; i=$((i + 1))
done
[ "$top" -ge 2 ] && ok "checkpoint rose while draining (to $top)" || bad "checkpoint stayed at $top"
check "state STOPPED" "$(state)" STOPPED
check "exit code 0" "$(field WIN32_EXIT_CODE)" 0
grep -q "drained: 260 done, 0 failed, 0 cancelled" "$work/svc/ppservice.log" \
    && ok "every accepted task ran" || bad "drain: $(tail -n 4 "$work/svc/ppservice.log")"
check "200 result lines" "$(tr -d '\r' < "$work/svc/results.txt" | grep -c '^w-')" 200
grep -q "stopping\|SERVICE_CONTROL_STOP" "$work/svc/ppservice.log" && ok "stop logged" || bad "stop not logged"

# --- a drain that runs out of time: service-specific exit code 1
rm -f "$work/svc/results.txt"
create 1 1
wine net start parkpool >/dev/null 2>&1
wait_for "$work/svc/ppservice.log" "ready (service)" || bad "second start"
printf 'demo.sleep 3000\ndemo.sleep 3000\ndemo.sleep 3000\n' | send > /dev/null
wine sc stop parkpool >/dev/null 2>&1
i=0; while [ "$(state)" != STOPPED ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "timed-out drain: STOPPED" "$(state)" STOPPED
check "timed-out drain: service exit code 1" "$(field SERVICE_EXIT_CODE)" 1
grep -q "drain timed out" "$work/svc/ppservice.log" && ok "drain timeout logged" || bad "no timeout logged"
wine sc delete parkpool >/dev/null 2>&1

# --- console mode: the same loop, stopped by Ctrl-C
wine "$work/svc/ppservice.exe" console -l tcp:127.0.0.1:7172 -P "$dir\\plugins" -t 20 \
    -o "$dir\\console.txt" 2> "$work/console.log" &
cpid=$!
wait_for "$work/console.log" "ready (console)" || bad "console mode did not start"
i=0; : > "$work/cjobs"
while [ $i -lt 20 ]; do echo "demo.sleep 100" >> "$work/cjobs"; echo "demo.echo c-$i" >> "$work/cjobs"; i=$((i + 1)); done
wine "$work/svc/ppservice.exe" --send tcp:127.0.0.1:7172 < "$work/cjobs" | tr -d '\r' > "$work/cacks"
check "console: 40 accepted" "$(grep -c '^ok ' "$work/cacks")" 40
kill -INT "$cpid"
wait "$cpid"
check "console: Ctrl-C exits 0" "$?" 0
grep -q "drained: 40 done" "$work/console.log" && ok "console: every accepted task ran" \
    || bad "console: $(tail -n 4 "$work/console.log")"
grep -q "stopping: checkpoint 1, wait hint" "$work/console.log" && ok "console: progress reported" \
    || bad "console: no progress lines"

summary
