/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The parent of per-task pools: each task's argument and buffers live in
 * a subpool made by its submitter and destroyed by the worker that ran
 * it, so the parent's allocator needs a mutex of its own. Used by the
 * registry (typed submits) and by parkpool run, which compiles it in too.
 */
#ifndef PP_TASK_ROOT_H
#define PP_TASK_ROOT_H

#include <apr_pools.h>

/** A child of parent with an allocator of its own, locked, keeping at
 *  most 4 MiB of freed task pools for reuse; destroyed with parent. */
apr_status_t pp__task_root_create(apr_pool_t **out, apr_pool_t *parent);

#endif
