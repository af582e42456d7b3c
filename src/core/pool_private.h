/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the core's files share beyond the pool's own state (sched.h):
 * limits and defaults, and the calls between the pool and groups.
 * Not installed.
 */
#ifndef PP_POOL_PRIVATE_H
#define PP_POOL_PRIVATE_H

#include "parkpool/parkpool.h"
#include "queue.h"

/* Limits behind APR_EINVAL for "nonsense" configurations. */
#define PP__MAX_THREADS    4096u
#define PP__MIN_STACK      ((apr_size_t)64 * 1024)
#define PP__MAX_STACK      ((apr_size_t)1024 * 1024 * 1024)
#define PP__DEFAULT_STACK  ((apr_size_t)2 * 1024 * 1024)
#define PP__MAX_CAPACITY   (1u << 30)
#define PP__MAX_SPIN       (1u << 20)
/* The most polls of the queues before a worker sleeps: well below the
 * millisecond an idle pool may take to go to sleep, long enough that a
 * task arriving meanwhile is taken without a futex wait or wake on either
 * side (waking a halted vCPU costs far more than the polls). Each worker
 * adapts its budget between this and 1/16 of it (budget.h);
 * docs/design.md, "The search budget", has the measurements. */
#define PP__DEFAULT_SPIN   4000u
#define PP__DEFAULT_PREFIX "pp-worker"
#define PP__DEFAULT_IDLE   (10 * APR_USEC_PER_SEC)

/** "<prefix><suffix>" from p, the prefix cut so that the whole fits the
 *  OS's thread names (pool.c). */
const char *pp__thread_label(apr_pool_t *p, const char *prefix, const char *suffix);

/** Check cfg and replace its "0 = default" values by the real ones. */
apr_status_t pp__config_resolve(pp_config_t *cfg);

/* group.c, called by pool.c, sched.c and submit.c */

/** Count n more pending tasks of g on pool (PP_ECANCELLED, APR_EINVAL). */
apr_status_t pp__group_enter(pp_group_t *g, pp_pool_t *pool, apr_uint32_t n);

/** n tasks of g have ended with outcome (recorded if record is set). */
void pp__group_leave(pp_group_t *g, apr_status_t outcome, int record, apr_uint32_t n);

/** Non-zero once pp_group_cancel() was called in the current round. */
int pp__group_cancelled(const pp_group_t *g);

/* pool.c and sched.c, called by group.c */

/** Move the queued tasks of g out of pool's queue into out. The caller
 *  is inside the pool from here until its pp__pool_drop() (call it even
 *  when this failed): the pool is not freed before. */
apr_status_t pp__pool_take_group(pp_pool_t *pool, const pp_group_t *g,
                                 pp__queue_t *out);

/** Account, report and release each entry of q as PP_ECANCELLED, then
 *  leave the pool (after this, pool may be gone). */
void pp__pool_drop(pp_pool_t *pool, pp__queue_t *q);

#ifndef PP_UNTESTABLE
/** A test control, like fault.h's (and like it not in the shipped
 *  library): take (hold != 0) or release the pool's queue lock, to show
 *  what a call does without it. */
void pp__pool_hold_lock(pp_pool_t *pool, int hold);
#endif

/** Called by pp_group_wait() on pool's behalf: when the caller is one of
 *  pool's workers (in a task), run one queued task in its place, so that a
 *  wait inside a task keeps the pool going (fork-join deeper than the
 *  workers). 1 ran one, 0 found none, -1 the caller cannot help (not a
 *  worker of pool, or nested too deep already). */
int pp__pool_help(pp_pool_t *pool);

/** Called on a worker thread that a task ended (pp__exit_watch, os.h)
 *  with its worker: accounts for its tasks and replaces it. */
void pp__thread_died(void *worker);

/** When the calling thread is a worker running a task, begin (begin != 0)
 *  or end a block section of it, as pp_task_block_begin/end do; else
 *  nothing. For pp_group_wait()'s sleeps. */
void pp__self_block(int begin);

/** The group of the task running on the calling thread, or NULL. */
pp_group_t *pp__current_group(void);

#endif
