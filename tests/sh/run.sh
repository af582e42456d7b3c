#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# parkpool run's input and output: the record grammar (TYPE ARG as
# written, CR LF, NUL, -0, --type, length), --check against streaming,
# escaped messages, the options' help, and what happens when stdout fails
# or goes away. See tests/support/clienv.sh for how it runs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/clienv.sh"

# --- a NUL byte in a line is an input error naming it, not a cut line
# (Not "nul": a name Windows keeps for its null device, whatever follows the dot.)
printf 'demo.echo abc\0def\ndemo.echo second\n' > "$work/zero-byte"
pp run -k -f "$work/zero-byte" > "$work/out" 2> "$work/err"
check "a NUL in a line exits 2" "$?" 2
contains "$work/err" "line 1: a NUL byte in the line" "the NUL line is named"
check "nothing from a line with a NUL" "$(cat "$work/out")" ""

# --- the argument as written: one separator, blanks kept, CR LF removed
printf 'demo.echo  two blanks \r\ndemo.echo\ttab\ndemo.echo a\r\r\n' | pp run -k -f - > "$work/out" 2>/dev/null
printf ' two blanks \ntab\na\r\n' > "$work/want"
cmp -s "$work/out" "$work/want" && ok "ARG keeps its blanks, CR LF removed" \
    || bad "ARG as written: got $(od -An -c "$work/out")"

# --- --type: each record, or each word, is one argument
printf 'x\ny z\n' | pp run -k --type demo.echo > "$work/out" 2>/dev/null
check "--type reads arguments from stdin" "$(cat "$work/out" | tr '\n' '|')" "x|y z|"
pp run -k -T demo.echo a -- -b > "$work/out" 2>/dev/null
check "-T with words" "$(cat "$work/out" | tr '\n' '|')" "a|-b|"
pp run --type demo.nope x > /dev/null 2> "$work/err"
check "--type of an unknown type exits 2" "$?" 2
contains "$work/err" "did you mean 'demo.echo'?" "--type suggests a type"

# --- -0: NUL-terminated records keep newlines (and CRs) in their names
printf 'one\ntwo\0three\r\0' | pp run -k -0 --type demo.echo -f - > "$work/out" 2>/dev/null
printf 'one\ntwo\nthree\r\n' > "$work/want"
cmp -s "$work/out" "$work/want" && ok "-0 keeps newlines and CRs" \
    || bad "-0: got $(od -An -c "$work/out")"
printf 'demo.echo a\0demo.echo b' | pp run -k -0 -f - > "$work/out" 2>/dev/null
check "-0 TYPE ARG records, the last unterminated" "$(cat "$work/out" | tr '\n' '|')" "a|b|"

# --- a bad line: streaming runs the lines before it; --check runs nothing
printf 'demo.echo one\ndemo.nope x\ndemo.echo three\n' > "$work/bad"
pp run -k -f "$work/bad" > "$work/out" 2> "$work/err"
check "streaming: a bad line exits 2" "$?" 2
check "streaming: the lines before it ran, not after" "$(cat "$work/out")" "one"
pp run -k --check -f "$work/bad" > "$work/out" 2> "$work/err"
check "--check: a bad line exits 2" "$?" 2
check "--check: nothing ran" "$(cat "$work/out")" ""
contains "$work/err" "line 2: unknown task type 'demo.nope'" "--check names the bad line"
contains "$work/err" "1 bad line; --check runs nothing" "--check says it ran nothing"
awk 'BEGIN { for (i = 0; i < 50; i++) print "demo.nope " i }' > "$work/bad50"
pp run --check -f "$work/bad50" > /dev/null 2> "$work/err"
check "--check names the first 20 bad lines only" "$(grep -c 'unknown task type' "$work/err")" 20
contains "$work/err" "50 bad lines; --check runs nothing" "--check counts them all"
pp run -k --check -f "$work/jobs-none" > /dev/null 2>&1
check "--check of a missing file exits 2" "$?" 2
printf 'demo.echo one\ndemo.echo two\n' | pp run -k --check -f - > "$work/out" 2>/dev/null
check "--check of good input runs it all" "$(cat "$work/out" | tr '\n' '|')" "one|two|"

