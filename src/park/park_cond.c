/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable parker: a mutex and condition variable of its own (sync.h)
 * guarding the same three-state token as the futex backend. The mutex
 * gives all the ordering; the condition variable belongs to this one
 * parker, so a signal wakes at most its owner: no herd. sync.h's condition
 * variables wait on the monotonic clock, so a timed park is not moved by
 * a step of the wall clock (APR's own would be).
 */
#include "config.h"
#include "park.h"
#include "os/sync.h"

struct pp__parker_t {
    apr_uint32_t state;           /* guarded by lock */
    pp__mutex_t *lock;
    pp__cond_t  *cond;
};

apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p)
{
    pp__parker_t *k = apr_pcalloc(p, sizeof(*k));
    apr_status_t rv;

    if (!k)
        return APR_ENOMEM;
    rv = pp__mutex_create(&k->lock, p);
    if (rv == APR_SUCCESS)
        rv = pp__cond_create(&k->cond, p);
    if (rv == APR_SUCCESS)
        *parker = k;
    return rv;
}

void pp__park(pp__parker_t *parker)
{
    pp__mutex_lock(parker->lock);
    if (parker->state != PP__PARK_NOTIFIED) {
        parker->state = PP__PARK_PARKED;
        while (parker->state != PP__PARK_NOTIFIED)
            pp__cond_wait(parker->cond, parker->lock);
    }
    parker->state = PP__PARK_EMPTY;
    pp__mutex_unlock(parker->lock);
}

apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout)
{
    apr_status_t rv = APR_SUCCESS;
    apr_time_t deadline = pp__deadline(timeout > 0 ? timeout : 0);

    pp__mutex_lock(parker->lock);
    if (parker->state != PP__PARK_NOTIFIED) {
        parker->state = PP__PARK_PARKED;
        while (parker->state != PP__PARK_NOTIFIED && rv == APR_SUCCESS)
            rv = pp__cond_wait_until(parker->cond, parker->lock, deadline);
        if (parker->state == PP__PARK_NOTIFIED)
            rv = APR_SUCCESS;
    }
    parker->state = PP__PARK_EMPTY;
    pp__mutex_unlock(parker->lock);
    return rv;
}

int pp__park_notified(pp__parker_t *parker)
{
    int notified;

    pp__mutex_lock(parker->lock);
    notified = parker->state == PP__PARK_NOTIFIED;
    pp__mutex_unlock(parker->lock);
    return notified;
}

void pp__unpark(pp__parker_t *parker)
{
    apr_uint32_t old;

    /* Signal under the lock: once it is released the owner may return,
     * and its pool, this condition variable with it, may be destroyed. */
    pp__mutex_lock(parker->lock);
    old = parker->state;
    parker->state = PP__PARK_NOTIFIED;
    if (old == PP__PARK_PARKED)
        pp__cond_signal(parker->cond);
    pp__mutex_unlock(parker->lock);
}

const char *pp__park_backend_name(void)
{
    return "cond";
}
