/*
 * The pool's task queue: a FIFO ring of entries held inline, so a submit
 * copies five words and allocates nothing once the ring has grown to the
 * working depth. It only grows (by doubling), never shrinks. Not locked:
 * the pool's queue mutex guards every call.
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
} pp__entry_t;

typedef struct pp__queue_t {
    pp__entry_t *ring;       /* malloc'd; NULL until the first push */
    apr_uint32_t mask;       /* ring size - 1; ring size is a power of 2 */
    apr_uint32_t head, tail; /* free-running; length is tail - head */
} pp__queue_t;

/** An empty queue with room for at least hint entries (0: grow on demand). */
apr_status_t pp__queue_init(pp__queue_t *q, apr_uint32_t hint);

/** Free the ring; entries still in it are forgotten, not released. */
void pp__queue_destroy(pp__queue_t *q);

static inline apr_uint32_t pp__queue_len(const pp__queue_t *q)
{
    return q->tail - q->head;
}

/** Append a copy of e; APR_ENOMEM if the ring had to grow and could not. */
apr_status_t pp__queue_push(pp__queue_t *q, const pp__entry_t *e);

/** Take the oldest entry into e; 0 if the queue is empty. */
int pp__queue_pop(pp__queue_t *q, pp__entry_t *e);

/**
 * Move every entry of group g, in order, from q to the end of out; the
 * others keep their order. APR_ENOMEM (q untouched) if out cannot grow.
 */
apr_status_t pp__queue_take_group(pp__queue_t *q, const pp_group_t *g,
                                  pp__queue_t *out);

#endif
