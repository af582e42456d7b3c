/* SPDX-License-Identifier: Apache-2.0 */
/* A connection to Redis (hiredis) as parkpool's queue users want one. */
#ifndef PP_REDIS_CONNECT_H
#define PP_REDIS_CONNECT_H

#include <apr.h>
#include <hiredis/hiredis.h>

/** Connect within 2 s; commands then time out after 10 s (longer than any
 *  BLOCK parkpool sends). NULL, with why filled, when it cannot. */
redisContext *pp__redis_connect(const char *host, int port, char *why, apr_size_t whylen);

#endif
