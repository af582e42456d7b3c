#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Model-checks the sleep/wake protocol with spin: models/sleepwake.pml must
# verify (no invalid end state, no task left queued while a worker sleeps,
# no worker left asleep after a drain) and its mutants (sleepwake_naive.pml,
# NO_NESTED_WAKE, STEAL_REORDER and NO_LEAVE_WAKE) must be rejected, which shows that the
# check can bite; with ELASTIC it checks workers that start on demand and
# retire (and rejects RETIRE_WHEN_POPPED and SPLIT_AVAIL); with INJECTOR
# the protocol a lock-free global queue must keep (and rejects CHECK_FIRST,
# SHUT_THEN_PUSH and UNCOUNTED_BATCH). models/timer.pml
# checks the timer thread's timed sleep against inserters, a canceller and
# a shutdown (no timer waits past its time, the thread leaves on shutdown)
# and rejects NO_TOP_UNPARK, LOSSY_PARK and NO_CLOSE_UNPARK. PP_SPIN_FULL=1
# adds the largest configurations (two to five minutes and 3 GB or more
# each; .ci/run sets it). The checks run PP_SPIN_JOBS at a time (the cores,
# at most two by default); PP_SPIN_QUICK=1 runs each model's first only.
set -u
SPIN=${SPIN:-spin}
CC=${CC:-cc}
models="${top_srcdir:-.}/models"
passed=0
failed=0

if ! command -v "$SPIN" >/dev/null 2>&1; then
    echo "spin.sh: spin not found; install it (Debian: apt-get install spin)"
    echo "0 passed, 1 failed"
    exit 1
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$models"/*.pml "$work"/ || exit 1
cd "$work" || exit 1

# check MODEL EXPECT DEFINES...: EXPECT is "verified" or "rejected". Checks
# are queued here and run by run_checks, PP_SPIN_JOBS at a time; big ones
# (check_big: a minute or more) first, so that none of them starts last.
# With PP_SPIN_QUICK=1 only each model's first check is queued: enough to
# show the model is there and spin reads it (make distcheck's run).
njobs=0
check() {
    if [ "${PP_SPIN_QUICK:-0}" = 1 ]; then
        [ -e "seen.$1" ] && return 1
        : > "seen.$1"
    fi
    njobs=$((njobs + 1))
    printf '%s\n' "$*" > "job.$njobs"
}
check_big() {
    check "$@" && : > "big.$njobs"
}

