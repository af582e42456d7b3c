/* SPDX-License-Identifier: Apache-2.0 */
/* A test plugin whose tasks take the process down, for parkpool run's crash
 * report (tests/sh/run.sh): "crash.segv MS" and "crash.abort MS" wait MS
 * milliseconds, then write through a null pointer or call abort(). In a
 * folder of its own, so that loading the other test plugins' folder does
 * not load it. */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_time.h>

#include <signal.h>
#include <stdlib.h>

static apr_status_t wait_parse(void **arg, const char *text, apr_pool_t *p)
{
    char *end;
    long ms = strtol(text, &end, 10);
    long *out;

    if (end == text || *end || ms < 0)
        return APR_EINVAL;
    out = apr_palloc(p, sizeof(*out));
    *out = ms;
    *arg = out;
    return APR_SUCCESS;
}

static apr_status_t segv_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_sleep(apr_time_from_msec(*(long *)arg));
    raise(SIGSEGV);    /* what a stray pointer does, without undefined behaviour */
    return APR_SUCCESS;
}

static apr_status_t abort_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_sleep(apr_time_from_msec(*(long *)arg));
    abort();
}

static const pp_task_type_t types[] = {
    { "crash.segv", "wait MS milliseconds, then SIGSEGV", wait_parse, segv_run, NULL, NULL },
    { "crash.abort", "wait MS milliseconds, then abort()", wait_parse, abort_run, NULL, NULL },
};

static apr_status_t crash_init(pp_registry_t *reg)
{
    apr_status_t rv = pp_registry_add(reg, &types[0]);

    return rv == APR_SUCCESS ? pp_registry_add(reg, &types[1]) : rv;
}

PP_PLUGIN_DEFINE("crash", "1.0.0", crash_init);
