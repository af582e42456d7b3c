/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX side of sync.h: pthreads, with condition variables on
 * CLOCK_MONOTONIC where the C library lets us choose their clock. */
#include "config.h"
#include "sync.h"
#include "fork.h"
#include "sync_owner.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/* gen: the fork generation that made it (fork.h). In a later one it is
 * abandoned, not destroyed: a thread that is not there may hold it, or
 * wait on it, and glibc's pthread_cond_destroy waits for its waiters. */
struct pp__mutex_t {
    pthread_mutex_t m;
    apr_uint32_t gen;
    PP__OWNER_FIELD
};

#ifdef PP_DEBUG
int pp__mutex_held(pp__mutex_t *m)
{
    return PP__OWNER_IS_SELF(m);
}
#endif

struct pp__cond_t {
    pthread_cond_t c;
    apr_uint32_t gen;
};

#if defined(HAVE_PTHREAD_CONDATTR_SETCLOCK) && defined(CLOCK_MONOTONIC)
#define COND_CLOCK CLOCK_MONOTONIC
#else
/* No choice of clock (macOS has pthread_cond_timedwait_relative_np, which
 * a port would use here): deadlines still come from the monotonic clock,
 * and each wait converts what is left of it to the wall clock, so a step
 * affects at most the one wait it happens in. */
#define COND_CLOCK CLOCK_REALTIME
#endif

static apr_status_t mutex_cleanup(void *data)
{
    pp__mutex_t *m = data;

    if (m->gen == pp__fork_generation())
        pthread_mutex_destroy(&m->m);
    return APR_SUCCESS;
}

static apr_status_t cond_cleanup(void *data)
{
    pp__cond_t *c = data;

    if (c->gen == pp__fork_generation())
        pthread_cond_destroy(&c->c);
    return APR_SUCCESS;
}

/* Where glibc offers it, an adaptive mutex: a contended lock spins a
 * little (a bound glibc tunes per mutex) before it sleeps in the kernel.
 * Every critical section behind these locks moves a task or a counter
 * and ends in well under a microsecond, so a waiter that spins usually
 * gets the lock sooner than a futex sleep and wake would have given it:
 * outside producers and the workers taking from the global queue (bench
 * W1, W2) meet on the queue lock all the time. docs/design.md has the
 * figures. */
static int mutex_init(pthread_mutex_t *m)
{
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);

    if (rc != 0)
        return rc;
    rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    if (rc == 0)
        rc = pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
    return rc;
#else
    return pthread_mutex_init(m, NULL);
#endif
}

apr_status_t pp__mutex_create(pp__mutex_t **out, apr_pool_t *p)
{
    pp__mutex_t *m = apr_palloc(p, sizeof(*m));
    int rc;

    if (!m)
        return APR_ENOMEM;
    rc = mutex_init(&m->m);
    if (rc != 0)
        return rc;
    m->gen = pp__fork_watch();
    PP__OWNER_INIT(m);
    apr_pool_cleanup_register(p, m, mutex_cleanup, apr_pool_cleanup_null);
    *out = m;
    return APR_SUCCESS;
}

void pp__mutex_lock(pp__mutex_t *m)
{
    pthread_mutex_lock(&m->m);
    PP__OWNER_SET(m);
}

void pp__mutex_unlock(pp__mutex_t *m)
{
    PP__OWNER_CLEAR(m);
    pthread_mutex_unlock(&m->m);
}

apr_status_t pp__cond_create(pp__cond_t **out, apr_pool_t *p)
{
    pp__cond_t *c = apr_palloc(p, sizeof(*c));
    pthread_condattr_t attr;
    int rc;

    if (!c)
        return APR_ENOMEM;
    rc = pthread_condattr_init(&attr);
    if (rc != 0)
        return rc;
#if COND_CLOCK == CLOCK_MONOTONIC
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
#endif
    if (rc == 0)
        rc = pthread_cond_init(&c->c, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return rc;
    c->gen = pp__fork_watch();
    apr_pool_cleanup_register(p, c, cond_cleanup, apr_pool_cleanup_null);
    *out = c;
    return APR_SUCCESS;
}

void pp__cond_wait(pp__cond_t *c, pp__mutex_t *m)
{
    PP__OWNER_CLEAR(m);
    pthread_cond_wait(&c->c, &m->m);
    PP__OWNER_SET(m);
}

apr_status_t pp__cond_wait_until(pp__cond_t *c, pp__mutex_t *m, apr_time_t deadline)
{
    struct timespec ts;
    apr_time_t now = pp__clock_mono(), at;

    if (deadline == PP__FOREVER) {
        pp__cond_wait(c, m);
        return APR_SUCCESS;
    }
    if (now >= deadline)
        return APR_TIMEUP;
    at = deadline;
#if COND_CLOCK != CLOCK_MONOTONIC
    clock_gettime(CLOCK_REALTIME, &ts);
    at = (apr_time_t)ts.tv_sec * APR_USEC_PER_SEC + ts.tv_nsec / 1000 + (deadline - now);
#endif
    ts.tv_sec = (time_t)(at / APR_USEC_PER_SEC);
    ts.tv_nsec = (long)(at % APR_USEC_PER_SEC) * 1000L;
    /* ETIMEDOUT is not trusted on its own: the caller's next call, or
     * its own check, reads the monotonic clock again. */
    PP__OWNER_CLEAR(m);
    pthread_cond_timedwait(&c->c, &m->m, &ts);
    PP__OWNER_SET(m);
    return APR_SUCCESS;
}

void pp__cond_signal(pp__cond_t *c)
{
    pthread_cond_signal(&c->c);
}

void pp__cond_broadcast(pp__cond_t *c)
{
    pthread_cond_broadcast(&c->c);
}

apr_time_t pp__clock_mono(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (apr_time_t)now.tv_sec * APR_USEC_PER_SEC + now.tv_nsec / 1000;
}
