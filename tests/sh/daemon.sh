#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# parkpoold end to end: what it refuses to do by default (exec.* types,
# public TCP, replacing a file that is not a stale socket, taking a live
# daemon's socket), the socket's mode and group, then tasks in, SIGHUP
# reload, SIGTERM with work queued (every accepted task ran, clean exit),
# a drain that runs out of time, and SIGINT.
set -u
top_builddir=${top_builddir:-.}
ppd="$top_builddir/parkpoold"
work=$(mktemp -d) || exit 1
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/testlib.sh"

mkdir "$work/plugins"
cp "$top_builddir/plugins/.libs/demo.so" "$work/plugins/"
sockpath="$work/ppd.sock"
sock="unix:$sockpath"

# --- what it will not do
# A start that must fail: exit 2 with PATTERN in the log (within 15 s).
refused() {   # LABEL PATTERN ARGS...
    label=$1 pattern=$2
    shift 2
    "$ppd" -P "$work/plugins" "$@" > /dev/null 2> "$work/log.refused" &
    _p=$!
    _i=0
    while kill -0 $_p 2>/dev/null && [ $_i -lt 150 ]; do sleep 0.1; _i=$((_i + 1)); done
    if kill -0 $_p 2>/dev/null; then
        kill -9 $_p; wait $_p 2>/dev/null
        bad "$label: still running"
        return
    fi
    wait $_p
    _rc=$?
    if [ $_rc -eq 2 ] && grep -q "$pattern" "$work/log.refused"; then ok "$label"
    else bad "$label: exit $_rc, log: $(cat "$work/log.refused")"; fi
}
echo "not a socket" > "$sockpath"
refused "a file that is not a socket is not replaced" "exists and is not a socket" -l "$sock"
check "... and is left as it was" "$(cat "$sockpath")" "not a socket"
rm -f "$sockpath"
refused "a public TCP address without --allow is refused" "refusing to listen on tcp:0.0.0.0:" \
    -l "tcp:0.0.0.0:$((20000 + $$ % 20000))"
refused "an address that is neither unix:, tcp: nor a path" "is not an address" -l "ppd.sock"
refused "a socket mode on TCP" "are for Unix sockets" -l "tcp:$((20000 + $$ % 20000))" --socket-mode 0660
"$ppd" --allow 'exec.sh,,hash.*' -l "$sock" 2> "$work/log.refused"
check "an empty --allow pattern is a usage error" "$?" 2
"$ppd" --socket-mode 0999 -l "$sock" 2> "$work/log.refused"
check "a mode that is not octal is a usage error" "$?" 2
ls "$work" | grep -q '^\.parkpoold-' && bad "a private socket folder was left behind" \
    || ok "no private socket folder left behind"

"$ppd" -l "$sockpath" -P "$work/plugins" -j 2 -o "$work/out" -t 20 2> "$work/log" &
pid=$!
wait_for "$work/log" "ready" && ok "daemon starts and listens on a plain path" \
    || bad "daemon did not start: $(cat "$work/log")"
check "the socket is 0600 by default" "$(stat -c %a "$sockpath")" 600
grep -q "task types allowed: every type but exec" "$work/log" && ok "the allowed types are logged" \
    || bad "allowed types not logged: $(cat "$work/log")"
refused "a live daemon's socket is not taken" "already listening on $sockpath" -l "$sock"
echo "demo.echo still-mine" | "$ppd" --send "$sockpath" > "$work/acks0" 2> "$work/send0"
check "... and the first daemon still answers, to a plain path" "$(cat "$work/acks0")" "ok 1
done 1 ok"
check "--send says what it saw" "$(cat "$work/send0")" "--send: 1 accepted (1 ok, 0 failed, 0 cancelled), 0 refused"

