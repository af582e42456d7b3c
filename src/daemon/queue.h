/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpoold as a worker of a Redis Streams task queue (parkpoold --queue):
 * entries of a stream, read as one consumer of a consumer group, run by an
 * engine (engine.h) like the daemon's clients' tasks, their outcomes added
 * to STREAM:results, and each entry acknowledged (XACK) in the same
 * transaction as its result, never before. At least once: an entry whose
 * worker died before that is delivered again (claimed by a live consumer
 * once idle for claim_after); one delivered max_deliveries times goes to
 * STREAM:dead with the reason instead.
 *
 * Entries: fields "type" and "arg" (the job-line grammar's TYPE and ARG),
 * and an optional "id" the producer chose. Results: "id" (the producer's,
 * else the entry's), "entry", "type", "status" (ok, failed), "error",
 * "output" (the task's lines, LF-separated, at most 1 MiB), "host",
 * "consumer", "seconds".
 */
#ifndef PP_SVC_QUEUE_H
#define PP_SVC_QUEUE_H

#include "engine.h"
#include "allow.h"

typedef struct svc_queue_t svc_queue_t;

typedef struct svc_queue_config_t {
    const char          *url;            /**< redis://HOST[:PORT]/STREAM */
    const char          *group;          /**< consumer group; created if missing */
    const char          *consumer;       /**< this worker's name in the group */
    const svc_allow_t   *allow;          /**< NULL: the default rule (allow.h) */
    svc_engine_t        *engine;
    apr_uint32_t         workers;        /**< the engine's workers, for the window */
    /** At most this many entries read and not yet acknowledged; within
     *  it, about 20 ms of work per worker (by the tasks' average run
     *  time), 2 to 256 entries per worker. 0: 256 per worker. */
    apr_uint32_t         max_inflight;
    apr_interval_time_t  claim_after;    /**< 0: 60 s */
    apr_uint32_t         max_deliveries; /**< 0: 5 */
    apr_uint64_t         results_maxlen; /**< the results stream, trimmed (~); 0: 1,000,000 */
    svc_log_fn           log;
    void                *baton;
} svc_queue_config_t;

/** Check the address, start the engine, connect (once, to say early what
 *  is wrong), create the group if missing. */
apr_status_t svc_queue_create(svc_queue_t **q, const svc_queue_config_t *cfg, apr_pool_t *p);

/** Read, run and acknowledge entries until svc_queue_stop(); then run what
 *  was read for at most timeout and acknowledge it. APR_SUCCESS when
 *  everything read ran and was acknowledged, APR_TIMEUP when the drain
 *  ran out of time (what did not end stays pending, for another worker). */
apr_status_t svc_queue_run(svc_queue_t *q, apr_interval_time_t timeout);

/** From any thread: stop reading, drain. */
void svc_queue_stop(svc_queue_t *q);

/** From any thread: load the plugins again. */
void svc_queue_reload(svc_queue_t *q);

#endif
