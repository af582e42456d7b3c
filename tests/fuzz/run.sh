#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make fuzz: run each libFuzzer target for SECONDS from its seed corpus
# (SRCDIR/tests/fuzz/corpus/NAME), keeping what it finds in
# tests/fuzz/work-NAME, JOBS targets at a time (each target is one
# process on one core). A target that finds a crash fails the run, with
# the end of its log.
#
#   tests/fuzz/run.sh SRCDIR SECONDS JOBS NAME...
set -u
srcdir=$1 seconds=$2 jobs=$3
shift 3

# run NAME: one target; its report in tests/fuzz/fuzz_NAME.result.
run() {
    mkdir -p "tests/fuzz/work-$1" || return 1
    if ./tests/fuzz/fuzz_"$1" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
            "tests/fuzz/work-$1" "$srcdir/tests/fuzz/corpus/$1" 2> "tests/fuzz/fuzz_$1.log"; then
        echo "fuzz_$1: $seconds s, $(awk '/^stat::number_of_executed_units/ { print $2 }' \
            "tests/fuzz/fuzz_$1.log") runs, nothing found"
    else
        echo "fuzz_$1: FAILED"
        tail -n 60 "tests/fuzz/fuzz_$1.log"
        return 1
    fi
}

# Each runner takes the next target nobody has taken (mkdir is the claim).
claims=$(mktemp -d) || exit 1
trap 'rm -rf "$claims"' EXIT
r=0
while [ "$r" -lt "$jobs" ]; do
    (   for name in "$@"; do
            mkdir "$claims/$name" 2>/dev/null || continue
            run "$name" > "tests/fuzz/fuzz_$name.result" 2>&1 || : > "$claims/$name/failed"
        done ) &
    r=$((r + 1))
done
wait
failed=0
for name in "$@"; do
    cat "tests/fuzz/fuzz_$name.result"
    [ -e "$claims/$name/failed" ] && failed=$((failed + 1))
done
[ "$failed" -eq 0 ]
