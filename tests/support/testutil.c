/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "testutil.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <stdlib.h>

apr_pool_t *t_root;
const char *t_plugin_dir;
const char *t_bundled_dir;

apr_uint32_t t_scaled(apr_uint32_t n)
{
    const char *s = getenv("PP_TEST_SCALE");
    unsigned long div = s ? strtoul(s, NULL, 10) : 1;

    if (div <= 1)
        return n;
    return n / div > 0 ? (apr_uint32_t)(n / div) : 1;
}

pp_pool_t *t_pool(apr_pool_t *p, apr_uint32_t threads, apr_uint32_t capacity)
{
    pp_config_t cfg;
    pp_pool_t *pool = NULL;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.queue_capacity = capacity;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    return pool;
}

struct t_thread {
    apr_pool_t *p;
    apr_thread_t *thread;
    t_thread_fn fn;
    void *arg;
};

static void *APR_THREAD_FUNC thread_main(apr_thread_t *thread, void *data)
{
    t_thread *t = data;

    (void)thread;
    t->fn(t->arg);
    return NULL;
}

t_thread *t_spawn(t_thread_fn fn, void *arg)
{
    apr_pool_t *p;
    t_thread *t;

    apr_pool_create(&p, t_root);
    t = apr_pcalloc(p, sizeof(*t));
    t->p = p;
    t->fn = fn;
    t->arg = arg;
    T_OK_FATAL(apr_thread_create(&t->thread, NULL, thread_main, t, p));
    return t;
}

void t_join(t_thread *t)
{
    apr_status_t rv;

    apr_thread_join(&rv, t->thread);
    apr_pool_destroy(t->p);
}

void t_run_threads(apr_uint32_t n, t_thread_fn fn, void **args)
{
    t_thread *th[64];
    apr_uint32_t i;

    CU_ASSERT_FATAL(n <= 64);
    for (i = 0; i < n; i++)
        th[i] = t_spawn(fn, args ? args[i] : NULL);
    for (i = 0; i < n; i++)
        t_join(th[i]);
}

int t_thread_count_settles(int expect)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(5);
    int n;

    /* A joined thread can linger in /proc for a moment after its join
     * returned (the kernel tears the task down asynchronously). */
    while ((n = t_os_thread_count()) > expect && apr_time_now() < deadline)
        apr_sleep(1000);
    return n;
}

apr_status_t t_gate_task(void *gate, pp_task_ctx_t *ctx)
{
    t_gate *g = gate;

    apr_atomic_inc32(&g->arrived);
    while (!apr_atomic_read32(&g->open) && !pp_task_cancelled(ctx))
        apr_sleep(500);
    apr_atomic_inc32(&g->left);
    return APR_SUCCESS;
}

apr_status_t t_hold_task(void *gate, pp_task_ctx_t *ctx)
{
    t_gate *g = gate;

    (void)ctx;
    apr_atomic_inc32(&g->arrived);
    while (!apr_atomic_read32(&g->open))
        apr_sleep(500);
    apr_atomic_inc32(&g->left);
    return APR_SUCCESS;
}

apr_status_t t_nest_then_hold(void *nest, pp_task_ctx_t *ctx)
{
    t_nest *ns = nest;
    apr_uint32_t i;

    for (i = 0; i < ns->n; i++)
        if (pp_submit_task(ns->pool, &ns->child, ns->group, 0) != APR_SUCCESS)
            apr_atomic_inc32(&ns->errors);
    return t_hold_task(&ns->gate, ctx);
}

void t_gate_wait_arrived(t_gate *g, apr_uint32_t n)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);

    while (apr_atomic_read32(&g->arrived) < n && apr_time_now() < deadline)
        apr_sleep(500);
    CU_ASSERT_FATAL(apr_atomic_read32(&g->arrived) >= n);
}

void t_gate_open(t_gate *g)
{
    apr_atomic_set32(&g->open, 1);
}

apr_status_t t_count_task(void *counter, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(counter);
    return APR_SUCCESS;
}

void t_assert_accounted(pp_pool_t *pool)
{
    pp_stats_t s;

    pp_pool_stats(pool, &s);
    T_EQ(s.queued, 0);
    T_EQ(s.running, 0);
    T_EQ(s.submitted, s.completed + s.failed + s.cancelled + s.expired);
}

void t_check(int ok, const char *expr, const char *got, const char *want, long index,
             unsigned line, const char *file, int fatal)
{
    char msg[512];

    if (ok) {
        CU_assertImplementation(CU_TRUE, line, expr, file, "", (CU_BOOL)fatal);
        return;
    }
    if (index >= 0)
        apr_snprintf(msg, sizeof(msg), "%s: got %s, want %s (at index %ld)", expr, got, want,
                     index);
    else
        apr_snprintf(msg, sizeof(msg), "%s: got %s, want %s", expr, got, want);
    CU_assertImplementation(CU_FALSE, line, msg, file, "", (CU_BOOL)fatal);
}

void t_check_eq(apr_int64_t got, apr_int64_t want, const char *expr, long index,
                unsigned line, const char *file, int fatal)
{
    char g[32], w[32];

    apr_snprintf(g, sizeof(g), "%" APR_INT64_T_FMT, got);
    apr_snprintf(w, sizeof(w), "%" APR_INT64_T_FMT, want);
    t_check(got == want, expr, g, w, index, line, file, fatal);
}

void t_check_status(apr_status_t got, apr_status_t want, const char *expr, unsigned line,
                    const char *file, int fatal)
{
    char g[160], w[160], text[128];

    apr_snprintf(g, sizeof(g), "%d (%s)", got, pp_strerror(got, text, sizeof(text)));
    apr_snprintf(w, sizeof(w), "%d (%s)", want, pp_strerror(want, text, sizeof(text)));
    t_check(got == want, expr, g, w, -1, line, file, fatal);
}
