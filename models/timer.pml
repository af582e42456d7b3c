/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The timer thread's sleep of src/core/timer.c, for spin.
 *
 * The timer thread (timer_main) loops: under the timer lock, it takes
 * every timer whose due time has come out of the heap and fires it (after
 * unlocking; here: counts it), or else reads the earliest due time, unlocks
 * and parks until then (pp__park_timed) or, with an empty heap, for good
 * (pp__park). Inserters (pp_schedule, and a tick's release putting a
 * periodic timer back) add a timer under the lock and unpark the thread
 * when theirs became the earliest. A canceller takes a timer out under
 * the lock and unparks nobody. A shutdown (pp__timers_close) sets closed
 * under the lock and unparks the thread, which must leave.
 *
 * Time is a counter that a clock process advances up to MAXT, any time
 * and in any interleaving; a timed park returns once a token is there or
 * the clock reached its deadline. The parker is park.h's three-state
 * token: an unpark before the park is kept, so the window between the
 * unlock and the park loses nothing. All due times are at most MAXT.
 *
 * Checked (spin -a; cc -DSAFETY; ./pan), when nothing can move any more
 * (the clock at MAXT): no timer is still in the heap unless cancelled (a
 * timer never waits past its time while the thread sleeps), and after a
 * shutdown the thread has left.
 *
 * Mutants that spin must reject (tests/sh/spin.sh): NO_TOP_UNPARK, an
 * inserter that never unparks (the thread sleeps to a later time, or for
 * ever, past an earlier timer); LOSSY_PARK, a parker whose unpark wakes
 * only a thread already asleep (the unpark in the window between the
 * unlock and the park is lost); NO_CLOSE_UNPARK, a shutdown that does not
 * wake the thread.
 */

#ifndef N
#define N 3             /* timers, each inserted once by its own inserter */
#endif
#ifndef MAXT
#define MAXT 3
#endif
#define NEVER 255

#define EMPTY    0
#define NOTIFIED 1
#define PARKED   2

byte now = 0;
bool lock = false;
byte tok = EMPTY;
byte due[N];            /* NEVER while not in the heap */
bool cancelled[N];
byte fired = 0;
bool closed = false;
bool left = false;      /* the timer thread returned */

inline acquire() { atomic { !lock -> lock = true } }
inline release() { lock = false }

inline unpark() {
#ifdef LOSSY_PARK
    atomic { if :: tok == PARKED -> tok = NOTIFIED :: else -> skip fi }
#else
    atomic { tok = NOTIFIED }
#endif
}

proctype clock() {
    do
    :: now < MAXT -> now++
    :: else -> break
    od
}

proctype timer_thread() {
    byte i, t, wake;
    bool sleep;
    acquire();
    do
    :: closed -> break
    :: else ->
        /* Take what is due (the C code fires it after unlocking; firing
         * touches nothing modelled here). */
        t = now;
        for (i : 0 .. N - 1) {
            if
            :: due[i] <= t -> due[i] = NEVER; fired++
            :: else -> skip
            fi
        }
        wake = NEVER;
        for (i : 0 .. N - 1) {
            if
            :: due[i] < wake -> wake = due[i]
            :: else -> skip
            fi
        }
        release();
        /* Park: consume a token at once, or sleep until one comes (or,
         * timed, until the clock reaches wake). */
        atomic {
            if
            :: tok == NOTIFIED -> tok = EMPTY; sleep = false
            :: else -> tok = PARKED; sleep = true
            fi
        }
        if
        :: !sleep -> skip
        :: sleep && wake == NEVER ->
end_asleep: atomic { tok == NOTIFIED -> tok = EMPTY }
        :: sleep && wake != NEVER ->
end_timed:  atomic { (tok == NOTIFIED || now >= wake) -> tok = EMPTY }
        fi;
        acquire()
    od;
    release();
    left = true
}

proctype inserter(byte i) {
    byte d;
    bool top;
    /* Any time, any due time from now on. */
    atomic {
        d = now;
        do
        :: d < MAXT -> d++
        :: true -> break
        od
    }
    acquire();
    due[i] = d;
    top = true;
    byte j;
    for (j : 0 .. N - 1) {
        if
        :: j != i && due[j] <= d -> top = false
        :: else -> skip
        fi
    }
    release();
#ifndef NO_TOP_UNPARK
    if
    :: top -> unpark()
    :: else -> skip
    fi
#endif
}

proctype canceller() {
    byte i;
    /* Cancels one timer, if it is still waiting. */
    select (i : 0 .. N - 1);
    acquire();
    if
    :: due[i] != NEVER -> due[i] = NEVER; cancelled[i] = true
    :: else -> skip
    fi;
    release()
}

proctype closer() {
    acquire();
    closed = true;
    release();
#ifndef NO_CLOSE_UNPARK
    unpark()
#endif
}

proctype monitor() {
    byte i;
    timeout ->
    if
    :: !closed ->
        for (i : 0 .. N - 1) {
            assert(due[i] == NEVER)
        }
    :: else -> assert(left)
    fi
}

init {
    byte i;
    atomic {
        for (i : 0 .. N - 1) { due[i] = NEVER }
        run clock();
        run timer_thread();
        for (i : 0 .. N - 1) { run inserter(i) }
#ifdef CANCEL
        run canceller();
#endif
#ifdef CLOSE
        run closer();
#endif
        run monitor()
    }
}
