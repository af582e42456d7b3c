/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pool's state, shared by the three files that work on it: pool.c
 * (create, shutdown, join, stats), sched.c (the worker loop and both
 * halves of the sleep/wake handshake) and submit.c (what callers queue).
 * Not installed.
 */
#ifndef PP_SCHED_H
#define PP_SCHED_H

#include "pool_private.h"
#include "budget.h"
#include "counter.h"
#include "debug.h"
#include "deque.h"
#include "histo.h"
#include "inject.h"
#include "prioq.h"
#include "strand.h"
#include "timer.h"
#include "os/fork.h"
#include "os/os.h"
#include "os/sync.h"
#include "park/park.h"

#include <apr_thread_proc.h>
#include <stdatomic.h>

enum { STATE_RUNNING, STATE_DRAINING, STATE_CANCELLING };
enum { JOIN_NONE, JOIN_BUSY, JOIN_DONE };

#define CACHE_LINE PP__CACHE_LINE

/* Fairness: of every FAIR_EVERY tasks a worker picks between searches,
 * one is the global queue's oldest and one may be its own deque's oldest
 * (sched.c, pick_oldest), not the newest of its deque: LIFO alone lets a
 * task that resubmits itself starve its older siblings and outside
 * submits for as long as it goes on. Go's scheduler looks at its global
 * queue every 61st tick for the same reason; parkpool.h states the
 * bounds. */
#define FAIR_EVERY PP_FAIR_EVERY
#define FAIR_AGE PP_FAIR_AGE

typedef struct pp__worker_t {
    pp_pool_t      *pool;
    pp__parker_t   *parker;
    pp__deque_t    *deque;
    apr_thread_t   *thread;
    pp_task_ctx_t  *ctx;        /* the running task, NULL between tasks */
    const char     *name;
    apr_uint32_t    index;
    pp__budget_t    budget;     /* how long it polls before it parks */
    apr_uint32_t    victim;     /* where its next steal starts looking */
    apr_uint32_t    fair;       /* tasks picked until the next fair pick */
    apr_uint32_t    depth;      /* tasks running nested in this thread */
    pp__dq_index_t  fair_top;   /* its deque's top when last looked at */
    apr_time_t      fair_since; /* since when that top was there; 0: unknown */
    /* The tasks it runs live here, not on its stack, so that they can be
     * accounted for when a task ends the thread (pp__thread_died): the
     * outermost in cur, those it runs while it waits in a task (helping)
     * in nested[depth - 1], an array made at its first help. in_fn: how
     * many of them are inside their function (the innermost may be in
     * its hooks). */
    pp__entry_t     cur;
    pp__entry_t    *nested;
    apr_uint32_t    in_fn;
    int             replaced;   /* this thread took over from a dead one */
    /* Its place among the slots (workers.c), under the queue lock: alive
     * from a start's reservation until the worker leaves; launching while
     * its starter creates the thread (not to be reused meanwhile);
     * joinable while a thread that nobody joined or detached is in
     * thread; searching: its starter counted it in nsearching. */
    unsigned char   alive, launching, joinable, searching;
    apr_uint32_t    blocking;   /* pp_task_block_begin() depth, its own */
    apr_pool_t     *tp;         /* its thread's record: a pool per start */
    pp_strand_t    *turn;       /* the strand whose turn it runs, if any */
    /* This worker's only, so a plain release store adds (counter.h); they
     * sit on its own cache lines and pp_pool_stats() sums them. */
    pp__counter_t submitted, started, completed, failed, parks;
} pp__worker_t;

typedef union worker_slot {
    pp__worker_t w;
    char pad[4 * CACHE_LINE];
} worker_slot;
_Static_assert(sizeof(pp__worker_t) <= 4 * CACHE_LINE, "a worker outgrew its slot");

struct pp_task_ctx_t {
    pp__worker_t      *worker;
    const pp__entry_t *entry;
};