# --- tasks in; each line answered
i=0; : > "$work/jobs"
while [ $i -lt 499 ]; do echo "demo.echo line-$i" >> "$work/jobs"; i=$((i + 1)); done
printf 'demo.sleep 20\n# a comment\n\ndemo.nope x\nexec.sh echo hi\ndemo.echo\n' >> "$work/jobs"
"$ppd" --send "$sock" < "$work/jobs" > "$work/acks"
check "client exit status with refused lines" "$?" 1
check "accepted lines answered ok 2..501" "$(grep -c '^ok ' "$work/acks")" 500
check "last ok is 501" "$(grep '^ok ' "$work/acks" | tail -n 1)" "ok 501"
grep -q "^error: unknown task type 'demo.nope' (did you mean 'demo.echo'?)" "$work/acks" \
    && ok "unknown type refused with a suggestion" || bad "no suggestion: $(grep error "$work/acks")"
grep -q "^error: task type 'exec.sh' is not allowed here" "$work/acks" \
    && ok "exec.sh refused by default" || bad "exec.sh: $(grep exec "$work/acks")"
grep -q "^error: expected 'TYPE ARG'" "$work/acks" && ok "line without argument refused" \
    || bad "no error for a bare type"

check "every accepted task ended ok" "$(grep -c '^done [0-9]* ok$' "$work/acks")" 500

# --- outcomes: ok, failed; output lines back to the client when asked
printf 'demo.echo fine\ndemo.fail broken\n' | "$ppd" --send "$sock" > "$work/acks1" 2> "$work/send1"
check "a failed task: exit 1" "$?" 1
check "ok, then each outcome" "$(sort "$work/acks1" | tr '\n' '|')" "done 502 ok|done 503 failed: Internal error (specific information not available)|ok 502|ok 503|"
grep -q "1 ok, 1 failed" "$work/send1" && ok "--send counts the failure" || bad "send1: $(cat "$work/send1")"
printf 'demo.echo to-me\ndemo.echo  two words \n' | "$ppd" --send "$sock" --task-output > "$work/acks1"
check "--task-output: the output lines come back" "$(grep '^out ' "$work/acks1" | sort | tr '\n' '|')" "out 504 to-me|out 505  two words |"
check "--task-output: each before its done" "$(grep -n '' "$work/acks1" | sed -n 's/^\([0-9]*\):out 504.*/\1/p')" \
    "$(($(grep -n '' "$work/acks1" | sed -n 's/^\([0-9]*\):done 504 ok/\1/p') - 1))"

# --- SIGHUP: the folder again, now with hash and exec
cp "$top_builddir/plugins/.libs/hash.so" "$top_builddir/plugins/.libs/exec.so" "$work/plugins/"
kill -HUP "$pid"
wait_for "$work/log" "plugins: the old load unloaded"
check "the folder loaded twice" "$(grep -c 'task types from' "$work/log")" 2
grep -q "reload: .*exec [0-9.]* added" "$work/log" && grep -q "reload: .*hash [0-9.]* added" "$work/log" \
    && ok "the reload says what it added" || bad "reload: $(grep reload: "$work/log")"
echo "reloaded" > "$work/file"
echo "hash.sha1 $work/file" | "$ppd" --send "$sock" > "$work/acks2"
check "hash.sha1 accepted after SIGHUP" "$(head -n 1 "$work/acks2")" "ok 506"
echo "exec.sh echo pwned" | "$ppd" --send "$sock" > "$work/acks2"
grep -q "^error: task type 'exec.sh' is not allowed here" "$work/acks2" \
    && ok "exec.sh still refused once loaded" || bad "exec.sh after reload: $(cat "$work/acks2")"
printf 'demo.echo  spaced \r\n' | "$ppd" --send "$sock" > "$work/acks2"
check "ARG as written, blanks kept, CR LF ending removed" "$(head -n 1 "$work/acks2")" "ok 507"

