/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strands: tasks that run one at a time, in submission order, on any
 * worker (GCD's serial queue on a shared pool). A strand's waiting tasks
 * sit in its own queue; the pool sees one entry for the whole strand, its
 * "turn", queued while the strand has work and run like a task: it runs
 * the strand's tasks one after the other (a few per turn, then it queues
 * itself again behind the others), so no worker ever waits for a strand.
 * Not installed.
 */
#ifndef PP_STRAND_H
#define PP_STRAND_H

#include "queue.h"

/** The function of every turn entry: never called, only compared (a turn
 *  is run by sched.c, not called as a task). */
apr_status_t pp__strand_turn(void *strand, pp_task_ctx_t *ctx);

static inline int pp__is_turn(const pp__entry_t *e)
{
    return e->fn == pp__strand_turn;
}

/** Queue e (its group entered) on strand s, at level (prioq.h); queue a
 *  turn if the strand had none. PP_ESHUTDOWN, APR_ENOMEM, APR_EINVAL
 *  (s belongs to another pool, or its apr pool is gone). */
apr_status_t pp__strand_submit(pp_pool_t *pool, pp_strand_t *s, unsigned level,
                               const pp__entry_t *e);

/** The next task of s's turn into e: 1, or 0 with the turn over (the
 *  strand is idle; if its apr pool is gone, its record is given back). */
int pp__strand_next(pp_strand_t *s, pp__entry_t *e);

/** A turn ran its share and the strand has more: queue the turn again
 *  behind the shared queue's tasks; if the pool no longer accepts it,
 *  drop what waits (PP_ECANCELLED). The turn is over either way. */
void pp__strand_again(pp_strand_t *s);

/** A turn entry was dropped (a cancel took it): drop every task waiting
 *  on its strand, each reported, released and counted (PP_ECANCELLED). */
void pp__strand_drop_turn(pp_pool_t *pool, const pp__entry_t *turn);

/** Called with the pool lock held: move the waiting tasks of group g on
 *  every strand of pool to the end of out. */
apr_status_t pp__strands_take_group_locked(pp_pool_t *pool, const pp_group_t *g,
                                           pp__queue_t *out);

/** Called as the pool is freed: forget the strands still open (their apr
 *  pools' cleanups would find the pool gone). */
void pp__strands_detach(pp_pool_t *pool);

/** How many tasks a turn runs before it lets other strands and tasks
 *  go first. */
#define PP__STRAND_TURN 32u

#endif
