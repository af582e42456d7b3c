/* SPDX-License-Identifier: Apache-2.0 */
/* A valid test plugin: "good.echo", "good.num" (parses a number), and
 * "good.block" (blocks until the test's flag at the given address is set).
 * Built twice: tp_good (1.2.3) and tp_good2 (TP_GOOD_VERSION 2.0.0, whose
 * good.echo says "v2: " first and breaks lines at '|'), for reloads. */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>

#ifndef TP_GOOD_VERSION
#define TP_GOOD_VERSION "1.2.3"
#define TP_GOOD_PREFIX ""
#else
#define TP_GOOD_PREFIX "v2: "
#endif

/* Version 2 also turns each '|' into a LF, all in one pp_task_emit(): a
 * "line" with line breaks in it, which a host must not pass on as one. */
static apr_status_t echo_run(void *arg, pp_task_ctx_t *ctx)
{
    char line[1024], *c;

    apr_snprintf(line, sizeof(line), "%s%s", TP_GOOD_PREFIX, (const char *)arg);
    for (c = line; *TP_GOOD_PREFIX && *c; c++)
        if (*c == '|')
            *c = '\n';
    pp_task_emit(ctx, line);
    return APR_SUCCESS;
}

static apr_status_t num_parse(void **arg, const char *text, apr_pool_t *p)
{
    char *end;
    long v = strtol(text, &end, 10);
    long *out;

    if (end == text || *end)
        return APR_EINVAL;
    out = apr_palloc(p, sizeof(*out));
    *out = v;
    *arg = out;
    return APR_SUCCESS;
}

static apr_status_t num_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    /* Odd numbers fail, with the number in the status, for the tests. */
    return *(long *)arg % 2 ? APR_OS_START_USERERR + (apr_status_t)*(long *)arg : APR_SUCCESS;
}

static apr_status_t block_parse(void **arg, const char *text, apr_pool_t *p)
{
    void *ptr = NULL;

    (void)p;
    if (sscanf(text, "%p", &ptr) != 1 || !ptr)
        return APR_EINVAL;
    *arg = ptr;
    return APR_SUCCESS;
}

/* arg points at three apr_uint32_t: [0] set by the test to let go, [1] set
 * here on arrival, [2] set here just before returning. */
static apr_status_t block_run(void *arg, pp_task_ctx_t *ctx)
{
    volatile apr_uint32_t *flags = arg;

    (void)ctx;
    apr_atomic_set32(&flags[1], 1);
    while (!apr_atomic_read32(&flags[0]))
        apr_sleep(1000);
    apr_sleep(20000);    /* still in plugin code well after the flag */
    apr_atomic_set32(&flags[2], 1);
    return APR_SUCCESS;
}

static const pp_task_type_t types[] = {
    { "good.echo", "emit the argument as a result line", NULL, echo_run, NULL, NULL },
    { "good.num", "succeed on even numbers, fail on odd ones", num_parse, num_run, NULL, NULL },
    { "good.block", "block until the flag at an address is set", block_parse, block_run, NULL, NULL },
};

static apr_status_t good_init(pp_registry_t *reg)
{
    apr_size_t i;
    apr_status_t rv = APR_SUCCESS;

    for (i = 0; i < sizeof(types) / sizeof(types[0]) && rv == APR_SUCCESS; i++)
        rv = pp_registry_add(reg, &types[i]);
    return rv;
}

PP_PLUGIN_DEFINE("good", TP_GOOD_VERSION, good_init);
