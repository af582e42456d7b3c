#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make bench's fleet table: what a Redis Streams queue costs. N tasks that
# do next to nothing (demo.echo) through 1, 2 and 3 `parkpoold --queue`
# workers (-j 2 each) on this machine, timed from the first entry added to
# the last result read (`parkpool submit --wait`), against one
# `parkpool run -j 2` of the same lines; the median of REPS runs each, all
# in one run of this script. The queue's cost per task is the one-worker
# time less run's, over N. Its own redis-server on a loopback port, in a
# temporary folder.
#
#   bench/fleet.sh BUILDDIR [REPS] [quick]
set -u
b=${1:?usage: fleet.sh BUILDDIR [REPS] [quick]}
reps=${2:-3}
n=20000
[ "${3:-}" = quick ] && n=2000

. "$(dirname "$0")/../tests/support/redis.sh"

why=$(pp_redis_missing "$b/parkpoold")
[ -z "$why" ] || { echo "fleet: $why: no fleet table"; exit 0; }

work=$(mktemp -d) || exit 1
port=$((20000 + $$ % 20000))
pids=""
trap 'kill $pids 2>/dev/null; redis-cli -p $port shutdown nosave >/dev/null 2>&1; rm -rf "$work"' EXIT INT TERM
pp_redis_start "$work" "$port" no || { echo "fleet: redis-server did not start"; exit 1; }
url="redis://127.0.0.1:$port/bench"
seq "$n" | sed 's/^/x/' > "$work/args"

now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a - b }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# One timing of parkpool run.
run_once() {
    _t0=$(now)
    "$b/parkpool" run -j 2 --no-progress --type demo.echo -f "$work/args" > /dev/null 2>&1 || return 1
    sub "$(now)" "$_t0"
}

# One timing of K workers: started and idle before the clock starts.
fleet_once() {
    redis-cli -p "$port" del bench bench:results bench:dead > /dev/null
    pids=""
    _k=0
    while [ $_k -lt "$1" ]; do
        "$b/parkpoold" --queue "$url" --consumer "w$_k" -P "$b/plugins/.libs" -j 2 \
            2> "$work/log.$_k" &
        pids="$pids $!"
        _k=$((_k + 1))
    done
    _i=0
    while [ "$(grep -l ready "$work"/log.* 2>/dev/null | wc -l)" -lt "$1" ] && [ $_i -lt 100 ]; do
        sleep 0.1; _i=$((_i + 1)); done
    _t0=$(now)
    "$b/parkpool" submit --queue "$url" --type demo.echo -f "$work/args" --wait > /dev/null \
        2> "$work/submit.err" || { cat "$work/submit.err" >&2; return 1; }
    _t=$(sub "$(now)" "$_t0")
    kill -TERM $pids; wait $pids 2>/dev/null
    pids=""
    rm -f "$work"/log.*
    echo "$_t"
}

r=0; : > "$work/t.run"; : > "$work/t.1"; : > "$work/t.2"; : > "$work/t.3"
while [ $r -lt "$reps" ]; do
    run_once >> "$work/t.run" || { echo "fleet: parkpool run failed"; exit 1; }
    for k in 1 2 3; do
        fleet_once $k >> "$work/t.$k" || { echo "fleet: $k workers failed"; exit 1; }
    done
    r=$((r + 1))
done

echo
echo "fleet: $n demo.echo tasks through a Redis Streams queue ($(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/redis-server \1/p'), loopback), median of $reps"
printf '%-26s %8s %10s %9s %8s\n' "" "wall s" "tasks/s" "us/task" "vs run"
base=$(median < "$work/t.run")
row() {   # LABEL FILE
    awk -v l="$1" -v m="$(median < "$2")" -v n="$n" -v b="$base" \
        'BEGIN { printf "%-26s %8.3f %10.0f %9.1f %8.2f\n", l, m, n / m, m * 1e6 / n, m / b }'
}
row "parkpool run -j 2" "$work/t.run"
row "1 x parkpoold --queue -j 2" "$work/t.1"
row "2 x parkpoold --queue -j 2" "$work/t.2"
row "3 x parkpoold --queue -j 2" "$work/t.3"
awk -v one="$(median < "$work/t.1")" -v b="$base" -v n="$n" 'BEGIN {
    printf "the queue per task (1 worker less run): %.1f us (goal: under 50)\n", (one - b) * 1e6 / n }'
