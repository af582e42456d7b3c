#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Shell tests of the parkpool tool: the commands, plugins, exit statuses,
# Ctrl-C, the progress bar, bench, streaming (tests/support/clienv.sh says
# how they run; run.sh and hash.sh test the input, the output and hashing).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/clienv.sh"

# --- hash.sha1 over a tree of 2,000 files is exactly what sha1sum prints
mkdir -p "$work/tree"
i=0
while [ $i -lt 2000 ]; do
    d="$work/tree/d$((i % 20))"
    mkdir -p "$d"
    printf 'file %d\n%s\n' "$i" "$(printf '%*s' $((i % 97)) '')" > "$d/f$i"
    i=$((i + 1))
done
find "$work/tree" -type f | sort > "$work/list"
sed 's/^/hash.sha1 /' "$work/list" > "$work/jobs"
xargs sha1sum < "$work/list" > "$work/want"
pp run -j 4 -f "$work/jobs" > "$work/got" 2> "$work/err"
check "hash.sha1 x 2000 exit status" "$?" 0
sort "$work/got" > "$work/got.sorted"
sort "$work/want" > "$work/want.sorted"
if cmp -s "$work/got.sorted" "$work/want.sorted"; then ok "hash.sha1 x 2000 = sha1sum (sorted)"; else bad "hash.sha1 x 2000 differs from sha1sum"; fi
pp run -j 4 -k -f "$work/jobs" > "$work/got.k" 2>/dev/null
if cmp -s "$work/got.k" "$work/want"; then ok "-k keeps input order"; else bad "-k output not in input order"; fi
pp run -j 3 hash.md5 $(head -n 50 "$work/list") > "$work/md5" 2> "$work/md5.err"
rc=$?
head -n 50 "$work/list" | xargs md5sum | sort > "$work/md5.want"
if sort "$work/md5" | cmp -s - "$work/md5.want"; then ok "hash.md5 from the command line = md5sum"
else bad "hash.md5 differs from md5sum (exit $rc, $(wc -l < "$work/md5") lines): $(sort "$work/md5" | diff - "$work/md5.want" | head -n 4) $(head -c 300 "$work/md5.err")"; fi

# --- PARKPOOL_PLUGIN_PATH: a list in the OS's own form (';' on Windows)
mkdir "$work/extra"
cp "${top_builddir:-.}/tests/plugins/.libs/tp_good$dso" "$work/extra/"
check "PARKPOOL_PLUGIN_PATH list" \
    "$(PARKPOOL_PLUGIN_PATH="$work/none$sep$work/extra" pp run good.echo listed 2>/dev/null | tr -d '\r')" listed

# --- options may follow the tasks; "--" ends them
check "options after tasks" "$(pp run demo.echo a b -k -j 2 2>/dev/null | tr '\n' ' ')" "a b "
check "-- ends the options" "$(pp run -- demo.echo -x 2>/dev/null)" "-x"

