/* SPDX-License-Identifier: Apache-2.0 */
/* pp_bench's timer table (timers.c): how late one-shot timers run, on
 * parkpool, on apr_thread_pool_schedule and at the OS's own limit. */
#ifndef PP_BENCH_TIMERS_H
#define PP_BENCH_TIMERS_H

/** Time the timers, print the table: 0, or -1 when a pool or a schedule
 *  failed. quick: a tenth of the timers over a fifth of the span. */
int pp_bench_timers(unsigned reps, int quick);

#endif
