/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pool core: workers, the sleep/wake protocol, shutdown and stats.
 *
 * Where tasks wait
 * ----------------
 * A task submitted from outside goes to the global queue, under the queue
 * lock. A task submitted by a task goes to the running worker's own deque
 * (deque.h), with no lock at all; only when that is full does it take the
 * global path. A worker runs its own deque first (newest first), then
 * takes from the global queue (a batch, when there is plenty, which it
 * moves into its deque), then steals half of another worker's deque.
 *
 * Sleep/wake protocol (design.md section 3; models/sleepwake.pml checks it)
 * -----------------------------------------------------------------------
 * A worker without work is "searching" (pool->nsearching counts them)
 * while it polls the queues for a bounded, adaptive while (not at all if
 * half the workers awake already search), then goes idle:
 * under the queue lock it checks the global queue, pushes itself on the
 * idle stack and stops counting itself as searching; then, after a
 * seq_cst fence and still under the lock, it looks at every deque. If one
 * holds a task it takes itself off the stack again (it is on top: nobody
 * could pop it while it held the lock) and searches on; else it unlocks
 * and parks.
 *
 * A submitter puts its task in a queue, issues a seq_cst fence and then
 * wakes one idle worker if somebody is idle and nobody is searching (on
 * the global queue: if fewer are searching than tasks wait there).
 * Waking pops the worker under the lock and counts it as searching on its
 * behalf, so a task that a searcher (or a worker on its way up) can take
 * wakes nobody else: a burst on the global queue wakes one worker per task
 * beyond the searchers, never a herd. When the last searcher finds work
 * and sees more (after a fence of its own), it wakes one more worker, so
 * help also ramps up behind the tasks that tasks queue in their deques.
 *
 * No lost wakeup: take the last worker L to go idle while a task T sits
 * queued. T's queue is the global one (then T was pushed under the lock,
 * before or after L's check: before, L would have seen it; after, its
 * submitter saw L idle and nobody searching, fewer than the one task) or
 * a deque, where the two
 * fences make a Dekker handshake: either L's look at the deques sees T, or
 * T's submitter sees L's idle entry and a searching count without L. That
 * count is then 0, since a worker still searching would go idle after L.
 * So a worker is woken. The same argument covers the last searcher's
 * extra wake-up.
 *
 * The seq_cst fences, numbered where they stand. Each pair is a Dekker
 * handshake: each side writes, fences, then reads what the other wrote,
 * so at least one of the two sees the other.
 *
 *   submitter / pusher                     worker going idle (F1) or last
 *                                          searcher finding work (F4)
 *   ------------------------------------   ---------------------------------
 *   F2 push_local: push into own deque;    F1 search(), under the lock:
 *      fence; read nsearching, nidle          nidle++, nsearching--; fence;
 *   F5 pp__pool_help: steal surplus in        scan every deque
 *      own deque; fence; read the same     F4 found_work(): nsearching--
 *   F3 enqueue, under the lock: push on       (release); fence; read nidle,
 *      the global queue; fence; read          qlen, every deque
 *      nsearching
 *
 * F1 pairs with F2 and F5 (and with F4, whose decrement it may see before
 * the steal's push: hence the release), F3 with F4 (F1's look at the
 * global queue is under the same lock as F3's push and needs no fence).
 *
 * A parker's token makes an unpark that comes before its park harmless
 * (park.h); a worker popped from the stack is owed exactly one token, by
 * the thread that popped it. The idle stack is LIFO: the most recently
 * idle worker has the warmest cache and the others sleep longest.
 *
 * The lock is held only to move a task in or out of the global queue,
 * never while a task runs. Shutdown changes state under the lock and wakes
 * every idle worker; a worker that finds the global queue and every deque
 * empty in any state but RUNNING exits instead of going idle (with work in
 * another deque it helps drain it first), so no worker can sleep through a
 * shutdown. A cancel empties the deques by stealing from
 * them; a task that slips into a deque after that (its submitter saw the
 * pool still running) is dropped by whoever takes it, as is a task of a
 * cancelled group.
 */
#include "config.h"
#include "pool_private.h"
#include "deque.h"
#include "debug.h"
#include "fault.h"
#include "os/fork.h"
#include "counter.h"
#include "park/park.h"
#include "os/os.h"
#include "os/sync.h"

#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { STATE_RUNNING, STATE_DRAINING, STATE_CANCELLING };
enum { JOIN_NONE, JOIN_BUSY, JOIN_DONE };

#define CACHE_LINE PP__CACHE_LINE

/* The most a worker moves from the global queue into its deque at once:
 * enough to take the lock once per many tasks when a producer is ahead,
 * few enough that the others can still find work there. */
#define GLOBAL_BATCH 32u

/* Fairness: of every FAIR_EVERY tasks a worker picks between searches,
 * one is the global queue's oldest and one may be its own deque's oldest
 * (pick_oldest), not the newest of its deque: LIFO alone lets a task that
 * resubmits itself starve its older siblings and outside submits for as
 * long as it goes on. Go's scheduler looks at its global queue every 61st
 * tick for the same reason; parkpool.h states the bounds. */
#define FAIR_EVERY PP_FAIR_EVERY
#define FAIR_AGE PP_FAIR_AGE

/* How deep tasks may nest in one worker's stack by helping while they
 * wait for a group (pp_group_wait): each level is a task frame and a wait;
 * past this a wait just blocks. */
#define HELP_DEPTH_MAX 256u

typedef struct pp__worker_t {
    pp_pool_t      *pool;
    pp__parker_t   *parker;
    pp__deque_t    *deque;
    apr_thread_t   *thread;
    pp_task_ctx_t  *ctx;        /* the running task, NULL between tasks */
    const char     *name;
    apr_uint32_t    index;
    apr_uint32_t    spin;       /* this worker's current search budget */
    apr_uint32_t    polls_per_us;   /* its polling speed, last measured */
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
    /* This worker's only, so a plain release store adds (counter.h); they
     * sit on its own cache lines and pp_pool_stats() sums them. */
    pp__counter_t submitted, started, completed, failed, parks;
} pp__worker_t;

typedef union worker_slot {
    pp__worker_t w;
    char pad[3 * CACHE_LINE];
} worker_slot;
_Static_assert(sizeof(pp__worker_t) <= 3 * CACHE_LINE, "a worker outgrew its slot");

struct pp_task_ctx_t {
    pp__worker_t      *worker;
    const pp__entry_t *entry;
};

struct pp_pool_t {
    apr_pool_t          *p;         /* ours alone (unmanaged), see pool_free() */
    apr_pool_t          *parent;    /* whose destruction closes the pool */
    pp_config_t          cfg;
    worker_slot         *slots;
    pp__deque_t         *deques;    /* one per worker */
    apr_uint32_t         nstarted;  /* threads created; joined at the end.
                                     * It grows while the first workers run,
                                     * so they go by cfg.threads instead
                                     * (every deque is ready before them). */
    apr_uint32_t         min_spin;  /* the adaptive search budget's floor */
    apr_uint32_t         gen;       /* the fork generation it lives in (fork.h) */

    pp__mutex_t         *lock;      /* the queue lock: guards what follows */
    pp__queue_t          queue;
    pp__worker_t       **idle;      /* LIFO stack of parked workers */
    apr_threadattr_t    *attr;      /* how workers are made (replacements too) */
    apr_uint32_t         live;      /* workers not yet out of their loop */
    apr_uint32_t         inside;    /* callers in a shutdown or dropping tasks */
    apr_uint32_t         nready;    /* workers that went idle once started */
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

    /* Written under the lock (so already serialised) but read without it. */
    pp__counter_t submitted, unparks;
    pp__counter_t cancelled;

    /* Read by everyone without the lock. nidle and qlen mirror the idle
     * stack's depth and the global queue's length (written under the lock);
     * nsearching changes anywhere. Apart from the lock's line, so that
     * polling them does not fight the lock holder for it. */
    char pad1[CACHE_LINE];
    _Atomic apr_uint32_t nidle;
    _Atomic apr_uint32_t qlen;
    char pad2[CACHE_LINE];
    _Atomic apr_uint32_t nsearching;
    char pad3[CACHE_LINE];
};

/* The precondition of every *_locked helper, checked in debug builds. */
#define ASSERT_LOCKED(pool) PP__ASSERT(pp__mutex_held((pool)->lock))

/* Set on each worker thread: tells nested submits and self-waits apart. */
static _Thread_local pp__worker_t *current;

static pp__worker_t *worker_at(pp_pool_t *pool, apr_uint32_t i)
{
    return &pool->slots[i].w;
}

static apr_uint32_t load32(_Atomic apr_uint32_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static apr_uint32_t load_state(pp_pool_t *pool)
{
    return load32(&pool->state);
}

/* Called with the lock held. */
static void set_state_locked(pp_pool_t *pool, apr_uint32_t state)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->state, state, memory_order_relaxed);
}

