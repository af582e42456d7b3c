/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "abi.h"
#include "pool_private.h"
#include "os/os.h"

#include <string.h>

void pp_config_init_sized(pp_config_t *cfg, apr_size_t size)
{
    pp_config_t d;

    if (!cfg || size < PP__CONFIG_SIZE_4)
        return;    /* no such layout was published: nothing is ours to write */
    memset(&d, 0, sizeof(d));
    /* threads stays 0: the CPUs are counted when the pool starts. */
    d.name_prefix = PP__DEFAULT_PREFIX;
    d.stack_size = PP__DEFAULT_STACK;
    d.spin = PP__DEFAULT_SPIN;
    pp__struct_out(cfg, size, &d, sizeof(d));
}

apr_status_t pp__config_resolve(pp_config_t *cfg)
{
    if (cfg->threads == 0)
        cfg->threads = pp__cpu_count();
    if (!cfg->name_prefix)
        cfg->name_prefix = PP__DEFAULT_PREFIX;
    if (cfg->stack_size == 0)
        cfg->stack_size = PP__DEFAULT_STACK;
    if (cfg->min_threads == 0)
        cfg->min_threads = cfg->threads;
    if (cfg->idle_timeout == 0)
        cfg->idle_timeout = PP__DEFAULT_IDLE;
    if (cfg->max_blocking == 0)
        cfg->max_blocking = cfg->threads;
    else if (cfg->max_blocking == PP_BLOCKING_NONE)
        cfg->max_blocking = 0;    /* from here on, resolved: 0 means none */
    if (cfg->threads > PP__MAX_THREADS
        || cfg->name_prefix[0] == '\0'
        || cfg->stack_size < PP__MIN_STACK || cfg->stack_size > PP__MAX_STACK
        || cfg->queue_capacity > PP__MAX_CAPACITY
        || cfg->spin > PP__MAX_SPIN
        || cfg->min_threads > cfg->threads
        || cfg->idle_timeout < 0
        || cfg->max_blocking > PP__MAX_THREADS)
        return APR_EINVAL;
    return APR_SUCCESS;
}
