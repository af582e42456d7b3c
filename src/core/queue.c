/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "queue.h"
#include "fault.h"

#include <stdlib.h>
#include <string.h>

/* Above this a ring of 40-byte entries would pass 80 GiB: refuse instead
 * of letting the size arithmetic wrap. */
#define QUEUE_MAX_SIZE (1u << 31)
#define QUEUE_MIN_SIZE 16u

static apr_uint32_t rest_size(const pp__queue_t *q)
{
    return q->rest ? q->rest : QUEUE_MIN_SIZE;
}

/*
 * A ring grows in place where it can: realloc keeps the entries where
 * they are (and of a large ring, mapped memory, moves the pages instead of
 * copying them), and only the part that had wrapped past the old end is
 * copied up after it. Copying the whole ring into a fresh one, entry by
 * entry under the queue lock, was 12% of a 1,000,000-task submit run
 * (bench W1, perf), and touched every page twice.
 */
static apr_status_t grow(pp__queue_t *q, apr_uint32_t want)
{
    apr_uint32_t old = q->ring ? q->mask + 1 : 0, size = old ? old : rest_size(q);
    apr_uint32_t len = pp__queue_len(q), h = q->head & q->mask, wrapped;
    pp__entry_t *ring;

    while (size < want) {
        if (size >= QUEUE_MAX_SIZE)
            return APR_ENOMEM;
        size <<= 1;
    }
    if (size == old)
        return APR_SUCCESS;    /* room already */
    if (pp__fault_hit(PP__FAULT_QUEUE_GROW))
        return APR_ENOMEM;
    ring = realloc(q->ring, (size_t)size * sizeof(*ring));
    if (!ring)
        return APR_ENOMEM;    /* the old ring is untouched */
    /* The entries were [h, old) then [0, wrapped); size >= 2 * old leaves
     * room for the second run right after the first. */
    wrapped = old && h + len > old ? h + len - old : 0;
    memcpy(ring + old, ring, (size_t)wrapped * sizeof(*ring));
    q->ring = ring;
    q->mask = size - 1;
    q->head = old ? h : 0;
    q->tail = q->head + len;
    return APR_SUCCESS;
}

apr_status_t pp__queue_init(pp__queue_t *q, apr_uint32_t hint)
{
    apr_status_t rv;

    memset(q, 0, sizeof(*q));
    if (!hint)
        return APR_SUCCESS;
    rv = grow(q, hint);
    q->rest = q->mask + 1;
    return rv;
}

void pp__queue_destroy(pp__queue_t *q)
{
    apr_uint32_t rest = q->rest;

    free(q->ring);
    memset(q, 0, sizeof(*q));
    q->rest = rest;
}

apr_status_t pp__queue_push(pp__queue_t *q, const pp__entry_t *e)
{
    if (!q->ring || pp__queue_len(q) > q->mask) {
        apr_status_t rv = grow(q, pp__queue_len(q) + 1);
        if (rv != APR_SUCCESS)
            return rv;
    }
    q->ring[q->tail++ & q->mask] = *e;
    return APR_SUCCESS;
}

int pp__queue_pop(pp__queue_t *q, pp__entry_t *e)
{
    if (q->head == q->tail)
        return 0;
    *e = q->ring[q->head++ & q->mask];
    /* Past a burst: give its memory back (the next push allocates the
     * resting size again). Four times, so that a queue that hovers near
     * its resting depth does not free and allocate on every swing. */
    if (q->head == q->tail && q->mask + 1 > 4 * rest_size(q))
        pp__queue_destroy(q);
    return 1;
}

void pp__queue_move(pp__queue_t *to, pp__queue_t *from)
{
    *to = *from;
    to->rest = 0;
    from->ring = NULL;
    from->mask = from->head = from->tail = 0;
}

apr_uint32_t pp__queue_size(const pp__queue_t *q)
{
    return q->ring ? q->mask + 1 : 0;
}

apr_status_t pp__queue_reserve(pp__queue_t *q, apr_uint32_t n)
{
    if (n == 0 || (q->ring && pp__queue_len(q) + (apr_uint64_t)n <= q->mask + 1u))
        return APR_SUCCESS;
    if (pp__queue_len(q) + (apr_uint64_t)n > QUEUE_MAX_SIZE)
        return APR_ENOMEM;
    return grow(q, pp__queue_len(q) + n);
}

apr_status_t pp__queue_take_group(pp__queue_t *q, const pp_group_t *g,
                                  pp__queue_t *out)
{
    apr_uint32_t len = pp__queue_len(q), n = 0, i, keep;
    apr_status_t rv;

    for (i = 0; i < len; i++)
        n += q->ring[(q->head + i) & q->mask].group == g;
    if (n == 0)
        return APR_SUCCESS;
    rv = pp__queue_reserve(out, n);
    if (rv != APR_SUCCESS)
        return rv;
    /* One forward pass: the write index never passes the read index, so
     * keepers compact in place and both sides keep their order. */
    for (i = 0, keep = 0; i < len; i++) {
        pp__entry_t e = q->ring[(q->head + i) & q->mask];
        if (e.group == g)
            out->ring[out->tail++ & out->mask] = e;
        else
            q->ring[(q->head + keep++) & q->mask] = e;
    }
    q->tail = q->head + keep;
    return APR_SUCCESS;
}
