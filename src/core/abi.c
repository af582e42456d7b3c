/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The structs that grow: reading and writing a caller's copy of the size
 * it was built with, and the 4.x entry points (abi.h).
 */
#include "config.h"
#include "abi.h"

#include <string.h>

apr_status_t pp__struct_in(void *dst, apr_size_t full, const void *src, apr_size_t size,
                           apr_size_t min)
{
    const unsigned char *tail = (const unsigned char *)src + full;
    apr_size_t i;

    if (size < min)
        return APR_EINVAL;
    for (i = full; i < size; i++)
        if (tail[i - full] != 0)
            return APR_ENOTIMPL;
    memcpy(dst, src, size < full ? size : full);
    if (size < full)
        memset((char *)dst + size, 0, full - size);
    return APR_SUCCESS;
}

void pp__struct_out(void *dst, apr_size_t size, const void *src, apr_size_t full)
{
    memcpy(dst, src, size < full ? size : full);
    if (size > full)
        memset((char *)dst + full, 0, size - full);
}

void pp_config_init(pp_config_t *cfg)
{
    pp_config_init_sized(cfg, PP__CONFIG_SIZE_4);
}

apr_status_t pp_pool_create(pp_pool_t **pool, const pp_config_t *cfg, apr_pool_t *parent)
{
    return pp_pool_create_sized(pool, cfg, PP__CONFIG_SIZE_4, parent);
}

void pp_pool_stats(pp_pool_t *pool, pp_stats_t *out)
{
    pp_pool_stats_sized(pool, out, PP__STATS_SIZE_4);
}

apr_status_t pp_submit_task(pp_pool_t *pool, const pp_task_t *task, pp_group_t *group,
                            apr_uint32_t flags)
{
    return pp_submit_task_sized(pool, task, PP__TASK_SIZE_4, group, flags);
}
