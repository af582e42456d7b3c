/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "pool_private.h"
#include "os/os.h"

#include <string.h>

void pp_config_init(pp_config_t *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof(*cfg));
    /* threads stays 0: the CPUs are counted when the pool starts. */
    cfg->name_prefix = PP__DEFAULT_PREFIX;
    cfg->stack_size = PP__DEFAULT_STACK;
    cfg->spin = PP__DEFAULT_SPIN;
}

apr_status_t pp__config_resolve(pp_config_t *cfg)
{
    if (cfg->threads == 0)
        cfg->threads = pp__cpu_count();
    if (!cfg->name_prefix)
        cfg->name_prefix = PP__DEFAULT_PREFIX;
    if (cfg->stack_size == 0)
        cfg->stack_size = PP__DEFAULT_STACK;
    if (cfg->threads > PP__MAX_THREADS
        || cfg->name_prefix[0] == '\0'
        || cfg->stack_size < PP__MIN_STACK || cfg->stack_size > PP__MAX_STACK
        || cfg->queue_capacity > PP__MAX_CAPACITY
        || cfg->spin > PP__MAX_SPIN)
        return APR_EINVAL;
    return APR_SUCCESS;
}