/* Is this a child of a fork, where the pool's workers do not exist? */
static int forked(const pp_pool_t *pool)
{
    return pool->gen != pp__fork_generation();
}

/* Is the calling thread one of pool's workers? */
static int own_worker(const pp_pool_t *pool)
{
    return current && current->pool == pool;
}

/* Called with the lock held, after the global queue changed. */
static void publish_qlen_locked(pp_pool_t *pool)
{
    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->qlen, pp__queue_len(&pool->queue), memory_order_relaxed);
}

/* Called with the lock held: take the most recently idle worker. It
 * counts as searching from here on, so that the submits right behind this
 * one leave the others asleep. */
static pp__worker_t *pop_idle_locked(pp_pool_t *pool)
{
    apr_uint32_t n = load32(&pool->nidle);

    ASSERT_LOCKED(pool);
    /* Each worker is idle, searching (or counted so by its waker), or
     * neither; never both. */
    PP__ASSERT(n + load32(&pool->nsearching) <= pool->cfg.threads);
    if (n == 0)
        return NULL;
    atomic_store_explicit(&pool->nidle, n - 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
    pp__counter_add(&pool->unparks, 1);    /* under the lock */
    return pool->idle[n - 1];
}

/* After a task went into a queue and a seq_cst fence: does anybody have
 * to be woken for it? */
static int wake_wanted(pp_pool_t *pool)
{
    return load32(&pool->nsearching) == 0 && load32(&pool->nidle) > 0;
}

/* Wake one idle worker, unless one is searching by the time we hold the
 * lock (it will find the work: it looks again before it sleeps). */
static void wake_one(pp_pool_t *pool)
{
    pp__worker_t *w = NULL;

    pp__mutex_lock(pool->lock);
    if (wake_wanted(pool))
        w = pop_idle_locked(pool);
    pp__mutex_unlock(pool->lock);
    if (w)
        pp__unpark(w->parker);
}

/* Does any deque hold a task? After a seq_cst fence, this sees every
 * task pushed before the pusher's fence. */
static int deques_busy(pp_pool_t *pool)
{
    apr_uint32_t i;

    for (i = 0; i < pool->cfg.threads; i++)
        if (pp__deque_len(&pool->deques[i]) > 0)
            return 1;
    return 0;
}

/* Is any worker running a task? Ended is read before started, so a task
 * seen ended was seen started. Used by a draining worker that found
 * nothing, under the lock: see search(). */
static int tasks_running(pp_pool_t *pool)
{
    apr_uint32_t i;

    for (i = 0; i < pool->cfg.threads; i++) {
        pp__worker_t *w = worker_at(pool, i);
        apr_uint64_t ended = pp__counter_read(&w->completed) + pp__counter_read(&w->failed);
        if (pp__counter_read(&w->started) != ended)
            return 1;
    }
    return 0;
}

/* May a task be queued now? A running pool takes anyone's; a draining one
 * only its own tasks' (what was accepted finishes, fan-out included). */
static int accepting(pp_pool_t *pool, int own)
{
    apr_uint32_t state = load_state(pool);

    return state == STATE_RUNNING || (state == STATE_DRAINING && own);
}

/* Is there anything a searcher could take? */
static int work_visible(pp_pool_t *pool)
{
    return load32(&pool->qlen) > 0 || deques_busy(pool);
}

static void pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats only when someone listens: a silent pool pays one test. */
static void pool_log(const pp_pool_t *pool, int level, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (!pool->cfg.on_log)
        return;
    va_start(ap, fmt);
    apr_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pool->cfg.on_log(level, msg, pool->cfg.baton);
}

/* Account, report and release one task that will never run. */
static void drop_entry(pp_pool_t *pool, const pp__entry_t *e)
{
    const pp_config_t *cfg = &pool->cfg;

    if (cfg->on_task_error)
        cfg->on_task_error(PP_ECANCELLED, e->name ? e->name : "", cfg->baton);
    if (e->release)
        e->release(e->arg);
    pp__counter_add_shared(&pool->cancelled, 1);    /* cancels may overlap */
    if (e->group)
        pp__group_leave(e->group, PP_ECANCELLED, 1, 1);
}

static void run_entry(pp__worker_t *w, const pp__entry_t *e)
{
    pp_task_ctx_t ctx, *outer = w->ctx;    /* set when w helps in a wait */
    apr_status_t rv;
    pp_pool_t *pool = w->pool;
    const pp_config_t *cfg = &pool->cfg;

    /* A task taken from a deque may have been queued just as its pool or
     * group was cancelled: it is dropped as if the cancel had found it. */
    if (load_state(pool) == STATE_CANCELLING
        || (e->group && pp__group_cancelled(e->group))) {
        drop_entry(pool, e);
        return;
    }
    pp__counter_add(&w->started, 1);
    ctx.worker = w;
    ctx.entry = e;
    w->ctx = &ctx;
    w->in_fn++;
    rv = e->fn(e->arg, &ctx);
    w->in_fn--;
    w->ctx = outer;
    /* Report before release: the name may belong to what release lets go
     * (a plugin's registry). Count after both, then tell the group, so that
     * whoever sees the group done or the counters settled sees it all. */
    if (rv != APR_SUCCESS && cfg->on_task_error)
        cfg->on_task_error(rv, e->name ? e->name : "", cfg->baton);
    if (e->release)
        e->release(e->arg);
    if (rv != APR_SUCCESS)
        pp__counter_add(&w->failed, 1);
    else
        pp__counter_add(&w->completed, 1);
    if (e->group)
        pp__group_leave(e->group, rv, 1, 1);
}

/* Called with the lock held, after the global queue shrank: wake the
 * submitters that may fit now. Waiters for one slot are alike, so one
 * take wakes one of them; a batch waiter needs more room than one slot,
 * and a lone signal could go to it and be lost on it while a single
 * submitter sleeps beside a free slot, so with any batch waiting every
 * waiter looks again. */
static void room_made_locked(pp_pool_t *pool)
{
    ASSERT_LOCKED(pool);
    if (pool->nwaiting_batch > 0)
        pp__cond_broadcast(pool->not_full);
    else if (load32(&pool->nwaiting) > 0)
        pp__cond_signal(pool->not_full);
}

/* Called with the lock held: take the oldest global task into e and, when
 * many wait, a batch more into w's deque (in reverse, so that w pops them
 * oldest first). A bounded queue moves nothing: its capacity is a promise
 * about how much may wait. */
static int take_global_locked(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    pp__entry_t more[GLOBAL_BATCH];
    apr_uint32_t len = pp__queue_len(&pool->queue), n = 0;

    ASSERT_LOCKED(pool);

    if (!pp__queue_pop(&pool->queue, e))
        return 0;
    if (pool->cfg.queue_capacity == 0 && len > 2) {
        n = len / pool->cfg.threads;
        if (n > GLOBAL_BATCH)
            n = GLOBAL_BATCH;
        if (n > PP__DEQUE_SIZE - pp__deque_len(w->deque))
            n = PP__DEQUE_SIZE - pp__deque_len(w->deque);
        n = n > 0 ? n - 1 : 0;
        for (len = 0; len < n; len++)
            pp__queue_pop(&pool->queue, &more[len]);
    }
    publish_qlen_locked(pool);
    room_made_locked(pool);
    while (n > 0)
        pp__deque_push(w->deque, &more[--n]);
    return 1;
}

static int take_global(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    int got;

    if (load32(&pool->qlen) == 0)
        return 0;
    pp__mutex_lock(pool->lock);
    got = take_global_locked(w, e);
    pp__mutex_unlock(pool->lock);
    return got;
}

/* Steal half of the first other deque that has work, the oldest entry
 * into e (to run now), the rest into w's own deque. */
static int steal(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t n = pool->cfg.threads, k, v, want, got;
    pp__entry_t x;
    int r;

    for (k = 0; k < n; k++) {
        v = (w->victim + k) % n;
        if (v == w->index)
            continue;
        want = (pp__deque_len(&pool->deques[v]) + 1) / 2;
        if (want > PP__DEQUE_SIZE - pp__deque_len(w->deque))
            want = PP__DEQUE_SIZE - pp__deque_len(w->deque);
        for (got = 0; got < want;) {
            r = pp__deque_steal(&pool->deques[v], got ? &x : e);
            if (r == 0)
                break;
            if (r < 0)
                continue;    /* another taker won that one; look again */
            if (got++)
                pp__deque_push(w->deque, &x);
        }
        if (got) {
            w->victim = v;
            return 1;
        }
    }
    return 0;
}

/* Has the oldest entry of w's deque waited too long (FAIR_AGE) in that
 * place? Checked at a fair pick only, so the clock is read once in
 * FAIR_EVERY picks. */
static int oldest_overdue(pp__worker_t *w)
{
    pp__dq_index_t top = atomic_load_explicit(&w->deque->top, memory_order_relaxed);
    apr_time_t now;

    if (pp__deque_len(w->deque) == 0) {
        w->fair_since = 0;
        return 0;
    }
    now = pp__clock_mono();
    if (top != w->fair_top || w->fair_since == 0) {
        w->fair_top = top;
        w->fair_since = now;
        return 0;
    }
    return now - w->fair_since >= FAIR_AGE;
}

/* Twice in every FAIR_EVERY picks, an older task rather than the newest:
 * the global queue's oldest, and, half a round later, its own deque's
 * oldest if that has waited FAIR_AGE. Not the deque's oldest every time:
 * each such pick starts a new depth-first frontier in the deque, and a
 * fan-out tree then fills it with half-finished levels until it spills
 * into the global queue. A deque's oldest entry is usually stolen long
 * before it ages. */
static int pick_oldest(pp__worker_t *w, pp__entry_t *e)
{
    if (--w->fair == FAIR_EVERY / 2)
        return oldest_overdue(w) && pp__deque_steal(w->deque, e) > 0;
    if (w->fair == 0) {
        w->fair = FAIR_EVERY;
        return take_global(w, e);
    }
    return 0;
}

/* A task for w without searching: its own deque's newest, else the
 * global queue's oldest, with the fair pick now and then. */
static int next_local(pp__worker_t *w, pp__entry_t *e)
{
    return pick_oldest(w, e) || pp__deque_pop(w->deque, e) || take_global(w, e);
}

/* A searching worker found work: if it was the last searcher and there is
 * more to do, one more worker joins in (see the header comment). */
static void found_work(pp__worker_t *w)
{
    pp_pool_t *pool = w->pool;

    /* Release: a steal pushed its surplus into w's deque before this. A
     * searcher going idle reads nsearching with its own RMW and then
     * fences (seq_cst) before it scans the deques, so if it sees this
     * decrement it sees the push too; relaxed, on ARM or POWER it could
     * see the one and not the other, park, and leave the surplus to a
     * worker whose task may block (models/sleepwake.pml, STEAL_REORDER). */
    if (atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_release) != 1)
        return;
    atomic_thread_fence(memory_order_seq_cst);    /* F4: pairs with F1, F2, F3 */
    if (load32(&pool->nidle) > 0 && work_visible(pool))
        wake_one(pool);
}

