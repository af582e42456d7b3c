/* SPDX-License-Identifier: Apache-2.0 */
/* Windows side of sync.h: SRW locks and condition variables. Their waits
 * take a relative timeout in milliseconds, counted by the system's tick,
 * which a change of the wall clock does not move. */
#include "config.h"
#include "sync.h"
#include "sync_owner.h"

#include <windows.h>

struct pp__mutex_t {
    SRWLOCK l;
    PP__OWNER_FIELD
};

#ifdef PP_DEBUG
int pp__mutex_held(pp__mutex_t *m)
{
    return PP__OWNER_IS_SELF(m);
}
#endif

struct pp__cond_t {
    CONDITION_VARIABLE c;
};

apr_status_t pp__mutex_create(pp__mutex_t **out, apr_pool_t *p)
{
    pp__mutex_t *m = apr_palloc(p, sizeof(*m));

    if (!m)
        return APR_ENOMEM;
    InitializeSRWLock(&m->l);    /* nothing to destroy */
    PP__OWNER_INIT(m);
    *out = m;
    return APR_SUCCESS;
}

void pp__mutex_lock(pp__mutex_t *m)
{
    AcquireSRWLockExclusive(&m->l);
    PP__OWNER_SET(m);
}

void pp__mutex_unlock(pp__mutex_t *m)
{
    PP__OWNER_CLEAR(m);
    ReleaseSRWLockExclusive(&m->l);
}

apr_status_t pp__cond_create(pp__cond_t **out, apr_pool_t *p)
{
    pp__cond_t *c = apr_palloc(p, sizeof(*c));

    if (!c)
        return APR_ENOMEM;
    InitializeConditionVariable(&c->c);
    *out = c;
    return APR_SUCCESS;
}

void pp__cond_wait(pp__cond_t *c, pp__mutex_t *m)
{
    PP__OWNER_CLEAR(m);
    SleepConditionVariableSRW(&c->c, &m->l, INFINITE, 0);
    PP__OWNER_SET(m);
}

apr_status_t pp__cond_wait_until(pp__cond_t *c, pp__mutex_t *m, apr_time_t deadline)
{
    apr_time_t left;
    DWORD ms;

    if (deadline == PP__FOREVER) {
        pp__cond_wait(c, m);
        return APR_SUCCESS;
    }
    left = deadline - pp__clock_mono();
    if (left <= 0)
        return APR_TIMEUP;
    /* Rounded up, so that a wait never ends before its deadline; a longer
     * one is cut into several by the caller's loop. */
    ms = left / 1000 >= INFINITE - 1 ? INFINITE - 1 : (DWORD)((left + 999) / 1000);
    PP__OWNER_CLEAR(m);
    SleepConditionVariableSRW(&c->c, &m->l, ms, 0);
    PP__OWNER_SET(m);
    return APR_SUCCESS;
}

void pp__cond_signal(pp__cond_t *c)
{
    WakeConditionVariable(&c->c);
}

void pp__cond_broadcast(pp__cond_t *c)
{
    WakeAllConditionVariable(&c->c);
}

apr_time_t pp__clock_mono(void)
{
    LARGE_INTEGER freq, now;

    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (apr_time_t)(now.QuadPart / freq.QuadPart) * APR_USEC_PER_SEC
           + (apr_time_t)(now.QuadPart % freq.QuadPart) * APR_USEC_PER_SEC / freq.QuadPart;
}
