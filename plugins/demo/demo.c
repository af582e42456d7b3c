/* SPDX-License-Identifier: Apache-2.0 */
/*
 * demo: small task types for examples, tests and benchmarks.
 *   demo.sleep MS   sleep MS milliseconds (stops early, cancelled, if asked)
 *   demo.spin US    burn US microseconds of CPU
 *   demo.fail TEXT  emit TEXT, then fail
 *   demo.echo TEXT  emit TEXT
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <stdlib.h>

static apr_status_t parse_count(void **arg, const char *text, apr_pool_t *p)
{
    char *end;
    apr_int64_t v = apr_strtoi64(text, &end, 10);
    apr_int64_t *out;

    if (end == text || *end || v < 0 || v > APR_INT64_C(86400000000))
        return APR_EINVAL;
    out = apr_palloc(p, sizeof(*out));
    *out = v;
    *arg = out;
    return APR_SUCCESS;
}

static apr_status_t run_sleep(void *arg, pp_task_ctx_t *ctx)
{
    apr_time_t end = apr_time_now() + apr_time_from_msec(*(apr_int64_t *)arg);
    apr_time_t now;

    /* Sleep in slices of at most 10 ms so that a cancel is heard. */
    while ((now = apr_time_now()) < end) {
        if (pp_task_cancelled(ctx))
            return PP_ECANCELLED;
        apr_sleep(end - now < 10000 ? end - now : 10000);
    }
    return APR_SUCCESS;
}

static apr_status_t run_spin(void *arg, pp_task_ctx_t *ctx)
{
    apr_time_t end = apr_time_now() + *(apr_int64_t *)arg;
    volatile unsigned x = 0;

    (void)ctx;
    while (apr_time_now() < end)
        x++;
    return APR_SUCCESS;
}

static apr_status_t run_fail(void *arg, pp_task_ctx_t *ctx)
{
    pp_task_emit(ctx, arg);
    return APR_EGENERAL;
}

static apr_status_t run_echo(void *arg, pp_task_ctx_t *ctx)
{
    pp_task_emit(ctx, arg);
    return APR_SUCCESS;
}

static const pp_task_type_t types[] = {
    { "demo.sleep", "sleep MS milliseconds", parse_count, run_sleep, NULL, NULL },
    { "demo.spin", "burn US microseconds of CPU", parse_count, run_spin, NULL, NULL },
    { "demo.fail", "emit TEXT, then fail", NULL, run_fail, NULL, NULL },
    { "demo.echo", "emit TEXT", NULL, run_echo, NULL, NULL },
};

static apr_status_t demo_init(pp_registry_t *reg)
{
    apr_size_t i;
    apr_status_t rv = APR_SUCCESS;

    for (i = 0; i < sizeof(types) / sizeof(types[0]) && rv == APR_SUCCESS; i++)
        rv = pp_registry_add(reg, &types[i]);
    return rv;
}

/* Echo, sleep, spin and fail change nothing outside the task. */
static const char *const idempotent[] = { "demo.*", NULL };

PP_PLUGIN_DEFINE_IDEMPOTENT("demo", PP_VERSION_STRING, demo_init, idempotent);