/* How many rounds w may poll the queues before it goes idle: its adaptive
 * budget, or none while half the workers that are up already search
 * (pp__may_poll). The count is exact: each searcher's load of nsearching
 * comes after its own increment, so the k-th to join sees k - 1 others. */
static apr_uint32_t search_budget(const pp__worker_t *w)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t up = pool->cfg.threads - load32(&pool->nidle);
    apr_uint32_t others = load32(&pool->nsearching) - 1;    /* w is one */

    return pp__may_poll(up, others) ? w->spin : 0;
}

/* w slept `slept` microseconds in a park. If a search within the bound
 * would have caught the task that woke it, search twice that long next
 * time (within the bound). Without this a pool can settle into parking a
 * moment too early every time: one submitter waiting for each task brings
 * the next task a wake-up later than the last, longer than the shrunken
 * budget, so every round pays two wake-ups where polling would cost far
 * less (docs/design.md, "The search budget"). A pool whose tasks come in
 * bursts far apart sleeps far longer than any budget and keeps the short
 * one. */
static void after_park(pp__worker_t *w, apr_time_t slept)
{
    if (slept > 0)    /* the wall clock may have stepped back */
        w->spin = pp__budget_slept(w->spin, w->pool->cfg.spin,
                                   (apr_uint64_t)slept * w->polls_per_us);
}

/*
 * w's deque is empty and the global queue was. Search (poll the queues)
 * for up to search_budget() rounds, then go idle and park; repeat after a
 * wake-up.
 * 1 with a task in e, 0 when the pool is shutting down and nothing is left
 * for w. The caller counted w as searching (or its waker did).
 */
