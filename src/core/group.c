/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Groups: a count of pending tasks, the first failure among them and a
 * condition variable for the threads that wait. A waiter that is a worker
 * (a task waiting for its children) runs queued tasks while it waits and
 * naps on the condition only when it found none; the broadcast wakes no
 * parked worker.
 *
 * Lock order: a group's lock may be held while taking its pool's queue lock
 * (pp_group_cancel), never the other way round; the pool's files call
 * into the group only with the queue lock released.
 */
#include "config.h"
#include "pool_private.h"
#include "fault.h"
#include "os/fork.h"
#include "os/sync.h"

#include <stdatomic.h>

/* How long a task waiting for a group (see pp_group_wait) sleeps when it
 * found nothing to run before it looks again. */
#define HELP_NAP 1000    /* microseconds */

struct pp_group_t {
    apr_pool_t         *own;       /* the group's memory: see group_cleanup */
    pp__mutex_t        *lock;
    pp__cond_t         *done;
    pp_pool_t          *pool;      /* the pool of the current round */
    apr_uint32_t        pending;   /* guarded by lock, as is what follows */
    apr_uint32_t        nwaiting;
    int                 waited;    /* a wait saw this round done */
    int                 orphaned;  /* its APR pool went from one of its own
                                    * tasks: the last task out frees it */
    apr_status_t        status;
    apr_uint32_t        gen;       /* the fork generation it lives in (fork.h) */
    /* Written under lock, read lock-free by pp_task_cancelled(), which only
     * needs to see it eventually: relaxed. */
    _Atomic apr_uint32_t cancelled;
};

/* The caller's APR pool is going. The group's memory is its own (an
 * unmanaged pool), so that this may happen from one of the group's own
 * tasks, the request pool freed by the request's last task: the group is
 * then freed when its last task has left it. From anywhere else the
 * cleanup waits for the group's tasks and frees it at once. */
/* In a child of a fork the group is dead (fork.h): its tasks ran in the
 * parent, and its lock may be held by a thread that is not here. */
static int forked(const pp_group_t *g)
{
    return g->gen != pp__fork_generation();
}

static apr_status_t group_cleanup(void *data)
{
    pp_group_t *g = data;

    if (forked(g)) {
        apr_pool_destroy(g->own);
        return APR_SUCCESS;
    }

    if (pp__current_group() == g) {
        pp__mutex_lock(g->lock);
        g->orphaned = 1;    /* pending counts the caller: not zero yet */
        pp__mutex_unlock(g->lock);
        return APR_SUCCESS;
    }
    pp_group_wait(g, -1);
    apr_pool_destroy(g->own);
    return APR_SUCCESS;
}

apr_status_t pp_group_create(pp_group_t **group, apr_pool_t *p)
{
    apr_pool_t *own;
    pp_group_t *g;
    apr_status_t rv;

    if (!group || !p)
        return APR_EINVAL;
    *group = NULL;
    rv = pp__fault_hit(PP__FAULT_GROUP_CREATE)
         ? APR_ENOMEM
         : apr_pool_create_unmanaged_ex(&own, NULL, NULL);
    if (rv != APR_SUCCESS)
        return rv;
    g = apr_pcalloc(own, sizeof(*g));
    rv = g ? pp__mutex_create(&g->lock, own) : APR_ENOMEM;
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&g->done, own);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(own);
        return rv;
    }
    g->own = own;
    g->gen = pp__fork_watch();
    apr_pool_cleanup_register(p, g, group_cleanup, apr_pool_cleanup_null);
    *group = g;
    return APR_SUCCESS;
}

apr_status_t pp__group_enter(pp_group_t *g, pp_pool_t *pool, apr_uint32_t n)
{
    apr_status_t rv = APR_SUCCESS;

    if (forked(g))
        return PP_ESHUTDOWN;

    pp__mutex_lock(g->lock);
    if (g->pending == 0) {
        g->pool = pool;
        /* A round ends when a wait has seen it done, not whenever the count
         * touches zero: tasks that finish while their siblings are still
         * being submitted must not wipe the round's first failure. */
        if (g->waited) {
            g->waited = 0;
            g->status = APR_SUCCESS;
            atomic_store_explicit(&g->cancelled, 0, memory_order_relaxed);
        }
    }
    if (g->pending > 0 && g->pool != pool) {
        rv = APR_EINVAL;    /* one pool per round, or cancel could not work */
    }
    else if (atomic_load_explicit(&g->cancelled, memory_order_relaxed)) {
        rv = PP_ECANCELLED;
    }
    if (rv == APR_SUCCESS)
        g->pending += n;
    pp__mutex_unlock(g->lock);
    return rv;
}