struct pp_pool_t {
    apr_pool_t          *p;         /* ours alone (unmanaged), see pool_free() */
    apr_pool_t          *parent;    /* whose destruction closes the pool */
    pp_config_t          cfg;
    worker_slot         *slots;     /* nslots: threads + max_blocking */
    pp__deque_t         *deques;    /* one per slot */
    void                *deques_mem, *histo_mem;  /* malloc'd: free these */
    apr_uint32_t         nslots;
    apr_uint32_t         nmin;      /* workers that never retire (min_threads) */
    /* Slots ever started (a start takes the lowest free one): every loop
     * over the workers stops here. Grows under the lock; a worker that
     * reads it late misses only slots started after its lock, whose
     * workers' pushes its handshake covers (docs/design.md). */
    _Atomic apr_uint32_t nused;
    apr_uint32_t         min_spin;  /* the adaptive search budget's floor */
    apr_uint32_t         ncpus;     /* online CPUs at creation: the most
                                     * workers a burst wakes (pp__wake_room) */
    apr_uint32_t         gen;       /* the fork generation it lives in (fork.h) */
    int                  observe;   /* cfg.on_task_end or cfg.timing: run_entry
                                     * has more to do after a task */
    pp__histo_t         *histo;     /* cfg.timing: queue wait and run time
                                     * per worker (2 * threads), else NULL */
    /* The shared queue's NORMAL level, lock-free (inject.h): &inject in a
     * pool without a queue_capacity, else NULL (a bounded queue's room
     * is counted under the lock). Until the pool's first HIGH or LOW
     * submit: from then on (prio_used) NORMAL is locked too, since the
     * choice between levels is made under the lock. The locked NORMAL
     * level of an injecting pool holds only what a group's cancel or a
     * drain put there, which is older than what is in the injector. */
    pp__inject_t        *inj;
    _Atomic apr_uint32_t prio_used;    /* set under the lock, once */

    pp__mutex_t         *lock;      /* the queue lock: guards what follows */
    pp__prioq_t          queue;     /* the shared queue, by priority */
    pp__worker_t       **idle;      /* LIFO stack of parked workers */
    apr_threadattr_t    *attr;      /* how workers are made (replacements too) */
    apr_uint32_t         live;      /* workers not yet out of their loop
                                     * (started ones count from their
                                     * reservation) */
    apr_uint32_t         nlaunching; /* starts whose thread is being made */
    apr_uint32_t         nblocked;  /* workers in a block section */
    apr_uint32_t         inside;    /* callers in a shutdown or dropping tasks */
    apr_uint32_t         nready;    /* workers that went idle once started,
                                     * or gave up (start_rv) */
    apr_status_t         start_rv;  /* the first on_thread_start failure
                                     * while the pool was being created */
    _Atomic apr_uint32_t live_peak; /* the most workers live at once; written
                                     * under the lock, read by the stats */
    int                  orphaned;  /* closed from one of its own tasks: the
                                     * last worker or caller out frees it */
    _Atomic apr_uint32_t nwaiting;  /* submitters blocked on not_full;
                                     * read by pp_pool_stats() only */
    apr_uint32_t         nwaiting_batch; /* those of them waiting for room for > 1 */
    int                  join;
    pp__cond_t          *not_full;  /* bounded queue: submitters wait here */
    pp__cond_t          *exited;    /* shutdown callers wait here */
    /* Written under the lock, read anywhere; a reader outside the lock
     * only needs to see the change eventually (a task that sees RUNNING a
     * moment late is dropped by whoever takes it), so relaxed will do. */
    _Atomic apr_uint32_t state;
    /* pp_pool_pause(): written under the lock, where a worker about to
     * sleep and a waker read it; a worker between two tasks reads it
     * without, and at worst starts one task more than a pause allowed
     * as the pause call returns (the pause is then one task late). */
    _Atomic apr_uint32_t paused;

