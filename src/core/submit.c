/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Submitting: what a caller's task goes through on its way to a worker.
 * From outside, onto the global queue under the queue lock (waiting for
 * room in a bounded one), and one idle worker woken per task the
 * searchers cannot take (sched.c, F3); from a task, onto its worker's own
 * deque (sched.h, pp__push_local, F2).
 */
#include "config.h"
#include "sched.h"
#include "abi.h"

/* enqueue()'s flag for the library's own entries: no room wait, not
 * counted as submitted (strand.c's turns). */
#define INTERNAL 0x80000000u

/* Called with the lock held: wait until n more entries fit (or fail with
 * PP_ESHUTDOWN, PP_EFULL under PP_NOWAIT, APR_TIMEUP at the deadline). A
 * worker must never wait for room in its own pool's queue: if every
 * worker did, nobody would make room. Its submits go past the capacity. */
static apr_status_t wait_room_locked(pp_pool_t *pool, apr_uint32_t n, apr_uint32_t flags,
                                     apr_time_t deadline)
{
    apr_uint32_t cap = pool->cfg.queue_capacity;
    int own = own_worker(pool);

    ASSERT_LOCKED(pool);

    for (;;) {
        if (!accepting(pool, own))
            return PP_ESHUTDOWN;
        if (cap == 0 || own || (flags & INTERNAL) || pp__prioq_len(&pool->queue) + n <= cap)
            return APR_SUCCESS;
        if (flags & PP_NOWAIT)
            return PP_EFULL;
        if (deadline != PP__FOREVER && pp__clock_mono() >= deadline)
            return APR_TIMEUP;
        atomic_store_explicit(&pool->nwaiting, load32(&pool->nwaiting) + 1,
                              memory_order_relaxed);
        pool->nwaiting_batch += n > 1;
        pp__cond_wait_until(pool->not_full, pool->lock, deadline);    /* looks again */
        pool->nwaiting_batch -= n > 1;
        atomic_store_explicit(&pool->nwaiting, load32(&pool->nwaiting) - 1,
                              memory_order_relaxed);
    }
}

/* Wake-ups a batch makes after unlocking; more idle workers than this are
 * unparked under the lock, which is correct, only slower. */
#define BATCH_WAKE_MAX 64

/* After n tasks went into the shared queue (and, for a push into the
 * injector, after F3): under the lock, wake an idle worker for each of
 * them that the searching workers cannot take, or reserve a start. */
static void wake_for_global(pp_pool_t *pool, apr_uint32_t n, int locked)
{
    pp__worker_t *wake[BATCH_WAKE_MAX], *start = NULL;
    apr_uint32_t i, nwake;

    if (!locked)
        pp__mutex_lock(pool->lock);
    nwake = pp__wake_for_global_locked(pool, n, wake, BATCH_WAKE_MAX, &start);
    pp__mutex_unlock(pool->lock);
    for (i = 0; i < nwake; i++)
        pp__unpark(wake[i]->parker);
    if (start)
        pp__launch(pool, start);
}

/* One NORMAL entry into the injector, without the lock (PP_ESHUTDOWN
 * once it is closed: the caller sees whether the locked queue takes it,
 * as it does an own worker's in a drain). Then the rest of the sleep/wake
 * handshake (models/sleepwake.pml, INJECTOR): read the workers to be had,
 * nsearching and the queue's length, and take the lock only when a
 * worker is owed. F3 is the push's seq_cst CAS with these seq_cst loads
 * (a fence between would add nothing: C11 7.17.3, a seq_cst fence before
 * the other side's load, F1 or F4, orders against them); on x86 they are
 * plain loads, and with every worker awake (navail 0) a submit reads
 * nothing else, not the takers' line. */