static int search(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t i, n, budget;
    apr_time_t polled = 0, parked;
    int woken = 0;

    for (;;) {
        /* Shutting down: one look per round, not a poll. A shutdown wakes
         * every worker at once, and a thousand of them each polling a
         * thousand deques would make it quadratic. */
        budget = load_state(pool) == STATE_RUNNING ? search_budget(w) : 0;
        for (i = 0;; i++) {
            if (take_global(w, e) || steal(w, e)) {
                /* Work found by polling (not at the first look): it paid
                 * off, search longer next time (up to cfg.spin). Work
                 * found on a wake-up says nothing about polling, and
                 * changes nothing. */
                if (!woken && i > 0)
                    w->spin = pp__budget_paid(w->spin, pool->cfg.spin);
                found_work(w);
                return 1;
            }
            if (i >= budget)
                break;
            /* When workers outnumber the cores, the thread that would
             * bring the work may be waiting for this one's core: give it
             * a chance now and then rather than spin past it into a park
             * that costs it a wake-up syscall later. Cheap when nobody
             * else wants the core. */
            if ((i & 255) == 255) {
                /* Timed from here: a search that ends sooner reads no clock. */
                if (i == 255)
                    polled = apr_time_now();
                apr_thread_yield();
            }
        }
        /* Nothing came: search less next time, so a pool going idle stops
         * paying for it, but never below the floor. */
        if (budget > 0)
            w->spin = pp__budget_missed(w->spin, pool->min_spin);
        if (budget >= 512) {    /* timed over enough polls to tell */
            apr_uint32_t polls = budget - 255;
            apr_time_t took = apr_time_now() - polled;
            if (took > 0)
                w->polls_per_us = polls / (apr_uint32_t)(took < polls ? took : polls);
        }

        pp__mutex_lock(pool->lock);
        if (take_global_locked(w, e)) {
            pp__mutex_unlock(pool->lock);
            found_work(w);
            return 1;
        }
        if (pool->state != STATE_RUNNING) {
            /* Shutting down: help drain the deques, then leave; but while
             * a drain has tasks running, go idle as in a running pool:
             * they may still submit (a drain accepts their fan-out), and
             * what they submit may need more hands than theirs. Whoever
             * leaves takes every idle worker along (they look again),
             * so the last task's worker ends the drain for all. A worker
             * that misses a task starting now only leaves early: that
             * task's own worker stays to run whatever it submits. */
            pp__worker_t *x;

            if (deques_busy(pool)) {
                pp__mutex_unlock(pool->lock);
                continue;
            }
            if (pool->state == STATE_CANCELLING || !tasks_running(pool)) {
                atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
                while ((x = pop_idle_locked(pool)) != NULL)
                    pp__unpark(x->parker);
                pp__mutex_unlock(pool->lock);
                return 0;
            }
        }
        n = load32(&pool->nidle);
        pool->idle[n] = w;
        atomic_store_explicit(&pool->nidle, n + 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);    /* F1: pairs with F2, F4, F5 */
        if (deques_busy(pool)) {
            /* A task came into a deque while we announced ourselves: take
             * the announcement back and go after it. */
            atomic_store_explicit(&pool->nidle, n, memory_order_relaxed);
            atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
            pp__mutex_unlock(pool->lock);
            continue;
        }
        pp__mutex_unlock(pool->lock);
        pp__counter_add(&w->parks, 1);
        parked = w->polls_per_us ? apr_time_now() : 0;
        pp__park(w->parker);
        if (parked)
            after_park(w, apr_time_now() - parked);
        woken = 1;    /* and whoever woke us counted us as searching */
    }
}

/* Lifetime. The pool's memory is its own (an unmanaged APR pool), not
 * its parent's, so that a pool closed from one of its own tasks can
 * outlive the call: workers (live) and callers busy inside it (inside:
 * a shutdown, a group cancel dropping tasks) each keep it, and it is
 * freed only when both counts are zero and its owner let go: by the
 * closing thread, which waits for that, or, when the close came from one
 * of its own tasks (orphaned), by whichever leaves last. */

static void pool_free(pp_pool_t *pool);

/* Called with the lock held; releases it. After this the pool may be
 * gone: the caller must not touch it. */
static void leave_locked(pp_pool_t *pool)
{
    int last = pool->live == 0 && pool->inside == 0;
    int free_it = last && pool->orphaned;

    ASSERT_LOCKED(pool);

    /* Shutdown callers wait for live, closers for inside, on one cond
     * (pp_pool_create() for nready, too). */
    if (pool->live == 0 || pool->inside == 0)
        pp__cond_broadcast(pool->exited);
    pp__mutex_unlock(pool->lock);
    if (free_it)
        pool_free(pool);
}

/* A caller that counted itself inside (under the lock) leaves. */
static void leave(pp_pool_t *pool)
{
    pp__mutex_lock(pool->lock);
    PP__ASSERT(pool->inside > 0);
    pool->inside--;
    leave_locked(pool);
}

/* A new worker goes idle at once, without searching or looking at any
 * queue: pp_pool_create() returns only once every worker is idle, so
 * nothing can be queued before. (A thousand new workers that each polled
 * a thousand deques, and kept the earlier ones polling, made starting a
 * pool quadratic: -j 4096 took minutes.) It returns counted as searching:
 * woken (its waker counted it), or at once if the pool is already closing
 * (its creation failed) or it replaces a worker (pp__thread_died) and
 * must look for work. */
static void start_idle(pp__worker_t *w)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t n;

    pp__mutex_lock(pool->lock);
    if (pool->state != STATE_RUNNING || w->replaced) {
        atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
        pp__mutex_unlock(pool->lock);
        return;
    }
    n = load32(&pool->nidle);
    pool->idle[n] = w;
    atomic_store_explicit(&pool->nidle, n + 1, memory_order_relaxed);
    pp__counter_add(&w->parks, 1);    /* counted before pp_pool_create() returns */
    if (++pool->nready == pool->cfg.threads)
        pp__cond_broadcast(pool->exited);    /* pp_pool_create() waits */
    pp__mutex_unlock(pool->lock);
    pp__park(w->parker);
}

static void *APR_THREAD_FUNC worker_main(apr_thread_t *thread, void *data)
{
    pp__worker_t *w = data;
    pp_pool_t *pool = w->pool;
    pp__entry_t *e = &w->cur;
    apr_status_t rv;

    (void)thread;
    pp__thread_set_name(w->name);
    current = w;
    rv = pp__exit_watch(w);
    if (rv != APR_SUCCESS) {
        char msg[128];
        pool_log(pool, PP_LOG_WARN, "%s: no thread-exit watch (%s): a task that ends the "
                 "thread will hang the pool's shutdown", w->name,
                 pp_strerror(rv, msg, sizeof(msg)));
    }

    start_idle(w);
    for (;;) {
        /* Counted as searching here: by its waker, or by itself. */
        if (!search(w, e))
            break;
        run_entry(w, e);
        while (next_local(w, e))
            run_entry(w, e);
        atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
    }
    pp__exit_watch(NULL);
    current = NULL;
    pp__mutex_lock(pool->lock);
    PP__ASSERT(pool->live > 0);
    pool->live--;
    leave_locked(pool);    /* the last touch of pool: it may be freed */
    return NULL;
}

