/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Redis Streams queue's address, for parkpoold --queue and parkpool
 * submit / queue-stats: redis://HOST[:PORT]/STREAM.
 */
#ifndef PP_REDIS_QADDR_H
#define PP_REDIS_QADDR_H

#include <apr_pools.h>

/** Split url into host, port (6379 when not given) and stream, in p.
 *  APR_EINVAL, with why filled, when it is not such an address. */
apr_status_t pp__queue_addr(const char *url, const char **host, int *port,
                            const char **stream, char *why, apr_size_t whylen, apr_pool_t *p);

#endif
