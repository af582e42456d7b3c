/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The park.h token on a word the OS can sleep on, after Rust std's
 * sys/sync/thread_parking/futex.rs. The backend (park_futex.c or
 * park_win32.c) provides wait and wake; deadlines are on sync.h's
 * monotonic clock.
 *
 * Orderings, the least that the token promises (as futex.rs): what the
 * unparker wrote before unpark is visible to the parker once park has
 * returned. So unpark's swap is a release, and every place where park can
 * return takes the token with an acquire: the decrement that finds it, the
 * CAS that consumes it after a wait, a timed park's final swap. The OS
 * wait orders nothing and needs nothing. (The pool moves tasks under its
 * lock or through the deques' own release/acquire, so it does not lean on
 * this; a parker that promised less would be a trap for its next user.)
 *
 * The OS wait compares the word with PARKED and sleeps only if they are
 * equal, so an unpark that lands between our decrement and the wait is
 * never lost; spurious returns loop here.
 */
#include "config.h"
#include "park.h"
#include "park_word.h"
#include "os/sync.h"

#include <stdatomic.h>

struct pp__parker_t {
    _Atomic apr_uint32_t state;
};

apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p)
{
    *parker = apr_palloc(p, sizeof(**parker));
    if (!*parker)
        return APR_ENOMEM;
    atomic_init(&(*parker)->state, PP__PARK_EMPTY);
    return APR_SUCCESS;
}

/* Take the token after a wait, if an unpark left one. */
static int consume(pp__parker_t *parker)
{
    apr_uint32_t notified = PP__PARK_NOTIFIED;

    return atomic_compare_exchange_strong_explicit(&parker->state, &notified, PP__PARK_EMPTY,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* NOTIFIED(1) - 1 = EMPTY: the token was there and is taken (acquire);
 * EMPTY(0) - 1 = PARKED: the caller must wait. */
static int take_or_mark_parked(pp__parker_t *parker)
{
    return atomic_fetch_sub_explicit(&parker->state, 1, memory_order_acquire)
           == PP__PARK_NOTIFIED;
}

void pp__park(pp__parker_t *parker)
{
    if (take_or_mark_parked(parker))
        return;
    do
        pp__word_wait(&parker->state, -1);
    while (!consume(parker));
}

apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout)
{
    apr_time_t deadline, now;

    if (take_or_mark_parked(parker))
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
    return atomic_exchange_explicit(&parker->state, PP__PARK_EMPTY, memory_order_acquire)
           == PP__PARK_NOTIFIED ? APR_SUCCESS : APR_TIMEUP;
}

int pp__park_notified(pp__parker_t *parker)
{
    /* A look for the tests: it promises no ordering. */
    return atomic_load_explicit(&parker->state, memory_order_relaxed) == PP__PARK_NOTIFIED;
}

void pp__unpark(pp__parker_t *parker)
{
    /* Waking after the swap touches only the address: if the owner woke on
     * its own and its pool was freed meanwhile, a wake on a stale address
     * is harmless (both OSes only look the address up). */
    if (atomic_exchange_explicit(&parker->state, PP__PARK_NOTIFIED, memory_order_release)
        == PP__PARK_PARKED)
        pp__word_wake(&parker->state);
}