/*
 * A task ended its worker's thread (pthread_exit, ExitThread): called on
 * that thread as it goes (os.h's exit watch), its stack unwound.
 * The tasks it was running (started, not ended: the outermost in cur,
 * those it ran while helping in nested) fail with PP_ETHREADEXIT; those
 * still inside their function are reported and released now, one that
 * was already in its hooks is only counted. Then a new thread takes over
 * the worker (its deque, counters and place) unless the pool is being
 * cancelled or no thread can be made: then it leaves as at shutdown and
 * an idle worker is woken for what its deque holds.
 */
void pp__thread_died(void *data)
{
    pp__worker_t *w = data;
    pp_pool_t *pool = w->pool;
    const pp_config_t *cfg = &pool->cfg;
    apr_uint64_t ended = pp__counter_read(&w->completed) + pp__counter_read(&w->failed);
    apr_uint32_t levels = (apr_uint32_t)(pp__counter_read(&w->started) - ended), level;
    apr_thread_t *thread = NULL;
    pp__worker_t *x = NULL;
    apr_status_t rv = APR_EGENERAL;
    char msg[128];

    for (level = levels; level-- > 0;) {
        const pp__entry_t *e = level ? &w->nested[level - 1] : &w->cur;
        if (level < w->in_fn) {
            if (cfg->on_task_error)
                cfg->on_task_error(PP_ETHREADEXIT, e->name ? e->name : "", cfg->baton);
            if (e->release)
                e->release(e->arg);
        }
        pp__counter_add(&w->failed, 1);
        if (e->group)
            pp__group_leave(e->group, PP_ETHREADEXIT, 1, 1);
    }
    w->depth = 0;
    w->in_fn = 0;
    w->ctx = NULL;
    current = NULL;

    w->replaced = 1;
    pp__mutex_lock(pool->lock);
    if (pool->state != STATE_CANCELLING)
        rv = pp__fault_hit(PP__FAULT_THREAD_CREATE)
             ? APR_EAGAIN
             : apr_thread_create(&thread, pool->attr, worker_main, w, pool->p);
    if (rv == APR_SUCCESS) {
        /* Joined by nobody now: the pool joins the new one. */
        apr_thread_detach(w->thread);
        w->thread = thread;
        pp__mutex_unlock(pool->lock);
        pool_log(pool, PP_LOG_ERROR, "%s: a task ended the thread; %u task%s failed with it; "
                 "a new thread took its place", w->name, levels, levels == 1 ? "" : "s");
        return;
    }
    pp__mutex_unlock(pool->lock);    /* no hook runs under the lock */
    pool_log(pool, PP_LOG_ERROR, "%s: a task ended the thread; %u task%s failed with it; "
             "not replaced (%s)", w->name, levels, levels == 1 ? "" : "s",
             load_state(pool) == STATE_CANCELLING ? "cancelling"
                                                  : pp_strerror(rv, msg, sizeof(msg)));
    pp__mutex_lock(pool->lock);
    if (pp__deque_len(w->deque) > 0)
        x = pop_idle_locked(pool);
    if (x)
        pp__unpark(x->parker);
    PP__ASSERT(pool->live > 0);
    pool->live--;
    leave_locked(pool);    /* the last touch of pool: it may be freed */
}

/* Called with the lock held: wait until n more entries fit (or fail with
 * PP_ESHUTDOWN, or PP_EFULL under PP_NOWAIT). A worker must never wait for
 * room in its own pool's queue: if every worker did, nobody would make
 * room. Its submits go past the capacity. */
static apr_status_t wait_room_locked(pp_pool_t *pool, apr_uint32_t n, apr_uint32_t flags)
{
    apr_uint32_t cap = pool->cfg.queue_capacity;
    int own = own_worker(pool);

    ASSERT_LOCKED(pool);

    for (;;) {
        if (!accepting(pool, own))
            return PP_ESHUTDOWN;
        if (cap == 0 || own || pp__queue_len(&pool->queue) + n <= cap)
            return APR_SUCCESS;
        if (flags & PP_NOWAIT)
            return PP_EFULL;
        atomic_store_explicit(&pool->nwaiting, load32(&pool->nwaiting) + 1,
                              memory_order_relaxed);
        pool->nwaiting_batch += n > 1;
        pp__cond_wait(pool->not_full, pool->lock);
        pool->nwaiting_batch -= n > 1;
        atomic_store_explicit(&pool->nwaiting, load32(&pool->nwaiting) - 1,
                              memory_order_relaxed);
    }
}

/* Wake-ups a batch makes after unlocking; more idle workers than this are
 * unparked under the lock, which is correct, only slower. */
#define BATCH_WAKE_MAX 64

/* Put n entries like e on the global queue (the i-th with fns[i] and
 * args[i] when fns is given), all or none, and wake an idle worker for
 * each of them that the searching workers cannot take: the queue's length
 * past the number searching, n at most. A lone submit to a pool with a
 * searcher wakes nobody; a burst wakes helpers as fast as it outruns them,
 * instead of one at a time behind the first searcher's wake-up. */
static apr_status_t enqueue(pp_pool_t *pool, const pp__entry_t *e, const pp_task_fn *fns,
                            void *const *args, apr_uint32_t n, apr_uint32_t flags)
{
    pp__worker_t *wake[BATCH_WAKE_MAX], *w;
    apr_uint32_t i = 0, nwake = 0, want, searching;
    pp__entry_t x = *e;
    apr_status_t rv;

    /* A full queue is told without the lock, so that a PP_NOWAIT retry loop
     * does not queue for the lock that the workers need to empty it. The
     * length is as of the last change under the lock: a moment's view, as
     * the answer under the lock would be. */
    if ((flags & PP_NOWAIT) && pool->cfg.queue_capacity && !own_worker(pool)
        && load32(&pool->qlen) + (apr_uint64_t)n > pool->cfg.queue_capacity)
        return load_state(pool) == STATE_RUNNING ? PP_EFULL : PP_ESHUTDOWN;
    pp__mutex_lock(pool->lock);
    rv = wait_room_locked(pool, n, flags);
    if (rv != APR_SUCCESS)
        goto out;
    for (i = 0; i < n; i++) {
        if (fns) {
            x.fn = fns[i];
            x.arg = args[i];
        }
        rv = pp__queue_push(&pool->queue, &x);
        if (rv != APR_SUCCESS) {
            pool->queue.tail -= i;    /* all or nothing: take back ours */
            goto out;
        }
    }
    pp__counter_add(&pool->submitted, n);
    publish_qlen_locked(pool);
    /* nidle changes only under the lock we hold: with nobody idle there is
     * nobody to wake, and no fence to pay (every worker is awake and looks
     * at this queue, under this lock, before it may sleep). */
    if (load32(&pool->nidle) == 0)
        goto out;
    atomic_thread_fence(memory_order_seq_cst);    /* F3: pairs with F4 */
    searching = load32(&pool->nsearching);
    want = pp__queue_len(&pool->queue);
    want = want > searching ? want - searching : 0;
    if (want > n)
        want = n;
    while (want-- > 0 && (w = pop_idle_locked(pool)) != NULL) {
        if (nwake < BATCH_WAKE_MAX)
            wake[nwake++] = w;
        else
            pp__unpark(w->parker);
    }
out:
    pp__mutex_unlock(pool->lock);
    for (i = 0; i < nwake; i++)
        pp__unpark(wake[i]->parker);
    return rv;
}