# run_one N: the Nth check, in a folder of its own; its report in result.N.
run_one() {
    n=$1
    # shellcheck disable=SC2046 # the job's words are the check's arguments
    set -- $(cat "job.$n")
    model=$1 expect=$2
    shift 2
    label="$model $*"
    dir=run.$n
    mkdir "$dir" && cp ./*.pml "$dir"/ && cd "$dir" || return
    start=$(date +%s)
    # A mutant's counterexample comes within a second: its verifier is not
    # worth the 5 s that -O2 adds to compiling it.
    opt=-O2
    [ "$expect" = rejected ] && opt=-O0
    if ! "$SPIN" "$@" -a "$model" >spin.out 2>&1 \
       || ! $CC $opt -DSAFETY -DCOLLAPSE -w -o pan pan.c >cc.out 2>&1; then
        { echo "FAIL: $label: could not build the verifier"; cat spin.out cc.out; } > "../result.$n"
        cd .. && rm -rf "$dir"
        return
    fi
    ./pan -m2000000 >pan.out 2>&1
    took=$(( $(date +%s) - start ))
    states=$(awk '/states, stored/ { print $1; exit }' pan.out)
    if [ "$expect" = verified ] && grep -q 'errors: 0$' pan.out \
       && ! grep -q 'max search depth too small' pan.out; then
        echo "PASS: $label: verified, $states states, $took s"
    elif [ "$expect" = rejected ] && grep -q 'assertion violated' pan.out; then
        echo "PASS: $label: lost wakeup found, as it must be, $took s: $(grep -m1 'assertion violated' pan.out)"
    else
        echo "FAIL: $label: expected $expect"
        cat pan.out
    fi > "../result.$n"
    cd .. && rm -rf "$dir"
}

# Each runner takes the next check nobody has taken (mkdir is the claim:
# it succeeds for one runner only), so a long check does not hold up the
# short ones behind it.
run_checks() {
    jobs=${PP_SPIN_JOBS:-$(nproc 2>/dev/null || echo 1)}
    [ "$jobs" -gt 2 ] && [ -z "${PP_SPIN_JOBS:-}" ] && jobs=2    # 3 GB and more each
    r=0
    while [ $r -lt "$jobs" ]; do
        (   for pass in big small; do
                i=1
                while [ $i -le $njobs ]; do
                    size=small
                    [ -f "big.$i" ] && size=big
                    if [ "$size" = "$pass" ] && mkdir "claim.$i" 2>/dev/null; then
                        (run_one $i)
                    fi
                    i=$((i + 1))
                done
            done ) &
        r=$((r + 1))
    done
    wait
    i=1
    while [ $i -le $njobs ]; do
        if [ -f "result.$i" ]; then
            cat "result.$i"
            case $(head -n 1 "result.$i") in
                PASS:*) passed=$((passed + 1)) ;;
                *) failed=$((failed + 1)) ;;
            esac
        else
            echo "FAIL: $(cat "job.$i"): no result"
            failed=$((failed + 1))
        fi
        i=$((i + 1))
    done
}

# W workers, S outside submitters of T tasks each, NEST nested submits.
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1
check sleepwake.pml verified -DW=2 -DS=1 -DT=2 -DNEST=2 -DSPURIOUS=1
check_big sleepwake.pml verified -DW=3 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=0
# Three children of one task: a steal's surplus pushed into the thief's deque.
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=3 -DSPURIOUS=0
# Elastic: workers start on demand and retire after a timed-out sleep.
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1 -DELASTIC
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=3 -DSPURIOUS=0 -DELASTIC
if [ "${PP_SPIN_FULL:-0}" = 1 ]; then
    check_big sleepwake.pml verified -DW=3 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1
    check_big sleepwake.pml verified -DW=2 -DS=1 -DT=2 -DNEST=2 -DSPURIOUS=1 -DELASTIC
fi
# The lost wakeup on the global queue, on a deque, and a nested submit
# that trusts the deque's owner to run its task.
check sleepwake_naive.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=0 -DSPURIOUS=0 -DNO_DRAIN
check sleepwake_naive.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=0 -DNO_DRAIN
# ... and at the end of a drain: a worker parks after the last one left.
check sleepwake_naive.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=0 -DSPURIOUS=0
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=0 -DNO_NESTED_WAKE
# The thief's decrement seen before its push (a relaxed RMW on ARM, POWER).
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=3 -DSPURIOUS=0 -DSTEAL_REORDER
# A drain's last worker out leaves the idle ones asleep.
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=0 -DNO_LEAVE_WAKE
# A worker that retires with a wake-up meant for work; one whose leaving
# a waker can see half done.
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1 -DELASTIC -DRETIRE_WHEN_POPPED -DNO_DRAIN
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1 -DELASTIC -DSPLIT_AVAIL -DNO_DRAIN

# The lock-free injector's protocol (src/core/inject.c, docs/design.md),
# fixed and elastic.
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1 -DINJECTOR
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=3 -DSPURIOUS=0 -DINJECTOR
check sleepwake.pml verified -DW=2 -DS=1 -DT=1 -DNEST=1 -DSPURIOUS=1 -DELASTIC -DINJECTOR
if [ "${PP_SPIN_FULL:-0}" = 1 ]; then
    # Two submitters; two tasks each from a submitter and a task (each
    # about 2 minutes and 3.2 GB).
    check_big sleepwake.pml verified -DW=2 -DS=2 -DT=1 -DNEST=0 -DSPURIOUS=0 -DINJECTOR
    check_big sleepwake.pml verified -DW=2 -DS=1 -DT=2 -DNEST=2 -DSPURIOUS=1 -DINJECTOR
fi
# Looking at the queue only before announcing; a look at shut apart from
# the push; a batch moved by a worker not counted as searching.
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=0 -DSPURIOUS=0 -DINJECTOR -DCHECK_FIRST -DNO_DRAIN
check sleepwake.pml rejected -DW=2 -DS=1 -DT=1 -DNEST=0 -DSPURIOUS=0 -DINJECTOR -DSHUT_THEN_PUSH
check sleepwake.pml rejected -DW=2 -DS=1 -DT=2 -DNEST=0 -DSPURIOUS=0 -DINJECTOR -DUNCOUNTED_BATCH -DNO_DRAIN

# The timer thread: N timers inserted at any time with any due time up to
# MAXT, with a canceller, with a shutdown.
check timer.pml verified -DN=2 -DMAXT=3
check timer.pml verified -DN=2 -DMAXT=3 -DCANCEL
check timer.pml verified -DN=2 -DMAXT=3 -DCLOSE
if [ "${PP_SPIN_FULL:-0}" = 1 ]; then
    check timer.pml verified -DN=3 -DMAXT=3
    check timer.pml verified -DN=3 -DMAXT=2 -DCANCEL
fi
# An inserter that does not wake the thread for an earlier timer; a parker
# that loses an unpark sent before the park; a shutdown that does not wake.
check timer.pml rejected -DN=2 -DMAXT=2 -DNO_TOP_UNPARK
check timer.pml rejected -DN=1 -DMAXT=2 -DLOSSY_PARK
check timer.pml rejected -DN=1 -DMAXT=1 -DCLOSE -DNO_CLOSE_UNPARK

run_checks
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
