/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stream entries out of Redis's replies (XREAD, XREADGROUP, XAUTOCLAIM,
 * XRANGE). A reply is outside input: whatever its shape, these walk only
 * what is there and skip what is not an entry.
 */
#ifndef PP_REDIS_STREAM_H
#define PP_REDIS_STREAM_H

#include <apr.h>
#include <hiredis/hiredis.h>

/** One entry: the key of its stream (NULL when the reply names none, as
 *  XAUTOCLAIM's), its id, and its [field, value, ...]; fields is NULL for
 *  an entry deleted since it was delivered. */
typedef void pp__stream_entry_fn(void *baton, const char *key, const char *id,
                                 const redisReply *fields);

/** Each entry of XREAD's or XREADGROUP's reply, [[key, [entry, ...]], ...]
 *  (nil after BLOCK: none), in order; returns how many. */
apr_size_t pp__stream_read(const redisReply *r, pp__stream_entry_fn *fn, void *baton);

/** Each entry of a list [[id, fields], ...] (XAUTOCLAIM's second element,
 *  XRANGE's reply) with key given; returns how many. */
apr_size_t pp__stream_list(const redisReply *list, const char *key, pp__stream_entry_fn *fn,
                           void *baton);

/** The value of an entry's first field called name that is a string, or
 *  NULL; *len (if len) gets its length, which counts any NUL inside. */
const char *pp__stream_field(const redisReply *fields, const char *name, apr_size_t *len);

#endif
