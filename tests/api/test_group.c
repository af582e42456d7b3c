/* SPDX-License-Identifier: Apache-2.0 */
/* Groups: wait, timeout, first failure, cancel, reuse, lifetime. */
#include "config.h"
#include "testutil.h"

#include <apr_time.h>

#include <string.h>

static apr_status_t return_arg_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    return (apr_status_t)(apr_uintptr_t)arg;
}

static void test_group_first_failure(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);    /* one worker: completion order = submit order */
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_group_status(g));
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_SUCCESS, g, 0));
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_ENOENT, g, 0));
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_EACCES, g, 0));
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_SUCCESS, g, 0));
    T_OK(pp_group_wait(g, -1));
    T_STATUS(pp_group_status(g), APR_ENOENT);
    /* Done, so reusable: a new round forgets the old failure. */
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_SUCCESS, g, 0));
    T_OK(pp_group_wait(g, -1));
    T_OK(pp_group_status(g));
    apr_pool_destroy(p);
}

/* The count touching zero between two submits does not end the round:
 * only a wait does, so the first failure survives. */
static void test_group_round_ends_with_wait(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    apr_time_t deadline;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_ENOENT, g, 0));
    deadline = apr_time_now() + apr_time_from_sec(10);
    do {
        apr_sleep(1000);
        pp_pool_stats(pool, &st);
    } while (st.failed == 0 && apr_time_now() < deadline);
    T_EQ_FATAL(st.failed, 1);
    T_OK(pp_submit_ex(pool, return_arg_task, (void *)(apr_uintptr_t)APR_SUCCESS, g, 0));
    T_OK(pp_group_wait(g, -1));
    T_STATUS(pp_group_status(g), APR_ENOENT);
    apr_pool_destroy(p);
}

static void test_group_wait_timeout(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    t_gate gate = { 0, 0, 0 };
    apr_time_t t0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_group_wait(g, 0));    /* an empty group is done */
    T_OK(pp_submit_ex(pool, t_gate_task, &gate, g, 0));
    t0 = apr_time_now();
    T_STATUS(pp_group_wait(g, apr_time_from_msec(30)), APR_TIMEUP);
    CU_ASSERT(apr_time_now() - t0 >= apr_time_from_msec(29));
    T_STATUS(pp_group_wait(g, 0), APR_TIMEUP);
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    apr_pool_destroy(p);
}

typedef struct counted {
    volatile apr_uint32_t ran, released, reports;
} counted;

static apr_status_t counted_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(&((counted *)arg)->ran);
    return APR_SUCCESS;
}

static void counted_release(void *arg)
{
    apr_atomic_inc32(&((counted *)arg)->released);
}

static void counted_error(apr_status_t status, const char *name, void *baton)
{
    (void)name;
    if (status == PP_ECANCELLED)
        apr_atomic_inc32(&((counted *)baton)->reports);
}

/* Holds its worker until its gate opens, noting whether it was told that
 * its group was cancelled; it ignores the hint, so the group stays pending. */
typedef struct holding {
    t_gate gate;
    volatile apr_uint32_t saw_cancel;
} holding;

static apr_status_t holding_task(void *arg, pp_task_ctx_t *ctx)
{
    holding *s = arg;

    apr_atomic_inc32(&s->gate.arrived);
    while (!apr_atomic_read32(&s->gate.open)) {
        if (pp_task_cancelled(ctx))
            apr_atomic_set32(&s->saw_cancel, 1);
        apr_sleep(500);
    }
    return APR_SUCCESS;
}

