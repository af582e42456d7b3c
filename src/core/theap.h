/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The timers' heap: a binary min-heap of nodes that live inside their
 * timers, ordered by due time and then by the order they went in (ties
 * run first come, first served). Each node knows its place, so a cancel
 * takes it out from the middle in O(log n) as an insert puts it in.
 * Not locked: the pool's timer lock guards every call. Not installed.
 */
#ifndef PP_THEAP_H
#define PP_THEAP_H

#include <apr.h>
#include <apr_errno.h>
#include <apr_time.h>

typedef struct pp__theap_node_t {
    apr_time_t   due;    /* monotonic microseconds (pp__clock_mono) */
    apr_uint64_t seq;    /* set by the push: the tie-break */
    apr_uint32_t at;     /* its index in the heap while it is in one */
} pp__theap_node_t;

typedef struct pp__theap_t {
    pp__theap_node_t **v;    /* malloc'd, grown by doubling */
    apr_uint32_t       n, size;
    apr_uint64_t       seq;
} pp__theap_t;

/** Put node in (its due set by the caller); APR_ENOMEM leaves h as it was. */
apr_status_t pp__theap_push(pp__theap_t *h, pp__theap_node_t *node);

/** The earliest node, or NULL when the heap is empty. */
static inline pp__theap_node_t *pp__theap_top(const pp__theap_t *h)
{
    return h->n ? h->v[0] : NULL;
}

/** Take node (which must be in h) out. */
void pp__theap_remove(pp__theap_t *h, pp__theap_node_t *node);

/** Free the array; nodes still in it are forgotten. */
void pp__theap_destroy(pp__theap_t *h);

#endif