/* A task's submit of a task: onto the worker's own deque, no lock. */
static apr_status_t push_local(pp__worker_t *w, const pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;

    if (!accepting(pool, 1))
        return PP_ESHUTDOWN;
    pp__counter_add(&w->submitted, 1);    /* before the task can start */
    pp__deque_push(w->deque, e);
    atomic_thread_fence(memory_order_seq_cst);    /* F2: pairs with F1, F4 */
    if (wake_wanted(pool))
        wake_one(pool);
    return APR_SUCCESS;
}

static apr_status_t submit_entry(pp_pool_t *pool, const pp__entry_t *e, apr_uint32_t flags)
{
    if (own_worker(pool) && !pp__deque_full(current->deque))
        return push_local(current, e);
    return enqueue(pool, e, NULL, NULL, 1, flags);
}

apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task,
                            pp_group_t *group, apr_uint32_t flags)
{
    pp__entry_t e;
    apr_status_t rv;

    if (!pool || !task || !task->fn || (flags & ~PP_NOWAIT))
        return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    e.fn = task->fn;
    e.arg = task->arg;
    e.release = task->release;
    e.name = task->name;
    e.group = group;
    if (group) {
        rv = pp__group_enter(group, pool, 1);
        if (rv != APR_SUCCESS)
            return rv;
    }
    rv = submit_entry(pool, &e, flags);
    if (rv != APR_SUCCESS && group)
        pp__group_leave(group, rv, 0, 1);
    return rv;
}

apr_status_t pp_submit_ex(pp_pool_t *pool, pp_task_fn fn, void *arg,
                          pp_group_t *group, apr_uint32_t flags)
{
    pp_task_t t;

    t.fn = fn;
    t.arg = arg;
    t.release = NULL;
    t.name = NULL;
    return pp_submit_task(pool, &t, group, flags);
}

apr_status_t pp_submit(pp_pool_t *pool, pp_task_fn fn, void *arg)
{
    return pp_submit_ex(pool, fn, arg, NULL, 0);
}

apr_status_t pp_submit_batch(pp_pool_t *pool, const pp_task_fn *fns, void *const *args,
                             apr_uint32_t n, pp_group_t *group)
{
    apr_uint32_t i, cap = pool ? pool->cfg.queue_capacity : 0;
    apr_status_t rv;
    pp__entry_t e;

    if (!pool || !fns || (n && !args))
        return APR_EINVAL;
    for (i = 0; i < n; i++)
        if (!fns[i])
            return APR_EINVAL;
    if (forked(pool))
        return PP_ESHUTDOWN;
    if (n == 0)
        return APR_SUCCESS;
    if (cap && !own_worker(pool) && n > cap)
        return APR_EINVAL;    /* it could never fit */
    if (group) {
        rv = pp__group_enter(group, pool, n);
        if (rv != APR_SUCCESS)
            return rv;
    }
    e.fn = NULL;
    e.arg = NULL;
    e.release = NULL;
    e.name = NULL;
    e.group = group;
    rv = enqueue(pool, &e, fns, args, n, 0);
    if (rv != APR_SUCCESS && group)
        pp__group_leave(group, rv, 0, n);
    return rv;
}

apr_status_t pp__pool_take_group(pp_pool_t *pool, const pp_group_t *g,
                                 pp__queue_t *out)
{
    apr_status_t rv;

    pp__mutex_lock(pool->lock);
    pool->inside++;    /* until pp__pool_drop(): the pool must stay */
    rv = pp__queue_take_group(&pool->queue, g, out);
    publish_qlen_locked(pool);
    if (rv == APR_SUCCESS && load32(&pool->nwaiting))
        pp__cond_broadcast(pool->not_full);    /* many slots may be free */
    pp__mutex_unlock(pool->lock);
    return rv;
}

void pp__pool_drop(pp_pool_t *pool, pp__queue_t *q)
{
    pp__entry_t e;

    while (pp__queue_pop(q, &e))
        drop_entry(pool, &e);
    leave(pool);
}

int pp__pool_help(pp_pool_t *pool)
{
    pp__worker_t *w = current;
    pp__entry_t *e;

    if (!w || w->pool != pool || w->depth >= HELP_DEPTH_MAX)
        return -1;
    if (!w->nested && !(w->nested = malloc(HELP_DEPTH_MAX * sizeof(*w->nested))))
        return -1;
    e = &w->nested[w->depth];
    if (!next_local(w, e)) {
        if (!steal(w, e))
            return 0;
        /* Half a deque came along: if nobody searches, wake a hand for
         * it, as a searcher does (this one may go back to a long task). */
        atomic_thread_fence(memory_order_seq_cst);    /* F5: as F2 */
        if (pp__deque_len(w->deque) > 0 && wake_wanted(pool))
            wake_one(pool);
    }
    w->depth++;
    run_entry(w, e);
    w->depth--;
    return 1;
}

pp_group_t *pp__current_group(void)
{
    return current && current->ctx ? current->ctx->entry->group : NULL;
}

/* Wait (until deadline) for every worker to leave its loop, then join
 * them once; concurrent callers wait for the one that joins. */
static apr_status_t wait_joined(pp_pool_t *pool, apr_time_t deadline,
                                apr_interval_time_t timeout)
{
    apr_uint32_t i;
    pp_stats_t st;

    pp__mutex_lock(pool->lock);
    while (pool->live > 0 || pool->join == JOIN_BUSY) {
        if (pp__cond_wait_until(pool->exited, pool->lock, deadline) == APR_SUCCESS)
            continue;
        pp__mutex_unlock(pool->lock);
        if (!pool->cfg.on_log)
            return APR_TIMEUP;
        pp_pool_stats(pool, &st);
        pool_log(pool, PP_LOG_WARN, "shutdown timed out after %" APR_TIME_T_FMT " ms: %"
                 APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " queued",
                 apr_time_as_msec(timeout), st.running, st.queued);
        return APR_TIMEUP;
    }
    if (pool->join == JOIN_NONE) {
        pool->join = JOIN_BUSY;
        pp__mutex_unlock(pool->lock);
        for (i = 0; i < pool->nstarted; i++) {
            apr_status_t ignored;
            apr_thread_join(&ignored, worker_at(pool, i)->thread);
        }
        pp__mutex_lock(pool->lock);
        pool->join = JOIN_DONE;
        pp__cond_broadcast(pool->exited);
        pp__mutex_unlock(pool->lock);
        if (!pool->cfg.on_log)
            return APR_SUCCESS;
        pp_pool_stats(pool, &st);
        pool_log(pool, PP_LOG_INFO, "stopped: %" APR_UINT64_T_FMT " completed, %"
                 APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " cancelled",
                 st.completed, st.failed, st.cancelled);
        return APR_SUCCESS;
    }
    pp__mutex_unlock(pool->lock);
    return APR_SUCCESS;
}

/* Drop what a cancel took from the global queue, until the deadline.
 * What is left goes back for the workers, which drop what they take from
 * a cancelling pool, or for the next shutdown call. */
static void drop_until(pp_pool_t *pool, pp__queue_t *q, apr_time_t deadline)
{
    pp__entry_t e;

    while (pp__queue_len(q) > 0 && pp__clock_mono() < deadline) {
        pp__queue_pop(q, &e);
        drop_entry(pool, &e);
    }
    if (pp__queue_len(q) == 0)
        return;
    pp__mutex_lock(pool->lock);
    /* Only a cancel empties the queue, and nothing is queued after it. */
    PP__ASSERT(pp__queue_len(&pool->queue) == 0);
    pp__queue_destroy(&pool->queue);
    pp__queue_move(&pool->queue, q);
    publish_qlen_locked(pool);
    pp__mutex_unlock(pool->lock);
}

