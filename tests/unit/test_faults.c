/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Paths that real systems rarely take, forced with the fault points
 * (src/core/fault.h) and the queue-lock control: threads that cannot be
 * made, rings and groups that cannot grow, plugins that cannot load. These
 * reach the core's internals, so they link the core, not the shipped
 * library (which has no fault points).
 */
#include "config.h"
#include "testutil.h"
#include "parkpool/plugin.h"
#include "core/fault.h"
#include "core/pool_private.h"

#include <apr_strings.h>

#include <string.h>

/* Worker k cannot be created: the ones before it are joined, the memory
 * released (the leak checkers see to that part) and the error returned. */
static void test_partial_start(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool;
    int base = t_os_thread_count();
    apr_uint32_t k;

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 6;
    for (k = 1; k <= 6; k++) {
        pool = (pp_pool_t *)&cfg;
        pp__fault_arm(PP__FAULT_THREAD_CREATE, k);
        T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EAGAIN);
        CU_ASSERT_PTR_NULL(pool);
        CU_ASSERT(t_thread_count_settles(base) <= base);
    }
    pp__fault_arm(PP__FAULT_THREAD_CREATE, 0);
    T_OK(pp_pool_create(&pool, &cfg, p));
    CU_ASSERT(t_os_thread_count() >= base + 6);
    apr_pool_destroy(p);
    CU_ASSERT(t_thread_count_settles(base) <= base);
}

/* A queue that cannot grow refuses the submit with APR_ENOMEM; nothing is
 * lost or counted twice, and the next submit works. */
static void test_queue_growth_failure(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    t_gate gate = { 0, 0, 0 };
    volatile apr_uint32_t ran = 0;
    apr_uint32_t i, ok = 0;
    apr_status_t rv;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);
    for (i = 0; i < 1000; i++) {
        rv = pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0);
        if (rv == APR_SUCCESS)
            ok++;
        else
            T_STATUS(rv, APR_ENOMEM);
    }
    T_EQ(ok, 999);
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(ran, 999);
    pp_pool_stats(pool, &st);
    T_EQ(st.submitted, 1000);    /* 999 + the gate task */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

static void test_group_create_failure(void)
{
    apr_pool_t *p;
    pp_group_t *g = (pp_group_t *)&p;

    apr_pool_create(&p, t_root);
    pp__fault_arm(PP__FAULT_GROUP_CREATE, 1);
    T_STATUS(pp_group_create(&g, p), APR_ENOMEM);
    CU_ASSERT_PTR_NULL(g);
    T_OK(pp_group_create(&g, p));
    apr_pool_destroy(p);
}

/* Issue 10 item 15: a plugin that cannot be mapped for want of memory is
 * reported as that (APR_ENOMEM, a message that says so and is never
 * empty), not as "not a loadable object". The fault point fails the load
 * as a failing mmap would, with no loader message at all. */
static void test_load_out_of_memory(void)
{
    apr_pool_t *p;
    pp_registry_t *reg;
    const char *path;
    char err[1024], want[256];

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp_registry_create(&reg, p));
    path = apr_psprintf(p, "%s/tp_good%s", t_plugin_dir, t_os_dso_suffix());
    pp__fault_arm(PP__FAULT_DSO_LOAD, 1);
    T_STATUS(pp_registry_load(reg, path, err, sizeof(err)), APR_ENOMEM);
    apr_strerror(APR_ENOMEM, want, sizeof(want));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "out of memory"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
    CU_ASSERT_PTR_NULL(strstr(err, "not a loadable object"));
    T_EQ(pp_registry_count(reg), 0);
    /* The point fired once: the next load reaches the real loader (which
     * may refuse the plugin here, where nothing exports the API to it). */
    CU_ASSERT_NOT_EQUAL(pp_registry_load(reg, path, err, sizeof(err)), APR_ENOMEM);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 14: a full queue without the lock */

static void test_full_queue_told_without_the_lock(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate;
    apr_uint32_t count = 0;

    memset(&gate, 0, sizeof(gate));
    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 1);
    T_OK(pp_submit(pool, t_hold_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    T_OK(pp_submit(pool, t_count_task, &count));
    /* With the lock held elsewhere, a PP_NOWAIT submit to the full queue
     * still answers: it would otherwise wait here for ever. */
    pp__pool_hold_lock(pool, 1);
    T_STATUS(pp_submit_ex(pool, t_count_task, &count, NULL, PP_NOWAIT), PP_EFULL);
    pp__pool_hold_lock(pool, 0);
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(count, 1);
    apr_pool_destroy(p);
}

static void test_create_survives_failed_allocations(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    apr_uint32_t nth;

    apr_pool_create(&p, t_root);
    for (nth = 1; nth <= 2; nth++) {
        pp__fault_arm(PP__FAULT_POOL_ALLOC, nth);
        pool = (pp_pool_t *)&nth;
        T_STATUS(pp_pool_create(&pool, NULL, p), APR_ENOMEM);
        CU_ASSERT_PTR_NULL(pool);
    }
    pp__fault_arm(PP__FAULT_POOL_ALLOC, 0);
    T_EQ(t_thread_count_settles(t_os_thread_count()), t_os_thread_count());
    apr_pool_destroy(p);
}

/* A worker that cannot be made is logged as an error, with the reason,
 * and the pool is not created. */
static void log_line(int level, const char *message, void *baton)
{
    char *text = baton;
    apr_size_t len = strlen(text);

    apr_snprintf(text + len, 1024 - len, "%d %s\n", level, message);
}

static void test_failed_start_is_logged(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool = NULL;
    char text[1024] = "";

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.on_log = log_line;
    cfg.baton = text;
    pp__fault_arm(PP__FAULT_THREAD_CREATE, 2);
    T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EAGAIN);
    pp__fault_arm(PP__FAULT_THREAD_CREATE, 0);
    CU_ASSERT_PTR_NULL(pool);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "3 cannot start worker 1 of 2: "));
    apr_pool_destroy(p);
}

void t_register_faults(void)
{
    CU_pSuite s = CU_add_suite("faults", NULL, NULL);

    CU_add_test(s, "worker k fails to start: unwound", test_partial_start);
    CU_add_test(s, "queue growth failure", test_queue_growth_failure);
    CU_add_test(s, "a worker that cannot start is logged", test_failed_start_is_logged);
    CU_add_test(s, "a group whose lock cannot be made", test_group_create_failure);
    CU_add_test(s, "15: a load out of memory says so", test_load_out_of_memory);
    CU_add_test(s, "14: a full queue is told without the lock", test_full_queue_told_without_the_lock);
    CU_add_test(s, "15: create survives failed allocations", test_create_survives_failed_allocations);
}
