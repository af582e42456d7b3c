# SPDX-License-Identifier: Apache-2.0
# Sourced by .ci/run: steps that time themselves, lanes that run steps
# side by side, and the table of where the time went.
#
#   step NAME CMD...    run CMD as one step: its wall and CPU time become a
#                       row of the table; a failing step ends the run
#   lane NAME FN        run the function FN (steps of its own) in the
#                       background, its output kept in a log of its own
#   join_lanes NAME...        wait for those lanes, print each one's log whole,
#                       and end the run if any failed
#   report              the table (called at exit, green or not)
#
# CPU time is the user + system time of everything the step ran, so a
# row's CPU/wall says how much of the two cores it used: below 1, a step
# waits on something (sleeps, one thread), and a lane beside it is nearly
# free.

# Wall clock in ms (bash 5's EPOCHREALTIME).
ci_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
ci_t0=$(ci_ms)
ci_rows=$(mktemp)
ci_lane=main
declare -A ci_lane_pid=()
ci_logs=$(mktemp -d)

ci_times=$(mktemp)
# ci_cpu: the CPU this shell's waited-for children have used, in ms. The
# builtin runs here, not in a $( ) subshell, which has no children of its
# own.
ci_cpu_now() {
    times > "$ci_times"
    ci_cpu=$(awk 'NR == 2 {
        t = 0
        for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
        printf "%d\n", t * 1000 }' "$ci_times")
}

step() {
    local name=$1 start cpu rc=0
    shift
    printf '\n=== %s [%s] (%s)\n' "$name" "$ci_lane" "$(date -u +%H:%M:%S)"
    start=$(ci_ms)
    ci_cpu_now
    cpu=$ci_cpu
    # In a subshell with -e, outside any || (where bash would ignore -e),
    # so that a failing command inside the step fails it.
    set +e
    ( set -e; "$@" )
    rc=$?
    set -e
    ci_cpu_now
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$((start - ci_t0))" "$(( $(ci_ms) - start))" \
        "$((ci_cpu - cpu))" "$ci_lane" "$rc" "$name" >> "$ci_rows"
    if [ "$rc" -ne 0 ]; then
        echo "*** step failed (exit $rc): $name" >&2
        exit "$rc"
    fi
}

lane() {
    local name=$1 fn=$2
    ( ci_lane=$name; "$fn" ) > "$ci_logs/$name.log" 2>&1 &
    ci_lane_pid[$name]=$!
    printf '\n=== lane %s started (%s); its log follows when it ends\n' "$name" "$(date -u +%H:%M:%S)"
}

join_lanes() {
    local name bad=0 rc
    for name in "$@"; do
        rc=0
        wait "${ci_lane_pid[$name]}" || rc=$?
        printf '\n======== lane %s (exit %s) ========\n' "$name" "$rc"
        cat "$ci_logs/$name.log"
        [ "$rc" -eq 0 ] || bad=$rc
    done
    [ "$bad" -eq 0 ] || { echo "*** a lane failed: $*" >&2; exit "$bad"; }
}

report() {
    local rc=$? total=$(( ($(ci_ms) - ci_t0) / 1000 ))
    set +e
    printf '\n=== where the time went (wall and CPU seconds; lanes ran side by side)\n'
    sort -n "$ci_rows" | awk -F'\t' -v total="$total" '
        BEGIN { printf "%8s %7s %7s %5s  %-8s %s\n", "at", "wall", "cpu", "cpu/w", "lane", "step" }
        { at = int($1 / 1000)
          printf "%8s %7.0f %7.0f %5.2f  %-8s %s%s\n", sprintf("%d:%02d", at / 60, at % 60),
                 $2 / 1000, $3 / 1000, ($2 > 0 ? $3 / $2 : 0), $4, $6,
                 ($5 != 0 ? "  (FAILED)" : "") }
        END { printf "%8s %7d  total, %d:%02d\n", "", total, total / 60, total % 60 }'
    if [ "$total" -gt 3600 ]; then
        printf '\n*** WARNING: CI took %d min, over 60: the hard limit is 90, past which nothing lands.\n' \
            "$((total / 60))"
    fi
    rm -rf "$ci_rows" "$ci_logs" "$ci_times"
    exit "$rc"
}