void pp__group_leave(pp_group_t *g, apr_status_t outcome, int record, apr_uint32_t n)
{
    int free_it;

    pp__mutex_lock(g->lock);
    if (record && outcome != APR_SUCCESS && g->status == APR_SUCCESS)
        g->status = outcome;
    /* Signal under the lock: a waiter that returns may free the group the
     * moment the lock is released, and nothing here touches it after. */
    g->pending -= n;
    if (g->pending == 0 && g->nwaiting)
        pp__cond_broadcast(g->done);
    free_it = g->pending == 0 && g->orphaned;
    pp__mutex_unlock(g->lock);
    if (free_it)
        apr_pool_destroy(g->own);
}

int pp__group_cancelled(const pp_group_t *g)
{
    return atomic_load_explicit(&((pp_group_t *)g)->cancelled, memory_order_relaxed) != 0;
}

apr_status_t pp_group_wait(pp_group_t *group, apr_interval_time_t timeout)
{
    apr_status_t rv = APR_SUCCESS;
    apr_time_t deadline, nap;
    int helped = 0;    /* -1 once the caller turned out unable to help */

    if (!group)
        return APR_EINVAL;
    if (pp__current_group() == group)
        return APR_EINVAL;
    if (forked(group))
        return PP_ESHUTDOWN;
    deadline = pp__deadline(timeout);
    pp__mutex_lock(group->lock);
    while (group->pending > 0 && rv == APR_SUCCESS) {
        /* A worker waiting in a task runs queued tasks meanwhile: blocked,
         * it could leave the pool with nobody to run what it waits for. The
         * group's pending count keeps its pool alive across the unlock. */
        if (helped >= 0) {
            pp_pool_t *pool = group->pool;

            pp__mutex_unlock(group->lock);
            helped = pp__pool_help(pool);
            pp__mutex_lock(group->lock);
            if (helped > 0)
                continue;
        }
        if (group->pending == 0)
            break;
        /* Found nothing to run: what is left runs elsewhere (its end
         * signals done), or comes later, queued where nobody may be awake
         * to take it; look again after a nap. */
        nap = deadline;
        if (helped == 0 && deadline - pp__clock_mono() > HELP_NAP)
            nap = pp__clock_mono() + HELP_NAP;
        /* A worker that sleeps here stands aside for another (workers.c):
         * what it waits for may need its place, in this pool or, when it
         * waits for another pool's group, in its own. */
        pp__mutex_unlock(group->lock);
        pp__self_block(1);
        pp__mutex_lock(group->lock);
        group->nwaiting++;
        if (group->pending > 0)
            rv = pp__cond_wait_until(group->done, group->lock, nap);
        group->nwaiting--;
        pp__mutex_unlock(group->lock);
        pp__self_block(0);
        pp__mutex_lock(group->lock);
        if (rv == APR_TIMEUP && nap != deadline)
            rv = APR_SUCCESS;
    }
    if (group->pending == 0) {
        rv = APR_SUCCESS;
        group->waited = 1;
    }
    pp__mutex_unlock(group->lock);
    return rv;
}

apr_status_t pp_group_cancel(pp_group_t *group)
{
    pp__queue_t dropped = { 0 };
    pp_pool_t *pool = NULL;
    apr_status_t rv = APR_SUCCESS;

    if (!group)
        return APR_EINVAL;
    if (forked(group))
        return PP_ESHUTDOWN;
    pp__mutex_lock(group->lock);
    if (group->pending > 0) {
        pool = group->pool;
        atomic_store_explicit(&group->cancelled, 1, memory_order_relaxed);
        rv = pp__pool_take_group(pool, group, &dropped);
    }
    pp__mutex_unlock(group->lock);
    /* The dropped tasks still count as pending, so the group (and the pool
     * that must outlive it) stays until they are accounted for here. */
    if (pool)
        pp__pool_drop(pool, &dropped);
    pp__queue_destroy(&dropped);
    return rv;
}

apr_status_t pp_group_status(const pp_group_t *group)
{
    apr_status_t rv;

    if (!group)
        return APR_EINVAL;
    if (forked(group))
        return PP_ESHUTDOWN;
    pp__mutex_lock(group->lock);
    rv = group->status;
    pp__mutex_unlock(group->lock);
    return rv;
}