# --- SIGTERM with work queued: everything accepted runs, exit 0
i=0; : > "$work/jobs3"
while [ $i -lt 40 ]; do echo "demo.sleep 30" >> "$work/jobs3"; echo "demo.echo tail-$i" >> "$work/jobs3"; i=$((i + 1)); done
"$ppd" --send "$sock" --no-wait < "$work/jobs3" > "$work/acks3"
check "80 more accepted" "$(grep -c '^ok ' "$work/acks3")" 80
kill -TERM "$pid"
wait "$pid"
check "SIGTERM exits 0" "$?" 0
pid=""
check "every accepted task ran" "$(sed -n 's/.*drained: \([0-9]*\) done, 1 failed, 0 cancelled.*/\1/p' "$work/log")" 586
check "result lines: 500 + 2 + 40 + 2" "$(wc -l < "$work/out" | tr -d ' ')" 544
i=0; echo still-mine > "$work/want"
while [ $i -lt 499 ]; do echo "line-$i" >> "$work/want"; i=$((i + 1)); done
echo "$(sha1sum "$work/file" | cut -d' ' -f1)  $work/file" >> "$work/want"
echo fine >> "$work/want"
echo broken >> "$work/want"
echo ' spaced ' >> "$work/want"
i=0; while [ $i -lt 40 ]; do echo "tail-$i" >> "$work/want"; i=$((i + 1)); done
if [ "$(sort "$work/out")" = "$(sort "$work/want")" ]; then ok "every result line, once"; else bad "result lines differ"; fi
[ ! -e "$work/ppd.sock" ] && ok "socket removed at exit" || bad "socket left behind"
grep -q "stopped listening: 587 tasks accepted, 4 refused" "$work/log" && ok "accept counts logged" \
    || bad "no accept counts in: $(tail -n 5 "$work/log")"

# --- a drain that runs out of time: exit 1, what was queued cancelled
rm -f "$work/out"
"$ppd" -l "$sock" -P "$work/plugins" -j 1 -o "$work/out" -t 1 2> "$work/log2" &
pid=$!
wait_for "$work/log2" "ready" || bad "second daemon did not start"
printf 'demo.spin 1500000\ndemo.spin 1500000\ndemo.spin 1500000\n' | "$ppd" --send "$sock" --no-wait > "$work/acks11"
check "--no-wait: back once the lines are answered, before the 4.5 s of tasks end" \
    "$(tr '\n' '|' < "$work/acks11")" "ok 1|ok 2|ok 3|"
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

# --- abuse: nobody waits for a client that misbehaves
abuser="$top_builddir/tests/daemon/abuser"
"$ppd" -l "$sock" -P "$work/plugins" -j 1 -t 5 --max-inflight 4 --max-clients 4 --idle-timeout 2 \
    2> "$work/log8" &
pid=$!
wait_for "$work/log8" "ready" || bad "abuse daemon did not start: $(cat "$work/log8")"
# One client floods 5,000 lines and never reads: the daemon stops reading
# it after 4 tasks in flight, and answers another client at once.
"$abuser" "$sockpath" flood 5000 > "$work/flood" &
flood=$!
wait_for "$work/flood" "ready" || bad "flood did not start"
start=$(date +%s)
echo "demo.echo meanwhile" | "$ppd" --send "$sock" > "$work/acks8" 2>/dev/null
id=$(sed -n 's/^ok \([0-9]*\)$/\1/p' "$work/acks8")
check "a flooding client does not stall another" "$(cat "$work/acks8" | tr '\n' '|')" "ok $id|done $id ok|"
[ $(($(date +%s) - start)) -le 3 ] && ok "... which is answered at once" \
    || bad "... answered after $(($(date +%s) - start)) s"
# Three clients hold half a line each: with the flood that is every slot;
# one more is refused, and once they idle past 2 s they are closed.
"$abuser" "$sockpath" halfline 3 > "$work/half" &
half=$!
wait_for "$work/half" "ready" || bad "halfline did not start"
echo "demo.echo full" | "$ppd" --send "$sock" > /dev/null 2> "$work/send9"
grep -q "refused the connection: too many clients" "$work/send9" \
    && ok "a client past --max-clients is told so" || bad "past max clients: $(cat "$work/send9")"
wait_for "$work/log8" "idle clients: closing" 50
sleep 2.5
echo "demo.echo after-idle" | "$ppd" --send "$sock" > "$work/acks9" 2>/dev/null
check "idle half lines were closed, their slots free" "$(head -n 1 "$work/acks9" | cut -c1-3)" "ok "
# SIGTERM with the flooder's lines unread and its tasks in flight: the
# daemon drains what it accepted and exits, it does not wedge.
kill -TERM "$pid"
i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$pid" 2>/dev/null; then
    bad "SIGTERM with a flooding client: still running after 10 s"
    kill -9 "$pid"