static void test_group_cancel(void)
{
    holding holder = { { 0, 0, 0 }, 0 };
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    pp_group_t *g, *other;
    t_gate gate = { 0, 0, 0 };
    counted in_g, in_other;
    pp_task_t t = { .fn = counted_task, .release = counted_release, .name = "c" };
    pp_stats_t st;
    int i;

    memset(&in_g, 0, sizeof(in_g));
    memset(&in_other, 0, sizeof(in_other));
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.on_task_error = counted_error;
    cfg.baton = &in_g;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK_FATAL(pp_group_create(&other, p));
    /* One task in g holds a worker (and sees the cancel), one outside it. */
    T_OK(pp_submit_ex(pool, holding_task, &holder, g, 0));
    T_OK(pp_submit_ex(pool, t_gate_task, &gate, other, 0));
    t_gate_wait_arrived(&holder.gate, 1);
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 1000; i++) {
        t.arg = &in_g;
        T_OK(pp_submit_task(pool, &t, g, 0));
        t.arg = &in_other;
        T_OK(pp_submit_task(pool, &t, other, 0));
    }
    T_OK(pp_group_cancel(g));
    T_EQ(in_g.released, 1000);    /* dropped before cancel returned */
    /* Still pending (its holder runs), so it refuses new members. */
    t.arg = &in_g;
    T_STATUS(pp_submit_task(pool, &t, g, 0), PP_ECANCELLED);
    T_STATUS(pp_group_wait(g, apr_time_from_msec(20)), APR_TIMEUP);
    t_gate_open(&holder.gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(holder.saw_cancel, 1);
    T_STATUS(pp_group_status(g), PP_ECANCELLED);
    T_EQ(in_g.ran, 0);
    T_EQ(in_g.released, 1000);
    T_EQ(in_g.reports, 1000);
    T_STATUS(pp_group_wait(other, 0), APR_TIMEUP);
    t_gate_open(&gate);
    T_OK(pp_group_wait(other, apr_time_from_sec(30)));
    T_EQ(in_other.ran, 1000);
    T_EQ(in_other.released, 1000);
    T_OK(pp_group_status(other));
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, 1000);
    /* Done: g takes members again. */
    t.arg = &in_g;
    T_OK(pp_submit_task(pool, &t, g, 0));
    T_OK(pp_group_wait(g, -1));
    T_EQ(in_g.ran, 1);
    T_OK(pp_group_status(g));
    T_OK(pp_group_cancel(g));    /* nothing pending: harmless */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* Tasks of a cancelled group that wait in a worker's deque, out of the
 * cancel's reach, are dropped when their turn comes, never run. */
static void test_group_cancel_reaches_deques(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_group_t *g;
    counted in_g;
    t_nest ns;
    pp_task_t child = { .fn = counted_task, .release = counted_release, .name = "c" };

    memset(&in_g, 0, sizeof(in_g));
    memset((void *)&ns, 0, sizeof(ns));
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.on_task_error = counted_error;
    cfg.baton = &in_g;
    T_OK_FATAL(pp_pool_create(&ns.pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&g, p));
    ns.group = g;
    ns.child = child;
    ns.child.arg = &in_g;
    ns.n = 50;
    T_OK(pp_submit(ns.pool, t_nest_then_hold, &ns));    /* the holder is not in g */
    t_gate_wait_arrived(&ns.gate, 1);
    T_EQ(ns.errors, 0);
    T_OK(pp_group_cancel(g));
    t_gate_open(&ns.gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(in_g.ran, 0);
    T_EQ(in_g.released, 50);
    T_EQ(in_g.reports, 50);
    T_STATUS(pp_group_status(g), PP_ECANCELLED);
    T_OK(pp_pool_shutdown(ns.pool, PP_DRAIN, -1));
    t_assert_accounted(ns.pool);
    apr_pool_destroy(p);
}

static void test_group_one_pool_per_round(void)
{
    apr_pool_t *p;
    pp_pool_t *a, *b;
    pp_group_t *g;
    t_gate gate = { 0, 0, 0 };

    apr_pool_create(&p, t_root);
    a = t_pool(p, 1, 0);
    b = t_pool(p, 1, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_submit_ex(a, t_gate_task, &gate, g, 0));
    T_STATUS(pp_submit_ex(b, t_gate_task, &gate, g, 0), APR_EINVAL);
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, -1));
    T_OK(pp_submit_ex(b, t_gate_task, &gate, g, 0));    /* a new round may move */
    T_OK(pp_group_wait(g, -1));
    apr_pool_destroy(p);
}

