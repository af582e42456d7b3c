#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# parkpoold --queue and parkpool submit / queue-stats against a real
# redis-server (its own, on a loopback port, in a temporary folder): three
# workers share 20,000 hash.sha256 entries over a generated tree; one is
# killed (SIGKILL) mid-run and the others claim what it held; Redis is
# stopped and started again mid-run; every entry ends with exactly one
# result, the hashes are sha256sum's, nothing is left pending; an entry no
# worker can run goes to the dead letters after --max-deliveries; a failing
# task is a "failed" result; SIGTERM drains and exits 0. Skipped (77)
# without redis-server or a parkpoold built with hiredis.
set -u
top_builddir=${top_builddir:-.}
ppd="$top_builddir/parkpoold"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/testlib.sh"

. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/redis.sh"

why=$(pp_redis_missing "$ppd")
[ -z "$why" ] || { echo "SKIP: $why"; exit 77; }

work=$(mktemp -d) || exit 1
port=$((20000 + $$ % 20000))
pp="$top_builddir/parkpool"
p1="" p2="" p3="" ps=""
cleanup() {
    for _p in $p1 $p2 $p3 $ps; do kill -9 "$_p" 2>/dev/null; done
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
rc() { redis-cli -p "$port" "$@"; }
# Stored on disk (the append-only file), so that a restart keeps what was
# acknowledged.
start_redis() { pp_redis_start "$work" "$port" yes; }
start_redis || { bad "redis-server did not start"; summary; exit 1; }
url="redis://127.0.0.1:$port/jobs"

mkdir "$work/plugins" "$work/tree"
cp "$top_builddir/plugins/.libs/demo.so" "$top_builddir/plugins/.libs/hash.so" \
    "$top_builddir/plugins/.libs/exec.so" "$work/plugins/"

# --- 20,000 files, one hash.sha256 entry each (parkpool submit), three
# workers; one killed with SIGKILL mid-run, Redis stopped and started again
# mid-run: every entry ends with exactly one result, sha256sum's hashes
n=20000
(cd "$work/tree" && i=0 && while [ $i -lt 200 ]; do mkdir d$i; i=$((i + 1)); done)
awk -v n=$n -v dir="$work/tree" 'BEGIN { for (i = 0; i < n; i++) {
    f = sprintf("%s/d%d/f%d", dir, i % 200, i); print "file " i " of the tree" > f; close(f);
    print f } }' > "$work/files"
worker() {   # NAME: a worker in the background, its pid in $wpid
    "$ppd" --queue "$url" --consumer "$1" -P "$work/plugins" -j 1 --claim-after 2 -t 10 \
        --max-deliveries 2 2> "$work/log.$1" &
    wpid=$!
}
worker one; p1=$wpid
worker two; p2=$wpid
worker three; p3=$wpid
"$pp" submit --queue "$url" --type hash.sha256 -f "$work/files" --wait --json \
    > "$work/submitted" 2> "$work/submit.err" &
ps=$!
results() { rc XLEN jobs:results 2>/dev/null || echo 0; }
upto() {   # N: wait (at most 60 s) until N results are stored
    _i=0; while [ "$(results)" -lt "$1" ] && [ $_i -lt 600 ]; do sleep 0.1; _i=$((_i + 1)); done
}
upto 3000
kill -9 "$p1"; wait "$p1" 2>/dev/null; p1=""
ok "worker one killed (SIGKILL) after $(results) results"
upto 8000
acked=$(results)
rc shutdown > /dev/null 2>&1
sleep 0.5
start_redis || bad "redis-server did not start again"
ok "Redis stopped and started again after $acked results"
[ "$(results)" -ge "$acked" ] && ok "... keeping every result stored before" \
    || bad "results before the restart: $acked, after: $(results)"
wait "$ps"
check "parkpool submit --wait: every task done, exit 0" "$?" 0
check "... one object per entry, and a summary" "$(grep -c '"status":"ok"' "$work/submitted")" $n
tail -n 1 "$work/submitted" | grep -q "\"done\":$n,\"failed\":0,\"dead\":0" \
    && ok "... which counts them" || bad "summary: $(tail -n 1 "$work/submitted")"
grep -q "connected again" "$work/submit.err" && ok "... through the restart" \
    || ok "... (the restart fell between its reads)"
check "exactly one result per entry" "$(results)" $n
grep -q "queue: claimed" "$work/log.two" "$work/log.three" \
    && ok "a survivor claimed what worker one held" \
    || ok "worker one held nothing to claim when it was killed"
grep -q "connected again" "$work/log.two" && ok "the workers reconnected after the restart" \
    || bad "no reconnection in worker two's log: $(tail -n 5 "$work/log.two")"
