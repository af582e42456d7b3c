/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The park/unpark seam: one parker per worker, three backends
 * (park_futex.c on Linux, park_cond.c on any APR platform,
 * park_win32.c on Windows). configure links exactly one.
 *
 * A parker is a token with three states. unpark() makes the token
 * NOTIFIED and wakes the owner only if it was PARKED; park() consumes a
 * NOTIFIED token without sleeping, otherwise sleeps until one arrives.
 * An unpark that comes before the park is therefore never lost, and any
 * number of unparks before one park leave a single token.
 *
 * Only the owning thread may park; any thread may unpark. park() returns
 * only with the token consumed (spurious wakeups loop inside the backend),
 * so the caller needs no retry loop of its own.
 */
#ifndef PP_PARK_H
#define PP_PARK_H

#include <apr_pools.h>
#include <apr_time.h>

#define PP__PARK_EMPTY    0u
#define PP__PARK_NOTIFIED 1u
#define PP__PARK_PARKED   0xffffffffu

typedef struct pp__parker_t pp__parker_t;

/** A new parker in state EMPTY, allocated from p (and torn down with it). */
apr_status_t pp__parker_create(pp__parker_t **parker, apr_pool_t *p);

/** Sleep until a token is there, then consume it. */
void pp__park(pp__parker_t *parker);

/**
 * pp__park() for at most timeout microseconds (0 only consumes a pending
 * token). APR_SUCCESS with the token consumed, or APR_TIMEUP without one.
 */
apr_status_t pp__park_timed(pp__parker_t *parker, apr_interval_time_t timeout);

/** Non-zero when a token waits: lets an owner spin briefly before parking. */
int pp__park_notified(pp__parker_t *parker);

/** Leave a token and wake the owner if it sleeps. */
void pp__unpark(pp__parker_t *parker);

/** "futex", "cond" or "win32". */
const char *pp__park_backend_name(void);

#endif
