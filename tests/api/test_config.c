/* SPDX-License-Identifier: Apache-2.0 */
/* Bad input, configuration defaults, status texts, injected failures. */
#include "config.h"
#include "testutil.h"

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_bad_config(void (*tweak)(pp_config_t *))
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool = (pp_pool_t *)&cfg;
    int base = t_os_thread_count();

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    tweak(&cfg);
    T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EINVAL);
    CU_ASSERT_PTR_NULL(pool);
    CU_ASSERT(t_thread_count_settles(base) <= base);
    apr_pool_destroy(p);
}

static void many_threads(pp_config_t *c) { c->threads = 1000000; }
static void tiny_stack(pp_config_t *c) { c->stack_size = 1; }
static void huge_stack(pp_config_t *c) { c->stack_size = (apr_size_t)1 << 40; }
static void empty_prefix(pp_config_t *c) { c->name_prefix = ""; }
static void huge_capacity(pp_config_t *c) { c->queue_capacity = 0x80000000u; }
static void huge_spin(pp_config_t *c) { c->spin = 0xffffffffu; }

static void test_bad_configs(void)
{
    expect_bad_config(many_threads);
    expect_bad_config(tiny_stack);
    expect_bad_config(huge_stack);
    expect_bad_config(empty_prefix);
    expect_bad_config(huge_capacity);
    expect_bad_config(huge_spin);
}

static apr_status_t noop_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

/* The structs that grow (parkpool.h): a caller built against a newer
 * header (a bigger struct) works while what it adds is zero; an older
 * one's struct is read and written at its size only. */
