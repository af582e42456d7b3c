/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scheduler: the worker loop, and both halves of the sleep/wake
 * handshake (the worker going idle, the submitter waking one), so that
 * each fence is read beside the one it pairs with.
 *
 * Where tasks wait
 * ----------------
 * A task submitted from outside goes to the global queue: in a pool
 * without a queue_capacity its NORMAL level is the injector (inject.h),
 * pushed to and taken from without a lock; the other levels, and a
 * bounded queue, are under the queue lock. A task submitted by a task
 * goes to the running worker's own deque (deque.h), with no lock at all;
 * only when that is full does it take the global path. A worker runs its
 * own deque first (newest first), then takes from the global queue (a
 * batch, when there is plenty, which it moves into its deque), then
 * steals half of another worker's deque.
 *
 * Sleep/wake protocol (docs/design.md; models/sleepwake.pml checks it)
 * -------------------------------------------------------------------
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
 * beyond the searchers, never a herd, and none beyond the cores while
 * anybody searches (pp__wake_room). When the last searcher finds work
 * and sees more (after a fence of its own), it wakes one more worker, so
 * help also ramps up behind the tasks that tasks queue in their deques.
 *
 * No lost wakeup: take the last worker L to go idle while a task T sits
 * queued. T's queue is the locked global one (then T was pushed under the
 * lock, before or after L's check: before, L would have seen it; after,
 * its submitter saw L idle and nobody searching, fewer than the one task),
 * or a deque or the injector, where the two fences make a Dekker
 * handshake: either L's look at the deques and the injector (after F1)
 * sees T, or T's submitter sees L's idle entry and a searching count
 * without L. That count is then 0, since a worker still searching would
 * go idle after L. So a worker is woken. The same argument covers the
 * last searcher's extra wake-up. The injector adds two rules
 * (models/sleepwake.pml, INJECTOR): a push and its look at whether the
 * pool still takes tasks are one CAS (the shutdown closes the injector
 * under the lock), and a worker not counted as searching that moves a
 * batch from it into its deque makes F2's handshake after, as for its
 * tasks' submits.
 *
 * The seq_cst fences, numbered where they stand. Each pair is a Dekker
 * handshake: each side writes, fences, then reads what the other wrote,
 * so at least one of the two sees the other.
 *
 *   submitter / pusher                     worker going idle (F1) or last
 *                                          searcher finding work (F4)
 *   ------------------------------------   ---------------------------------
 *   F2 pp__push_local (sched.h): push      F1 search(), under the lock:
 *      into own deque; fence; read            nidle++, nsearching--; fence;
 *      nsearching, nidle                      scan every deque
 *   F5 pp__pool_help: steal surplus into   F4 found_work(): nsearching--
 *      own deque; fence; read the same        (release); fence; read nidle,
 *   F3 pp__wake_for_global_locked, for        the global queue, every deque
 *      enqueue (submit.c) under the lock:
 *      push on the global queue; fence;
 *      read nsearching. For the injector
 *      (submit.c, inject()): the push's
 *      seq_cst CAS, then seq_cst loads of
 *      navail, nsearching, its length
 *
 * F1 pairs with F2 and F5 (and with F4, whose decrement it may see before
 * the steal's push: hence the release), F3 with F4 (F1's look at the
 * locked global queue is under the same lock as F3's push and needs no
 * fence; an injector's push pairs with F1 as F2 does).
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
#include "sched.h"
#include "fault.h"
#include "os/os.h"

#include <stdlib.h>

/* The most a worker moves from the global queue into its deque at once:
 * enough to take the lock once per many tasks when a producer is ahead,
 * few enough that the others can still find work there. */
#define GLOBAL_BATCH 32u

/* How deep tasks may nest in one worker's stack by helping while they
 * wait for a group (pp_group_wait): each level is a task frame and a wait;
 * past this a wait just blocks. */
#define HELP_DEPTH_MAX 256u

_Thread_local pp__worker_t *pp__self PP__TLS_HOT;

/* Called with the lock held: take the most recently idle worker. It
 * counts as searching from here on, so that the submits right behind this
 * one leave the others asleep. */
static pp__worker_t *pop_idle_locked(pp_pool_t *pool)
{
    apr_uint32_t n = load32(&pool->nidle);

    ASSERT_LOCKED(pool);
    /* Each worker is idle, searching (or counted so by its waker), or
     * neither; never both. */
    PP__ASSERT(n + load32(&pool->nsearching) <= pool->live);
    if (n == 0)
        return NULL;
    set_nidle_locked(pool, n - 1);
    atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
    pp__counter_add(&pool->unparks, 1);    /* under the lock */
    return pool->idle[n - 1];
}

/* Called with the lock held: wake every idle worker. */
void pp__wake_all_locked(pp_pool_t *pool)
{
    pp__worker_t *w;

    while ((w = pop_idle_locked(pool)) != NULL)
        pp__unpark(w->parker);
}

void pp__wake_or_start_locked(pp_pool_t *pool, pp__worker_t **wake, pp__worker_t **start)
{
    ASSERT_LOCKED(pool);
    if (held(pool))
        return;
    if (load32(&pool->nidle) > 0)
        *wake = pop_idle_locked(pool);
    else
        *start = pp__reserve_locked(pool);
}

apr_uint32_t pp__wake_for_global_locked(pp_pool_t *pool, apr_uint32_t n,
                                        pp__worker_t **wake, apr_uint32_t max,
                                        pp__worker_t **start)
{
    apr_uint32_t nwake = 0, want, searching;
    apr_uint64_t len;
    pp__worker_t *w;

    ASSERT_LOCKED(pool);
    /* nidle and nstartable change only under the lock we hold: with
     * nobody idle and nobody to start there is nobody to wake, and no
     * fence to pay (every worker is awake and looks at this queue, under
     * this lock, before it may sleep). Paused, the task waits for
     * pp__resume_locked(), under this lock too. */
    if ((load32(&pool->nidle) == 0 && load32(&pool->nstartable) == 0) || held(pool))
        return 0;
    atomic_thread_fence(memory_order_seq_cst);    /* F3: pairs with F4 */
    searching = load32(&pool->nsearching);
    len = global_len(pool);
    want = len > searching ? (len - searching > n ? n : (apr_uint32_t)(len - searching)) : 0;
    /* Up: neither idle nor in a block section (those want no core). */
    want = pp__wake_room(want, searching, pool->live - load32(&pool->nidle) - pool->nblocked,
                         pool->ncpus);
    while (want > 0 && (w = pop_idle_locked(pool)) != NULL) {
        want--;
        if (nwake < max)
            wake[nwake++] = w;
        else
            pp__unpark(w->parker);
    }
    /* One start per submit at most: the started worker, finding more,
     * wakes or starts the next (found_work), so a burst ramps up without
     * its submitter making every thread. */
    if (want > 0)
        *start = pp__reserve_locked(pool);
    return nwake;
}

void pp__wake_one(pp_pool_t *pool)
{
    pp__worker_t *w = NULL, *s = NULL;

    pp__mutex_lock(pool->lock);
    if (wake_wanted(pool))
        pp__wake_or_start_locked(pool, &w, &s);
    pp__mutex_unlock(pool->lock);
    if (w)
        pp__unpark(w->parker);
    if (s)
        pp__launch(pool, s);
}

/* Every task queued while paused is in the global queue or a deque; none
 * woke anybody. F6 pairs with F2 and F5: a task pushed into a deque by a
 * pusher that read paused set (and so woke nobody) is seen here. One
 * pushed under the lock (the global queue) is seen through the lock. */
pp__worker_t *pp__resume_locked(pp_pool_t *pool)
{
    apr_uint64_t work;
    apr_uint32_t i, searching;
    pp__worker_t *w = NULL;

    ASSERT_LOCKED(pool);
    atomic_store_explicit(&pool->paused, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);    /* F6: pairs with F2, F5 */
    work = global_len(pool);
    for (i = 0; i < nused(pool); i++)
        work += pp__deque_len(&pool->deques[i]);
    searching = load32(&pool->nsearching);
    for (work = work > searching ? work - searching : 0;
         work > 0 && (w = pop_idle_locked(pool)) != NULL; work--)
        pp__unpark(w->parker);
    /* More than the idle ones can take: one start, as a submit makes. */
    return work > 0 ? pp__reserve_locked(pool) : NULL;
}

/* Does any deque hold a task? After a seq_cst fence, this sees every
 * task pushed before the pusher's fence. */
static int deques_busy(pp_pool_t *pool)
{
    apr_uint32_t i, n = nused(pool);

    for (i = 0; i < n; i++)
        if (pp__deque_len(&pool->deques[i]) > 0)
            return 1;
    return 0;
}

/* Is any worker running a task? Ended is read before started, so a task
 * seen ended was seen started. Used by a draining worker that found
 * nothing, under the lock: see search(). */
static int tasks_running(pp_pool_t *pool)
{
    apr_uint32_t i, n = nused(pool);

    for (i = 0; i < n; i++) {
        pp__worker_t *w = worker_at(pool, i);
        apr_uint64_t ended = pp__counter_read(&w->completed) + pp__counter_read(&w->failed);
        if (pp__counter_read(&w->started) != ended)
            return 1;
    }
    return 0;
}

int pp__work_visible(pp_pool_t *pool)
{
    return global_len(pool) > 0 || deques_busy(pool);
}

/* Anything in the injector? */
static int injected(pp_pool_t *pool)
{
    return pool->inj && pp__inject_len(pool->inj) > 0;
}

/* What on_task_end and the timing stats are told of a task that ran
 * (started is 0 without cfg.timing); before its release, as the error
 * report, since the name may be the release's to free. */
static void task_ended(pp__worker_t *w, const pp__entry_t *e, apr_status_t rv,
                       apr_time_t started)
{
    pp_pool_t *pool = w->pool;
    const pp_config_t *cfg = &pool->cfg;
    pp_task_info_t info;

    info.name = e->name ? e->name : "";
    info.status = rv;
    info.worker = w->index;
    info.queued = info.started = info.ended = 0;
    if (cfg->timing && started) {
        info.queued = e->queued;
        info.started = started;
        info.ended = apr_time_now();
        /* The wall clock may step back: a negative span counts as 0. */
        pp__histo_add(&pool->histo[2 * w->index], started - e->queued);
        pp__histo_add(&pool->histo[2 * w->index + 1], info.ended - started);
    }
    if (cfg->on_task_end)
        cfg->on_task_end(&info, cfg->baton);
}

static void run_entry(pp__worker_t *w, const pp__entry_t *e)
{
    pp_task_ctx_t ctx, *outer = w->ctx;    /* set when w helps in a wait */
    apr_time_t started = 0;
    apr_status_t rv;
    pp_pool_t *pool = w->pool;
    const pp_config_t *cfg = &pool->cfg;

    /* A task taken from a deque may have been queued just as its pool or
     * group was cancelled: it is dropped as if the cancel had found it. */
    if (load_state(pool) == STATE_CANCELLING
        || (e->group && pp__group_cancelled(e->group))) {
        pp__drop_entry(pool, e, PP_ECANCELLED);
        return;
    }
    /* Its start deadline passed while it waited: the clock is read only
     * for a task that has one. */
    if (e->not_after && apr_time_now() > e->not_after) {
        pp__drop_entry(pool, e, PP_EEXPIRED);
        return;
    }
    pp__counter_add(&w->started, 1);
    if (cfg->timing)
        started = apr_time_now();
    ctx.worker = w;
    ctx.entry = e;
    w->ctx = &ctx;
    w->in_fn++;
    rv = e->fn(e->arg, &ctx);
    w->in_fn--;
    if (pool->observe)
        task_ended(w, e, rv, started);
    /* Report before release: the name may belong to what release lets go
     * (a plugin's registry). Count after both, then tell the group, so that
     * whoever sees the group done or the counters settled sees it all. The
     * task stays current through its release: a release that frees the
     * task's own group (with the APR pool it lives in) must find the group
     * to be its caller's, not wait for itself. */
    if (rv != APR_SUCCESS && cfg->on_task_error)
        cfg->on_task_error(rv, e->name ? e->name : "", cfg->baton);
    if (e->release)
        e->release(e->arg);
    w->ctx = outer;
    if (rv != APR_SUCCESS)
        pp__counter_add(&w->failed, 1);
    else
        pp__counter_add(&w->completed, 1);
    if (e->group)
        pp__group_leave(e->group, rv, 1, 1);
}

/* A strand's turn (strand.h): its tasks one after the other, each run in
 * e's place (where a task that ends the thread is looked for), up to
 * PP__STRAND_TURN of them; then, if more wait, the turn goes to the back
 * of the shared queue. A pause ends the turn early, as it stops a worker
 * between tasks. */
static void run_turn(pp__worker_t *w, pp__entry_t *e)
{
    pp_strand_t *s = e->arg, *outer = w->turn;
    apr_uint32_t k;

    w->turn = s;
    for (k = 0; k < PP__STRAND_TURN && !held(w->pool); k++) {
        if (!pp__strand_next(s, e)) {
            w->turn = outer;
            return;
        }
        run_entry(w, e);
    }
    w->turn = outer;
    pp__strand_again(s);
}

/* Run what a worker took: a task, or a strand's turn. */
static void run_taken(pp__worker_t *w, pp__entry_t *e)
{
    if (pp__is_turn(e))
        run_turn(w, e);
    else
        run_entry(w, e);
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

/* How many of len tasks waiting in the shared queue a searcher moves
 * into its deque besides the one it runs: its share among the threads,
 * within GLOBAL_BATCH and its deque's room. */
static apr_uint32_t batch_size(pp__worker_t *w, apr_uint64_t len)
{
    apr_uint64_t n = len / w->pool->cfg.threads;
    apr_uint32_t room = pp__deque_room(w->deque);

    if (len <= 2 || n <= 1)
        return 0;
    if (n > GLOBAL_BATCH)
        n = GLOBAL_BATCH;
    if (n > room + 1)
        n = room + 1;
    return (apr_uint32_t)n - 1;
}

/* Into w's deque, in reverse, so that w pops them oldest first. */
static void push_batch(pp__worker_t *w, pp__entry_t *more, apr_uint32_t n)
{
    while (n > 0)
        pp__deque_push(w->deque, &more[--n]);
}

/* Take the injector's oldest task into e and, unless mode is ONE, a
 * share more into w's deque. A searcher's batch (mode SEARCHER) is
 * covered by its found_work(), as a thief's is; a worker not counted as
 * searching (mode OWN) moved it as its tasks' submits move theirs, and
 * makes the same handshake (F2) after it: else the batch could slip
 * between an idle-goer's look at the deques and its look at the injector
 * (models/sleepwake.pml, INJECTOR, mutant UNCOUNTED_BATCH). The length
 * is looked at first, so that a poll of an empty injector costs two
 * loads and no fence. */
enum { ONE, SEARCHER, OWN };

static int take_injected(pp__worker_t *w, pp__entry_t *e, int mode)
{
    pp_pool_t *pool = w->pool;
    pp__entry_t more[GLOBAL_BATCH];
    apr_uint32_t n = 0, want;

    if (!injected(pool) || !pop_injected(pool, e))
        return 0;
    if (mode == ONE)
        return 1;
    want = batch_size(w, pp__inject_len(pool->inj) + 1);
    while (n < want && pop_injected(pool, &more[n]))
        n++;
    if (n == 0)
        return 1;
    push_batch(w, more, n);
    if (mode == OWN) {
        atomic_thread_fence(memory_order_seq_cst);    /* F2, as pp__push_local */
        if (wake_wanted(pool))
            pp__wake_one(pool);
    }
    return 1;
}

apr_status_t pp__inject_to_locked(pp_pool_t *pool, apr_uint32_t max)
{
    apr_uint64_t len = pool->inj ? pp__inject_len(pool->inj) : 0;
    apr_uint32_t n = len < max ? (apr_uint32_t)len : max;
    apr_status_t rv;
    pp__entry_t e;

    ASSERT_LOCKED(pool);
    if (n == 0)
        return APR_SUCCESS;
    rv = pp__queue_reserve(&pool->queue.normal, n);
    while (rv == APR_SUCCESS && n-- > 0 && pop_injected(pool, &e))
        pp__queue_push(&pool->queue.normal, &e);    /* room reserved: cannot fail */
    publish_qlen_locked(pool);
    return rv;
}

/* Called with the lock held: take the shared queue's next task into e
 * (prioq.h) and, when many NORMAL ones wait and no HIGH one, a share
 * more into w's deque (from the injector only for a searcher: under the
 * lock no handshake can follow; take_injected). Not LOW ones: in the
 * deque they would run before NORMAL tasks queued later. A bounded queue
 * moves nothing: its capacity is a promise about how much may wait. The
 * locked levels go first; the injector is looked at when they are empty. */
static int take_global_locked(pp__worker_t *w, pp__entry_t *e, int searching)
{
    pp_pool_t *pool = w->pool;
    pp__prioq_t *q = &pool->queue;
    pp__entry_t more[GLOBAL_BATCH];
    apr_uint32_t len, n = 0;
    unsigned level;

    ASSERT_LOCKED(pool);

    /* Priorities in use: NORMAL submits come here, but a few may have
     * gone into the injector as the first HIGH or LOW came (submit.c). */
    if (q->more && injected(pool))
        pp__inject_to_locked(pool, GLOBAL_BATCH);
    len = pp__queue_len(&q->normal);
    if (pool->cfg.queue_capacity == 0 && pp__prioq_level_len(q, PP__HIGH) == 0)
        n = batch_size(w, len);
    /* Without HIGH and LOW levels (never used), the one queue directly. */
    level = q->more ? pp__prioq_next(q) : len > 0 ? PP__NORMAL : PP__LEVELS;
    if (level == PP__LEVELS || !pp__queue_pop(pp__prioq_level(q, level), e))
        return pool->inj && take_injected(w, e, searching ? SEARCHER : ONE);
    if (level != PP__NORMAL)
        n = 0;
    for (len = 0; len < n; len++)
        pp__queue_pop(&q->normal, &more[len]);
    if (q->more)
        pp__prioq_taken(q, level, n + 1);
    publish_qlen_locked(pool);
    room_made_locked(pool);
    push_batch(w, more, n);
    return 1;
}

/* The shared queue's next task: from the injector without the lock while
 * the locked levels are empty, else under the lock. searching: is w
 * counted in nsearching (take_injected)? */
static int take_global(pp__worker_t *w, pp__entry_t *e, int searching)
{
    pp_pool_t *pool = w->pool;
    int got;

    /* Not in a shutdown: there a worker that found nothing else may have
     * left (one that misses a task just taken leaves early, see search()),
     * and the handshake after a batch would start another in its slot. */
    if (load32(&pool->qlen) == 0)
        return pool->inj && take_injected(w, e, searching ? SEARCHER
                                                : load_state(pool) == STATE_RUNNING ? OWN : ONE);
    pp__mutex_lock(pool->lock);
    got = take_global_locked(w, e, searching);
    pp__mutex_unlock(pool->lock);
    return got;
}

/* Steal half of the first other deque that has work, the oldest entry
 * into e (to run now), the rest into w's own deque. */
static int steal(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t n = nused(pool), k, v, want, got, room;
    pp__entry_t x;
    int r;

    for (k = 0; k < n; k++) {
        v = (w->victim + k) % n;
        if (v == w->index)
            continue;
        want = (pp__deque_len(&pool->deques[v]) + 1) / 2;
        room = pp__deque_room(w->deque);
        if (want > room)
            want = room;
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
        return take_global(w, e, 0);
    }
    return 0;
}

/* A task for w without searching: a HIGH one waiting in the shared
 * queue, else its own deque's newest, else the shared queue's next, with
 * the fair pick now and then. */
static int next_local(pp__worker_t *w, pp__entry_t *e)
{
    return (load32(&w->pool->qhigh) > 0 && take_global(w, e, 0)) || pick_oldest(w, e)
           || pp__deque_pop(w->deque, e) || take_global(w, e, 0);
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
    if (load32(&pool->navail) > 0 && pp__work_visible(pool))
        pp__wake_one(pool);
}

/* How many rounds w may poll the queues before it goes idle (budget.h).
 * The count of others is exact: each searcher's load of nsearching comes
 * after its own increment, so the k-th to join sees k - 1 others. */
static apr_uint32_t search_budget(const pp__worker_t *w)
{
    pp_pool_t *pool = w->pool;

    apr_uint32_t live = load32(&pool->nlive), idle = load32(&pool->nidle);

    return pp__budget_rounds(&w->budget, live > idle ? live - idle : 1,
                             load32(&pool->nsearching) - 1);    /* w is one */
}

/* Remove w from the idle stack, wherever it is (a timed-out sleeper is
 * usually near the bottom: the stack is LIFO). 0 if it is not there: a
 * waker popped it. Called with the lock held; navail is left as it was,
 * for the caller to publish once it retired w or put it back. */
static int unstack_locked(pp_pool_t *pool, pp__worker_t *w)
{
    apr_uint32_t n = load32(&pool->nidle), k;

    ASSERT_LOCKED(pool);
    for (k = 0; k < n && pool->idle[k] != w; k++)
        ;
    if (k == n)
        return 0;
    for (; k + 1 < n; k++)
        pool->idle[k] = pool->idle[k + 1];
    atomic_store_explicit(&pool->nidle, n - 1, memory_order_relaxed);
    return 1;
}

/* The sleep of an idle worker that may retire (above min_threads, or an
 * extra started for a block section): for idle_timeout at a time. 1 when
 * woken (counted as searching by its waker), 0 when retired. A worker
 * whose sleep timed out just as a waker popped it must not leave with
 * that wake-up (the waker counted on it for a task): under the lock it
 * finds itself off the stack, and takes the token that is on its way
 * instead (models/sleepwake.pml, ELASTIC, and its mutant
 * RETIRE_WHEN_POPPED). */
static int idle_wait(pp__worker_t *w)
{
    pp_pool_t *pool = w->pool;

    if (pp__park_timed(w->parker, pool->cfg.idle_timeout) == APR_SUCCESS)
        return 1;
    pp__mutex_lock(pool->lock);
    if (!unstack_locked(pool, w)) {
        pp__mutex_unlock(pool->lock);
        pp__park(w->parker);    /* the waker unparks after its unlock */
        return 1;
    }
    if (pp__may_retire_locked(pool, 1)) {
        pp__retire_locked(pool, w);
        pp__mutex_unlock(pool->lock);
        return 0;
    }
    /* Down to min_threads meanwhile: back on the stack (on top now, which
     * only changes who is woken first), and asleep without a timer, so an
     * idle pool makes no wake-ups at all. */
    pool->idle[load32(&pool->nidle)] = w;
    set_nidle_locked(pool, load32(&pool->nidle) + 1);
    pp__mutex_unlock(pool->lock);
    pp__park(w->parker);
    return 1;
}

/*
 * w's deque is empty and the global queue was. Search (poll the queues)
 * for up to search_budget() rounds, then go idle and park; repeat after a
 * wake-up.
 * 1 with a task in e, 0 when the pool is shutting down and nothing is left
 * for w, -1 when w retired (workers.c: no longer live, but inside). The
 * caller counted w as searching (or its waker did).
 */
static int search(pp__worker_t *w, pp__entry_t *e)
{
    pp_pool_t *pool = w->pool;
    apr_uint32_t i, n, budget;
    apr_time_t polled, parked;
    int woken = 0, timed;

    for (;;) {
        /* Shutting down: one look per round, not a poll. A shutdown wakes
         * every worker at once, and a thousand of them each polling a
         * thousand deques would make it quadratic. */
        budget = load_state(pool) == STATE_RUNNING ? search_budget(w) : 0;
        polled = 0;
        for (i = 0; !held(pool); i++) {
            if (take_global(w, e, 1) || steal(w, e)) {
                /* Work found by polling (not at the first look): it paid
                 * off, search longer next time (up to cfg.spin). Work
                 * found on a wake-up says nothing about polling, and
                 * changes nothing. */
                if (!woken && i > 0)
                    w->budget.spin = pp__budget_paid(w->budget.spin, pool->cfg.spin);
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
            if (i % PP__BUDGET_YIELD_EVERY == PP__BUDGET_YIELD_EVERY - 1) {
                /* Timed from here: a search that ends sooner reads no clock. */
                if (i == PP__BUDGET_YIELD_EVERY - 1)
                    polled = apr_time_now();
                apr_thread_yield();
            }
        }
        if (!held(pool))    /* a pause cut the search short: it says nothing */
            pp__budget_missed_search(&w->budget, budget, pool->min_spin, polled);

        pp__mutex_lock(pool->lock);
        if (!held(pool) && take_global_locked(w, e, 1)) {
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
            if (deques_busy(pool) || injected(pool)) {
                pp__mutex_unlock(pool->lock);
                continue;
            }
            if (pool->state == STATE_CANCELLING || !tasks_running(pool)) {
                atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
                pp__wake_all_locked(pool);
                pp__mutex_unlock(pool->lock);
                return 0;
            }
        }
        n = load32(&pool->nidle);
        pool->idle[n] = w;
        set_nidle_locked(pool, n + 1);
        atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);    /* F1: pairs with F2, F4, F5 */
        /* Paused (under the lock, so no resume is between): the tasks
         * stay where they are, and pp__resume_locked() counts them. The
         * injector is looked at here, after F1, as the deques are: its
         * pushes take no lock (models/sleepwake.pml, INJECTOR, whose
         * mutant CHECK_FIRST looks only before, above). */
        if (!held(pool) && (deques_busy(pool) || injected(pool))) {
            /* A task came into a deque or the injector while we announced
             * ourselves: take the announcement back and go after it. */
            set_nidle_locked(pool, n);
            atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
            pp__mutex_unlock(pool->lock);
            continue;
        }
        if (pp__may_retire_locked(pool, 0)) {
            /* More awake than threads allows (block sections ended):
             * leave rather than sleep, with the same handshake behind us
             * as going idle (we are on top of the stack: take it back). */
            atomic_store_explicit(&pool->nidle, n, memory_order_relaxed);
            pp__retire_locked(pool, w);    /* publishes navail: unchanged */
            pp__mutex_unlock(pool->lock);
            return -1;
        }
        timed = pool->live > pool->nmin;
        pp__mutex_unlock(pool->lock);
        pp__counter_add(&w->parks, 1);
        parked = w->budget.polls_per_us ? apr_time_now() : 0;
        if (timed && !idle_wait(w))
            return -1;    /* retired */
        if (!timed)
            pp__park(w->parker);
        if (parked)
            pp__budget_woke(&w->budget, pool->cfg.spin, apr_time_now() - parked);
        woken = 1;    /* and whoever woke us counted us as searching */
    }
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
    if (w->searching) {    /* started on demand: its starter counted it */
        w->searching = 0;
        pp__mutex_unlock(pool->lock);
        return;
    }
    if (pool->state != STATE_RUNNING || w->replaced) {
        atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
        pp__mutex_unlock(pool->lock);
        return;
    }
    n = load32(&pool->nidle);
    pool->idle[n] = w;
    set_nidle_locked(pool, n + 1);
    pp__counter_add(&w->parks, 1);    /* counted before pp_pool_create() returns */
    if (++pool->nready == pool->nmin)
        pp__cond_broadcast(pool->exited);    /* pp_pool_create() waits */
    pp__mutex_unlock(pool->lock);
    pp__park(w->parker);
}

/* on_thread_start failed on w's new thread: it leaves before its first
 * task. While the pool is being created, that fails the creation (the
 * first status wins; pp_pool_create waits for nready); a thread replacing
 * one that a task ended is not replaced in turn, and an idle worker is
 * woken for what its deque holds. */
static void start_failed(pp__worker_t *w, apr_status_t rv)
{
    pp_pool_t *pool = w->pool;
    pp__worker_t *x = NULL;
    char msg[128];

    int first;    /* one of the pool's first workers, which its creator waits for */

    pp__mutex_lock(pool->lock);
    first = !w->replaced && !w->searching;
    pp__mutex_unlock(pool->lock);
    pp__pool_log(pool, PP_LOG_ERROR, "%s: on_thread_start failed (%s): the worker %s", w->name,
                 pp_strerror(rv, msg, sizeof(msg)),
                 first ? "stops, and the pool is not created" : "is not started");
    pp__mutex_lock(pool->lock);
    if (first) {
        if (pool->start_rv == APR_SUCCESS)
            pool->start_rv = rv;
        if (++pool->nready == pool->nmin)
            pp__cond_broadcast(pool->exited);
    }
    else {
        /* The task it was started (or replaced) for stays queued: wake an
         * idle worker if there is one, or another start will come with the
         * next submit. */
        if (w->searching) {
            w->searching = 0;
            atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
        }
        if (pp__work_visible(pool) && load32(&pool->nidle) > 0)
            x = pop_idle_locked(pool);
    }
    pp__leave_slot_locked(pool, w);
    pp__mutex_unlock(pool->lock);
    if (x)
        pp__unpark(x->parker);
    pp__mutex_lock(pool->lock);
    pp__pool_leave_locked(pool);    /* the last touch of pool: it may be freed */
}

void *APR_THREAD_FUNC pp__worker_main(apr_thread_t *thread, void *data)
{
    pp__worker_t *w = data;
    pp_pool_t *pool = w->pool;
    const pp_config_t *cfg = &pool->cfg;
    pp__entry_t *e = &w->cur;
    apr_status_t rv;
    int found;

    (void)thread;
    pp__thread_set_name(w->name);
    if (cfg->on_thread_start) {
        rv = cfg->on_thread_start(w->index, cfg->baton);
        if (rv != APR_SUCCESS) {
            start_failed(w, rv);
            return NULL;
        }
    }
    pp__self = w;
    rv = pp__exit_watch(w);
    if (rv != APR_SUCCESS) {
        char msg[128];
        pp__pool_log(pool, PP_LOG_WARN, "%s: no thread-exit watch (%s): a task that ends the "
                     "thread will hang the pool's shutdown", w->name,
                     pp_strerror(rv, msg, sizeof(msg)));
    }

    start_idle(w);
    for (;;) {
        /* Counted as searching here: by its waker, or by itself. */
        if ((found = search(w, e)) <= 0)
            break;
        run_taken(w, e);
        while (!held(pool) && next_local(w, e))
            run_taken(w, e);
        atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
    }
    pp__exit_watch(NULL);
    pp__self = NULL;
    if (cfg->on_thread_stop)
        cfg->on_thread_stop(w->index, cfg->baton);
    pp__mutex_lock(pool->lock);
    if (found < 0) {
        PP__ASSERT(pool->inside > 0);
        pool->inside--;    /* retired: its slot was freed then */
    }
    else {
        pp__leave_slot_locked(pool, w);
    }
    pp__pool_leave_locked(pool);    /* the last touch of pool: it may be freed */
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
            if (pool->observe)
                task_ended(w, e, PP_ETHREADEXIT, 0);
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
    if (w->turn) {
        /* It died in a strand's turn: the strand's next task gets one. */
        pp_strand_t *s = w->turn;
        w->turn = NULL;
        pp__strand_again(s);
    }
    pp__self = NULL;
    if (cfg->on_thread_stop)
        cfg->on_thread_stop(w->index, cfg->baton);

    w->replaced = 1;
    pp__mutex_lock(pool->lock);
    if (w->blocking > 0) {    /* it died inside a block section */
        w->blocking = 0;
        pool->nblocked--;
        pp__startable_locked(pool);
    }
    if (pool->state != STATE_CANCELLING)
        rv = pp__fault_hit(PP__FAULT_THREAD_CREATE)
             ? APR_EAGAIN
             : apr_thread_create(&thread, pool->attr, pp__worker_main, w, pool->p);
    if (rv == APR_SUCCESS) {
        /* Joined by nobody now: the pool joins the new one. */
        apr_thread_detach(w->thread);
        w->thread = thread;
        pp__mutex_unlock(pool->lock);
        pp__pool_log(pool, PP_LOG_ERROR, "%s: a task ended the thread; %u task%s failed with it; "
                     "a new thread took its place", w->name, levels, levels == 1 ? "" : "s");
        return;
    }
    pp__mutex_unlock(pool->lock);    /* no hook runs under the lock */
    pp__pool_log(pool, PP_LOG_ERROR, "%s: a task ended the thread; %u task%s failed with it; "
                 "not replaced (%s)", w->name, levels, levels == 1 ? "" : "s",
                 load_state(pool) == STATE_CANCELLING ? "cancelling"
                                                      : pp_strerror(rv, msg, sizeof(msg)));
    pp__mutex_lock(pool->lock);
    if (pp__deque_len(w->deque) > 0)
        x = pop_idle_locked(pool);
    if (x)
        pp__unpark(x->parker);
    pp__leave_slot_locked(pool, w);
    pp__pool_leave_locked(pool);    /* the last touch of pool: it may be freed */
}

int pp__pool_help(pp_pool_t *pool)
{
    pp__worker_t *w = pp__self;
    pp__entry_t *e;

    if (!w || w->pool != pool || w->depth >= HELP_DEPTH_MAX)
        return -1;
    if (!w->nested && !(w->nested = malloc(HELP_DEPTH_MAX * sizeof(*w->nested))))
        return -1;
    e = &w->nested[w->depth];
    if (held(pool))
        return 0;    /* the wait blocks until a resume, as any worker would */
    if (!next_local(w, e)) {
        if (!steal(w, e))
            return 0;
        /* Half a deque came along: if nobody searches, wake a hand for
         * it, as a searcher does (this one may go back to a long task). */
        atomic_thread_fence(memory_order_seq_cst);    /* F5: as F2 */
        if (pp__deque_len(w->deque) > 0 && wake_wanted(pool))
            pp__wake_one(pool);
    }
    w->depth++;
    run_taken(w, e);
    w->depth--;
    return 1;
}

pp_group_t *pp__current_group(void)
{
    return pp__self && pp__self->ctx ? pp__self->ctx->entry->group : NULL;
}