static apr_status_t inject(pp_pool_t *pool, const pp__entry_t *e, apr_uint32_t flags)
{
    apr_status_t rv;

    rv = pp__inject_push(pool->inj, e, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    if (flags & INTERNAL)    /* after the push: a stats read between sees one more queued */
        pp__counter_add_shared(&pool->inj_internal, 1);
    if (atomic_load_explicit(&pool->navail, memory_order_seq_cst) > 0
        && global_len(pool) > atomic_load_explicit(&pool->nsearching, memory_order_seq_cst))
        wake_for_global(pool, 1, 0);
    return APR_SUCCESS;
}

/* Put n entries like e on the shared queue at level (the i-th with fns[i]
 * and args[i] when fns is given), all or none, and wake an idle worker
 * for each of them that the searching workers cannot take: the queue's
 * length past the number searching, n at most. A lone submit to a pool
 * with a searcher wakes nobody; a burst wakes helpers as fast as it
 * outruns them, instead of one at a time behind the first searcher's
 * wake-up. A single NORMAL entry goes into the injector without the
 * lock; a batch goes there under the lock, where no shutdown can close
 * it halfway (blocks for it made before, so that none is missing
 * halfway either); what the injector does not take goes to the locked
 * levels. */
static apr_status_t enqueue(pp_pool_t *pool, unsigned level, const pp__entry_t *e,
                            const pp_task_fn *fns, void *const *args, apr_uint32_t n,
                            apr_uint32_t flags, apr_time_t deadline)
{
    pp__inj_block_t *spare = NULL;
    pp__entry_t x = *e;
    apr_uint32_t i = 0;
    apr_status_t rv;
    int injected = 0;

    if (pool->inj && level == PP__NORMAL && !load32(&pool->prio_used)) {
        if (n == 1 && !fns) {
            rv = inject(pool, e, flags);
            if (rv != PP_ESHUTDOWN)
                return rv;
        }
        else if (pp__inject_spares(pool->inj, &spare, n / PP__INJ_CAP + 2) != APR_SUCCESS) {
            return APR_ENOMEM;
        }
    }
    /* A full queue is told without the lock, so that a PP_NOWAIT retry loop
     * does not queue for the lock that the workers need to empty it. The
     * length is as of the last change under the lock: a moment's view, as
     * the answer under the lock would be. */
    if ((flags & PP_NOWAIT) && pool->cfg.queue_capacity && !own_worker(pool)
        && load32(&pool->qlen) + (apr_uint64_t)n > pool->cfg.queue_capacity)
        return load_state(pool) == STATE_RUNNING ? PP_EFULL : PP_ESHUTDOWN;
    pp__mutex_lock(pool->lock);
    rv = wait_room_locked(pool, n, flags, deadline);
    if (rv != APR_SUCCESS) {
        pp__mutex_unlock(pool->lock);
        pp__inject_free_spares(pool->inj, spare);
        return rv;
    }
    /* The injector closes under this lock: open now, it stays open. */
    injected = spare && !pp__inject_closed(pool->inj) && !load32(&pool->prio_used);
    if (level != PP__NORMAL && pool->inj && !load32(&pool->prio_used)) {
        /* The first HIGH or LOW: the choice between levels is made under
         * the lock, so NORMAL moves behind it too, the injector's tasks
         * first (they are the older). Submits that read prio_used before
         * this may still go into the injector: takes under the lock move
         * them over (take_global_locked). */
        rv = pp__inject_to_locked(pool, PP__MAX_CAPACITY);
        if (rv != APR_SUCCESS) {
            pp__mutex_unlock(pool->lock);
            pp__inject_free_spares(pool->inj, spare);
            return rv;
        }
        atomic_store_explicit(&pool->prio_used, 1, memory_order_relaxed);
    }
    for (i = 0; i < n; i++) {
        if (fns) {
            x.fn = fns[i];
            x.arg = args[i];
        }
        if (injected) {
            /* Out of spares only if other pushers' blocks came between
             * ours: what is queued cannot be taken back, so wait for
             * memory rather than fail halfway. */
            while (pp__inject_push(pool->inj, &x, &spare) == APR_ENOMEM)
                apr_thread_yield();
            continue;
        }
        rv = pp__prioq_push(&pool->queue, level, &x);
        if (rv != APR_SUCCESS) {
            pp__prioq_unpush(&pool->queue, level, i);    /* all or nothing */
            pp__mutex_unlock(pool->lock);
            pp__inject_free_spares(pool->inj, spare);
            return rv;
        }
    }
    if (injected && (flags & INTERNAL))
        pp__counter_add_shared(&pool->inj_internal, n);
    else if (!injected && !(flags & INTERNAL))
        pp__counter_add(&pool->submitted, n);    /* the injector counts its own */
    publish_qlen_locked(pool);
    if (!injected)    /* the injector's takes keep its part (pop_injected) */
        pp__counter_raise_shared(&pool->queued_peak, pp__prioq_len(&pool->queue));
    wake_for_global(pool, n, 1);    /* unlocks */
    pp__inject_free_spares(pool->inj, spare);
    return APR_SUCCESS;
}

apr_status_t pp__enqueue_internal(pp_pool_t *pool, unsigned level, const pp__entry_t *e)
{
    return enqueue(pool, level, e, NULL, NULL, 1, INTERNAL, PP__FOREVER);
}

/* A task's own NORMAL submits go to its worker's deque (while it has
 * room); everything else to the shared queue, at its level. */
static apr_status_t submit_entry(pp_pool_t *pool, unsigned level, const pp__entry_t *e,
                                 apr_uint32_t flags, apr_time_t deadline)
{
    if (level == PP__NORMAL && own_worker(pool)
        && !pp__deque_full(pp__self->deque))
        return pp__push_local(pp__self, e);
    return enqueue(pool, level, e, NULL, NULL, 1, flags, deadline);
}

/* What every single submit does once its entry is built and checked: the
 * fork check, the submit time, the group's count, and the queue it goes to
 * (its strand's, its worker's deque or the shared one). */
static apr_status_t submit_built(pp_pool_t *pool, unsigned level, pp__entry_t *e,
                                 pp_strand_t *strand, apr_uint32_t flags, apr_time_t deadline)
{
    apr_status_t rv;

    if (forked(pool))
        return PP_ESHUTDOWN;
    e->queued = pool->cfg.timing ? apr_time_now() : 0;
    if (e->group) {
        rv = pp__group_enter(e->group, pool, 1);
        if (rv != APR_SUCCESS)
            return rv;
    }
    if (strand)
        rv = pp__strand_submit(pool, strand, level, e);
    else
        rv = submit_entry(pool, level, e, flags, deadline);
    if (rv != APR_SUCCESS && e->group)
        pp__group_leave(e->group, rv, 0, 1);
    return rv;
}

/* Both task submits: until the deadline (monotonic) for room. */
static apr_status_t submit_task(pp_pool_t *pool, const pp_task_t *task, apr_size_t size,
                                pp_group_t *group, apr_uint32_t flags, apr_time_t deadline)
{
    pp__entry_t e;
    pp_task_t copy;
    apr_status_t rv;
    unsigned level;

    if (task && size != sizeof(*task)) {    /* another layout: take it into ours */
        rv = pp__struct_in(&copy, sizeof(copy), task, size, PP__TASK_SIZE_4);
        if (rv != APR_SUCCESS)
            return rv;
        task = &copy;
    }
    if (!pool || !task || !task->fn || (flags & ~PP_NOWAIT)
        || (level = pp__prio_level(task->priority)) == PP__LEVELS || task->not_after < 0)
        return APR_EINVAL;
    e.fn = task->fn;
    e.arg = task->arg;
    e.release = task->release;
    e.name = task->name;
    e.group = group;
    e.not_after = task->not_after;
    return submit_built(pool, level, &e, task->strand, flags, deadline);
}

apr_status_t pp_submit_task_sized(pp_pool_t *pool, const pp_task_t *task, apr_size_t size,
                                  pp_group_t *group, apr_uint32_t flags)
{
    return submit_task(pool, task, size, group, flags, PP__FOREVER);
}

apr_status_t pp_submit_timed_sized(pp_pool_t *pool, const pp_task_t *task, apr_size_t size,
                                   pp_group_t *group, apr_interval_time_t timeout)
{
    return submit_task(pool, task, size, group, 0, pp__deadline(timeout));
}

/* A pp_task_t of fn and arg alone, built straight into its entry: this
 * is the submit that nested fan-out makes per task. */
apr_status_t pp_submit_ex(pp_pool_t *pool, pp_task_fn fn, void *arg,
                          pp_group_t *group, apr_uint32_t flags)
{
    pp__entry_t e = { fn, arg, NULL, NULL, group, 0, 0 };

    if (!pool || !fn || (flags & ~PP_NOWAIT))
        return APR_EINVAL;
    return submit_built(pool, PP__NORMAL, &e, NULL, flags, PP__FOREVER);
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
    e.queued = pool->cfg.timing ? apr_time_now() : 0;
    e.not_after = 0;
    rv = enqueue(pool, PP__NORMAL, &e, fns, args, n, 0, PP__FOREVER);
    if (rv != APR_SUCCESS && group)
        pp__group_leave(group, rv, 0, n);
    return rv;
}
