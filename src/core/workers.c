/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The workers' comings and goings: an elastic pool (min_threads below
 * threads) starts workers on demand and retires those idle past
 * idle_timeout; a task in a block section (pp_task_block_begin) does not
 * count against threads, so another worker may start in its place, up to
 * max_blocking more. The sleep/wake handshake (sched.c) decides when;
 * this file keeps the counts and makes and unmakes the threads.
 *
 * Slots. A pool has threads + max_blocking worker slots, each with its
 * deque; a start takes the lowest free one, so the slots in use stay
 * packed below nused and every scan of the workers stops there. A
 * retired worker's thread is joined by the next start of its slot (it
 * has left the pool by then, or is about to) or at shutdown, so exited
 * threads do not pile up, and each start's thread record lives in a pool
 * of its own (tp), freed at that join: a service that grows and shrinks
 * for months does not grow its memory.
 *
 * Counts, under the queue lock: live (workers from their reservation to
 * their leaving), nblocked (workers inside a block section), nstartable =
 * min(want - (live - nblocked), nslots - live), where want is threads
 * while running, 1 while draining and 0 while cancelling;
 * readers without the lock see nstartable and nlive (atomics).
 */
#include "config.h"
#include "sched.h"
#include "fault.h"

static void set_live_locked(pp_pool_t *pool, apr_uint32_t live)
{
    ASSERT_LOCKED(pool);
    pool->live = live;
    atomic_store_explicit(&pool->nlive, live, memory_order_relaxed);
    if (live > load32(&pool->live_peak))
        atomic_store_explicit(&pool->live_peak, live, memory_order_relaxed);
    pp__startable_locked(pool);
}

/* The one place where the pool's state bounds starts. Running: up to
 * threads active. Draining: only while no worker is active (every live one
 * in a block section, or none left), one to keep the drain going; a
 * worker that leaves a drain early is not replaced, so a fixed pool's
 * thread hooks run once per worker (parkpool.h, on_thread_start).
 * Cancelling: none. */
void pp__startable_locked(pp_pool_t *pool)
{
    apr_uint32_t active = pool->live - pool->nblocked, n = 0;
    apr_uint32_t want = pool->state == STATE_RUNNING    ? pool->cfg.threads
                        : pool->state == STATE_DRAINING ? 1
                                                        : 0;

    ASSERT_LOCKED(pool);
    PP__ASSERT(pool->nblocked <= pool->live);
    if (active < want) {
        n = want - active;
        if (n > pool->nslots - pool->live)
            n = pool->nslots - pool->live;
    }
    atomic_store_explicit(&pool->nstartable, n, memory_order_relaxed);
    publish_avail_locked(pool);
}

/* Slot i, free, reserved for a worker; searching: counted in nsearching
 * from now (a start on demand), else it goes idle at once (one of the
 * pool's first). */
static pp__worker_t *reserve_slot_locked(pp_pool_t *pool, apr_uint32_t i, int searching)
{
    pp__worker_t *w = worker_at(pool, i);

    ASSERT_LOCKED(pool);
    PP__ASSERT(!w->alive && !w->launching);
    w->alive = 1;
    w->launching = 1;
    w->searching = (unsigned char)searching;
    w->replaced = 0;
    pool->nlaunching++;
    if (i >= nused(pool)) {
        /* First use: nobody looks at it before nused covers it, and
         * whoever reads the new nused (acquire) sees it initialised.
         * A bounded pool's deques keep to their own slots: what waits
         * past them meets the queue's capacity. */
        pp__deque_init(w->deque, pool->cfg.queue_capacity ? PP__DEQUE_SIZE : PP__DEQUE_MAX);
        atomic_store_explicit(&pool->nused, i + 1, memory_order_release);
    }
    if (searching)
        atomic_fetch_add_explicit(&pool->nsearching, 1, memory_order_relaxed);
    set_live_locked(pool, pool->live + 1);
    return w;
}

/* The lowest free slot, so that those in use stay packed below nused. */
pp__worker_t *pp__reserve_locked(pp_pool_t *pool)
{
    apr_uint32_t i;

    ASSERT_LOCKED(pool);
    if (load32(&pool->nstartable) == 0)
        return NULL;
    for (i = 0; i < pool->nslots; i++) {
        pp__worker_t *w = worker_at(pool, i);
        if (!w->alive && !w->launching)
            return reserve_slot_locked(pool, i, 1);
    }
    return NULL;    /* every free slot is still being launched */
}

apr_status_t pp__start_first(pp_pool_t *pool, apr_uint32_t i)
{
    pp__worker_t *w;

    pp__mutex_lock(pool->lock);
    w = reserve_slot_locked(pool, i, 0);
    pp__mutex_unlock(pool->lock);
    return pp__launch(pool, w);
}