    /* Written under the lock (so already serialised) but read without it. */
    pp__counter_t submitted, unparks;
    pp__counter_t queued_peak;      /* the global queue's longest: raised
                                     * by the injector's takers too
                                     * (pop_injected), so with
                                     * pp__counter_raise_shared */
    pp__counter_t cancelled, expired;   /* added to by any thread (shared) */
    pp__counter_t strand_submitted;     /* likewise: tasks queued on strands */
    pp__counter_t timer_submitted;      /* likewise: timer ticks (timer.c) */
    pp__counter_t inj_internal;         /* likewise: the library's own entries
                                         * (strand turns, timer ticks) pushed
                                         * into the injector, which counts
                                         * every push */
    /* The timers (timer.c), made by the first pp_schedule() under the
     * lock; read without it by acquire. */
    _Atomic(pp__timers_t *) timers;

    /* Strands (strand.c): the list and the records to reuse are under the
     * queue lock; each strand's queue and flags under strand_lock, which
     * is taken alone or inside the queue lock, never around it. */
    pp_strand_t         *strands, *strand_free;
    pp__mutex_t         *strand_lock;

    /* Read by everyone without the lock. nidle and qlen mirror the idle
     * stack's depth and the locked global queue's length (written under
     * the lock; the injector's length is its own, global_len());
     * nsearching changes anywhere. Apart from the lock's line, so that
     * polling them does not fight the lock holder for it. */
    char pad1[CACHE_LINE];
    _Atomic apr_uint32_t nidle;
    _Atomic apr_uint32_t qlen;
    /* How many more workers may start now (workers.c): 0 in a fixed pool
     * at full strength. Beside nidle, which a waker reads with it. */
    _Atomic apr_uint32_t nstartable;
    /* nidle + nstartable, stored once at the end of each change under the
     * lock: the one word a waker reads without it. A worker that retires
     * leaves the idle stack and frees its capacity in one critical
     * section; read as two words, a waker could see it gone from the
     * first and not yet in the second, and wake or start nobody for a
     * task (models/sleepwake.pml, ELASTIC, found it). */
    _Atomic apr_uint32_t navail;
    _Atomic apr_uint32_t nlive;     /* live, for readers without the lock */
    char pad2[CACHE_LINE];
    _Atomic apr_uint32_t nsearching;
    char pad3[CACHE_LINE];
    /* HIGH tasks in the shared queue (mirrored under the lock as qlen):
     * read after every task, so on a line that only HIGH submits and
     * takes write. */
    _Atomic apr_uint32_t qhigh;
    char pad4[CACHE_LINE];
    pp__inject_t         inject;    /* its head and tail on lines of their own */
};


/* The precondition of every *_locked helper, checked in debug builds. */
#define ASSERT_LOCKED(pool) PP__ASSERT(pp__mutex_held((pool)->lock))

/* The worker running on the calling thread (sched.c), NULL elsewhere:
 * tells a task's submits and waits from everybody else's. */
extern _Thread_local pp__worker_t *pp__self PP__TLS_HOT;

static inline pp__worker_t *worker_at(pp_pool_t *pool, apr_uint32_t i)
{
    return &pool->slots[i].w;
}

static inline apr_uint32_t load32(_Atomic apr_uint32_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static inline apr_uint32_t load_state(pp_pool_t *pool)
{
    return load32(&pool->state);
}

/* Is this a child of a fork, where the pool's workers do not exist? */
static inline int forked(const pp_pool_t *pool)
{
    return pool->gen != pp__fork_generation();
}

/* Is the calling thread one of pool's workers? */
static inline int own_worker(const pp_pool_t *pool)
{
    return pp__self && pp__self->pool == pool;
}

/* May a task be queued now? A running pool takes anyone's; a draining one
 * only its own tasks' (what was accepted finishes, fan-out included). */
static inline int accepting(pp_pool_t *pool, int own)
{
    apr_uint32_t state = load_state(pool);

    return state == STATE_RUNNING || (state == STATE_DRAINING && own);
}

/* Are the workers to leave queued tasks where they are? Only while the
 * pool runs: a shutdown of a paused pool drains or cancels as asked. */
static inline int held(pp_pool_t *pool)
{
    return load32(&pool->paused) && load_state(pool) == STATE_RUNNING;
}

/* Called with the lock held, after the global queue changed. */
static inline void publish_qlen_locked(pp_pool_t *pool)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->qlen, pp__prioq_len(&pool->queue), memory_order_relaxed);
    if (pool->queue.more)
        atomic_store_explicit(&pool->qhigh, pp__queue_len(&pool->queue.more->high),
                              memory_order_relaxed);
}