check "nothing left pending" "$(rc XPENDING jobs parkpool | head -n 1)" 0
sed -n 's/.*"output":\["\([^"]*\)".*/\1/p' "$work/submitted" | sort > "$work/got"
xargs sha256sum < "$work/files" | sort > "$work/want"
if cmp -s "$work/got" "$work/want"; then ok "the hashes are sha256sum's"
else bad "hashes differ: $(diff "$work/got" "$work/want" | head -n 5)"; fi

# --- a failing task, an entry no worker can run
printf 'demo.fail bad\nnope.never x\ndemo.echo fine\n' | "$pp" submit --queue "$url" --wait \
    > "$work/out2" 2> "$work/err2"
check "a failed task and a dead letter: exit 1" "$?" 1
grep -q "demo.fail bad: " "$work/err2" && ok "... the failure said" || bad "err: $(cat "$work/err2")"
grep -q "nope.never x: dead letter: delivered more than" "$work/err2" \
    && ok "an entry no worker can run is a dead letter after --max-deliveries" \
    || bad "dead letters: $(cat "$work/err2")"
grep -qx fine "$work/out2" && ok "... and the tasks' output printed" || bad "out: $(cat "$work/out2")"
# An argument with a line break would be two lines to the worker process,
# the second read as its own command (here one that runs exec.sh, which
# the allow-list refuses): such an entry is a dead letter at once.
printf 'x\nRUN 999999 exec.sh touch %s/pwned' "$work" | rc -x XADD jobs '*' type demo.echo arg \
    > /dev/null
# A type that no registry could hold (not family.verb) is one at once too:
# no other worker could run it, and a space in it would split the line.
rc XADD jobs '*' type 'demo.echo x' arg y > /dev/null
i=0; while [ "$(rc XLEN jobs:dead)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
rc XRANGE jobs:dead - + > "$work/dead"
grep -q "the argument has a line break" "$work/dead" && [ ! -e "$work/pwned" ] \
    && ok "an argument with a line break: a dead letter, nothing injected" \
    || bad "line break: $(cat "$work/dead"); $(ls "$work")"
grep -q "the type is not a task type's name" "$work/dead" \
    && ok "a type that is not a task type's name: a dead letter at once" \
    || bad "bad type: $(cat "$work/dead")"
"$pp" queue-stats --queue "$url" > "$work/stats"
grep -q "^stream jobs: $((n + 5)) entries" "$work/stats" && grep -q "group parkpool: 0 pending" "$work/stats" \
    && grep -q "^dead letters jobs:dead: 3 entries" "$work/stats" \
    && ok "queue-stats: length, pending, dead letters" || bad "queue-stats: $(cat "$work/stats")"

for p in $p3; do kill -TERM "$p"; wait "$p"; check "SIGTERM: worker three drains and exits 0" "$?" 0; done
p3=""
kill -TERM "$p2"; wait "$p2"
check "SIGTERM: worker two drains and exits 0" "$?" 0
p2=""
grep -q "queue: drained:" "$work/log.two" && ok "... and says what it did" \
    || bad "log: $(tail -n 3 "$work/log.two")"

# --- long tasks are not hoarded: a worker reads ahead about 20 ms of work
# by the run times it has seen, 2 entries per worker at the least; so of
# six 300 ms tasks queued, a worker that starts 0.5 s after the first
# still finds some to run
before=$(results)
i=0; while [ $i -lt 6 ]; do echo "demo.sleep 300"; i=$((i + 1)); done \
    | "$pp" submit --queue "$url" 2>/dev/null
worker four; p1=$wpid
sleep 0.5
worker five; p2=$wpid
upto $((before + 6))
rc XREVRANGE jobs:results + - COUNT 6 | grep -A1 '^consumer$' | grep -v -e '^consumer$' -e '^--$' \
    | sort -u | tr '\n' ' ' > "$work/who"
check "six long tasks queued before two workers: both run some" "$(cat "$work/who")" "five four "
kill -TERM "$p1" "$p2"; wait "$p1" "$p2"; p1="" p2=""

"$ppd" --queue "redis://127.0.0.1/" -P "$work/plugins" 2> "$work/log3"
check "an address without a stream: usage error" "$?" 2
grep -q "redis://HOST\[:PORT\]/STREAM" "$work/log3" && ok "... which says the form" \
    || bad "bad address: $(cat "$work/log3")"
"$ppd" --queue "redis://127.0.0.1:1/jobs" -P "$work/plugins" 2> "$work/log3"
check "a server that is not there at start: exit 2" "$?" 2
grep -q "cannot connect to 127.0.0.1:1" "$work/log3" && ok "... saying so" \
    || bad "no server: $(cat "$work/log3")"

summary