# --- exit statuses
pp run exec.sh 'echo hi' > "$work/out" 2>/dev/null
check "exec.sh success exits 0" "$?" 0
check "exec.sh output" "$(tr -d '\r' < "$work/out")" hi    # cmd.exe ends lines in CR LF
pp run exec.sh 'exit 3' > /dev/null 2> "$work/err"
check "exec.sh exit 3 exits 1" "$?" 1
if grep -q 'exec.sh exit 3: the child process exited with status 3' "$work/err"; then ok "exec.sh failure reported"; else bad "exec.sh failure not reported: $(cat "$work/err")"; fi
pp run hash.sha1 "$work/missing" > /dev/null 2> "$work/err"
check "unreadable file exits 1" "$?" 1
grep -qi "no such file\|cannot find the file\|file not found" "$work/err" && ok "unreadable file reported with the OS error" || bad "no OS error in: $(cat "$work/err")"
pp run hash.sha11 x > /dev/null 2> "$work/err"
check "unknown type exits 2" "$?" 2
grep -q "did you mean 'hash.sha1'" "$work/err" && ok "did-you-mean suggestion" || bad "no suggestion in: $(cat "$work/err")"
printf 'demo.echo a\n\n# comment\ndemo.echo b\ndemo.echo\n' > "$work/badjob"
pp run -f "$work/badjob" > "$work/out" 2> "$work/err"
check "malformed job line exits 2" "$?" 2
grep -q "line 5: expected 'TYPE ARG'" "$work/err" && ok "malformed line named by number" || bad "no line number in: $(cat "$work/err")"
pp run -f "$work/nope" > /dev/null 2> "$work/err"
check "unreadable job file exits 2" "$?" 2
# A folder opens on Linux and fails only when read (EISDIR): not an empty job list.
pp run -f "$work" > /dev/null 2> "$work/err"
check "a folder as job file exits 2" "$?" 2
grep -q "cannot read job file" "$work/err" && ok "a folder as job file reported" || bad "no read error in: $(cat "$work/err")"
pp run demo.sleep abc > /dev/null 2> "$work/err"
check "bad argument exits 2" "$?" 2
pp frobnicate > /dev/null 2>&1
check "unknown command exits 2" "$?" 2
pp run > /dev/null 2>&1
check "no tasks exits 2" "$?" 2
pp --version | grep -q '^parkpool ' && ok "--version" || bad "--version"
pp --help | grep -q 'usage: parkpool' && ok "--help" || bad "--help"
pp plugins | grep -q 'hash.sha1' && ok "plugins lists hash.sha1" || bad "plugins"
pp plugins --json | grep -q '"name":"exec.sh"' && ok "plugins --json" || bad "plugins --json"
# What a queue may run twice, as the plugins say (ABI 1.1): hash's types, not exec.sh.
pp plugins | grep -q 'hash.sha256 .*\[idempotent\]' && ! pp plugins | grep -q 'exec.sh .*idempotent' \
    && ok "plugins marks the idempotent types" || bad "idempotent: $(pp plugins)"
pp plugins --json | grep -q '"name":"exec.sh"[^}]*"idempotent":false' \
    && pp plugins --json | grep -q '"name":"hash.md5"[^}]*"idempotent":true' \
    && ok "plugins --json: idempotent" || bad "plugins --json idempotent"
printf 'demo.echo x\ndemo.fail y\n' | pp run --json -f - > "$work/out" 2>/dev/null
check "--json exit status" "$?" 1
check "--json done" "$(json_field "$work/out" done)" 1
check "--json failed" "$(json_field "$work/out" failed)" 1

# --- Ctrl-C: once drains, twice cancels (wine turns SIGINT into the
# console's CTRL_C_EVENT, so this runs for Windows too). The handler is in
# place once a task has run, so each run's first task prints a line and the
# signal waits for it: a background job ignores SIGINT until then.
echo "demo.echo ready" > "$work/sleeps"
i=0
while [ $i -lt 40 ]; do echo "demo.sleep 150" >> "$work/sleeps"; i=$((i + 1)); done
${PP_WRAP:-} "$ppbin" run -j 2 --json -f "$work/sleeps" > "$work/out1" 2> "$work/int1" &
pid=$!
ready "$work/out1"
kill -INT $pid
wait $pid
check "one SIGINT exits 130" "$?" 130
# The first Ctrl-C stops the input where it is (under load the reader may
# not have queued all 41 yet): everything queued by then runs.
check "one SIGINT drains: done = submitted" "$(json_field "$work/out1" done)" "$(json_field "$work/out1" submitted)"
check "one SIGINT drains: cancelled" "$(json_field "$work/out1" cancelled)" 0
${PP_WRAP:-} "$ppbin" run -j 2 --json -f "$work/sleeps" > "$work/out2" 2> "$work/int2" &
pid=$!
ready "$work/out2"
# Two signals sent together may arrive as one, so keep sending until it ends.
n=0
while kill -INT $pid 2>/dev/null && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
wait $pid
check "two SIGINTs exit 130" "$?" 130
done2=$(json_field "$work/out2" done)
cancelled2=$(json_field "$work/out2" cancelled)
failed2=$(json_field "$work/out2" failed)
# Running sleeps that stop early count as cancelled, each reported once.
if [ "${cancelled2:-0}" -gt 0 ] && [ "$failed2" = 0 ] && [ $((done2 + cancelled2)) -eq 41 ]; then
    ok "two SIGINTs cancel the queue ($done2 done, $cancelled2 cancelled)"