/* How many tasks wait in the shared queue: the locked levels (as of
 * their last change) and the injector. */
static inline apr_uint64_t global_len(pp_pool_t *pool)
{
    return load32(&pool->qlen) + (pool->inj ? pp__inject_len(pool->inj) : 0);
}

/* Take the injector's oldest task into e, keeping the queue's longest
 * (queued_peak) as the take saw it (inject.h): a take, not the push, looks,
 * so that a submit reads nothing of the takers' line. */
static inline int pop_injected(pp_pool_t *pool, pp__entry_t *e)
{
    apr_uint64_t seen;

    if (!pp__inject_pop(pool->inj, e, &seen))
        return 0;
    if (seen)
        pp__counter_raise_shared(&pool->queued_peak, seen + load32(&pool->qlen));
    return 1;
}

/* sched.c */

/** A worker thread's function; data is its pp__worker_t. */
void *APR_THREAD_FUNC pp__worker_main(apr_thread_t *thread, void *data);

/** Called with the lock held: wake every idle worker (a shutdown). */
void pp__wake_all_locked(pp_pool_t *pool);

/** Called with the lock held, n tasks just pushed on the global queue:
 *  take an idle worker off the stack for each of them that the searching
 *  workers cannot take (fence F3), at most max into wake[] for the caller
 *  to unpark after unlocking, the rest unparked at once; with tasks left
 *  over and nobody idle, reserve one start into *start (to launch after
 *  unlocking). Returns how many went into wake[]. */
apr_uint32_t pp__wake_for_global_locked(pp_pool_t *pool, apr_uint32_t n,
                                        pp__worker_t **wake, apr_uint32_t max,
                                        pp__worker_t **start);

/** Called with the lock held: move up to max of the injector's oldest
 *  tasks into the locked NORMAL level, behind what waits there (a group's
 *  cancel, the priorities' first use). APR_ENOMEM: none moved. */
apr_status_t pp__inject_to_locked(pp_pool_t *pool, apr_uint32_t max);

/** Wake one idle worker, unless one is searching by the time we hold the
 *  lock (it will find the work: it looks again before it sleeps) or the
 *  pool is paused. */
void pp__wake_one(pp_pool_t *pool);

/** Called with the lock held by pp_pool_resume(): end the pause and wake
 *  an idle worker for each queued task the searchers cannot take; with
 *  tasks left over, a start is reserved and returned, for the caller to
 *  launch after unlocking. */
pp__worker_t *pp__resume_locked(pp_pool_t *pool);

/* After a task went into a queue and a seq_cst fence: does anybody have
 * to be woken (or started) for it? */
static inline int wake_wanted(pp_pool_t *pool)
{
    return load32(&pool->nsearching) == 0 && load32(&pool->navail) > 0;
}

/* Called with the lock held, at the end of a change of nidle or
 * nstartable. */
static inline void publish_avail_locked(pp_pool_t *pool)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->navail, load32(&pool->nidle) + load32(&pool->nstartable),
                          memory_order_relaxed);
}

/* Called with the lock held: n workers idle, and published. */
static inline void set_nidle_locked(pp_pool_t *pool, apr_uint32_t n)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->nidle, n, memory_order_relaxed);
    publish_avail_locked(pool);
}

