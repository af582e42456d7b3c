#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# parkpoold --queue against a real redis-server (its own, on a loopback
# port, in a temporary folder): two workers share 20,000 hash.sha256
# entries over a generated tree; one is killed (SIGKILL) mid-run and the
# other claims what it held; every entry ends with exactly one result, the
# hashes are sha256sum's, nothing is left pending; an entry no worker can
# run goes to the dead letters after --max-deliveries; a failing task is a
# "failed" result; SIGTERM drains and exits 0. Skipped (77) without
# redis-server or a parkpoold built with hiredis.
set -u
top_builddir=${top_builddir:-.}
ppd="$top_builddir/parkpoold"
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/testlib.sh"

command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || {
    echo "SKIP: redis-server not installed (Debian: apt-get install redis-server)"; exit 77; }
"$ppd" --queue redis://127.0.0.1:1/probe -P /nonexistent 2>&1 | grep -q "without hiredis" && {
    echo "SKIP: parkpoold built without hiredis"; exit 77; }

work=$(mktemp -d) || exit 1
port=$((20000 + $$ % 20000))
p1="" p2=""
cleanup() {
    for _p in $p1 $p2; do kill -9 "$_p" 2>/dev/null; done
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
    --logfile "$work/redis.log" --daemonize yes || { bad "redis-server did not start"; summary; exit 1; }
rc() { redis-cli -p "$port" "$@"; }
i=0; while ! rc ping >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url="redis://127.0.0.1:$port/jobs"

mkdir "$work/plugins" "$work/tree"
cp "$top_builddir/plugins/.libs/demo.so" "$top_builddir/plugins/.libs/hash.so" "$work/plugins/"

# --- 20,000 files, one entry each, added before any worker runs
n=20000
(cd "$work/tree" && i=0 && while [ $i -lt 200 ]; do mkdir d$i; i=$((i + 1)); done)
awk -v n=$n -v dir="$work/tree" 'BEGIN { for (i = 0; i < n; i++) {
    f = sprintf("%s/d%d/f%d", dir, i % 200, i); print "file " i " of the tree" > f; close(f);
    printf "XADD jobs * type hash.sha256 arg %s id h%d\n", f, i } }' > "$work/adds"
rc < "$work/adds" > /dev/null
check "20,000 entries queued" "$(rc XLEN jobs)" $n

"$ppd" --queue "$url" --consumer one -P "$work/plugins" -j 2 --claim-after 2 -t 10 \
    2> "$work/log1" &
p1=$!
"$ppd" --queue "$url" --consumer two -P "$work/plugins" -j 2 --claim-after 2 -t 10 \
    --max-deliveries 2 2> "$work/log2" &
p2=$!
results() { rc XLEN jobs:results; }
i=0; while [ "$(results)" -lt 3000 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 "$p1"; wait "$p1" 2>/dev/null; p1=""
ok "worker one killed (SIGKILL) after $(results) results"
rc XADD jobs '*' type nope.never arg x id poison > /dev/null
rc XADD jobs '*' type demo.fail arg bad id fails > /dev/null
i=0; while [ "$(results)" -lt $((n + 1)) ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
i=0; while [ "$(rc XLEN jobs:dead)" -lt 1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "every entry has a result" "$(results)" $((n + 1))
grep -q "queue: claimed" "$work/log2" && ok "worker two claimed what worker one held" \
    || ok "worker one held nothing to claim when it was killed"
check "nothing left pending" "$(rc XPENDING jobs parkpool | head -n 1)" 0

# The results: "id", then its value, and so on; one per entry, the hashes sha256sum's.
rc XRANGE jobs:results - + > "$work/raw"
awk 'prev == "id" { id = $0 } prev == "output" { out[id] = $0 } prev == "status" { st[id] = $0 }
     { prev = $0 } END { for (k in out) print k "\t" st[k] "\t" out[k] }' "$work/raw" > "$work/by_id"
check "exactly one result per id" "$(grep -c '^id$' "$work/raw")" "$(wc -l < "$work/by_id" | tr -d ' ')"
grep '^h' "$work/by_id" | cut -f3 | sort > "$work/got"
(cd "$work/tree" && find "$work/tree" -type f | xargs sha256sum) | sort > "$work/want"
if cmp -s "$work/got" "$work/want"; then ok "the hashes are sha256sum's"
else bad "hashes differ: $(diff "$work/got" "$work/want" | head -n 5)"; fi
check "a failing task: a failed result" "$(grep '^fails' "$work/by_id" | cut -f2)" failed
rc XRANGE jobs:dead - + > "$work/dead"
grep -q '^poison$' "$work/dead" && grep -q 'delivered more than' "$work/dead" \
    && ok "an entry no worker can run is a dead letter after --max-deliveries" \
    || bad "dead letters: $(cat "$work/dead")"

kill -TERM "$p2"; wait "$p2"
check "SIGTERM: worker two drains and exits 0" "$?" 0
p2=""
grep -q "queue: drained:" "$work/log2" && ok "... and says what it did" || bad "log: $(tail -n 3 "$work/log2")"

"$ppd" --queue "redis://127.0.0.1/" -P "$work/plugins" 2> "$work/log3"
check "an address without a stream: usage error" "$?" 2
grep -q "redis://HOST\[:PORT\]/STREAM" "$work/log3" && ok "... which says the form" \
    || bad "bad address: $(cat "$work/log3")"
"$ppd" --queue "redis://127.0.0.1:1/jobs" -P "$work/plugins" 2> "$work/log3"
check "a server that is not there at start: exit 2" "$?" 2
grep -q "cannot connect to 127.0.0.1:1" "$work/log3" && ok "... saying so" \
    || bad "no server: $(cat "$work/log3")"

summary