# --- control bytes in messages are escaped, never sent to the terminal
printf 'demo.n\033[31mope x\n' | pp run -f - > /dev/null 2> "$work/err"
contains "$work/err" "unknown task type 'demo.n\\x1b[31mope'" "an escape byte is shown as \\x1b"
if grep -q "$(printf '\033')" "$work/err"; then bad "raw escape byte on stderr"; else ok "no raw escape byte on stderr"; fi

# --- a record longer than the maximum is refused, not cut
if [ "$windows" = 1 ]; then
    echo "SKIP: 64 MiB line (slow under wine)"
else
    { printf 'demo.echo '; head -c 67108864 /dev/zero | tr '\0' a; printf '\ndemo.echo after\n'; } > "$work/long"
    pp run -f "$work/long" > "$work/out" 2> "$work/err"
    check "a line over 64 MiB exits 2" "$?" 2
    contains "$work/err" "line 1: longer than the maximum of 64 MiB" "the long line is named"
    check "nothing after the long line ran" "$(wc -c < "$work/out" | tr -d ' ')" 0
fi
# A long line under the maximum is read whole (several buffer growths).
{ printf 'demo.echo '; head -c 1000000 /dev/zero | tr '\0' b; printf '\n'; } > "$work/long1"
check "a 1 MB line is read whole" "$(pp run -f "$work/long1" 2>/dev/null | wc -c | tr -d ' ')" 1000001

# --- a task's output byte for byte: CR LF, NUL, no final LF (POSIX: cmd.exe has no printf)
if [ "$windows" != 1 ]; then
    pp run -q exec.sh "printf 'a\\r\\nb\\0c\\nlast'" > "$work/out" 2>/dev/null
    printf 'a\r\nb\0c\nlast' > "$work/want"
    cmp -s "$work/out" "$work/want" && ok "exec.sh output byte for byte" \
        || bad "exec.sh output: $(od -An -c "$work/out")"
    # The child gets SIGPIPE's default action back: yes stops when head does.
    check "exec.sh 'yes | head -1' ends" "$(pp run -q exec.sh 'yes | head -n 1' 2>&1)" y
    # A task's output is not held in memory: 400 MB through 300 MB of address space.
    check "400 MB of output in bounded memory" \
        "$( (ulimit -v 300000; pp run -q exec.sh 'yes | head -c 400000000' | wc -c) | tr -d ' ')" 400000000
    # A cancel ends the child.
    printf 'demo.echo ready\nexec.sh sleep 60\n' > "$work/sleep"
    start=$(date +%s)
    "$ppbin" run -j 2 --json -f "$work/sleep" > "$work/out" 2> "$work/err" &
    pid=$!
    ready "$work/out"
    sigint_until "$work/err" "draining" $pid
    sigint_until "$work/err" "cancelling" $pid
    wait $pid
    check "a cancelled exec.sh exits 130" "$?" 130
    if [ $(( $(date +%s) - start )) -lt 30 ]; then ok "the cancel ended the child"; else bad "the child ran on"; fi
    contains "$work/err" "exec.sh sleep 60: cancelled while running" "the stopped child is reported as cancelled"
fi

# --- a task that crashes the process: the report names what ran, -k's held
# results are printed, the process still dies of its signal
if [ "$windows" != 1 ]; then
    crashdir="${top_builddir:-.}/tests/plugins/crash/.libs"
    printf 'demo.echo first\ncrash.segv 300\ndemo.sleep 100\ndemo.echo third\ndemo.sleep 3000\n' > "$work/crash"
    pp run -P "$crashdir" -j 2 -k -f "$work/crash" > "$work/out" 2> "$work/err"
    check "a segfaulting task ends the run with SIGSEGV" "$?" 139
    contains "$work/err" "SIGSEGV in a task" "the crash is reported"
    contains "$work/err" "was running: crash.segv 300" "the crashing task is named"
    contains "$work/err" "was running: demo.sleep 3000" "the other running task is named"
    contains "$work/err" "so far: 3 done, 0 failed, 0 cancelled" "the counts so far"
    check "-k's finished results printed, in order" "$(cat "$work/out" | tr '\n' '|')" "first|third|"
    pp run -P "$crashdir" crash.abort 0 > /dev/null 2> "$work/err"
    check "an aborting task ends the run with SIGABRT" "$?" 134
    contains "$work/err" "SIGABRT in a task" "the abort is reported"
