/* SPDX-License-Identifier: Apache-2.0 */
/* Windows side of sync.h: SRW locks and condition variables. Their waits
 * take a relative timeout in milliseconds, counted by the system's tick,
 * which a change of the wall clock does not move. */
#include "config.h"
#include "sync.h"

#include <windows.h>

struct pp__mutex_t {
    SRWLOCK l;
};

struct pp__cond_t {
    CONDITION_VARIABLE c;
};

apr_status_t pp__mutex_create(pp__mutex_t **out, apr_pool_t *p)
{
    pp__mutex_t *m = apr_palloc(p, sizeof(*m));

    if (!m)
        return APR_ENOMEM;
    InitializeSRWLock(&m->l);    /* nothing to destroy */
    *out = m;
    return APR_SUCCESS;
}

void pp__mutex_lock(pp__mutex_t *m)
{
    AcquireSRWLockExclusive(&m->l);
}

void pp__mutex_unlock(pp__mutex_t *m)
{
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
    SleepConditionVariableSRW(&c->c, &m->l, INFINITE, 0);
}

apr_status_t pp__cond_wait_until(pp__cond_t *c, pp__mutex_t *m, apr_time_t deadline)
{
    apr_time_t left;
    DWORD ms;

    if (deadline == PP__FOREVER) {
        SleepConditionVariableSRW(&c->c, &m->l, INFINITE, 0);
        return APR_SUCCESS;
    }
    left = deadline - pp__clock_mono();
    if (left <= 0)
        return APR_TIMEUP;
    /* Rounded up, so that a wait never ends before its deadline; a longer
     * one is cut into several by the caller's loop. */
    ms = left / 1000 >= INFINITE - 1 ? INFINITE - 1 : (DWORD)((left + 999) / 1000);
    SleepConditionVariableSRW(&c->c, &m->l, ms, 0);
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