else
    bad "two SIGINTs: done=$done2 failed=$failed2 cancelled=$cancelled2"
fi
contains "$work/int2" "Ctrl-C: input stopped, draining" "the first Ctrl-C says what it does"
contains "$work/int2" "Ctrl-C: cancelling" "the second Ctrl-C says what it does"
grep -q "cancelled before it ran" "$work/int2" && bad "running tasks reported as never run" \
    || ok "no running task reported as never run"
running=$(grep -c "demo.sleep 150: cancelled while running" "$work/int2")
if [ "$running" -le 2 ]; then ok "each stopped task reported once ($running)"; else bad "$running reports for 2 workers"; fi

# A task that hears the cancel (hashing an endless file) stops, reported
# once as cancelled; one that does not (demo.spin) is left behind by the
# third Ctrl-C, which ends the process at once with the summary so far.
if [ -r /dev/zero ] && [ "$windows" != 1 ]; then
    printf 'demo.echo ready\nhash.sha1 /dev/zero\n' > "$work/zero"
    ${PP_WRAP:-} "$ppbin" run -j 2 --json -f "$work/zero" > "$work/out3" 2> "$work/int3" &
    pid=$!
    ready "$work/out3"
    sigint_until "$work/int3" "draining" $pid
    sigint_until "$work/int3" "cancelling" $pid
    wait $pid
    check "hashing /dev/zero stops at the second Ctrl-C" "$?" 130
    contains "$work/int3" "hash.sha1 /dev/zero: cancelled while running" "the stopped hash is reported as cancelled"
    check "the stopped hash counts as cancelled" "$(json_field "$work/out3" cancelled)" 1
fi
printf 'demo.echo ready\ndemo.spin 120000000\n' > "$work/spin"
${PP_WRAP:-} "$ppbin" run -j 2 --json -f "$work/spin" > "$work/out4" 2> "$work/int4" &
pid=$!
ready "$work/out4"
sigint_until "$work/int4" "draining" $pid
sigint_until "$work/int4" "cancelling" $pid
sigint_until "$work/int4" "quitting now" $pid
wait $pid
check "the third Ctrl-C ends a run whose task ignores the cancel" "$?" 130
contains "$work/int4" "Ctrl-C: quitting now; 1 tasks still running" "the third Ctrl-C says what it does"
check "the third Ctrl-C prints the summary so far" "$(json_field "$work/out4" done)" 1

# --- the progress bar: on a pseudo-terminal, never in a pipe
if [ "$windows" = 1 ]; then
    echo "SKIP: progress bar on a terminal (no pty for a Windows console)"
elif command -v script > /dev/null 2>&1; then
    script -qec "$ppbin run -j 1 demo.sleep 300 300 300" /dev/null > "$work/tty" 2>&1
    grep -q 'ETA\|/s' "$work/tty" && ok "progress bar on a terminal" || bad "no progress bar under script"
else
    echo "SKIP: script(1) not installed"
fi
pp run -j 1 demo.sleep 300 300 300 > "$work/piped" 2>&1
grep -q 'ETA' "$work/piped" && bad "progress bar in a pipe" || ok "no progress bar when piped"
pp run --progress -j 1 demo.sleep 300 300 > /dev/null 2> "$work/forced"
grep -q 'ETA' "$work/forced" && ok "--progress forces it" || bad "--progress ignored"

# --- parkpool bench runs the benchmark built beside it (Linux only)
if [ "$windows" = 1 ]; then
    pp bench --quick > /dev/null 2> "$work/bench.err"
    check "bench without the benchmark exits 2" "$?" 2
    grep -q 'not installed' "$work/bench.err" && ok "bench says why" || bad "bench: $(cat "$work/bench.err")"