fi

# --- options: --help lists each, an unknown one is named
pp run --help > "$work/help"
for o in --type --file --null --check --jobs --keep-order --plugin-dir --progress --timeout \
         --retries --halt --joblog --dry-run --verbose --bar --eta \
         --no-progress --json --quiet --help; do
    grep -q -- "$o" "$work/help" || bad "run --help does not list $o"
done
ok "run --help lists every option"
# The man page covers every option that --help lists and every bundled type
# (compared without roff's backslashes: \-\-type is --type).
tr -d '\\' < "${top_srcdir:-$(dirname "$0")/../..}/parkpool.1" > "$work/man.txt"
for o in $(sed -n 's/^ *\(-., \)\{0,1\}--\([a-z-]*\).*/\2/p' "$work/help"); do
    grep -q -- "--$o" "$work/man.txt" || bad "parkpool.1 does not mention --$o"
done
for t in $(pp plugins | sed -n 's/^  \([a-z0-9]*\.[a-z0-9.]*\) .*/\1/p'); do
    grep -q "$t" "$work/man.txt" || bad "parkpool.1 does not mention $t"
done
ok "parkpool.1 covers the options and the bundled types"
pp run --frobnicate demo.echo x > /dev/null 2> "$work/err"
check "an unknown option exits 2" "$?" 2
contains "$work/err" "unknown option '--frobnicate'" "the unknown option is named"
pp run -q demo.echo x > /dev/null 2> "$work/err"
check "-q: no summary" "$(cat "$work/err")" ""

# --- -k with a slow first task: the window fills (4096), the reader waits
# for half of it to drain, order holds
{ echo "demo.sleep 500"; awk 'BEGIN { for (i = 0; i < 10000; i++) print "demo.echo " i }'; } > "$work/window"
pp run -j 2 -k -q -f "$work/window" > "$work/out" 2>/dev/null
check "-k past a full window exits 0" "$?" 0
awk 'BEGIN { for (i = 0; i < 10000; i++) print i }' > "$work/want"
cmp -s "$work/out" "$work/want" && ok "-k past a full window keeps the order" || bad "-k order broken past the window"

# --- --json: JSON Lines on stdout, one object per task, failures included,
# the summary last; valid for jq whatever the bytes
printf 'demo.echo a\ndemo.fail b\n' > "$work/jl"
[ "$windows" = 1 ] || printf 'exec.sh printf "x\\\\ny\\\\377z\\\\001"\n' >> "$work/jl"
pp run -k --json -f "$work/jl" > "$work/out" 2>/dev/null
check "--json exits as the run" "$?" 1
if command -v jq > /dev/null 2>&1; then
    jq -c . < "$work/out" > /dev/null 2>&1 && ok "--json is valid JSON Lines" || bad "jq refuses: $(cat "$work/out")"
    check "--json: the failed task's status" "$(jq -r 'select(.arg == "b") | .status' < "$work/out")" failed
    check "--json: a task's output lines" "$(jq -c 'select(.arg == "a") | .output' < "$work/out")" '["a"]'
    check "--json: the summary last" "$(tail -n 1 "$work/out" | jq -c '.summary | [.done, .failed]')" \
        "[$(if [ "$windows" = 1 ]; then echo 1; else echo 2; fi),1]"
    [ "$windows" = 1 ] || check "--json: bytes that are not UTF-8" \
        "$(jq -c 'select(.type == "exec.sh") | .output[1] | explode' < "$work/out")" '[121,255,122,1]'
else
    bad "jq is not installed (scripts/quickstart.sh installs it)"
fi