static void test_grown_structs(void)
{
    struct { pp_config_t cfg; unsigned char more[32]; } big;
    struct { pp_stats_t st; unsigned char more[32]; } bst;
    struct { pp_task_t t; unsigned char more[32]; } bt;
    apr_size_t old_stats = offsetof(pp_stats_t, threads_peak);
    apr_pool_t *p;
    pp_pool_t *pool = NULL;
    pp_group_t *g;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    memset(&big, 0xA5, sizeof(big));
    pp_config_init_sized(&big.cfg, sizeof(big));
    CU_ASSERT_EQUAL(big.cfg.stack_size, 2u * 1024 * 1024);
    CU_ASSERT(big.more[0] == 0 && big.more[31] == 0);    /* the newer fields: off */
    big.cfg.threads = 2;
    big.more[7] = 1;    /* a newer field this library cannot honour */
    T_STATUS(pp_pool_create_sized(&pool, &big.cfg, sizeof(big), p), APR_ENOTIMPL);
    CU_ASSERT_PTR_NULL(pool);
    T_STATUS(pp_pool_create_sized(&pool, &big.cfg, 8, p), APR_EINVAL);
    big.more[7] = 0;
    T_OK(pp_pool_create_sized(&pool, &big.cfg, sizeof(big), p));
    T_OK(pp_group_create(&g, p));

    memset(&bt, 0, sizeof(bt));
    bt.t.fn = noop_task;
    T_OK(pp_submit_task_sized(pool, &bt.t, sizeof(bt), g, 0));
    bt.more[0] = 1;
    T_STATUS(pp_submit_task_sized(pool, &bt.t, sizeof(bt), g, 0), APR_ENOTIMPL);
    T_STATUS(pp_submit_task_sized(pool, &bt.t, sizeof(void *), g, 0), APR_EINVAL);
    T_OK(pp_group_wait(g, -1));

    memset(&bst, 0xA5, sizeof(bst));
    pp_pool_stats_sized(pool, &bst.st, sizeof(bst));
    CU_ASSERT_EQUAL(bst.st.completed, 1);
    CU_ASSERT(bst.more[0] == 0 && bst.more[31] == 0);
    memset(&st, 0xA5, sizeof(st));
    pp_pool_stats_sized(pool, &st, old_stats);    /* a 4.x caller's struct */
    CU_ASSERT_EQUAL(st.completed, 1);
    CU_ASSERT_EQUAL(st.threads_peak, 0xA5A5A5A5A5A5A5A5u);    /* not its to write */
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

static void test_bad_arguments(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    pp_task_t t = { .fn = NULL };

    apr_pool_create(&p, t_root);
    T_STATUS(pp_pool_create(NULL, NULL, p), APR_EINVAL);
    T_STATUS(pp_pool_create(&pool, NULL, NULL), APR_EINVAL);
    pool = t_pool(p, 1, 0);
    T_OK_FATAL(pp_group_create(&g, p));

    T_STATUS(pp_submit(NULL, noop_task, NULL), APR_EINVAL);
    T_STATUS(pp_submit(pool, NULL, NULL), APR_EINVAL);
    T_STATUS(pp_submit_ex(pool, noop_task, NULL, g, 0x80), APR_EINVAL);
    T_STATUS(pp_submit_ex(pool, NULL, NULL, g, 0), APR_EINVAL);    /* the entry-built path */
    T_STATUS(pp_submit_ex(NULL, noop_task, NULL, g, PP_NOWAIT), APR_EINVAL);
    T_STATUS(pp_submit_task(pool, NULL, NULL, 0), APR_EINVAL);
    T_STATUS(pp_submit_task(pool, &t, NULL, 0), APR_EINVAL);
    T_OK(pp_group_wait(g, 0));    /* no bad submit left g pending */

    T_STATUS(pp_pool_shutdown(NULL, PP_DRAIN, -1), APR_EINVAL);
    T_STATUS(pp_pool_shutdown(pool, 7, -1), APR_EINVAL);
    T_STATUS(pp_group_create(NULL, p), APR_EINVAL);
    T_STATUS(pp_group_create(&g, NULL), APR_EINVAL);
    T_STATUS(pp_group_wait(NULL, 0), APR_EINVAL);
    T_STATUS(pp_group_cancel(NULL), APR_EINVAL);
    T_STATUS(pp_group_status(NULL), APR_EINVAL);

    pp_pool_stats(NULL, &st);
    T_EQ(st.submitted, 0);
    CU_ASSERT_FALSE(pp_task_cancelled(NULL));
    T_EQ(pp_task_worker(NULL), 0);
    pp_task_emit(NULL, "x");
    pp_config_init(NULL);
    pp_pool_destroy(NULL);
    apr_pool_destroy(p);
}

static void test_defaults(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool;
    pp_stats_t st;

    pp_config_init(&cfg);
    T_EQ(cfg.threads, 0);
    CU_ASSERT_STRING_EQUAL(cfg.name_prefix, "pp-worker");
    T_EQ(cfg.stack_size, 2 * 1024 * 1024);
    T_EQ(cfg.queue_capacity, 0);
    CU_ASSERT_PTR_NULL(cfg.on_task_error);
    CU_ASSERT_PTR_NULL(cfg.on_output);
    CU_ASSERT_PTR_NULL(cfg.on_log);
    /* A spin phase by default, bounded (the idle test checks it ends). */
    CU_ASSERT(cfg.spin > 0 && cfg.spin <= 100000);

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp_pool_create(&pool, NULL, p));    /* NULL: one worker per CPU */
    pp_pool_stats(pool, &st);
    CU_ASSERT(st.threads >= 1);
    T_EQ((long)st.threads, t_os_cpu_count());
    apr_pool_destroy(p);
}

