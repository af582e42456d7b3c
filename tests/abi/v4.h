/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The 4.x public layouts (libparkpool.so.4, parkpool 0.1.0 as first
 * published), frozen: what a program built before the structs could grow
 * was compiled against. Only what old_layout.c uses; never edit it to
 * follow the current header, that would defeat its purpose.
 */
#ifndef PP_ABI_V4_H
#define PP_ABI_V4_H

#include <apr_errno.h>
#include <apr_pools.h>
#include <apr_time.h>

typedef struct pp_pool_t pp_pool_t;
typedef struct pp_group_t pp_group_t;
typedef struct pp_task_ctx_t pp_task_ctx_t;
typedef apr_status_t (*pp_task_fn)(void *arg, pp_task_ctx_t *ctx);

#define PP_DRAIN 1

typedef struct pp_config_t {
    apr_uint32_t threads;
    const char  *name_prefix;
    apr_size_t   stack_size;
    apr_uint32_t queue_capacity;
    void (*on_task_error)(apr_status_t status, const char *task_name, void *baton);
    void (*on_output)(const char *line, const char *task_name, void *baton);
    void        *baton;
    apr_uint32_t spin;
    void (*on_log)(int level, const char *message, void *baton);
    void (*on_write)(const char *data, apr_size_t len, const char *task_name, void *baton);
} pp_config_t;

typedef struct pp_stats_t {
    apr_uint64_t submitted, completed, failed, cancelled;
    apr_uint64_t queued, running;
    apr_uint64_t parks, unparks;
    apr_uint64_t threads;
    apr_uint64_t blocked;
    apr_uint64_t threads_idle;
} pp_stats_t;

typedef struct pp_task_t {
    pp_task_fn   fn;
    void        *arg;
    void       (*release)(void *arg);
    const char  *name;
} pp_task_t;

void pp_config_init(pp_config_t *cfg);
apr_status_t pp_pool_create(pp_pool_t **pool, const pp_config_t *cfg, apr_pool_t *parent);
apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task, pp_group_t *group,
                            apr_uint32_t flags);
apr_status_t pp_pool_shutdown(pp_pool_t *pool, int how, apr_interval_time_t timeout);
void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out);
void pp_pool_destroy(pp_pool_t *pool);

#endif
