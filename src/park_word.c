/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The park.h token on a word the OS can sleep on, after Rust std's
 * sys/sync/thread_parking/futex.rs. The backend (park_futex.c or
 * win32/park_win32.c) provides wait and wake; deadlines are on sync.h's
 * monotonic clock.
 *
 * Orderings: apr_atomic_* are full barriers, stronger than needed. What the
 * token must order is "unparker's writes before unpark" -> "parker's reads
 * after park", a release/acquire pair that the full barriers give. The
 * pool does not even rely on that (tasks move under the queue mutex), but
 * a parker that promised less would be a trap for its next user.
 *
 * The OS wait compares the word with PARKED and sleeps only if they are
 * equal, so an unpark that lands between our decrement and the wait is
 * never lost; spurious returns loop here.
 */
#include "config.h"
#include "park.h"
#include "park_word.h"
#include "sync.h"

#include <apr_atomic.h>

struct pp__parker_t {
    volatile apr_uint32_t state;
};

apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p)
{
    *parker = apr_pcalloc(p, sizeof(**parker));
    return *parker ? APR_SUCCESS : APR_ENOMEM;
}

static int consume(pp__parker_t *parker)
{
    return apr_atomic_cas32(&parker->state, PP__PARK_EMPTY, PP__PARK_NOTIFIED)
           == PP__PARK_NOTIFIED;
}

void pp__park(pp__parker_t *parker)
{
    /* NOTIFIED(1) - 1 = EMPTY: token consumed; EMPTY(0) - 1 = PARKED. */
    if (apr_atomic_dec32(&parker->state) == 0)
        return;
    do
        pp__word_wait(&parker->state, -1);
    while (!consume(parker));
}

apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout)
{
    apr_time_t deadline, now;

    if (apr_atomic_dec32(&parker->state) == 0)
        return APR_SUCCESS;
    /* On the monotonic clock, so that a wall-clock step neither stretches
     * nor cuts a wait, and the wait shrinks across spurious returns
     * instead of restarting. */
    deadline = pp__deadline(timeout > 0 ? timeout : 0);
    while ((now = pp__clock_mono()) < deadline) {
        pp__word_wait(&parker->state, deadline == PP__FOREVER ? -1 : deadline - now);
        if (consume(parker))
            return APR_SUCCESS;
    }
    /* Leave PARKED; an unpark may have raced in just now, and then its
     * token is ours to take rather than to leave for the next park. */
    return apr_atomic_xchg32(&parker->state, PP__PARK_EMPTY) == PP__PARK_NOTIFIED
           ? APR_SUCCESS : APR_TIMEUP;
}

int pp__park_notified(pp__parker_t *parker)
{
    return apr_atomic_read32(&parker->state) == PP__PARK_NOTIFIED;
}

void pp__unpark(pp__parker_t *parker)
{
    /* Waking after the swap touches only the address: if the owner woke on
     * its own and its pool was freed meanwhile, a wake on a stale address
     * is harmless (both OSes only look the address up). */
    if (apr_atomic_xchg32(&parker->state, PP__PARK_NOTIFIED) == PP__PARK_PARKED)
        pp__word_wake(&parker->state);
}
