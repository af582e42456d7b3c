/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sleep/wake protocol of src/core/sched.c, for spin.
 *
 * W workers, each with a deque (a count here) and a three-state parker
 * modelled on the futex backend (src/park/park_word.c: the futex wait sleeps
 * only while the word is PARKED, and may return spuriously, up to
 * SPURIOUS times per worker so that the system can quiesce). S outside
 * submitters each put T tasks on the global queue, under the queue lock.
 * A running task may submit children into its worker's deque (NEST of
 * them in all; accepted during a drain too) and may then block for good (one
 * task at most: a long task, during which only the other workers can run
 * what it queued). A drain shutdown may or may not come: a worker that
 * finds nothing leaves only once no task runs (else it goes idle, as a
 * running pool's do), and whoever leaves wakes every idle worker.
 *
 * Taking from the global queue may move a batch (here: one more task, or
 * none) into the taker's deque, under the lock. A steal takes half of the
 * victim's deque, (k + 1) / 2 of k tasks: one to run, the rest pushed into
 * the thief's own deque, and only then does found_work() decrement
 * nsearching (in C a release RMW: see found_work()). Every look at "the
 * deques" is a scan, one deque per step, as deques_busy() reads them.
 *
 * Workers search (take from the global queue, steal from a deque) while
 * counted in nsearching, give up at any moment (a spin budget running
 * out, or none at all because half the workers awake already search: the
 * cap on pollers needs no model of its own), and then go idle as
 * sched.c's search() does: under the lock, check the global queue,
 * announce themselves idle and stop counting as searching, then look at
 * the deques and take the announcement back if one holds a task. A
 * submitter wakes an idle worker only if nobody searches (outside
 * submitters: if fewer search than tasks wait in the global queue), and
 * counts it as searching; the last searcher to find work wakes one more
 * if more is visible. Promela is sequentially consistent: the C code
 * earns that for these accesses with its seq_cst fences.
 *
 * Checked (spin -a; cc -DSAFETY; ./pan):
 *  - no invalid end state: nobody is stuck but parked workers, blocked
 *    tasks and the workers that left;
 *  - when nothing can move any more (timeout): the global queue is empty,
 *    and a deque holds tasks only if its owner is blocked and no worker is
 *    parked: a task never waits while a worker sleeps.
 *
 * Checked too: when nothing can move, a drained pool without a blocked
 * task has no worker left (nobody sleeps through the end of a drain).
 *
 * Four mutants that spin must reject (tests/sh/spin.sh): sleepwake_naive.pml
 * defines NAIVE, where the worker checks the queues and announces itself
 * idle in two separate steps, the classic lost wakeup (on the global queue
 * and on the deques alike); NO_NESTED_WAKE makes a nested submit wake
 * nobody, trusting the owner to run its own deque; STEAL_REORDER lets a
 * thief's decrement of nsearching come before its push of the stolen
 * surplus, which is what a relaxed decrement permits on ARM or POWER: an
 * idle-goer sees the decrement, not the push, and parks while the thief's
 * own task blocks. And NO_LEAVE_WAKE: a worker that leaves a drain does not
 * wake the idle ones, which sleep through its end.
 *
 * ELASTIC (src/core/workers.c): only MIN workers run at first, and the
 * others start on demand: wherever a wake-up would go and nobody is idle,
 * a slot is reserved under the lock (live++, counted as searching, as a
 * woken worker is) and its worker starts searching. A worker above MIN
 * parks with a timeout (at most TIMEOUTS times per slot, so that the
 * state space stays finite); when the timeout fires it takes the lock and
 * leaves only if it is still on the idle stack, taking itself off; if a
 * waker popped it meanwhile, the waker counted on it, and it takes the
 * wake-up and searches. Its mutant RETIRE_WHEN_POPPED leaves anyway, and
 * the task it was woken for waits with nobody to take it; SPLIT_AVAIL
 * lets a waker read the idle count and the room to start as two words
 * while a worker retires (gone from the first, not yet in the second),
 * which the C code once did.
 *
 * INJECTOR is the protocol of the lock-free global queue (issue 17;
 * src/core/inject.c, docs/design.md, "The injector"). Submitters push and
 * workers take without the lock; a push and the look at whether the
 * queue is closed are one atomic step (the shutdown closes it under the
 * lock); a worker going idle looks at the global queue after its
 * announcement, as it does at the deques; a worker not counted as
 * searching that moves a batch into its deque makes a nested submit's
 * handshake after it. Its mutants: CHECK_FIRST looks at the global queue
 * only before the announcement, under the lock, as the locked queue
 * allows (the classic lost wakeup again); SHUT_THEN_PUSH reads shut and
 * pushes in two steps, and the drain ends between them with the task
 * queued; UNCOUNTED_BATCH moves that batch with no handshake, and an
 * idle-goer that scanned the deques before the move and reads the queue
 * after it misses the task, which waits behind a blocked one.
 */
#ifndef W
#define W 2
#endif
#ifndef S
#define S 1
#endif
#ifndef T
#define T 1
#endif
#ifndef NEST
#define NEST 1
#endif
#ifndef SPURIOUS
#define SPURIOUS 1
#endif
#ifdef ELASTIC
#ifndef MIN
#define MIN 1
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif
#define FIRST MIN
#else
#define MIN W
#define TIMEOUTS 0
#define FIRST W
#endif

#define EMPTY    0
#define NOTIFIED 1
#define PARKED   2

bool lock;
byte gq;                 /* tasks on the global queue */
byte dq[W];              /* tasks in each worker's deque */
bool shut;
byte idle[W];            /* LIFO stack of idle worker ids */
byte nidle;
byte nsearching;
byte tok[W];             /* parker state */
bool sleeping[W];        /* inside futex_wait */
bool blocked[W];         /* running a task that never returns */
byte nested;             /* children submitted so far */
bool someone_blocked;
byte running;            /* tasks started and not ended (blocked ones too) */
byte live;               /* workers from their start (reservation) to leaving */
bool alive[W];           /* a slot's worker is live */
byte tmo[W];             /* timeouts so far, per slot (ELASTIC) */
#ifdef INJECTOR
bool closed;             /* the queue refuses pushes (a bit of its tail) */
#endif

/* INJECTOR: the global queue is lock-free (no lock to push or take). */
#ifdef INJECTOR
#define GQ_FREE true
#else
#define GQ_FREE !lock
#endif

#if W != 2 && W != 3
#error W must be 2 or 3
#endif

/* deques_busy(): one deque per step; any = whether one held a task when
 * read. */
inline scan(i, any) {
    any = false;
    i = 0;
    do
    :: i < W ->
        if
        :: dq[i] > 0 -> any = true
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    i = 0
}

/* Under the lock, having taken one task from gq: a batch may come along. */
inline batch(me) {
    if
    :: gq > 0 -> gq--; dq[me]++
    :: true -> skip
    fi
}

/* INJECTOR: a batch taken by a worker not counted as searching, moved
 * set if one came along; the nested submit's handshake follows it. */
inline batch_m(me, moved) {
    if
    :: gq > 0 -> gq--; dq[me]++; moved = true
    :: true -> skip
    fi
}

/* A steal from victim v: half of it, one task to run, the surplus pushed
 * (a step later) into the thief's deque; then found_work(). */
inline steal(me, v, m, w, old, woke, ok, i) {
    atomic { me != v && dq[v] > 0 -> m = (dq[v] + 1) / 2; dq[v] = dq[v] - m };
#ifdef STEAL_REORDER
    found_work(w, old, woke, ok, i);
    dq[me] = dq[me] + m - 1;
#else
    dq[me] = dq[me] + m - 1;
    found_work(w, old, woke, ok, i);
#endif
    m = 0
}

/* old is the caller's scratch variable, cleared after use so that states
 * differing only in dead locals collapse into one. */
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

/* timed (ELASTIC): the wait may time out instead, once per TIMEOUTS:
 * then expired is set and no token was taken (one that came first is
 * taken, as pp__park_timed does). */
inline park(me, spurious, got, timed, expired) {
    atomic {
        if
        :: tok[me] == NOTIFIED -> tok[me] = EMPTY; got = true
        :: else -> tok[me] = PARKED
        fi
    }
    do
    :: got || expired -> break
    :: else ->
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
        :: atomic { sleeping[me] && timed && tmo[me] < TIMEOUTS && !shut ->
               sleeping[me] = false; tmo[me]++;
               if
               :: tok[me] == NOTIFIED -> skip    /* taken just below */
               :: else -> tok[me] = EMPTY; expired = true
               fi }
        fi;
        atomic {
            if
            :: tok[me] == NOTIFIED && !expired -> tok[me] = EMPTY; got = true
            :: else -> skip    /* timed out: a token now is the next park's */
            fi
        }
    od;
    got = false
}

/* pop_idle under the lock, counting the woken worker as searching. */
inline pop_idle(w, woke) {
    nidle--; w = idle[nidle]; idle[nidle] = 0; nsearching++; woke = true
}

/* Reserve the lowest free slot for a worker that starts searching
 * (ELASTIC; under the lock): w is its slot, started says so. */
inline reserve(w, started) {
    w = 0;
    do
    :: w < W && alive[w] -> w++
    :: w < W && !alive[w] -> break
    :: w == W -> break
    od;
    if
    :: w < W -> alive[w] = true; live++; nsearching++; started = true
    :: else -> w = 0
    fi
}

/* After the unlock: unpark the worker popped from the idle stack, or run
 * the one reserved a slot. */
inline hand_over(w, old, woke, started) {
    if
    :: woke -> unpark(w, old); w = 0; woke = false
    :: started -> run worker(w, true); w = 0; started = false
    :: else -> skip
    fi
}

/* A start (ELASTIC) is the wake-up's other branch: nobody idle, room to
 * start. */
#ifdef ELASTIC
#define STARTABLE (live < W)
#else
#define STARTABLE false
#endif

/* wake_one(): under the lock, only if still nobody searches: an idle
 * worker, or else a new one. */
inline wake_one(w, old, woke) {
    atomic {
        !lock ->
        if
        :: nsearching == 0 && nidle > 0 -> pop_idle(w, woke)
        :: nsearching == 0 && nidle == 0 && STARTABLE -> reserve(w, started)
        :: else -> skip
        fi
    }
    hand_over(w, old, woke, started)
}

/* A task runs (counted a step after it was taken, as run_entry counts
 * it): it may submit a child into this worker's deque (push, fence, then
 * look at nsearching and nidle: separate steps; a drain accepts it), and
 * may then never return. */
inline run_task(me, w, old, woke, ok) {
    running++;
    do
    :: atomic { nested < NEST -> nested++ }
        dq[me]++;
#ifdef NO_NESTED_WAKE
        ok = false;   /* mutant: a nested submit never wakes anybody */
#else
        atomic { ok = (nsearching == 0 && (nidle > 0 || STARTABLE)) };
#endif
        if
        :: ok -> wake_one(w, old, woke)
        :: else -> skip
        fi;
        ok = false
    :: true -> break
    od;
    if
    :: atomic { !someone_blocked -> someone_blocked = true; blocked[me] = true }
end_blocked:
        false
    :: true -> skip
    fi;
    running--
}

/* found_work(): the last searcher to find work wakes one more if more
 * is visible. */
inline found_work(w, old, woke, ok, i) {
    atomic { nsearching--; ok = (nsearching == 0) };
    if
    :: ok ->
        atomic { ok = (nidle > 0 || STARTABLE) };
        if
        :: ok && gq == 0 -> scan(i, ok)
        :: else -> skip
        fi;
        if
        :: ok -> wake_one(w, old, woke)
        :: else -> skip
        fi;
        ok = false
    :: else -> skip
    fi
}

#define RUN    1
#define SEARCH 2
#define EXIT   3

/* Under the lock, not running: announce itself idle, look at the deques,
 * and either take the announcement back (a task came: search on) or
 * unlock and park. */
inline go_idle(me, spurious, got, i, any) {
#ifdef NAIVE
    /* mutant: looks at the deques before announcing */
    scan(i, any);
    if
    :: any -> lock = false
    :: else ->
        lock = false;
        atomic { !lock -> idle[nidle] = me; nidle++; nsearching-- };
        park(me, spurious, got, false, expired)
    fi
#else
    idle[nidle] = me; nidle++; nsearching--;
    scan(i, any);
#if defined(INJECTOR) && !defined(CHECK_FIRST)
    /* The global queue takes no lock to push: look at it after the
     * announcement too, as at the deques. */
    if
    :: !any -> any = (gq > 0)
    :: else -> skip
    fi;
#endif
    if
    :: any ->   /* take the announcement back */
        nidle--; idle[nidle] = 0; nsearching++; lock = false
    :: else ->
#ifdef ELASTIC
        timed = (live > MIN);
#endif
        lock = false;
        park(me, spurious, got, timed, expired);
        if
        :: expired -> retire_or_stay(me, spurious, got, i, act)
        :: else -> skip
        fi;
        timed = false; expired = false
    fi
#endif
}

/* The sleep timed out (ELASTIC): under the lock, leave if still on the
 * idle stack (taking itself off, wherever it is) and above MIN; if a
 * waker popped it, take its wake-up and search, as a woken worker does. */
inline retire_or_stay(me, spurious, got, i, act) {
    atomic { !lock -> lock = true };
    i = 0;
    do
    :: i < nidle && idle[i] != me -> i++
    :: else -> break
    od;
#ifdef RETIRE_WHEN_POPPED
    if
    :: i == nidle -> atomic { nsearching--; live--; alive[me] = false }; lock = false; act = EXIT
    :: else -> skip
    fi;
#endif
    if
    :: act == EXIT -> skip
    :: i < nidle && live > MIN ->
        do    /* off the stack: the ones above move down */
        :: i + 1 < nidle -> idle[i] = idle[i + 1]; i++
        :: else -> break
        od;
        /* one step to a waker: off the stack and its room to start a
         * worker in one word (navail in sched.h) */
#ifdef SPLIT_AVAIL
        nidle--; idle[nidle] = 0; live--; alive[me] = false;    /* mutant: two words */
#else
        atomic { nidle--; idle[nidle] = 0; live--; alive[me] = false };
#endif
        lock = false; act = EXIT
    :: i < nidle && live <= MIN -> lock = false; expired = false; park(me, spurious, got, false, expired)
    :: i == nidle -> lock = false; expired = false; park(me, spurious, got, false, expired)
    fi;
    i = 0
}

proctype worker(byte me; bool started) {
    byte act, spurious, w, old, m, i;
    bool got, woke, ok, any, timed, expired, moved;
    if
    :: started -> started = false; goto searching    /* its starter counted it */
    :: else -> skip
    fi;
    do
    :: /* its own deque, then the global queue, before searching */
       atomic {
           if
           :: dq[me] > 0 -> dq[me]--; act = RUN
           :: else -> act = SEARCH
           fi
       }
       if
       :: act == SEARCH ->
           atomic {
               GQ_FREE ->
               if
               :: gq > 0 -> gq--; act = RUN;
#if !defined(INJECTOR) || defined(UNCOUNTED_BATCH)
                   batch(me)
#else
                   batch_m(me, moved)
#endif
               :: else -> skip
               fi
           }
       :: else -> skip
       fi;
#if defined(INJECTOR) && !defined(UNCOUNTED_BATCH)
       /* Not counted as searching, it moved a batch into its deque as a
        * nested submit would: the same handshake (F2) after it. */
       if
       :: moved ->
           moved = false;
           atomic { ok = (nsearching == 0 && (nidle > 0 || STARTABLE)) };
           if
           :: ok -> wake_one(w, old, woke)
           :: else -> skip
           fi;
           ok = false
       :: else -> skip
       fi;
#endif
       if
       :: act == RUN -> run_task(me, w, old, woke, ok); act = 0
       :: else ->
           nsearching++;
searching:
           /* search(): poll, or go idle; after a wake-up, search again */
           do
           :: atomic { GQ_FREE && gq > 0 -> gq--; batch(me) };   /* take_global */
               found_work(w, old, woke, ok, i); act = RUN; break
           :: steal(me, 0, m, w, old, woke, ok, i); act = RUN; break
           :: steal(me, 1, m, w, old, woke, ok, i); act = RUN; break
#if W == 3
           :: steal(me, 2, m, w, old, woke, ok, i); act = RUN; break
#endif
           :: true ->                                       /* budget gone */
               atomic { !lock -> lock = true };
               if
               :: atomic { gq > 0 -> gq--; batch(me) };    /* one step: INJECTOR's takers take no lock */
                   lock = false;
                   found_work(w, old, woke, ok, i); act = RUN; break
               :: gq == 0 && shut ->
                   scan(i, any);
                   if
                   :: any -> lock = false   /* help drain */
                   :: !any && running == 0 ->
                       /* leave, and take every idle worker along */
                       nsearching--;
#ifndef NO_LEAVE_WAKE
                       do
                       :: nidle > 0 -> pop_idle(w, woke); unpark(w, old); woke = false
                       :: else -> break
                       od;
#endif
                       w = 0;
                       live--; alive[me] = false;
                       lock = false; act = EXIT; break
                   :: !any && running > 0 ->   /* a running task may submit more */
                       go_idle(me, spurious, got, i, any)
                   fi;
                   any = false
               :: gq == 0 && !shut ->
                   go_idle(me, spurious, got, i, any);
                   any = false
               fi;
               if
               :: act == EXIT -> break    /* retired (ELASTIC) */
               :: else -> skip
               fi
           od;
           if
           :: act == RUN -> run_task(me, w, old, woke, ok); act = 0
           :: act == EXIT -> break
           fi
       fi
    od
}

/* enqueue(): push under the lock, then (lock still held, a step later)
 * read nsearching and pop an idle worker if more tasks wait than workers
 * search; unpark after unlocking. With anybody searching it may also wake
 * nobody: the C code caps a burst's wake-ups at the cores
 * (pp__wake_room), and only the wake-up owed with nobody searching is
 * never capped. The model leaves the choice free. */
#ifdef INJECTOR
/* The lock-free injector: push without a lock, in one atomic step with
 * the look at whether the queue is closed (a bit in its tail, set by the
 * shutdown under the lock, as crossbeam's channels mark theirs); then,
 * after a seq_cst fence, read nsearching, nidle and the queue's length
 * one at a time, and only if a worker is owed take the lock to pop one
 * (looking again there). SHUT_THEN_PUSH: the submit looks at shut and
 * pushes in two steps, and a drain may end between them. */
proctype submitter() {
    byte k, w, old, s, n, q;
    bool woke, started;
    for (k : 1 .. T) {
#ifdef SHUT_THEN_PUSH
        if
        :: shut -> skip    /* refused: PP_ESHUTDOWN */
        :: else -> gq++
        fi;
#else
        atomic {
            if
            :: closed -> skip    /* refused: PP_ESHUTDOWN */
            :: else -> gq++
            fi
        }
#endif
        s = nsearching;
        n = nidle;
        q = gq;
        if
        :: q > s && (n > 0 || STARTABLE) ->
            atomic {
                !lock -> lock = true;
                if
                :: nidle > 0 -> pop_idle(w, woke)
                :: nidle == 0 && STARTABLE -> reserve(w, started)
                :: else -> skip
                fi
            }
            lock = false
        :: else -> skip
        fi;
        s = 0; n = 0; q = 0;
        hand_over(w, old, woke, started)
    }
}
#else
proctype submitter() {
    byte k, w, old;
    bool woke, started;
    for (k : 1 .. T) {
        atomic { !lock -> lock = true };
        if
        :: shut -> skip   /* refused: PP_ESHUTDOWN */
        :: else ->
            gq++;
            atomic {
                if
                :: gq > nsearching && nidle > 0 -> pop_idle(w, woke)
                :: gq > nsearching && nidle == 0 && STARTABLE -> reserve(w, started)
                :: nsearching > 0 -> skip
                :: else -> skip
                fi
            }
        fi;
        lock = false;
        hand_over(w, old, woke, started)
    }
}
#endif

/* A drain, or none (always none with NO_DRAIN, so that a mutant shows
 * the lost wakeup it is about). Holds the lock across the unparks, as
 * pp_pool_shutdown() does. */
proctype shutdown() {
    byte w, old;
    bool woke;
    if
#ifndef NO_DRAIN
    :: true ->
        atomic { !lock -> lock = true; shut = true };
#ifdef INJECTOR
        closed = true;    /* its own step: a push may come between */
#endif
        do
        :: nidle > 0 -> pop_idle(w, woke); unpark(w, old); woke = false
        :: else -> break
        od;
        lock = false
#endif
    :: true -> skip
    fi
}

/* When nothing else can move, no task may wait while a worker sleeps. */
proctype monitor() {
    byte i;
    timeout ->
    assert(gq == 0);
    for (i : 0 .. W - 1) {
        /* (a drain's leavers free their slots without starting anyone:
         * as in a fixed pool, a blocked owner's deque then waits) */
        assert(dq[i] == 0 || (blocked[i] && nidle == 0 && (shut || !STARTABLE)))
    }
    /* A drain without a blocked task ends with every worker gone. */
    assert(!shut || someone_blocked || live == 0)
}

init {
    byte i;
    atomic {
        for (i : 0 .. FIRST - 1) { alive[i] = true; live++; run worker(i, false) }
        for (i : 1 .. S) { run submitter() }
        run shutdown();
        run monitor()
    }
}
