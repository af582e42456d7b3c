/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timers (pp_schedule): one thread per pool, started by its first timer,
 * sleeps to the earliest due time of a heap of them (theap.h) and queues
 * each timer's "tick" when it comes due. A tick is an ordinary entry of
 * the shared queue whose function runs the timer's task; its release
 * hook, called once whether it ran or was dropped, puts the timer back in
 * the heap for its next period or ends it. So a timer is never in the heap
 * and queued at once, and never runs twice at a time. Not installed.
 */
#ifndef PP_TIMER_H
#define PP_TIMER_H

#include "queue.h"

typedef struct pp__timers_t pp__timers_t;

/** The pool is shutting down (its state already changed): no timer
 *  ticks again; those waiting for their time are dropped (reported as
 *  PP_ECANCELLED, once each), until deadline; what is left the next call
 *  (or pp__timers_free) drops. */
void pp__timers_close(pp_pool_t *pool, apr_time_t deadline);

/** Move a tick of every timer of group g waiting for its time into out,
 *  for the caller to drop (pp_group_cancel). */
apr_status_t pp__timers_take_group(pp_pool_t *pool, const pp_group_t *g, pp__queue_t *out);

/** How many timers wait for their time now (for pp_pool_stats). */
apr_uint32_t pp__timers_waiting(pp_pool_t *pool);

/** As the pool is freed: join the timer thread, drop what waits still,
 *  free every record (handles the caller kept die here). */
void pp__timers_free(pp_pool_t *pool);

#endif
