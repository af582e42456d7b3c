/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pool's task queue: a FIFO ring of entries held inline, so a submit
 * copies five words and allocates nothing once the ring has grown to the
 * working depth. It grows by doubling; when a pop empties a ring more than
 * four times its resting size (the init hint), the ring is freed and comes
 * back at that size on the next push, so a burst's memory goes back once
 * the burst is over. Not locked: the pool's queue mutex guards every call.
 */
#ifndef PP_QUEUE_H
#define PP_QUEUE_H

#include "parkpool/parkpool.h"

typedef struct pp__entry_t {
    pp_task_fn   fn;
    void        *arg;
    void       (*release)(void *arg);
    const char  *name;
    pp_group_t  *group;
    apr_time_t   queued;     /* apr_time_now() at submit; 0 unless cfg.timing */
    apr_time_t   not_after;  /* pp_task_t.not_after: 0, or dropped once past it */
} pp__entry_t;

typedef struct pp__queue_t {
    pp__entry_t *ring;       /* malloc'd; NULL until the first push */
    apr_uint32_t mask;       /* ring size - 1; ring size is a power of 2 */
    apr_uint32_t head, tail; /* free-running; length is tail - head */
    apr_uint32_t rest;       /* resting ring size; 0 means 16 */
} pp__queue_t;

/** An empty queue with room for at least hint entries (0: grow on demand),
 *  which is also the size it shrinks back to. */
apr_status_t pp__queue_init(pp__queue_t *q, apr_uint32_t hint);

/** Free the ring; entries still in it are forgotten, not released. The
 *  queue is empty and usable again, at its resting size. */
void pp__queue_destroy(pp__queue_t *q);

static inline apr_uint32_t pp__queue_len(const pp__queue_t *q)
{
    return q->tail - q->head;
}

/** Append a copy of e; APR_ENOMEM if the ring had to grow and could not. */
apr_status_t pp__queue_push(pp__queue_t *q, const pp__entry_t *e);

/** Take the oldest entry into e; 0 if the queue is empty. The pop that
 *  empties an oversized ring frees it. */
int pp__queue_pop(pp__queue_t *q, pp__entry_t *e);

/** Move every entry of from (its ring itself) into the empty queue to;
 *  from is left empty, at its resting size. */
void pp__queue_move(pp__queue_t *to, pp__queue_t *from);

/** The ring's size in entries (0 while none is allocated). */
apr_uint32_t pp__queue_size(const pp__queue_t *q);

/** Make room for n more entries without another allocation; APR_ENOMEM
 *  (q untouched) if the ring cannot grow that far. */
apr_status_t pp__queue_reserve(pp__queue_t *q, apr_uint32_t n);

/**
 * Move every entry of group g, in order, from q to the end of out; the
 * others keep their order. APR_ENOMEM (q untouched) if out cannot grow.
 */
apr_status_t pp__queue_take_group(pp__queue_t *q, const pp_group_t *g,
                                  pp__queue_t *out);

#endif