static void test_strerror(void)
{
    char buf[256], other[256];
    apr_status_t s;

    for (s = PP_START_ERROR + 1; s < PP_END_ERROR; s++) {
        pp_strerror(s, buf, sizeof(buf));
        CU_ASSERT(strlen(buf) > 10);
        pp_strerror(s == PP_END_ERROR - 1 ? PP_START_ERROR + 1 : s + 1, other, sizeof(other));
        CU_ASSERT_STRING_NOT_EQUAL(buf, other);
    }
    pp_strerror(PP_ESHUTDOWN, buf, sizeof(buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "shutting down"));
    pp_strerror(APR_EINVAL, buf, sizeof(buf));
    apr_strerror(APR_EINVAL, other, sizeof(other));
    CU_ASSERT_STRING_EQUAL(buf, other);
    pp_strerror(APR_TIMEUP, buf, sizeof(buf));
    CU_ASSERT(strlen(buf) > 0);
    pp_strerror(PP_ECANCELLED, buf, 8);    /* cut, still terminated */
    T_EQ(strlen(buf), 7);
    CU_ASSERT_STRING_EQUAL(pp_strerror(PP_EFULL, NULL, 0), "");
    pp_strerror(PP_EEXIT(3), buf, sizeof(buf));
    CU_ASSERT_STRING_EQUAL(buf, "the child process exited with status 3");
    CU_ASSERT_TRUE(PP_IS_EEXIT(PP_EEXIT(255)));
    CU_ASSERT_FALSE(PP_IS_EEXIT(PP_EEXIT(0)));
    CU_ASSERT_FALSE(PP_IS_EEXIT(PP_ECANCELLED));
}

static void test_backend_and_version(void)
{
    const char *want = getenv("PP_EXPECT_PARK");

    CU_ASSERT_PTR_NOT_NULL_FATAL(pp_park_backend());
    CU_ASSERT(strcmp(pp_park_backend(), "futex") == 0
              || strcmp(pp_park_backend(), "cond") == 0
              || strcmp(pp_park_backend(), "win32") == 0);
    if (want)    /* CI says which backend each build must have */
        CU_ASSERT_STRING_EQUAL(pp_park_backend(), want);
    CU_ASSERT_STRING_EQUAL(pp_version(), PP_VERSION_STRING);
}

/* Many pools created and destroyed in one process, as a service would. */
static void test_many_pools(void)
{
    apr_uint32_t i, n = t_scaled(200);
    int base = t_os_thread_count();

    for (i = 0; i < n; i++) {
        apr_pool_t *p;
        pp_pool_t *pool;
        volatile apr_uint32_t ran = 0;

        apr_pool_create(&p, t_root);
        pool = t_pool(p, 1 + i % 4, i % 3 ? 0 : 16);
        T_OK(pp_submit(pool, t_count_task, (void *)&ran));
        if (i % 2)
            T_OK(pp_pool_shutdown(pool, i % 4 == 1 ? PP_CANCEL : PP_DRAIN, -1));
        apr_pool_destroy(p);
        CU_ASSERT(ran <= 1);
    }
    CU_ASSERT(t_thread_count_settles(base) <= base);
}

/* ------------------------------------------------------------ logging */

typedef struct log_rec {
    apr_thread_mutex_t *lock;
    char text[4096];
    apr_size_t len;
} log_rec;

static void record_log(int level, const char *message, void *baton)
{
    log_rec *r = baton;

    apr_thread_mutex_lock(r->lock);
    r->len += (apr_size_t)apr_snprintf(r->text + r->len, sizeof(r->text) - r->len, "%d %s\n",
                                       level, message);
    apr_thread_mutex_unlock(r->lock);
}

static apr_status_t fail_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_EGENERAL;
}

/* One pool's life with a failure, a timed-out shutdown and a cancel; one
 * worker, so that the ten count tasks stay queued behind the gate, which
 * ignores the cancel so that the shutdowns find it still running. */
static void eventful_pool(apr_pool_t *p, pp_config_t *cfg)
{
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    volatile apr_uint32_t ran = 0;
    int i;

    T_OK_FATAL(pp_pool_create(&pool, cfg, p));
    T_OK(pp_submit(pool, fail_task, NULL));
    T_OK(pp_submit(pool, t_hold_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 10; i++)
        T_OK(pp_submit(pool, t_count_task, (void *)&ran));
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_msec(20)), APR_TIMEUP);
    T_STATUS(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(2)), APR_TIMEUP);
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, -1));
    pp_pool_destroy(pool);
}

