/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "prioq.h"
#include "fault.h"

#include <stdlib.h>
#include <string.h>

apr_status_t pp__prioq_init(pp__prioq_t *q, apr_uint32_t hint)
{
    q->more = NULL;
    return pp__queue_init(&q->normal, hint);
}

void pp__prioq_destroy(pp__prioq_t *q)
{
    pp__queue_destroy(&q->normal);
    if (q->more) {
        pp__queue_destroy(&q->more->high);
        pp__queue_destroy(&q->more->low);
        free(q->more);
        q->more = NULL;
    }
}

apr_status_t pp__prioq_push(pp__prioq_t *q, unsigned level, const pp__entry_t *e)
{
    if (level != PP__NORMAL && !q->more) {
        if (pp__fault_hit(PP__FAULT_QUEUE_GROW) || !(q->more = calloc(1, sizeof(*q->more))))
            return APR_ENOMEM;
    }
    return pp__queue_push(pp__prioq_level(q, level), e);
}

void pp__prioq_unpush(pp__prioq_t *q, unsigned level, apr_uint32_t n)
{
    pp__queue_t *l = pp__prioq_level(q, level);

    if (l)
        l->tail -= n;
}

unsigned pp__prioq_next(pp__prioq_t *q)
{
    unsigned l, top = PP__LEVELS;

    if (!q->more)
        return pp__queue_len(&q->normal) > 0 ? PP__NORMAL : PP__LEVELS;
    for (l = 0; l < PP__LEVELS; l++) {
        if (pp__prioq_level_len(q, l) == 0)
            q->more->passed[l] = 0;    /* it waits no more */
        else if (top == PP__LEVELS)
            top = l;
    }
    /* A level below the top that has been passed over enough goes first,
     * the lowest first: it has waited behind the most. */
    for (l = PP__LEVELS; l-- > top + 1;)
        if (q->more->passed[l] >= PP_PRIO_PASS)
            return l;
    return top;
}

int pp__prioq_pop_level(pp__prioq_t *q, unsigned level, pp__entry_t *e)
{
    pp__queue_t *l = pp__prioq_level(q, level);

    return l && pp__queue_pop(l, e);
}

void pp__prioq_taken(pp__prioq_t *q, unsigned level, apr_uint32_t n)
{
    unsigned l;

    if (!q->more)
        return;
    q->more->passed[level] = 0;
    for (l = level + 1; l < PP__LEVELS; l++)
        if (pp__prioq_level_len(q, l) > 0)
            q->more->passed[l] += n;
}

int pp__prioq_pop(pp__prioq_t *q, pp__entry_t *e)
{
    unsigned l = pp__prioq_next(q);

    if (l == PP__LEVELS || !pp__prioq_pop_level(q, l, e))
        return 0;
    pp__prioq_taken(q, l, 1);
    return 1;
}

void pp__prioq_move(pp__prioq_t *to, pp__prioq_t *from)
{
    pp__queue_move(&to->normal, &from->normal);
    to->more = from->more;
    from->more = NULL;
}

apr_status_t pp__prioq_take_group(pp__prioq_t *q, const pp_group_t *g, pp__queue_t *out)
{
    apr_uint32_t n = 0, i;
    apr_status_t rv;
    unsigned l;

    for (l = 0; l < PP__LEVELS; l++) {
        const pp__queue_t *lq = pp__prioq_level(q, l);
        for (i = 0; lq && i < pp__queue_len(lq); i++)
            n += lq->ring[(lq->head + i) & lq->mask].group == g;
    }
    /* Room for all first, so that each level's move below cannot fail. */
    rv = pp__queue_reserve(out, n);
    for (l = 0; rv == APR_SUCCESS && l < PP__LEVELS; l++)
        if (pp__prioq_level(q, l))
            rv = pp__queue_take_group(pp__prioq_level(q, l), g, out);
    return rv;
}