/* Acquire: pairs with the release that covers a slot's first use. */
static inline apr_uint32_t nused(pp_pool_t *pool)
{
    return atomic_load_explicit(&pool->nused, memory_order_acquire);
}

/* A task's submit of a task: onto its worker's own deque, no lock, and a
 * wake-up if nobody searches. Here rather than in sched.c, beside the
 * other half of its handshake, so that a nested submit (the fan-out hot
 * path) makes no call into another file for it. */
static inline apr_status_t pp__push_local(pp__worker_t *w, const pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;

    if (!accepting(pool, 1))
        return PP_ESHUTDOWN;
    pp__counter_add(&w->submitted, 1);    /* before the task can start */
    pp__deque_push(w->deque, e);
    atomic_thread_fence(memory_order_seq_cst);    /* F2: pairs with F1, F4 */
    if (wake_wanted(pool))
        pp__wake_one(pool);
    return APR_SUCCESS;
}

/* workers.c: the workers' comings and goings */

/** Called with the lock held after live, nblocked or the state changed. */
void pp__startable_locked(pp_pool_t *pool);

/** Called with the lock held: reserve the lowest free slot for a worker
 *  that starts searching (counted in nsearching now, as a woken one), or
 *  NULL when none may start. The caller launches it after unlocking. */
pp__worker_t *pp__reserve_locked(pp_pool_t *pool);

/** Make the thread of a reserved worker (without the lock). On failure
 *  the reservation is undone and on_log told. */
apr_status_t pp__launch(pp_pool_t *pool, pp__worker_t *w);

/** Start the pool's first workers one by one, i = 0, 1, ... (each goes
 *  idle at once). */
apr_status_t pp__start_first(pp_pool_t *pool, apr_uint32_t i);

/** Called with the lock held by an idle worker w that has no work: may it
 *  leave? Yes above min_threads (when expired is set: its idle_timeout
 *  ran out), or when more workers are awake than threads allows (after
 *  block sections ended). */
int pp__may_retire_locked(pp_pool_t *pool, int expired);

/** Called with the lock held by (or for) a worker that stops counting as
 *  live: frees its slot for a start. */
void pp__leave_slot_locked(pp_pool_t *pool, pp__worker_t *w);

/** pp__leave_slot_locked() for an idle worker that retires, counting it
 *  inside the pool until it leaves for good (its stop hook still runs). */
void pp__retire_locked(pp_pool_t *pool, pp__worker_t *w);

/** A block section of w begins (begin != 0) or ends (pp_task_block_*,
 *  and pp_group_wait() in a task around each of its sleeps). */
void pp__block(pp__worker_t *w, int begin);

/* sched.c, for workers.c */

/** Is there anything a searcher could take? */
int pp__work_visible(pp_pool_t *pool);

/** Called with the lock held: pop an idle worker into *wake, or else
 *  reserve a start into *start (unless the pool is paused). The caller
 *  unparks or launches after unlocking. */
void pp__wake_or_start_locked(pp_pool_t *pool, pp__worker_t **wake, pp__worker_t **start);

/* pool.c */

/** Tell cfg.on_log, formatting only when someone listens. */
void pp__pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* submit.c */

/** Queue an entry of the library's own (a strand's turn) on the shared
 *  queue at level: never waits for room (it is not counted against
 *  queue_capacity, nor as a submitted task); PP_ESHUTDOWN when the pool
 *  does not take the caller's tasks now, APR_ENOMEM. */
apr_status_t pp__enqueue_internal(pp_pool_t *pool, unsigned level, const pp__entry_t *e);

/** Account, report (why: PP_ECANCELLED or PP_EEXPIRED) and release one
 *  task that will never run. */
void pp__drop_entry(pp_pool_t *pool, const pp__entry_t *e, apr_status_t why);

/** Called with the lock held by a worker or caller that stopped counting
 *  itself live or inside; releases the lock. After this the pool may be
 *  gone: the caller must not touch it. */
void pp__pool_leave_locked(pp_pool_t *pool);

#endif