/* The pool tells on_log what a service log wants, and without on_log says
 * nothing at all: not a byte reaches stdout or stderr, whatever happens;
 * and it touches no signal disposition. */
static void test_log_and_silence(void)
{
    apr_pool_t *p;
    apr_file_t *out, *err, *saved_out, *saved_err, *sink;
    apr_finfo_t fi;
    pp_config_t cfg;
    log_rec rec;
    const char *path;
    unsigned long signals = t_os_signal_fingerprint();

    apr_pool_create(&p, t_root);
    memset(&rec, 0, sizeof(rec));
    T_OK_FATAL(apr_thread_mutex_create(&rec.lock, APR_THREAD_MUTEX_DEFAULT, p));

    path = apr_psprintf(p, "%s/pp_stdio.%ld", t_os_tmpdir(), t_os_pid());
    T_OK_FATAL(apr_file_open(&sink, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_TRUNCATE,
                             APR_FPROT_OS_DEFAULT, p));
    T_OK_FATAL(apr_file_open_stdout(&out, p));
    T_OK_FATAL(apr_file_open_stderr(&err, p));
    T_OK_FATAL(apr_file_dup(&saved_out, out, p));
    T_OK_FATAL(apr_file_dup(&saved_err, err, p));
    fflush(stdout);
    fflush(stderr);
    T_OK(apr_file_dup2(out, sink, p));
    T_OK(apr_file_dup2(err, sink, p));

    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.name_prefix = "silent";
    eventful_pool(p, &cfg);                          /* no on_log: silence */

    cfg.threads = 1;
    cfg.name_prefix = "logged";
    cfg.on_log = record_log;
    cfg.baton = &rec;
    eventful_pool(p, &cfg);

    fflush(stdout);
    fflush(stderr);
    T_OK(apr_file_dup2(out, saved_out, p));
    T_OK(apr_file_dup2(err, saved_err, p));
    apr_file_close(sink);
    T_OK(apr_stat(&fi, path, APR_FINFO_SIZE, p));
    T_EQ(fi.size, 0);
    apr_file_remove(path, p);
    /* A library inside a service leaves the signals to the service. */
    T_EQ(t_os_signal_fingerprint(), signals);

    CU_ASSERT_PTR_NOT_NULL(strstr(rec.text, "6 started 1 worker logged-0..0, park backend "));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.text, "6 shutdown (drain): 10 queued, 1 running, 0 cancelled"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.text, "4 shutdown timed out after 20 ms: 1 running, 10 queued"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.text, "6 shutdown (cancel): 0 queued, 1 running, 10 cancelled"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rec.text, "6 stopped: 1 completed, 1 failed, 10 cancelled"));
    if (!strstr(rec.text, "stopped: 1 completed, 1 failed, 10 cancelled"))
        fprintf(stderr, "\n    log was:\n%s", rec.text);
    apr_pool_destroy(p);
}

void t_register_config(void)
{
    CU_pSuite s = CU_add_suite("config", NULL, NULL);

    CU_add_test(s, "nonsense configurations give APR_EINVAL", test_bad_configs);
    CU_add_test(s, "NULL and bad arguments give APR_EINVAL", test_bad_arguments);
    CU_add_test(s, "defaults", test_defaults);
    CU_add_test(s, "structs of other sizes: older and newer callers", test_grown_structs);
    CU_add_test(s, "pp_strerror", test_strerror);
    CU_add_test(s, "park backend and version", test_backend_and_version);
    CU_add_test(s, "200 pools created and destroyed", test_many_pools);
    CU_add_test(s, "on_log messages; silent on stdio without it", test_log_and_silence);
}
