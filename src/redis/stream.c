/* SPDX-License-Identifier: Apache-2.0 */
/* Stream entries out of Redis's replies (stream.h). */
#include "redis/stream.h"

#include <string.h>

static int is_string(const redisReply *r)
{
    return r->type == REDIS_REPLY_STRING;
}

/* Element i of an array reply if it is a pair whose first is a string
 * (an entry [id, fields], or a stream [key, entries]); else NULL. */
static const redisReply *pair(const redisReply *r, apr_size_t i)
{
    const redisReply *e = r->element[i];

    return e->type == REDIS_REPLY_ARRAY && e->elements == 2 && is_string(e->element[0]) ? e
                                                                                        : NULL;
}

apr_size_t pp__stream_list(const redisReply *list, const char *key, pp__stream_entry_fn *fn,
                           void *baton)
{
    apr_size_t i, n = 0;

    if (list->type != REDIS_REPLY_ARRAY)
        return 0;
    for (i = 0; i < list->elements; i++) {
        const redisReply *e = pair(list, i);
        if (!e)
            continue;
        fn(baton, key, e->element[0]->str,
           e->element[1]->type == REDIS_REPLY_ARRAY ? e->element[1] : NULL);
        n++;
    }
    return n;
}

apr_size_t pp__stream_read(const redisReply *r, pp__stream_entry_fn *fn, void *baton)
{
    apr_size_t i, n = 0;

    if (r->type != REDIS_REPLY_ARRAY)
        return 0;
    for (i = 0; i < r->elements; i++) {
        const redisReply *st = pair(r, i);
        if (!st)
            continue;
        n += pp__stream_list(st->element[1], st->element[0]->str, fn, baton);
    }
    return n;
}

const char *pp__stream_field(const redisReply *fields, const char *name, apr_size_t *len)
{
    apr_size_t i;

    if (!fields || fields->type != REDIS_REPLY_ARRAY)
        return NULL;
    for (i = 0; i + 1 < fields->elements; i += 2) {
        const redisReply *k = fields->element[i], *v = fields->element[i + 1];
        /* By length too: "type\0x" is not "type". */
        if (is_string(k) && k->len == strlen(name) && memcmp(k->str, name, k->len) == 0
            && is_string(v)) {
            if (len)
                *len = v->len;
            return v->str;
        }
    }
    return NULL;
}