apr_status_t pp__launch(pp_pool_t *pool, pp__worker_t *w)
{
    apr_thread_t *old = w->joinable ? w->thread : NULL;
    apr_status_t rv, ignored;
    char msg[128];
    int on_demand;

    /* The slot's last thread has left the pool (it freed the slot), so
     * this join is short; its record goes with its pool. */
    if (old)
        apr_thread_join(&ignored, old);
    if (w->tp)
        apr_pool_destroy(w->tp);
    w->tp = NULL;
    w->joinable = 1;    /* before the thread can free the slot (see alive) */
    rv = apr_pool_create_unmanaged_ex(&w->tp, NULL, NULL);
    if (rv == APR_SUCCESS)
        rv = pp__fault_hit(PP__FAULT_THREAD_CREATE)
             ? APR_EAGAIN
             : apr_thread_create(&w->thread, pool->attr, pp__worker_main, w, w->tp);
    pp__mutex_lock(pool->lock);
    w->launching = 0;
    pool->nlaunching--;
    on_demand = w->searching;
    if (rv != APR_SUCCESS) {
        /* Its task stays queued for the workers there are; the next
         * submit that finds nobody to take it tries again. */
        w->joinable = 0;
        if (w->searching)
            atomic_fetch_sub_explicit(&pool->nsearching, 1, memory_order_relaxed);
        w->searching = 0;
        pp__leave_slot_locked(pool, w);
    }
    if (pool->nlaunching == 0)
        pp__cond_broadcast(pool->exited);    /* wait_joined() waits for it */
    pp__mutex_unlock(pool->lock);
    if (rv != APR_SUCCESS && on_demand)
        pp__pool_log(pool, PP_LOG_ERROR, "cannot start worker %u on demand (%u running): %s",
                     w->index, load32(&pool->nlive), pp_strerror(rv, msg, sizeof(msg)));
    else if (rv != APR_SUCCESS)
        pp__pool_log(pool, PP_LOG_ERROR, "cannot start worker %u of %u: %s", w->index,
                     pool->nmin, pp_strerror(rv, msg, sizeof(msg)));
    return rv;
}

int pp__may_retire_locked(pp_pool_t *pool, int expired)
{
    ASSERT_LOCKED(pool);
    if (pool->state != STATE_RUNNING)
        return 0;    /* a shutdown takes them all in its own way */
    if (pool->live - pool->nblocked > pool->cfg.threads)
        return 1;
    return expired && pool->live > pool->nmin;
}

void pp__leave_slot_locked(pp_pool_t *pool, pp__worker_t *w)
{
    ASSERT_LOCKED(pool);
    PP__ASSERT(pool->live > 0 && w->alive);
    w->alive = 0;
    set_live_locked(pool, pool->live - 1);
}

void pp__retire_locked(pp_pool_t *pool, pp__worker_t *w)
{
    pool->inside++;    /* its stop hook still needs the pool */
    pp__leave_slot_locked(pool, w);
}

/* A block section of worker w begins (begin != 0) or ends. The count is
 * the worker's (nested sections count once); the pool's changes under the
 * lock, where starts are decided. Entering one with tasks waiting and
 * nobody searching wakes or starts a worker for them, as a submit would:
 * their submitters found nobody to wake while w counted. F7 pairs with
 * F2 and F5: a deque push whose pusher read nstartable before it rose. */
void pp__block(pp__worker_t *w, int begin)
{
    pp_pool_t *pool = w->pool;
    pp__worker_t *x = NULL, *s = NULL;

    if (begin ? w->blocking++ > 0 : (w->blocking == 0 || --w->blocking > 0))
        return;
    pp__mutex_lock(pool->lock);
    if (begin) {
        pool->nblocked++;
        pp__startable_locked(pool);
        atomic_thread_fence(memory_order_seq_cst);    /* F7: pairs with F2, F5 */
        if (load32(&pool->nsearching) == 0 && pp__work_visible(pool))
            pp__wake_or_start_locked(pool, &x, &s);
    }
    else {
        PP__ASSERT(pool->nblocked > 0);
        pool->nblocked--;
        pp__startable_locked(pool);
    }
    pp__mutex_unlock(pool->lock);
    if (x)
        pp__unpark(x->parker);
    if (s)
        pp__launch(pool, s);
}

void pp__self_block(int begin)
{
    if (pp__self && pp__self->ctx)
        pp__block(pp__self, begin);
}

void pp_task_block_begin(pp_task_ctx_t *ctx)
{
    if (ctx && pp__self == ctx->worker)    /* another thread's context blocks nothing of ours */
        pp__block(ctx->worker, 1);
}

void pp_task_block_end(pp_task_ctx_t *ctx)
{
    if (ctx && pp__self == ctx->worker)
        pp__block(ctx->worker, 0);
}