# --- --joblog: GNU parallel's columns
pp run -k -q --joblog "$work/log" demo.echo a b > /dev/null 2>&1
check "--joblog header" "$(head -n 1 "$work/log")" "$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand')"
check "--joblog a line per task" "$(cut -f 1,6,7,9 "$work/log" | tail -n 2 | tr '\t\n' ',|')" "1,2,0,demo.echo a|2,2,0,demo.echo b|"

# --- --retries: a failed task runs again, only the last run's output shows
pp run -q --retries 2 --joblog "$work/log" demo.fail x > "$work/out" 2> "$work/err"
check "--retries: still failing exits 1" "$?" 1
check "--retries: three runs, one output" "$(cat "$work/out")" x
check "--retries: one failure reported" "$(grep -c 'demo.fail x' "$work/err")" 1

# --- --timeout: the task is cancelled and fails, timed out
pp run --timeout 0.2 demo.sleep 100 20000 > /dev/null 2> "$work/err"
check "--timeout: a timed-out task exits 1" "$?" 1
contains "$work/err" "demo.sleep 20000: timed out after 0.2 s" "--timeout reports the task"
contains "$work/err" "1 done, 1 failed" "--timeout: the quick task is done"
pp run --timeout 0 demo.echo x > /dev/null 2>&1
check "--timeout 0 refused" "$?" 2

# --- --halt: now cancels the rest, running tasks too; soon lets the
# running ones finish and starts nothing more. Two workers: a long sleep
# runs while the other fails after a short one; the echo waits in the queue.
printf 'demo.sleep 1500\ndemo.sleep 100\ndemo.fail x\ndemo.echo after\n' > "$work/halt"
pp run -j 2 --halt now,fail=1 -f "$work/halt" > "$work/out" 2> "$work/err"
check "--halt now,fail=1 exits 1" "$?" 1
contains "$work/err" "1 done, 1 failed, 2 cancelled" "--halt now cancels the running sleep and the queued echo"
pp run -j 2 --halt soon,fail=1 -f "$work/halt" > "$work/out" 2> "$work/err"
check "--halt soon,fail=1 exits 1" "$?" 1
contains "$work/err" "2 done, 1 failed, 1 cancelled" "--halt soon lets the sleep finish, starts no echo"
check "--halt: only the failed task printed" "$(cat "$work/out")" x
pp run --halt later,fail=1 demo.echo x > /dev/null 2>&1
check "--halt with a bad value exits 2" "$?" 2

# --- --dry-run prints, runs nothing; -v names each task as it starts
check "--dry-run" "$(pp run --dry-run demo.fail a b 2>/dev/null | tr '\n' '|')" "demo.fail a|demo.fail b|"
pp run -v -j 1 demo.echo a > /dev/null 2> "$work/err"
contains "$work/err" "run: demo.echo a" "-v names the task"

# --- stdout that fails: reported, exit 1, and the run stops
if [ -w /dev/full ] && [ "$windows" != 1 ]; then
    pp run demo.echo x > /dev/full 2> "$work/err"
    check "a failed write exits 1" "$?" 1
    contains "$work/err" "parkpool: write error: No space left on device" "the write error is reported"
else
    echo "SKIP: /dev/full"
fi

# --- a reader that goes away ends the run at once, as SIGPIPE ends sha1sum
if [ "$windows" = 1 ]; then
    echo "SKIP: SIGPIPE"
else
    i=0; : > "$work/pairs"
    while [ $i -lt 1000 ]; do printf 'demo.echo %d\ndemo.sleep 10\n' $i >> "$work/pairs"; i=$((i + 1)); done
    start=$(date +%s)
    { pp run -j 2 -f "$work/pairs" 2> "$work/err"; echo $? > "$work/status"; } | head -n 1 > /dev/null
    took=$(( $(date +%s) - start ))
    check "a closed pipe ends it as SIGPIPE does" "$(cat "$work/status")" 141
    # All of it takes 5 s; stopping at the first failed write, well under.
    if [ "$took" -lt 3 ]; then ok "a closed pipe stops the run (${took} s)"; else bad "ran on for $took s after the reader left"; fi
    check "nothing said on a closed pipe" "$(cat "$work/err")" ""
fi

summary
