/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the library takes the structs that callers allocate, which grow at
 * the end (parkpool.h, "Structs that grow"), and the entry points that
 * programs built against the 4.x headers still call by their old names.
 * Not installed.
 */
#ifndef PP_ABI_H
#define PP_ABI_H

#include "parkpool/parkpool.h"

#include <stddef.h>

/* Where a member ends: a layout's size is where its last member ends
 * (every struct here ends on its alignment, as a pointer or a 64-bit
 * counter does). */
#define PP__END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* The 4.x layouts, the first ones published: no caller has less. */
#define PP__CONFIG_SIZE_4 PP__END_OF(pp_config_t, on_write)
#define PP__STATS_SIZE_4  PP__END_OF(pp_stats_t, threads_idle)
#define PP__TASK_SIZE_4   PP__END_OF(pp_task_t, name)

/**
 * Copy a caller's struct of size bytes into dst, the library's own of
 * full bytes: fields past size read as zero. APR_EINVAL when size is
 * below min (no such layout was published), APR_ENOTIMPL when the caller
 * is newer and set a field this library does not know.
 */
apr_status_t pp__struct_in(void *dst, apr_size_t full, const void *src, apr_size_t size,
                           apr_size_t min);

/** Copy the library's struct of full bytes out to a caller's of size
 *  bytes, zeroing what the caller has beyond it. */
void pp__struct_out(void *dst, apr_size_t size, const void *src, apr_size_t full);

/* The 4.x entry points, exported for programs built before the sized
 * ones; the public header makes them inline wrappers of those. */
PP_API void pp_config_init(pp_config_t *cfg);
PP_API apr_status_t pp_pool_create(pp_pool_t **pool, const pp_config_t *cfg,
                                   apr_pool_t *parent);
PP_API void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out);
PP_API apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task,
                                   pp_group_t *group, apr_uint32_t flags);

#endif