fi
wait "$pid"
check "SIGTERM with a flooding client exits 0" "$?" 0
pid=""
# It took the flooder's lines only while the flooder read (none of) its
# answers: until 64 KiB of them waited, far short of 5,000 tasks.
n=$(sed -n 's/.*stopped listening: \([0-9]*\) tasks accepted.*/\1/p' "$work/log8")
[ -n "$n" ] && [ "$n" -lt 4000 ] && ok "a client that reads nothing is not read either ($n tasks taken)" \
    || bad "the flooder got $n tasks in"
kill "$flood" "$half" 2>/dev/null; wait "$flood" "$half" 2>/dev/null

# --- lines too long: refused whole, on either side, never split
"$ppd" -l "$sock" -P "$work/plugins" -j 1 -t 5 -o /dev/full 2> "$work/log10" &
pid=$!
wait_for "$work/log10" "ready" || bad "daemon with -o /dev/full did not start: $(cat "$work/log10")"
"$abuser" "$sockpath" longline 70000 > "$work/long1"
check "a line too long, sent raw: refused whole, the next one runs" \
    "$(grep -v '^hello' "$work/long1" | tr '\n' '|')" "error: a line longer than 65535 bytes: not run|ok 1|done 1 ok|"
{ printf 'demo.echo '; head -c 70000 /dev/zero | tr '\0' x; printf '\ndemo.echo short\n'; } \
    | "$ppd" --send "$sock" > "$work/long2" 2>/dev/null
check "--send refuses a line too long itself" "$(head -n 1 "$work/long2")" \
    "error: line 1 is longer than 65535 bytes: not sent"
check "... and sends the next" "$(grep -c '^ok ' "$work/long2")" 1
# -o /dev/full: the results are lost, and the daemon says so and exits 1.
kill -TERM "$pid"
wait "$pid"
check "results that could not be written: exit 1" "$?" 1
grep -q "cannot write results to /dev/full" "$work/log10" && ok "... and logged" \
    || bad "no write error logged: $(cat "$work/log10")"
pid=""