else
    pp bench --quick --reps 1 --only parkpool --out "$work/bench" > "$work/bench.out" 2>&1
    check "bench --quick exits 0" "$?" 0
    # The main job table: parkpool and coreutils figures for each digest.
    check "bench: the main job's rows" "$(grep -cE '^(sha256|sha1|md5) +[0-9.]+ +[0-9.]+ +[0-9.]+' "$work/bench.out")" 3
    grep -qE '^main job: a stream of 200000 lines \(hash.sha1\): max RSS [0-9.]+ MiB, with -k [0-9.]+ MiB' \
        "$work/bench.out" && ok "bench: the stream's memory" || bad "bench: no stream memory line"
    rows=$(grep -cE '^parkpool +[24]( +[0-9.]+[ *]){7} +[0-9.]+[ *]?$' "$work/bench.out")
    check "bench: a row of figures for 2 and 4 workers" "$rows" 2
    [ -s "$work/bench/results.csv" ] && ok "bench wrote results.csv" || bad "bench wrote no results.csv"
    pp bench --quick --reps 1 --only parkpool --work W6 --out "$work/made/for/it" > /dev/null 2>&1
    [ -s "$work/made/for/it/results.csv" ] && ok "bench makes its --out folder" || bad "bench --out folder not made"
    pp bench --quick --reps 1 --only parkpool --work W6 --out /proc/no/such > /dev/null 2> "$work/bench.err"
    check "bench with a folder it cannot make exits 2" "$?" 2
    contains "$work/bench.err" "cannot make the results folder /proc/no/such" "bench says which folder"
    pp bench --quick --reps 1 --only parkpool --work W6 --out "$work/bench" > "$work/bench.out" 2>&1
    rows=$(grep -cE '^parkpool +[24]( +-){7} +[0-9.]+[ *]?$' "$work/bench.out")
    check "bench --work W6: only W6 figures" "$rows" 2
    # The spread: each figure's least and greatest run, in the table and
    # the files, and '*' exactly where they span more than a quarter of
    # the median (what the CSV says decides what the table must show).
    pp bench --quick --reps 3 --only parkpool --work W6 --out "$work/bench" > "$work/bench.out" 2>&1
    rows=$(grep -cE '^parkpool +[24]( +-){7} +[0-9.e+]+-[0-9.e+]+$' "$work/bench.out")
    check "bench --reps 3: a least-greatest row for 2 and 4 workers" "$rows" 2
    head -n 1 "$work/bench/results.csv" | grep -q ',w6_ns_per_task,w6_ns_per_task_min,w6_ns_per_task_max' \
        && ok "bench: results.csv has each figure's min and max" || bad "bench: no min/max columns"
    want=$(awk -F, '$1 == "parkpool" { print $2, ($26 - $25 > 0.25 * $24) ? "*" : "-" }' \
        "$work/bench/results.csv")
    got=$(awk '$1 == "parkpool" && NF == 10 && $10 !~ /[0-9]-/ { print $2, ($10 ~ /\*$/) ? "*" : "-" }' "$work/bench.out")
    [ -n "$want" ] && [ "$want" = "$got" ] && ok "bench flags exactly the figures whose runs spread over 25%" \
        || bad "bench: flags '$got', the CSV's spread says '$want'"
    pp bench --no-such-option > /dev/null 2>&1
    check "bench passes a bad option's exit status on" "$?" 2
    pp bench --quick --work W1,W7 > /dev/null 2>&1
    check "bench refuses a workload it does not have" "$?" 2
fi

# --- streaming: 300,000 lines in bounded memory (the whole file at ~8 KiB
# a task would need over 2 GB of address space)
awk 'BEGIN { for (i = 0; i < 300000; i++) print "demo.echo " i }' > "$work/big"
if [ "$windows" = 1 ]; then    # wine itself needs more address space than the limit
    pp run -j 2 -q -f "$work/big" > "$work/big.out" 2> "$work/big.err"
else
    (ulimit -v 1000000; pp run -j 2 -q -f "$work/big" > "$work/big.out" 2> "$work/big.err")
fi
check "300,000-line job file exits 0" "$?" 0
check "300,000 results" "$(wc -l < "$work/big.out" | tr -d ' ')" 300000

summary
