/* SPDX-License-Identifier: Apache-2.0 */
/* Registers a type, then fails its init: the type must not stay behind. */
#include "config.h"
#include "parkpool/plugin.h"

static apr_status_t run(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

static const pp_task_type_t t = { "initfail.x", "never registered", NULL, run, NULL, NULL };

static apr_status_t failing_init(pp_registry_t *reg)
{
    pp_registry_add(reg, &t);
    return APR_ENOSPC;
}

PP_PLUGIN_DEFINE("initfail", "0.1", failing_init);
