/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The timers' heap (theap.h): the textbook array heap, children of i at
 * 2i+1 and 2i+2, every move writing the node's new index into it.
 */
#include "config.h"
#include "theap.h"

#include <stdlib.h>

static int before(const pp__theap_node_t *a, const pp__theap_node_t *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void put(pp__theap_t *h, apr_uint32_t i, pp__theap_node_t *node)
{
    h->v[i] = node;
    node->at = i;
}

static void sift_up(pp__theap_t *h, apr_uint32_t i, pp__theap_node_t *node)
{
    while (i > 0) {
        apr_uint32_t parent = (i - 1) / 2;
        if (!before(node, h->v[parent]))
            break;
        put(h, i, h->v[parent]);
        i = parent;
    }
    put(h, i, node);
}

static void sift_down(pp__theap_t *h, apr_uint32_t i, pp__theap_node_t *node)
{
    for (;;) {
        apr_uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
            c++;
        if (!before(h->v[c], node))
            break;
        put(h, i, h->v[c]);
        i = c;
    }
    put(h, i, node);
}

apr_status_t pp__theap_push(pp__theap_t *h, pp__theap_node_t *node)
{
    if (h->n == h->size) {
        apr_uint32_t size = h->size ? 2 * h->size : 64;
        pp__theap_node_t **v;
        if (size <= h->size || !(v = realloc(h->v, (apr_size_t)size * sizeof(*v))))
            return APR_ENOMEM;
        h->v = v;
        h->size = size;
    }
    node->seq = h->seq++;
    sift_up(h, h->n++, node);
    return APR_SUCCESS;
}

void pp__theap_remove(pp__theap_t *h, pp__theap_node_t *node)
{
    apr_uint32_t i = node->at;
    pp__theap_node_t *last = h->v[--h->n];

    if (last == node)
        return;
    /* The last node fills the hole, then goes whichever way it must. */
    if (i > 0 && before(last, h->v[(i - 1) / 2]))
        sift_up(h, i, last);
    else
        sift_down(h, i, last);
}

void pp__theap_destroy(pp__theap_t *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->size = 0;
}