# --- socket activation: the socket systemd passes (LISTEN_FDS) is used,
# left in place at exit; one meant for another process is not ours
if command -v systemd-socket-activate >/dev/null 2>&1; then
    rm -f "$sockpath"
    systemd-socket-activate -l "$sockpath" "$ppd" -P "$work/plugins" -j 1 -t 5 2> "$work/log12" &
    pid=$!
    i=0; while [ ! -S "$sockpath" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    echo "demo.echo activated" | "$ppd" --send "$sockpath" > "$work/acks12" 2>/dev/null
    check "socket activation: served" "$(head -n 1 "$work/acks12")" "ok 1"
    grep -q "listening on the socket systemd passed" "$work/log12" && ok "... on the passed socket" \
        || bad "activation: $(cat "$work/log12")"
    kill -TERM "$pid"; wait "$pid"; pid=""
    [ -S "$sockpath" ] && ok "... which stays, systemd's to remove" || bad "the passed socket was removed"
    rm -f "$sockpath"
else
    ok "socket activation: systemd-socket-activate not installed, skipped"
fi
LISTEN_PID=1 LISTEN_FDS=1 "$ppd" -l "$sock" -P "$work/plugins" -j 1 -t 5 2> "$work/log13" &
pid=$!
wait_for "$work/log13" "ready" || bad "daemon with another process's LISTEN_FDS: $(cat "$work/log13")"
grep -q "listening on unix:$sockpath" "$work/log13" && ok "LISTEN_FDS for another pid is ignored" \
    || bad "LISTEN_PID=1: $(cat "$work/log13")"
kill -TERM "$pid"; wait "$pid"; pid=""

# --- reloads under load: each old load goes once its tasks end, and
# memory stays flat (it grew by 1.5 MB a reload when registries stayed)
"$ppd" -l "$sock" -P "$work/plugins" -j 2 -t 5 2> "$work/log14" &
pid=$!
wait_for "$work/log14" "ready" || bad "reload daemon did not start: $(cat "$work/log14")"
i=0; : > "$work/burst"
while [ $i -lt 200 ]; do echo "demo.sleep 1" >> "$work/burst"; i=$((i + 1)); done
reloads() {   # N: each a SIGHUP with a burst of tasks in flight, then its end
    _r=0
    while [ $_r -lt "$1" ]; do
        "$ppd" --send "$sock" < "$work/burst" > /dev/null 2>&1 &
        _s=$!
        kill -HUP "$pid"
        wait $_s
        _r=$((_r + 1))
    done
}
# The service's memory: its own and its worker process's (the plugins').
rss() {
    _w=$(sed -n 's/.*worker process \([0-9]*\) started.*/\1/p' "$work/log14" | tail -n 1)
    _a=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$pid/status" 2>/dev/null)
    _b=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$_w/status" 2>/dev/null)
    [ -n "$_a" ] && [ -n "$_b" ] && echo $((_a + _b))
}
reloads 10
before=$(rss)
reloads 40
i=0
while [ "$(grep -c 'old load unloaded' "$work/log14")" -lt 50 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "50 reloads under load: 50 old loads unloaded" "$(grep -c 'old load unloaded' "$work/log14")" 50
after=$(rss)
if [ -n "$before" ] && [ -n "$after" ]; then
    [ $((after - before)) -lt 1024 ] && ok "40 more reloads: memory ${before} -> ${after} KiB" \
        || bad "40 more reloads: memory grew from ${before} to ${after} KiB"
else
    ok "reload memory: no /proc here, skipped"
fi
kill -TERM "$pid"; wait "$pid"
check "... and it drains and exits 0" "$?" 0
pid=""

# --- a plugin replaced by rename, then SIGHUP while the old load still
# runs a task: new tasks run the new file's code
mkdir "$work/plugins2"
cp "$top_builddir/plugins/.libs/demo.so" "$work/plugins2/"
cp "$top_builddir/tests/plugins/.libs/tp_good.so" "$work/plugins2/good.so"
"$ppd" -l "$sock" -P "$work/plugins2" -j 2 -t 5 --allow 'demo.*,good.*' 2> "$work/log15" &
pid=$!
wait_for "$work/log15" "ready" || bad "daemon for the rename did not start: $(cat "$work/log15")"
echo "good.echo before" | "$ppd" --send "$sock" --task-output > "$work/acks15" 2>/dev/null
check "version 1 runs" "$(grep '^out ' "$work/acks15" | cut -d' ' -f3-)" "before"
echo "demo.sleep 1500" | "$ppd" --send "$sock" --no-wait > /dev/null 2>&1
cp "$top_builddir/tests/plugins/.libs/tp_good2.so" "$work/plugins2/good.so.new"
mv "$work/plugins2/good.so.new" "$work/plugins2/good.so"
kill -HUP "$pid"
wait_for "$work/log15" "reload:" || bad "no reload: $(cat "$work/log15")"
grep -q "reload: good 1.2.3 -> 2.0.0" "$work/log15" && ok "the reload sees the new version" \
    || bad "reload after a rename: $(grep reload: "$work/log15")"
echo "good.echo after|and a line break" | "$ppd" --send "$sock" --task-output > "$work/acks15" 2>/dev/null
check "new tasks run the new file's code, the old load still busy" \
    "$(grep '^out ' "$work/acks15" | head -n 1 | cut -d' ' -f3-)" "v2: after"
check "an emitted line with a line break comes back as two out lines" \
    "$(grep -c '^out ' "$work/acks15"):$(grep '^out ' "$work/acks15" | tail -n 1 | cut -d' ' -f3-)" \
    "2:and a line break"
kill -TERM "$pid"; wait "$pid"
check "... and it drains and exits 0" "$?" 0
pid=""

# --- tcp:PORT is loopback only; an explicit list lets TCP go public
port=$((20000 + $$ % 20000))
"$ppd" -l "tcp:$port" -P "$work/plugins" -j 1 -t 5 2> "$work/log4" &
pid=$!
if wait_for "$work/log4" "ready\|cannot listen"; then
    if grep -q ready "$work/log4"; then
        echo "demo.echo over-tcp" | "$ppd" --send "tcp:127.0.0.1:$port" > "$work/acks4"
        check "tcp:PORT serves 127.0.0.1" "$(head -n 1 "$work/acks4")" "ok 1"
    else
        ok "tcp:PORT: port $port busy on this machine, skipped"
    fi
fi
kill -TERM "$pid"; wait "$pid"; pid=""
"$ppd" -l "tcp:0.0.0.0:$port" --allow 'demo.*' -P "$work/plugins" -j 1 -t 5 2> "$work/log5" &
pid=$!
if wait_for "$work/log5" "ready\|cannot listen"; then
    if grep -q ready "$work/log5"; then
        printf 'demo.echo public\nhash.sha1 /etc/hostname\n' | "$ppd" --send "tcp:127.0.0.1:$port" > "$work/acks5"
        check "a public listener with --allow runs what it allows" "$(head -n 1 "$work/acks5")" "ok 1"
        grep -q "^error: task type 'hash.sha1' is not allowed here" "$work/acks5" \
            && ok "... and nothing else" || bad "--allow demo.*: $(cat "$work/acks5")"
    else
        ok "tcp:0.0.0.0: port $port busy on this machine, skipped"
    fi
fi
kill -TERM "$pid"; wait "$pid"; pid=""

# --- a task that crashes: only the worker process goes (the service loads
# no plugin itself); each task it had is answered, the log says which types
# ran, and another worker starts, 0.1 s after a first crash, 0.2 s after a
# second within a minute
mkdir "$work/plugins3"
cp "$top_builddir/plugins/.libs/demo.so" "$work/plugins3/"
cp "$top_builddir/tests/plugins/crash/.libs/tp_crash.so" "$work/plugins3/"
ulimit -c 0 2>/dev/null
"$ppd" -l "$sock" -P "$work/plugins3" -j 2 -t 5 2> "$work/log16" &
pid=$!
wait_for "$work/log16" "ready" || bad "daemon for the crash did not start: $(cat "$work/log16")"
workers() { sed -n 's/.*worker process \([0-9]*\) started.*/\1/p' "$work/log16"; }
w1=$(workers | tail -n 1)
if [ -r "/proc/$pid/maps" ] && [ -n "$w1" ]; then
    grep -q 'demo\.so\|tp_crash\.so' "/proc/$pid/maps" && bad "the service loaded plugins itself" \
        || ok "the service loads no plugin itself"
    grep -q 'tp_crash\.so' "/proc/$w1/maps" && ok "... its worker process does" \
        || bad "no plugin in the worker process $w1"
else
    ok "plugins in the worker process only: no /proc here, skipped"
fi
printf 'demo.echo before\ndemo.sleep 20000\ncrash.segv 500\n' \
    | "$ppd" --send "$sock" --task-output > "$work/acks16" 2> "$work/send16"
check "a crash: --send exits 1" "$?" 1
check "what ended before the crash is ok, what it took is answered failed" \
    "$(grep -v '^ok ' "$work/acks16" | sort | sed 's/, core dumped//' | tr '\n' '|')" \
    "done 1 ok|done 2 failed: worker crashed (signal 11)|done 3 failed: worker crashed (signal 11)|out 1 before|"
grep -q "worker process (pid $w1) crashed (signal 11.*running: .*crash.segv x1" "$work/log16" \
    && grep -q "worker process (pid $w1) crashed.*running: .*demo.sleep x1.*2 tasks in flight lost; another starts in 0.1 s" "$work/log16" \
    && ok "the crash logged, with the types that were running" || bad "crash log: $(grep crashed "$work/log16")"
nworkers() {   # N: wait (at most 5 s) until N have started
    _i=0
    while [ "$(workers | wc -l)" -lt "$1" ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
    [ "$(workers | wc -l)" -eq "$1" ]
}
nworkers 2 && ok "another worker process started" || bad "no new worker: $(cat "$work/log16")"
echo "demo.echo after" | "$ppd" --send "$sock" > "$work/acks16" 2>/dev/null
check "... which runs the next task, under the service's next id" "$(cat "$work/acks16")" "ok 4
done 4 ok"
w2=$(workers | tail -n 1)
kill -TERM "$w2" 2>/dev/null; kill -INT "$w2" 2>/dev/null; kill -HUP "$w2" 2>/dev/null
echo "demo.echo still" | "$ppd" --send "$sock" > "$work/acks16" 2>/dev/null
check "the worker process ignores the service's signals (they are the service's)" \
    "$(cat "$work/acks16") $(workers | wc -l)" "ok 5
done 5 ok 2"
echo "crash.abort 0" | "$ppd" --send "$sock" > "$work/acks16" 2>/dev/null
check "a second crash" "$(sed 's/, core dumped//' "$work/acks16" | tail -n 1)" "done 6 failed: worker crashed (signal 6)"
grep -q "worker process (pid $w2) crashed (signal 6.*running: crash.abort x1; 1 task in flight lost; another starts in 0.2 s" "$work/log16" \
    && ok "... within a minute: the next start waits twice as long" || bad "backoff: $(grep crashed "$work/log16")"
nworkers 3 || bad "no third worker: $(cat "$work/log16")"
printf 'demo.sleep x\ndemo.echo last\n' | "$ppd" --send "$sock" > "$work/acks16" 2>/dev/null
check "a bad argument is a task that failed" "$(sort "$work/acks16" | tr '\n' '|')" \
    "done 7 failed: bad argument: Invalid argument|done 8 ok|ok 7|ok 8|"
kill -TERM "$pid"; wait "$pid"
check "... and the service drains and exits 0" "$?" 0
pid=""
grep -q "drained: 4 done, 4 failed, 0 cancelled, 0 still running" "$work/log16" \
    && ok "the drain counts every outcome" || bad "drain: $(grep drain "$work/log16")"

# --- --in-process: the same service, its tasks on its own threads
"$ppd" -l "$sock" -P "$work/plugins" -j 2 -t 5 --in-process 2> "$work/log17" &
pid=$!
wait_for "$work/log17" "ready" || bad "--in-process did not start: $(cat "$work/log17")"
printf 'demo.echo here\ndemo.sleep x\n' | "$ppd" --send "$sock" --task-output > "$work/acks17" 2>/dev/null
check "--in-process: outcomes and output as with a worker process" "$(sort "$work/acks17" | tr '\n' '|')" \
    "done 1 ok|done 2 failed: bad argument: Invalid argument|ok 1|ok 2|out 1 here|"
grep -q "worker process" "$work/log17" && bad "--in-process started a worker process" \
    || ok "... and no worker process"
kill -TERM "$pid"; wait "$pid"
check "... and it drains and exits 0" "$?" 0
pid=""

# --- the socket's mode and group, seen by another user (as root, with runuser)
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
    chmod 755 "$work"
    other_gid=$(id -g nobody)
    "$ppd" -l "$sock" --socket-group "$other_gid" --allow 'demo.*' -P "$work/plugins" -j 1 -t 5 \
        2> "$work/log6" &
    pid=$!
    wait_for "$work/log6" "ready" || bad "daemon with a socket group did not start: $(cat "$work/log6")"
    check "--socket-group: mode 0660" "$(stat -c %a "$sockpath")" 660
    check "--socket-group: the group" "$(stat -c %g "$sockpath")" "$other_gid"
    echo "demo.echo from-nobody" | runuser -u nobody -- "$ppd" --send "$sockpath" > "$work/acks6" 2>&1
    check "a member of the group can send" "$(head -n 1 "$work/acks6")" "ok 1"
    kill -TERM "$pid"; wait "$pid"; pid=""
    "$ppd" -l "$sock" -P "$work/plugins" -j 1 -t 5 2> "$work/log7" &
    pid=$!
    wait_for "$work/log7" "ready" || bad "daemon did not start: $(cat "$work/log7")"
    echo "demo.echo from-nobody" | runuser -u nobody -- "$ppd" --send "$sockpath" > "$work/acks7" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && grep -q "ermission denied" "$work/acks7"; then
        ok "another user cannot use a 0600 socket"
    else
        bad "another user and a 0600 socket: exit $rc, $(cat "$work/acks7")"
    fi
    kill -TERM "$pid"; wait "$pid"; pid=""
else
    ok "socket group with another user: skipped (needs root and runuser)"
fi

summary
