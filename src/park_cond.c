/*
 * Portable parker on an APR mutex + condition variable guarding the same
 * three-state token as the futex backend. The mutex gives all the ordering;
 * the condition variable belongs to this one parker, so a signal wakes at
 * most its owner: no herd.
 */
#include "park.h"

#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>

struct pp__parker_t {
    apr_uint32_t state;           /* guarded by lock */
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
};

apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p)
{
    pp__parker_t *k = apr_pcalloc(p, sizeof(*k));
    apr_status_t rv;

    rv = apr_thread_mutex_create(&k->lock, APR_THREAD_MUTEX_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_thread_cond_create(&k->cond, p);
    if (rv == APR_SUCCESS)
        *parker = k;
    return rv;
}

void pp__park(pp__parker_t *parker)
{
    apr_thread_mutex_lock(parker->lock);
    if (parker->state != PP__PARK_NOTIFIED) {
        parker->state = PP__PARK_PARKED;
        while (parker->state != PP__PARK_NOTIFIED)
            apr_thread_cond_wait(parker->cond, parker->lock);
    }
    parker->state = PP__PARK_EMPTY;
    apr_thread_mutex_unlock(parker->lock);
}

apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout)
{
    apr_status_t rv = APR_SUCCESS;
    /* APR has no monotonic clock; apr_time_now() is the best it offers. */
    apr_time_t deadline = apr_time_now() + (timeout > 0 ? timeout : 0);

    apr_thread_mutex_lock(parker->lock);
    if (parker->state != PP__PARK_NOTIFIED) {
        parker->state = PP__PARK_PARKED;
        while (parker->state != PP__PARK_NOTIFIED) {
            apr_interval_time_t left = deadline - apr_time_now();
            if (left <= 0) {
                rv = APR_TIMEUP;
                break;
            }
            apr_thread_cond_timedwait(parker->cond, parker->lock, left);
        }
    }
    parker->state = PP__PARK_EMPTY;
    apr_thread_mutex_unlock(parker->lock);
    return rv;
}

int pp__park_notified(pp__parker_t *parker)
{
    int notified;

    apr_thread_mutex_lock(parker->lock);
    notified = parker->state == PP__PARK_NOTIFIED;
    apr_thread_mutex_unlock(parker->lock);
    return notified;
}

void pp__unpark(pp__parker_t *parker)
{
    apr_uint32_t old;

    /* Signal under the lock: once it is released the owner may return,
     * and its pool, this condition variable with it, may be destroyed. */
    apr_thread_mutex_lock(parker->lock);
    old = parker->state;
    parker->state = PP__PARK_NOTIFIED;
    if (old == PP__PARK_PARKED)
        apr_thread_cond_signal(parker->cond);
    apr_thread_mutex_unlock(parker->lock);
}

const char *pp__park_backend_name(void)
{
    return "cond";
}