/* A cancel takes what waits in the workers' deques as a thief would, until
 * the deadline. Their owners may still be running tasks that submit more;
 * those see the pool cancelling and drop what they take (run_entry), as
 * does a worker that steals what the deadline left. */
static void drop_deques(pp_pool_t *pool, apr_time_t deadline)
{
    pp__entry_t e;
    apr_uint32_t i;
    int r;

    for (i = 0; i < pool->cfg.threads; i++)
        while (pp__clock_mono() < deadline && (r = pp__deque_steal(&pool->deques[i], &e)) != 0)
            if (r > 0)
                drop_entry(pool, &e);
}

apr_status_t pp_pool_shutdown(pp_pool_t *pool, int how,
                              apr_interval_time_t timeout)
{
    apr_time_t deadline = pp__deadline(timeout);
    pp__queue_t dropped;
    pp__worker_t *w;
    apr_status_t rv;
    int changed;

    if (!pool || (how != PP_DRAIN && how != PP_CANCEL))
        return APR_EINVAL;
    if (forked(pool))
        return APR_SUCCESS;    /* no worker here to wait for */
    memset(&dropped, 0, sizeof(dropped));

    pp__mutex_lock(pool->lock);
    pool->inside++;
    changed = how == PP_CANCEL ? pool->state != STATE_CANCELLING : pool->state == STATE_RUNNING;
    if (how == PP_CANCEL) {
        set_state_locked(pool, STATE_CANCELLING);
        /* Take the whole ring (what an earlier cancel's deadline left in it
         * too): dropping happens outside the lock. */
        pp__queue_move(&dropped, &pool->queue);
        publish_qlen_locked(pool);
    }
    else if (pool->state == STATE_RUNNING) {
        set_state_locked(pool, STATE_DRAINING);
    }
    while ((w = pop_idle_locked(pool)) != NULL)
        pp__unpark(w->parker);
    if (load32(&pool->nwaiting))
        pp__cond_broadcast(pool->not_full);
    pp__mutex_unlock(pool->lock);

    if (how == PP_CANCEL) {
        drop_until(pool, &dropped, deadline);
        pp__queue_destroy(&dropped);
        drop_deques(pool, deadline);
    }
    if (changed && pool->cfg.on_log) {    /* once per step, not per call */
        pp_stats_t st;
        pp_pool_stats(pool, &st);
        pool_log(pool, PP_LOG_INFO, "shutdown (%s): %" APR_UINT64_T_FMT " queued, %"
                 APR_UINT64_T_FMT " running, %" APR_UINT64_T_FMT " cancelled",
                 how == PP_DRAIN ? "drain" : "cancel", st.queued, st.running, st.cancelled);
    }

    rv = own_worker(pool) ? APR_EINPROGRESS : wait_joined(pool, deadline, timeout);
    leave(pool);
    return rv;
}

/* One worker's started and ended counts as of one moment: ended first,
 * then started, twice, until started held still across the read of ended
 * (then both were true together, when ended was read). A worker that
 * keeps finishing tasks faster than this reads may never hold still; its
 * last read then counts at most one task as running, which is what a
 * worker can run at a time. */
static void worker_counts(pp__worker_t *w, apr_uint64_t *started, apr_uint64_t *completed,
                          apr_uint64_t *failed)
{
    apr_uint64_t s1, s2, c, f;
    int tries = 0;

    s2 = pp__counter_read(&w->started);
    do {
        s1 = s2;
        c = pp__counter_read(&w->completed);
        f = pp__counter_read(&w->failed);
        s2 = pp__counter_read(&w->started);
    } while (s2 != s1 && ++tries < 4);
    if (s2 > c + f + 1)
        s2 = c + f + 1;
    *started = s2;
    *completed = c;
    *failed = f;
}

void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out)
{
    apr_uint64_t started = 0, s, c, f, cancelled;
    apr_uint32_t i;

    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!pool)
        return;
    /* Every counter only grows, and each outcome is counted after the
     * counter of the step before it. Reading the later steps first keeps
     * the differences below from going negative while tasks move. */
    for (i = 0; i < pool->nstarted; i++) {
        pp__worker_t *w = worker_at(pool, i);
        worker_counts(w, &s, &c, &f);
        started += s;
        out->completed += c;
        out->failed += f;
        out->parks += pp__counter_read(&w->parks);
    }
    cancelled = pp__counter_read(&pool->cancelled);
    out->submitted = pp__counter_read(&pool->submitted);
    for (i = 0; i < pool->nstarted; i++)
        out->submitted += pp__counter_read(&worker_at(pool, i)->submitted);
    out->unparks = pp__counter_read(&pool->unparks);
    out->cancelled = cancelled;
    out->running = started - out->completed - out->failed;
    out->queued = out->submitted - started - cancelled;
    out->threads = pool->nstarted;
    out->blocked = load32(&pool->nwaiting);
    out->threads_idle = load32(&pool->nidle);
}

void pp__pool_hold_lock(pp_pool_t *pool, int hold)
{
    if (hold)
        pp__mutex_lock(pool->lock);
    else
        pp__mutex_unlock(pool->lock);
}

int pp_task_cancelled(const pp_task_ctx_t *ctx)
{
    if (!ctx)
        return 0;
    if (load_state(ctx->worker->pool) == STATE_CANCELLING)
        return 1;
    return ctx->entry->group && pp__group_cancelled(ctx->entry->group);
}

apr_uint32_t pp_task_worker(const pp_task_ctx_t *ctx)
{
    return ctx ? ctx->worker->index : 0;
}

void pp_task_emit(pp_task_ctx_t *ctx, const char *line)
{
    const pp_config_t *cfg;

    if (!ctx || !line)
        return;
    cfg = &ctx->worker->pool->cfg;
    if (cfg->on_output)
        cfg->on_output(line, ctx->entry->name ? ctx->entry->name : "", cfg->baton);
}

/* The last of the pool: its threads are out of their loops, and nobody
 * is inside. Threads nobody joined (the pool was closed from one of its
 * own tasks) are detached, so the OS reaps them; they touch nothing of
 * the pool after their last leave (and APR's thread wrapper nothing of
 * its thread record after the function returns). */
static void pool_free(pp_pool_t *pool)
{
    apr_uint32_t i;

    if (pool->join != JOIN_DONE)
        for (i = 0; i < pool->nstarted; i++)
            apr_thread_detach(worker_at(pool, i)->thread);
    for (i = 0; pool->slots && i < pool->cfg.threads; i++)
        free(worker_at(pool, i)->nested);
    pp__queue_destroy(&pool->queue);
    apr_pool_destroy(pool->p);
}

/* The owner lets go (pp_pool_destroy, or the parent's destruction). From
 * outside: drain, wait for everyone inside, free. From one of the pool's
 * own tasks, which cannot wait for itself: start the drain and leave the
 * freeing to the last worker or caller out. */
