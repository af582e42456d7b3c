/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "prioq.h"

#include <string.h>

apr_status_t pp__prioq_init(pp__prioq_t *q, apr_uint32_t hint)
{
    memset(q, 0, sizeof(*q));
    return pp__queue_init(&q->level[1], hint);
}

void pp__prioq_destroy(pp__prioq_t *q)
{
    unsigned l;

    for (l = 0; l < PP__LEVELS; l++) {
        pp__queue_destroy(&q->level[l]);
        q->passed[l] = 0;
    }
}

unsigned pp__prioq_next(pp__prioq_t *q)
{
    unsigned l, top = PP__LEVELS;

    for (l = 0; l < PP__LEVELS; l++) {
        if (pp__queue_len(&q->level[l]) == 0)
            q->passed[l] = 0;    /* it waits no more */
        else if (top == PP__LEVELS)
            top = l;
    }
    /* A level below the top that has been passed over enough goes first,
     * the lowest first: it has waited behind the most. */
    for (l = PP__LEVELS; l-- > top + 1;)
        if (q->passed[l] >= PP_PRIO_PASS)
            return l;
    return top;
}

void pp__prioq_taken(pp__prioq_t *q, unsigned level, apr_uint32_t n)
{
    unsigned l;

    q->passed[level] = 0;
    for (l = level + 1; l < PP__LEVELS; l++)
        if (pp__queue_len(&q->level[l]) > 0)
            q->passed[l] += n;
}

int pp__prioq_pop_level(pp__prioq_t *q, unsigned level, pp__entry_t *e)
{
    return pp__queue_pop(&q->level[level], e);
}

int pp__prioq_pop(pp__prioq_t *q, pp__entry_t *e)
{
    unsigned l = pp__prioq_next(q);

    if (l == PP__LEVELS || !pp__queue_pop(&q->level[l], e))
        return 0;
    pp__prioq_taken(q, l, 1);
    return 1;
}

void pp__prioq_move(pp__prioq_t *to, pp__prioq_t *from)
{
    unsigned l;

    for (l = 0; l < PP__LEVELS; l++) {
        pp__queue_move(&to->level[l], &from->level[l]);
        to->passed[l] = from->passed[l];
        from->passed[l] = 0;
    }
}

apr_status_t pp__prioq_take_group(pp__prioq_t *q, const pp_group_t *g, pp__queue_t *out)
{
    apr_uint32_t n = 0, i;
    apr_status_t rv;
    unsigned l;

    for (l = 0; l < PP__LEVELS; l++) {
        const pp__queue_t *lq = &q->level[l];
        for (i = 0; i < pp__queue_len(lq); i++)
            n += lq->ring[(lq->head + i) & lq->mask].group == g;
    }
    /* Room for all first, so that each level's move below cannot fail. */
    rv = pp__queue_reserve(out, n);
    for (l = 0; rv == APR_SUCCESS && l < PP__LEVELS; l++)
        rv = pp__queue_take_group(&q->level[l], g, out);
    return rv;
}
