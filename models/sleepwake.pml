/*
 * The sleep/wake protocol of src/pool.c, for spin.
 *
 * W workers and S submitters (each submitting T tasks) share a queue,
 * guarded by one lock, and an idle stack. Each worker owns a three-state
 * parker modelled on the futex backend (src/park_futex.c): the futex
 * wait sleeps only while the word is PARKED, and may return spuriously
 * (up to SPURIOUS times per worker, so that the system can quiesce). A
 * shutdown (drain) races with the submitters.
 *
 * Checked (spin -a; cc -DSAFETY; ./pan):
 *  - no invalid end state: nobody is stuck but parked workers;
 *  - when nothing can move any more (timeout), no task is queued: a task
 *    never stays queued while every worker is parked;
 *  - (by construction of the model) a submit pops at most one idle worker.
 *
 * sleepwake_naive.pml defines NAIVE: the worker checks "queue empty" and
 * announces itself idle in two separate critical sections, the classic
 * lost wakeup. spin must find the violation there (tests/spin.sh).
 */
#ifndef W
#define W 3
#endif
#ifndef S
#define S 2
#endif
#ifndef T
#define T 2
#endif
#ifndef SPURIOUS
#define SPURIOUS 1
#endif

#define EMPTY    0
#define NOTIFIED 1
#define PARKED   2

/* Only what the protocol needs is state: every extra counter multiplies
 * the states spin must visit. A task that ran is one that left the queue,
 * so "no task stays queued" is "queue == 0 when nothing can move". */
bool lock;
byte queue;              /* tasks queued */
bool shut;               /* shutdown has begun */
byte idle[W];            /* LIFO stack of idle worker ids */
byte nidle;
byte tok[W];             /* parker state */
bool sleeping[W];        /* inside futex_wait */


/* old is the caller's scratch variable, cleared after use so that
 * states differing only in dead locals collapse into one. */
inline unpark(w, old) {
    atomic { old = tok[w]; tok[w] = NOTIFIED }
    atomic {
        if
        :: old == PARKED -> sleeping[w] = false   /* FUTEX_WAKE, one waiter */
        :: else -> skip
        fi;
        old = 0
    }
}

inline park(me, spurious, got) {
    /* NOTIFIED -> EMPTY (consume) or EMPTY -> PARKED, in one atomic step */
    atomic {
        if
        :: tok[me] == NOTIFIED -> tok[me] = EMPTY; got = true
        :: else -> tok[me] = PARKED
        fi
    }
    do
    :: got -> break
    :: else ->
        /* FUTEX_WAIT: sleep only if the word is still PARKED */
        atomic {
            if
            :: tok[me] == PARKED -> sleeping[me] = true
            :: else -> skip
            fi
        }
end_wait:
        if
        :: !sleeping[me] -> skip
        :: sleeping[me] && spurious < SPURIOUS -> sleeping[me] = false; spurious++
        fi;
        atomic {
            if
            :: tok[me] == NOTIFIED -> tok[me] = EMPTY; got = true
            :: else -> skip
            fi
        }
    od;
    got = false
}

/*
 * A critical section that touches only lock-protected variables is one
 * atomic step: while the lock is held nobody else can look at them, so the
 * interleavings inside it are invisible. Parker words are touched outside
 * the lock (or by the shutdown while it holds the lock) and keep their
 * separate steps, which is where the races live.
 */
#define RUN  1
#define PARK 2
#define EXIT 3
#define ANNOUNCE 4

proctype worker(byte me) {
    byte act, spurious;
    bool got;
    do
    :: atomic {
        !lock ->
        if
        :: queue > 0 -> queue--; act = RUN   /* the task runs unlocked */
        :: queue == 0 && shut -> act = EXIT
        :: queue == 0 && !shut ->
#ifdef NAIVE
            act = ANNOUNCE   /* mutant: saw it empty, announces idle later */
#else
            idle[nidle] = me; nidle++; act = PARK
#endif
        fi
       }
       if
       :: act == RUN -> skip
       :: act == EXIT -> break
       :: act == PARK -> park(me, spurious, got)
       :: act == ANNOUNCE ->
            atomic { !lock -> idle[nidle] = me; nidle++ }
            park(me, spurious, got)
       fi;
       act = 0
    od
}

proctype submitter() {
    byte k, w, old;
    bool wake;
    for (k : 1 .. T) {
        atomic {
            !lock ->
            wake = false;
            if
            :: shut -> skip   /* refused: PP_ESHUTDOWN */
            :: else ->
                queue++;
                if
                :: nidle > 0 -> nidle--; w = idle[nidle]; idle[nidle] = 0; wake = true
                :: else -> skip
                fi
            fi
        }
        /* unpark after unlocking, as enqueue() does */
        if
        :: wake -> unpark(w, old); w = 0; wake = false
        :: else -> skip
        fi
    }
}

/* Holds the lock across the unparks, as pp_pool_shutdown() does. */
proctype shutdown() {
    byte w, old;
    atomic { !lock -> lock = true; shut = true }
    do
    :: nidle > 0 -> nidle--; w = idle[nidle]; idle[nidle] = 0; unpark(w, old)
    :: else -> break
    od;
    lock = false
}

/* When nothing else can move, the protocol must have left no task behind. */
proctype monitor() {
    timeout ->
    assert(queue == 0)
}

init {
    byte i;
    atomic {
        for (i : 0 .. W - 1) { run worker(i) }
        for (i : 1 .. S) { run submitter() }
        run shutdown();
        run monitor()
    }
}
