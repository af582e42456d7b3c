/* SPDX-License-Identifier: Apache-2.0 */
/* Adds a new type, then one that "good" owns already, and ignores the
 * failure: the load must fail anyway, and dup.fresh must not stay behind. */
#include "config.h"
#include "parkpool/plugin.h"

static apr_status_t run(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

static const pp_task_type_t fresh = { "dup.fresh", "new", NULL, run, NULL, NULL };
static const pp_task_type_t taken = { "good.echo", "taken", NULL, run, NULL, NULL };

static apr_status_t dup_init(pp_registry_t *reg)
{
    pp_registry_add(reg, &fresh);
    pp_registry_add(reg, &taken);
    return APR_SUCCESS;
}

PP_PLUGIN_DEFINE("dup", "0.1", dup_init);