typedef struct self_wait {
    pp_group_t *g;
    volatile apr_uint32_t rv;
} self_wait;

static apr_status_t self_wait_task(void *arg, pp_task_ctx_t *ctx)
{
    self_wait *s = arg;

    (void)ctx;
    apr_atomic_set32(&s->rv, (apr_uint32_t)pp_group_wait(s->g, -1));
    return APR_SUCCESS;
}

static void test_group_wait_in_own_task(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    self_wait s;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK_FATAL(pp_group_create(&s.g, p));
    s.rv = APR_SUCCESS;
    T_OK(pp_submit_ex(pool, self_wait_task, &s, s.g, 0));
    T_OK(pp_group_wait(s.g, apr_time_from_sec(30)));
    T_STATUS(s.rv, APR_EINVAL);
    apr_pool_destroy(p);
}

static apr_status_t sleepy_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_sleep(apr_time_from_msec(2));
    apr_atomic_inc32(arg);
    return APR_SUCCESS;
}

/* The group's APR pool waits for its pending tasks before freeing it. */
static void test_group_pool_cleanup_waits(void)
{
    apr_pool_t *p, *gp;
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t ran = 0;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    apr_pool_create(&gp, p);
    T_OK_FATAL(pp_group_create(&g, gp));
    for (i = 0; i < 100; i++)
        T_OK(pp_submit_ex(pool, sleepy_task, (void *)&ran, g, 0));
    apr_pool_destroy(gp);
    T_EQ(ran, 100);
    apr_pool_destroy(p);
}

/* A task's release hook may free the APR pool that holds the task's own
 * group (parkpool run gives each task a pool, and with --timeout a group,
 * and frees both when it prints the result): the group is its caller's,
 * so the free does not wait for the task that is freeing it. */
typedef struct own_group_task {
    apr_pool_t            *p;
    volatile apr_uint32_t *released;
} own_group_task;

static apr_status_t noop_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

static void free_own_group(void *arg)
{
    own_group_task *t = arg;
    volatile apr_uint32_t *released = t->released;

    apr_pool_destroy(t->p);    /* t and its group with it */
    apr_atomic_inc32(released);
}

static void test_group_freed_by_own_release(void)
{
    apr_pool_t *p, *tp;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_config_t cfg;
    volatile apr_uint32_t released = 0;
    int i;

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    for (i = 0; i < 100; i++) {
        own_group_task *t;
        pp_task_t task = { .fn = noop_task, .release = free_own_group, .name = "own" };

        apr_pool_create(&tp, p);
        t = apr_palloc(tp, sizeof(*t));
        t->p = tp;
        t->released = &released;
        T_OK_FATAL(pp_group_create(&g, tp));
        task.arg = t;
        T_OK(pp_submit_task(pool, &task, g, 0));
    }
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(30)));
    T_EQ(released, 100);
    apr_pool_destroy(p);
}

void t_register_group(void)
{
    CU_pSuite s = CU_add_suite("group", NULL, NULL);

    CU_add_test(s, "status is the first failure; reuse clears it", test_group_first_failure);
    CU_add_test(s, "a round ends with a wait, not at zero", test_group_round_ends_with_wait);
    CU_add_test(s, "wait with a timeout", test_group_wait_timeout);
    CU_add_test(s, "cancel drops only the group's queued tasks", test_group_cancel);
    CU_add_test(s, "cancel reaches its tasks in a worker's deque", test_group_cancel_reaches_deques);
    CU_add_test(s, "one pool per round", test_group_one_pool_per_round);
    CU_add_test(s, "waiting inside an own task is refused", test_group_wait_in_own_task);
    CU_add_test(s, "the group's pool waits for its tasks", test_group_pool_cleanup_waits);
    CU_add_test(s, "a release hook frees its own group", test_group_freed_by_own_release);
}
