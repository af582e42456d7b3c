/*
 * The sleep/wake protocol of src/pool.c, for spin.
 *
 * W workers, each with a deque (a count here) and a three-state parker
 * modelled on the futex backend (src/park_word.c: the futex wait sleeps
 * only while the word is PARKED, and may return spuriously, up to
 * SPURIOUS times per worker so that the system can quiesce). S outside
 * submitters each put T tasks on the global queue, under the queue lock.
 * A running task may submit a child into its worker's deque (NEST of them
 * in all) and may then block for good (one task at most: a long task,
 * during which only the other workers can run what it queued). A drain
 * shutdown may or may not come.
 *
 * Workers search (take from the global queue, steal from a deque) while
 * counted in nsearching, give up at any moment (a spin budget running
 * out, or none at all because half the workers awake already search: the
 * cap on pollers needs no model of its own), and then go idle as pool.c's search() does: under the lock, check
 * the global queue, announce themselves idle and stop counting as
 * searching, then look at the deques and take the announcement back if one
 * holds a task. A submitter wakes an idle worker only if nobody searches
 * (outside submitters: if fewer search than tasks wait in the global
 * queue), and counts it as searching; the last searcher to find work wakes one
 * more if more is visible. Promela is sequentially consistent: the C code
 * earns that for these accesses with its seq_cst fences.
 *
 * Checked (spin -a; cc -DSAFETY; ./pan):
 *  - no invalid end state: nobody is stuck but parked workers, blocked
 *    tasks and the workers that left;
 *  - when nothing can move any more (timeout): the global queue is empty,
 *    and a deque holds tasks only if its owner is blocked and no worker is
 *    parked: a task never waits while a worker sleeps.
 *
 * Two mutants that spin must reject (tests/spin.sh): sleepwake_naive.pml
 * defines NAIVE, where the worker checks the queues and announces itself
 * idle in two separate steps, the classic lost wakeup (on the global queue
 * and on the deques alike); NO_NESTED_WAKE makes a nested submit wake
 * nobody, trusting the owner to run its own deque.
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

#if W == 2
#define ANYDQ (dq[0] + dq[1] > 0)
#elif W == 3
#define ANYDQ (dq[0] + dq[1] + dq[2] > 0)
#else
#error W must be 2 or 3
#endif

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

inline park(me, spurious, got) {
    atomic {
        if
        :: tok[me] == NOTIFIED -> tok[me] = EMPTY; got = true
        :: else -> tok[me] = PARKED
        fi
    }
    do
    :: got -> break
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

/* pop_idle under the lock, counting the woken worker as searching. */
inline pop_idle(w, woke) {
    nidle--; w = idle[nidle]; idle[nidle] = 0; nsearching++; woke = true
}

/* wake_one(): under the lock, only if still nobody searches. */
inline wake_one(w, old, woke) {
    atomic {
        !lock ->
        if
        :: nsearching == 0 && nidle > 0 -> pop_idle(w, woke)
        :: else -> skip
        fi
    }
    if
    :: woke -> unpark(w, old); w = 0; woke = false
    :: else -> skip
    fi
}

/* A task runs: it may submit a child into this worker's deque (push,
 * fence, then look at nsearching and nidle: separate steps), and may then
 * never return. */
inline run_task(me, w, old, woke, ok) {
    if
    :: atomic { nested < NEST -> nested++; ok = !shut }   /* push_local's state check */
        if
        :: ok ->
            dq[me]++;
#ifdef NO_NESTED_WAKE
            ok = false;   /* mutant: a nested submit never wakes anybody */
#else
            atomic { ok = (nsearching == 0 && nidle > 0) };
#endif
            if
            :: ok -> wake_one(w, old, woke)
            :: else -> skip
            fi;
            ok = false
        :: else -> skip
        fi
    :: true -> skip
    fi;
    if
    :: atomic { !someone_blocked -> someone_blocked = true; blocked[me] = true }
end_blocked:
        false
    :: true -> skip
    fi
}

/* found_work(): the last searcher to find work wakes one more if more
 * is visible. */
inline found_work(w, old, woke, ok) {
    atomic { nsearching--; ok = (nsearching == 0) };
    if
    :: ok ->
        atomic { ok = (nidle > 0 && (gq > 0 || ANYDQ)) };
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

proctype worker(byte me) {
    byte act, spurious, w, old;
    bool got, woke, ok;
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
               !lock ->
               if
               :: gq > 0 -> gq--; act = RUN
               :: else -> skip
               fi
           }
       :: else -> skip
       fi;
       if
       :: act == RUN -> run_task(me, w, old, woke, ok); act = 0
       :: else ->
           nsearching++;
           /* search(): poll, or go idle; after a wake-up, search again */
           do
           :: atomic { !lock && gq > 0 -> gq-- };          /* take_global */
               found_work(w, old, woke, ok); act = RUN; break
           :: atomic { me != 0 && dq[0] > 0 -> dq[0]-- };    /* steal */
               found_work(w, old, woke, ok); act = RUN; break
           :: atomic { me != 1 && dq[1] > 0 -> dq[1]-- };
               found_work(w, old, woke, ok); act = RUN; break
#if W == 3
           :: atomic { me != 2 && dq[2] > 0 -> dq[2]-- };
               found_work(w, old, woke, ok); act = RUN; break
#endif
           :: true ->                                       /* budget gone */
               atomic { !lock -> lock = true };
               if
               :: gq > 0 ->
                   gq--; lock = false;
                   found_work(w, old, woke, ok); act = RUN; break
               :: gq == 0 && shut && ANYDQ -> lock = false   /* help drain */
               :: gq == 0 && shut && !ANYDQ ->
                   nsearching--; lock = false; act = EXIT; break
               :: gq == 0 && !shut ->
#ifdef NAIVE
                   /* mutant: looks at the deques before announcing */
                   if
                   :: ANYDQ -> lock = false
                   :: else ->
                       lock = false;
                       atomic { !lock -> idle[nidle] = me; nidle++; nsearching-- };
                       park(me, spurious, got)
                   fi
#else
                   idle[nidle] = me; nidle++; nsearching--;
                   if
                   :: ANYDQ ->   /* take the announcement back */
                       nidle--; idle[nidle] = 0; nsearching++; lock = false
                   :: else ->
                       lock = false;
                       park(me, spurious, got)
                   fi
#endif
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
 * search; unpark after unlocking. */
proctype submitter() {
    byte k, w, old;
    bool woke;
    for (k : 1 .. T) {
        atomic { !lock -> lock = true };
        if
        :: shut -> skip   /* refused: PP_ESHUTDOWN */
        :: else ->
            gq++;
            atomic {
                if
                :: gq > nsearching && nidle > 0 -> pop_idle(w, woke)
                :: else -> skip
                fi
            }
        fi;
        lock = false;
        if
        :: woke -> unpark(w, old); w = 0; woke = false
        :: else -> skip
        fi
    }
}

/* A drain, or none. Holds the lock across the unparks, as
 * pp_pool_shutdown() does. */
proctype shutdown() {
    byte w, old;
    bool woke;
    if
    :: true ->
        atomic { !lock -> lock = true; shut = true };
        do
        :: nidle > 0 -> pop_idle(w, woke); unpark(w, old); woke = false
        :: else -> break
        od;
        lock = false
    :: true -> skip
    fi
}

/* When nothing else can move, no task may wait while a worker sleeps. */
proctype monitor() {
    byte i;
    timeout ->
    assert(gq == 0);
    for (i : 0 .. W - 1) {
        assert(dq[i] == 0 || (blocked[i] && nidle == 0))
    }
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