static void pool_close(pp_pool_t *pool)
{
    if (forked(pool)) {
        /* Its lock may be held by a thread that is not here, and its
         * queued tasks are the parent's to run: touch neither, free the
         * memory (sync.h leaves the abandoned locks alone). */
        pp__queue_destroy(&pool->queue);
        apr_pool_destroy(pool->p);
        return;
    }
    if (own_worker(pool)) {
        pp__mutex_lock(pool->lock);
        pool->orphaned = 1;
        pp__mutex_unlock(pool->lock);
        /* Inside while it starts the drain, so the last worker cannot free
         * the pool under this very call. */
        pp_pool_shutdown(pool, PP_DRAIN, 0);
        return;
    }
    pp_pool_shutdown(pool, PP_DRAIN, -1);
    pp__mutex_lock(pool->lock);
    while (pool->inside > 0)
        pp__cond_wait(pool->exited, pool->lock);
    pp__mutex_unlock(pool->lock);
    pool_free(pool);
}

/* A pre-cleanup of the parent: the pool drains while what its tasks use
 * in the parent's subpools still exists. */
static apr_status_t parent_cleanup(void *data)
{
    pool_close(data);
    return APR_SUCCESS;
}

void pp_pool_destroy(pp_pool_t *pool)
{
    if (!pool)
        return;
    apr_pool_cleanup_kill(pool->parent, pool, parent_cleanup);
    pool_close(pool);
}

/* "<prefix>-<i>", cutting the prefix rather than the index when the OS
 * limit is short: names that differ only in a lost suffix help nobody. */
static const char *worker_name(apr_pool_t *p, const char *prefix, apr_uint32_t i)
{
    char suffix[16];
    apr_size_t max = pp__thread_name_max(), keep;
    int n = apr_snprintf(suffix, sizeof(suffix), "-%u", i);

    keep = strlen(prefix);
    if (keep + (apr_size_t)n > max)
        keep = max > (apr_size_t)n ? max - (apr_size_t)n : 0;
    return apr_pstrcat(p, apr_pstrndup(p, prefix, keep), suffix, NULL);
}

static apr_status_t start_workers(pp_pool_t *pool)
{
    apr_status_t rv;
    apr_uint32_t i;

    rv = apr_threadattr_create(&pool->attr, pool->p);
    if (rv == APR_SUCCESS)
        rv = apr_threadattr_stacksize_set(pool->attr, pool->cfg.stack_size);
    for (i = 0; rv == APR_SUCCESS && i < pool->cfg.threads; i++) {
        pp__worker_t *w = worker_at(pool, i);

        pp__mutex_lock(pool->lock);
        pool->live++;
        pp__mutex_unlock(pool->lock);
        rv = pp__fault_hit(PP__FAULT_THREAD_CREATE)
             ? APR_EAGAIN
             : apr_thread_create(&w->thread, pool->attr, worker_main, w, pool->p);
        if (rv != APR_SUCCESS) {
            char msg[128];
            pp__mutex_lock(pool->lock);
            pool->live--;
            pp__mutex_unlock(pool->lock);
            pool_log(pool, PP_LOG_ERROR, "cannot start worker %u of %u: %s", i,
                     pool->cfg.threads, pp_strerror(rv, msg, sizeof(msg)));
            break;
        }
        pool->nstarted++;
    }
    return rv;
}

/* size zeroed bytes from p on a cache line of their own, or NULL. */
static void *aligned_zalloc(apr_pool_t *p, apr_size_t size)
{
    char *raw = pp__fault_hit(PP__FAULT_POOL_ALLOC) ? NULL : apr_pcalloc(p, size + CACHE_LINE);

    if (!raw)
        return NULL;
    return (void *)(((apr_uintptr_t)raw + CACHE_LINE - 1) & ~(apr_uintptr_t)(CACHE_LINE - 1));
}

apr_status_t pp_pool_create(pp_pool_t **out, const pp_config_t *cfg,
                            apr_pool_t *parent)
{
    pp_pool_t *pool;
    apr_pool_t *p;
    apr_status_t rv;
    apr_uint32_t i;

    if (!out || !parent)
        return APR_EINVAL;
    *out = NULL;

    rv = apr_pool_create_unmanaged_ex(&p, NULL, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    pool = apr_pcalloc(p, sizeof(*pool));
    if (!pool) {
        apr_pool_destroy(p);
        return APR_ENOMEM;
    }
    pool->p = p;
    pool->gen = pp__fork_watch();
    pool->parent = parent;
    if (cfg)
        pool->cfg = *cfg;
    else
        pp_config_init(&pool->cfg);
    rv = pp__config_resolve(&pool->cfg);
    if (rv != APR_SUCCESS)
        goto fail;
    pool->cfg.name_prefix = apr_pstrdup(p, pool->cfg.name_prefix);

    rv = pp__mutex_create(&pool->lock, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&pool->not_full, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&pool->exited, p);
    if (rv == APR_SUCCESS)
        rv = pp__queue_init(&pool->queue, pool->cfg.queue_capacity
                                          ? pool->cfg.queue_capacity : 256);
    if (rv != APR_SUCCESS)
        goto fail;

    pool->slots = aligned_zalloc(p, pool->cfg.threads * sizeof(worker_slot));
    pool->idle = apr_pcalloc(p, pool->cfg.threads * sizeof(*pool->idle));
    pool->deques = aligned_zalloc(p, pool->cfg.threads * sizeof(pp__deque_t));
    if (!pool->slots || !pool->idle || !pool->deques) {
        rv = APR_ENOMEM;
        goto fail;
    }
    pool->min_spin = pp__budget_floor(pool->cfg.spin);
    for (i = 0; i < pool->cfg.threads; i++) {
        pp__worker_t *w = worker_at(pool, i);
        w->pool = pool;
        w->index = i;
        w->deque = &pool->deques[i];
        w->spin = pool->cfg.spin;
        w->fair = FAIR_EVERY;
        pp__deque_init(w->deque);
        w->name = worker_name(p, pool->cfg.name_prefix, i);
        rv = pp__parker_create(&w->parker, p);
        if (rv != APR_SUCCESS)
            goto fail;
    }
    rv = start_workers(pool);
    if (rv != APR_SUCCESS)
        goto fail;
    pp__mutex_lock(pool->lock);
    while (pool->nready < pool->cfg.threads)
        pp__cond_wait(pool->exited, pool->lock);
    pp__mutex_unlock(pool->lock);
    if (pool->cfg.on_log) {
        char cap[16] = "unbounded";
        if (pool->cfg.queue_capacity)
            apr_snprintf(cap, sizeof(cap), "%u", pool->cfg.queue_capacity);
        pool_log(pool, PP_LOG_INFO, "started %u worker%s %s-0..%u, park backend %s, stack %"
                 APR_SIZE_T_FMT " KiB, queue %s", pool->cfg.threads,
                 pool->cfg.threads == 1 ? "" : "s", pool->cfg.name_prefix,
                 pool->cfg.threads - 1, pp__park_backend_name(), pool->cfg.stack_size / 1024, cap);
    }
    apr_pool_pre_cleanup_register(parent, pool, parent_cleanup);
    *out = pool;
    return APR_SUCCESS;

fail:
    /* One unwinding path: stop and join the workers already started (none
     * is inside a task: nobody could submit one yet) and free it all. */
    if (pool->nstarted > 0)
        pool_close(pool);
    else
        pool_free(pool);
    return rv;
}
