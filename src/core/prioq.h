/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shared queue with priorities: a FIFO per level (queue.h), taken
 * from the highest level that waits, except that a level passed over
 * PP_PRIO_PASS times in a row while it waited goes next, so that no level
 * starves (a count of takes, not a clock: no clock is read to choose).
 * The HIGH and LOW levels are allocated by their first push: a pool that
 * never uses them keeps the one queue it had, on the lock's cache line,
 * and pays one pointer test per push and take.
 * Not locked: the pool's queue mutex guards every call, as for queue.h.
 */
#ifndef PP_PRIOQ_H
#define PP_PRIOQ_H

#include "queue.h"

/* Levels by index, HIGH first. */
#define PP__LEVELS 3
#define PP__HIGH   0u
#define PP__NORMAL 1u
#define PP__LOW    2u

typedef struct pp__prioq_more_t {
    pp__queue_t  high, low;
    apr_uint32_t passed[PP__LEVELS];   /* tasks taken above it while it waited */
} pp__prioq_more_t;

typedef struct pp__prioq_t {
    pp__queue_t       normal;
    pp__prioq_more_t *more;    /* HIGH and LOW: NULL until the first such push */
} pp__prioq_t;

/** The level index of a PP_PRIO_* value; PP__LEVELS if it is none. */
static inline unsigned pp__prio_level(int priority)
{
    return priority == PP_PRIO_NORMAL ? PP__NORMAL
         : priority == PP_PRIO_HIGH ? PP__HIGH
         : priority == PP_PRIO_LOW ? PP__LOW : PP__LEVELS;
}

/** Empty, with room for hint NORMAL entries (pp__queue_init). */
apr_status_t pp__prioq_init(pp__prioq_t *q, apr_uint32_t hint);

/** Free every level (entries in them are forgotten); q stays usable. */
void pp__prioq_destroy(pp__prioq_t *q);

/** A level's queue; NULL for HIGH and LOW before their first push. */
static inline pp__queue_t *pp__prioq_level(const pp__prioq_t *q, unsigned level)
{
    if (level == PP__NORMAL)
        return (pp__queue_t *)&q->normal;
    if (!q->more)
        return NULL;
    return level == PP__HIGH ? &q->more->high : &q->more->low;
}

static inline apr_uint32_t pp__prioq_level_len(const pp__prioq_t *q, unsigned level)
{
    const pp__queue_t *l = pp__prioq_level(q, level);

    return l ? pp__queue_len(l) : 0;
}

static inline apr_uint32_t pp__prioq_len(const pp__prioq_t *q)
{
    apr_uint32_t n = pp__queue_len(&q->normal);

    if (q->more)
        n += pp__queue_len(&q->more->high) + pp__queue_len(&q->more->low);
    return n;
}

/** Append a copy of e at level (pp__prio_level); APR_ENOMEM as queue.h,
 *  or when the first HIGH or LOW push cannot allocate their levels. */
apr_status_t pp__prioq_push(pp__prioq_t *q, unsigned level, const pp__entry_t *e);

/** Take back the last n entries pushed at level (an all-or-nothing
 *  batch that could not be completed). */
void pp__prioq_unpush(pp__prioq_t *q, unsigned level, apr_uint32_t n);

/** The level the next take comes from (see the header comment);
 *  PP__LEVELS if every level is empty. */
unsigned pp__prioq_next(pp__prioq_t *q);

/** Take the oldest entry of level into e; 0 if that level is empty. */
int pp__prioq_pop_level(pp__prioq_t *q, unsigned level, pp__entry_t *e);

/** Count n tasks taken from level: a pass for each, for every level
 *  below it that still waits. */
void pp__prioq_taken(pp__prioq_t *q, unsigned level, apr_uint32_t n);

/** Take the next entry (pp__prioq_next, then pp__prioq_taken) into e;
 *  0 if every level is empty. */
int pp__prioq_pop(pp__prioq_t *q, pp__entry_t *e);

/** Move every level of from into the empty to (which must hold no HIGH
 *  or LOW levels of its own); from is left empty. */
void pp__prioq_move(pp__prioq_t *to, pp__prioq_t *from);

/**
 * Move every entry of group g from q to the end of out, HIGH's first,
 * each level in order; APR_ENOMEM (q untouched) if out cannot grow.
 */
apr_status_t pp__prioq_take_group(pp__prioq_t *q, const pp_group_t *g, pp__queue_t *out);

#endif
