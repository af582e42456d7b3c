/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A mutex and a condition variable whose timed waits run on the monotonic
 * clock. APR's apr_thread_cond_timedwait() takes a relative timeout but
 * turns it into a wall-clock deadline, so a clock step (NTP, an admin's
 * `date -s`) stretches or cuts every wait in progress; a pool's shutdown or
 * a group's wait must not last an hour longer because the clock moved.
 * sync_posix.c (pthreads, CLOCK_MONOTONIC) and sync_win32.c (SRW
 * locks, relative waits) implement it, as libuv's uv_cond_timedwait does.
 *
 * Deadlines are absolute microseconds on pp__clock_mono(); PP__FOREVER is
 * "no limit". pp__deadline() saturates, so no timeout overflows.
 */
#ifndef PP_SYNC_H
#define PP_SYNC_H

#include <apr_pools.h>
#include <apr_time.h>

typedef struct pp__mutex_t pp__mutex_t;
typedef struct pp__cond_t pp__cond_t;

/** No deadline: the largest representable time. */
#define PP__FOREVER APR_INT64_MAX

/** A mutex from p, destroyed with it. Not recursive. */
apr_status_t pp__mutex_create(pp__mutex_t **m, apr_pool_t *p);
void pp__mutex_lock(pp__mutex_t *m);
void pp__mutex_unlock(pp__mutex_t *m);

#ifdef PP_DEBUG
/** Debug builds: whether the calling thread holds m (for PP__ASSERT). */
int pp__mutex_held(pp__mutex_t *m);
#endif

/** A condition variable from p, destroyed with it. */
apr_status_t pp__cond_create(pp__cond_t **c, apr_pool_t *p);

/** Release m, sleep until signalled (or spuriously), take m again. */
void pp__cond_wait(pp__cond_t *c, pp__mutex_t *m);

/**
 * pp__cond_wait() that gives up at deadline (monotonic, PP__FOREVER: never).
 * APR_TIMEUP once the deadline has passed, else APR_SUCCESS (which may be
 * spurious: the caller re-checks its condition).
 */
apr_status_t pp__cond_wait_until(pp__cond_t *c, pp__mutex_t *m, apr_time_t deadline);

void pp__cond_signal(pp__cond_t *c);
void pp__cond_broadcast(pp__cond_t *c);

/** Microseconds on a clock that never steps (only its differences mean
 *  anything). */
apr_time_t pp__clock_mono(void);

/**
 * The deadline timeout microseconds from now: PP__FOREVER for a negative
 * timeout or one past the representable future, now for 0.
 */
static inline apr_time_t pp__deadline(apr_interval_time_t timeout)
{
    apr_time_t now;

    if (timeout < 0)
        return PP__FOREVER;
    now = pp__clock_mono();
    return timeout >= PP__FOREVER - now ? PP__FOREVER : now + timeout;
}

#endif
