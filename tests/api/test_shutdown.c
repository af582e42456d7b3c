/* SPDX-License-Identifier: Apache-2.0 */
/* Shutdown: drain, cancel, timeouts, repeated calls, parent pool destruction. */
#include "config.h"
#include "testutil.h"

#include <apr_time.h>

#include <string.h>

typedef struct tally {
    volatile apr_uint32_t ran, released, cancelled_reports, other_reports;
} tally;

static apr_status_t tally_task(void *arg, pp_task_ctx_t *ctx)
{
    tally *t = arg;

    (void)ctx;
    apr_atomic_inc32(&t->ran);
    return APR_SUCCESS;
}

static void tally_release(void *arg)
{
    apr_atomic_inc32(&((tally *)arg)->released);
}

static void tally_error(apr_status_t status, const char *name, void *baton)
{
    tally *t = baton;

    if (status == PP_ECANCELLED && strcmp(name, "tallied") == 0)
        apr_atomic_inc32(&t->cancelled_reports);
    else
        apr_atomic_inc32(&t->other_reports);
}

static pp_pool_t *tally_pool(apr_pool_t *p, tally *t, apr_uint32_t threads)
{
    pp_config_t cfg;
    pp_pool_t *pool;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.on_task_error = tally_error;
    cfg.baton = t;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    return pool;
}

static void submit_tallied(pp_pool_t *pool, tally *t, apr_uint32_t n)
{
    pp_task_t task = { .fn = tally_task, .release = tally_release, .name = "tallied" };
    apr_uint32_t i, errors = 0;

    task.arg = t;
    for (i = 0; i < n; i++)
        errors += pp_submit_task(pool, &task, NULL, 0) != APR_SUCCESS;
    T_EQ(errors, 0);
}

/* Block every worker in a gate, queue n tasks behind them. */
static void fill_behind_gate(pp_pool_t *pool, t_gate *gate, apr_uint32_t threads,
                             tally *t, apr_uint32_t n)
{
    apr_uint32_t i;

    for (i = 0; i < threads; i++)
        T_OK(pp_submit(pool, t_gate_task, gate));
    t_gate_wait_arrived(gate, threads);
    submit_tallied(pool, t, n);
}

static void test_drain_runs_everything(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    tally t;
    apr_uint32_t n = t_scaled(100000);
    pp_stats_t st;

    memset(&t, 0, sizeof(t));
    apr_pool_create(&p, t_root);
    pool = tally_pool(p, &t, 4);
    fill_behind_gate(pool, &gate, 4, &t, n);
    pp_pool_stats(pool, &st);
    T_EQ(st.queued, n);
    T_EQ(st.running, 4);
    /* Shutdown has begun (and timed out at once) while all is queued. */
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, 0), APR_TIMEUP);
    T_STATUS(pp_submit(pool, t_count_task, (void *)&t.ran), PP_ESHUTDOWN);
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(t.ran, n);
    T_EQ(t.released, n);
    T_EQ(t.cancelled_reports + t.other_reports, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, n + 4);
    T_EQ(st.cancelled, 0);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

static void test_cancel_drops_and_releases(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    tally t;
    apr_uint32_t n = t_scaled(100000);
    pp_stats_t st;

    memset(&t, 0, sizeof(t));
    apr_pool_create(&p, t_root);
    pool = tally_pool(p, &t, 4);
    fill_behind_gate(pool, &gate, 4, &t, n);
    /* The gate never opens: the gate tasks leave only because they see
     * pp_task_cancelled(), which is the cooperative cancel working. */
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(30)));
    T_EQ(gate.left, 4);
    T_EQ(t.ran, 0);
    T_EQ(t.released, n);
    T_EQ(t.cancelled_reports, n);
    T_EQ(t.other_reports, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, n);
    T_EQ(st.completed, 4);
    T_EQ(st.submitted, n + 4);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* Outside submitters racing a shutdown: each submit is refused with
 * PP_ESHUTDOWN or accepted, and every accepted task runs (drain) or is
 * reported and released (cancel): none is left queued with nobody to run
 * it, which a push that looked at the state apart from its push could do
 * (models/sleepwake.pml, INJECTOR, SHUT_THEN_PUSH). */
#define RACERS 3

typedef struct racer {
    pp_pool_t *pool;
    tally *t;
    volatile apr_uint32_t accepted, other, late, stopped;
} racer;

static void race_submits(void *arg)
{
    racer *r = arg;
    pp_task_t task = { .fn = tally_task, .release = tally_release, .name = "tallied" };
    apr_status_t rv;

    task.arg = r->t;
    for (;;) {
        /* Read before the submit: set, the shutdown had returned. */
        apr_uint32_t stopped = apr_atomic_read32(&r->stopped);
        rv = pp_submit_task(r->pool, &task, NULL, 0);
        if (rv == PP_ESHUTDOWN)
            break;
        if (rv == APR_SUCCESS)
            apr_atomic_inc32(&r->accepted);
        else
            apr_atomic_inc32(&r->other);
        if (stopped) {    /* accepted by a pool that had shut down */
            apr_atomic_inc32(&r->late);
            break;
        }
    }
}

static void test_submitters_race_shutdown(void)
{
    apr_uint32_t round, rounds = t_scaled(40), i, accepted;
    t_thread *th[RACERS];
    pp_stats_t st;

    for (round = 0; round < rounds; round++) {
        apr_pool_t *p;
        tally t;
        racer r;
        int how = round % 2 ? PP_CANCEL : PP_DRAIN;

        memset(&t, 0, sizeof(t));
        apr_pool_create(&p, t_root);
        r.pool = tally_pool(p, &t, 2);
        r.t = &t;
        r.accepted = r.other = r.late = r.stopped = 0;
        for (i = 0; i < RACERS; i++)
            th[i] = t_spawn(race_submits, &r);
        /* Let the queue fill a little, then shut down in mid-stream. */
        while (apr_atomic_read32(&r.accepted) < 2000 + 500 * (round % 7))
            apr_thread_yield();
        /* Bounded: a pool that kept taking tasks would keep a drain
         * going for as long as the submitters outpace its workers. */
        T_OK(pp_pool_shutdown(r.pool, how, apr_time_from_sec(20)));
        apr_atomic_set32(&r.stopped, 1);
        for (i = 0; i < RACERS; i++)
            t_join(th[i]);
        if (r.late) {
            pp_pool_shutdown(r.pool, PP_CANCEL, -1);
            T_EQ(r.late, 0);
            apr_pool_destroy(p);
            return;
        }
        accepted = r.accepted;
        T_EQ(r.other, 0);
        T_EQ(t.released, accepted);
        T_EQ(t.ran + t.cancelled_reports, accepted);
        T_EQ(t.other_reports, 0);
        if (how == PP_DRAIN)
            T_EQ(t.ran, accepted);
        pp_pool_stats(r.pool, &st);
        T_EQ(st.submitted, accepted);
        T_EQ(st.queued, 0);
        t_assert_accounted(r.pool);
        apr_pool_destroy(p);
    }
}

static void test_timeout_then_repeat(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    apr_time_t t0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    t0 = apr_time_now();
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_msec(50)), APR_TIMEUP);
    CU_ASSERT(apr_time_now() - t0 >= apr_time_from_msec(49));
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_msec(10)), APR_TIMEUP);
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(30)));
    T_EQ(gate.left, 1);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

static void test_submit_after_shutdown_and_twice(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t ran = 0;
    pp_stats_t a, b;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_submit(pool, t_count_task, (void *)&ran));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(ran, 1);
    T_STATUS(pp_submit(pool, t_count_task, (void *)&ran), PP_ESHUTDOWN);
    T_STATUS(pp_submit_ex(pool, t_count_task, (void *)&ran, g, PP_NOWAIT), PP_ESHUTDOWN);
    /* The refused submit left nothing pending in the group. */
    T_OK(pp_group_wait(g, 0));
    pp_pool_stats(pool, &a);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, 0));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, 0));
    pp_pool_stats(pool, &b);
    T_EQ(memcmp(&a, &b, sizeof(a)), 0);
    T_EQ(a.submitted, 1);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* Counts tasks whose runs these tests do not check. */
static volatile apr_uint32_t sink;

static apr_status_t slow_count_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_sleep(20);
    apr_atomic_inc32(arg);
    return APR_SUCCESS;
}

static void test_parent_pool_destruction_drains(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    volatile apr_uint32_t ran = 0;
    apr_uint32_t i, n = t_scaled(10000);
    int base = t_os_thread_count();

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    for (i = 0; i < n; i++)
        T_OK(pp_submit(pool, slow_count_task, (void *)&ran));
    apr_pool_destroy(p);    /* drains and joins before the memory goes */
    T_EQ(ran, n);
    if (base >= 0)
        CU_ASSERT(t_thread_count_settles(base) <= base);
}

static apr_status_t shutdown_self_task(void *arg, pp_task_ctx_t *ctx)
{
    pp_pool_t *pool = arg;

    (void)ctx;
    /* Cannot wait for itself: starts the shutdown and says so. */
    return pp_pool_shutdown(pool, PP_DRAIN, -1) == APR_EINPROGRESS
           ? APR_SUCCESS : APR_EGENERAL;
}

static void test_shutdown_from_a_task(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;
    apr_time_t deadline;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK(pp_submit(pool, shutdown_self_task, pool));
    /* Wait for the task to have started the shutdown, then join it. */
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (pp_submit(pool, t_count_task, (void *)&sink) == APR_SUCCESS
           && apr_time_now() < deadline)
        apr_sleep(1000);
    T_STATUS(pp_submit(pool, t_count_task, (void *)&sink), PP_ESHUTDOWN);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(30)));
    pp_pool_stats(pool, &st);
    T_EQ(st.failed, 0);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

typedef struct waiter {
    pp_pool_t *pool;
    apr_status_t rv;
} waiter;

static void blocked_submitter(void *arg)
{
    waiter *w = arg;

    w->rv = pp_submit(w->pool, t_count_task, (void *)&sink);
}

/* A submitter blocked on a full queue is released by shutdown, refused. */
static void test_shutdown_releases_blocked_submitter(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    waiter w;
    t_thread *t;
    volatile apr_uint32_t ran = 0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 1);
    /* Deaf to the cancel: under valgrind a cancellable gate task could see
     * it and leave before the zero-timeout shutdown looks, which would then
     * rightly return APR_SUCCESS. */
    T_OK(pp_submit(pool, t_hold_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    T_OK(pp_submit(pool, t_count_task, (void *)&ran));    /* fills the queue */
    w.pool = pool;
    w.rv = APR_SUCCESS;
    t = t_spawn(blocked_submitter, &w);
    apr_sleep(apr_time_from_msec(50));
    T_STATUS(pp_pool_shutdown(pool, PP_CANCEL, 0), APR_TIMEUP);
    t_join(t);
    T_STATUS(w.rv, PP_ESHUTDOWN);
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(30)));
    T_EQ(ran, 0);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* A cancel reaches into the workers' deques: their tasks are dropped by the
 * cancelling call itself, though the only worker is busy. */
static void test_cancel_drops_deque_tasks(void)
{
    apr_pool_t *p;
    tally t;
    t_nest ns;
    pp_task_t child = { .fn = tally_task, .release = tally_release, .name = "tallied" };
    pp_stats_t st;

    memset(&t, 0, sizeof(t));
    memset((void *)&ns, 0, sizeof(ns));
    apr_pool_create(&p, t_root);
    ns.pool = tally_pool(p, &t, 1);
    ns.child = child;
    ns.child.arg = &t;
    ns.n = 200;    /* tallied children in the holder's deque, deaf to the cancel */
    T_OK(pp_submit(ns.pool, t_nest_then_hold, &ns));
    t_gate_wait_arrived(&ns.gate, 1);
    T_EQ(ns.errors, 0);
    pp_pool_stats(ns.pool, &st);
    T_EQ(st.queued, 200);
    T_STATUS(pp_pool_shutdown(ns.pool, PP_CANCEL, apr_time_from_sec(1)), APR_TIMEUP);
    T_EQ(t.cancelled_reports, 200);
    T_EQ(t.released, 200);
    pp_pool_stats(ns.pool, &st);
    T_EQ(st.cancelled, 200);
    T_EQ(st.queued, 0);
    t_gate_open(&ns.gate);
    T_OK(pp_pool_shutdown(ns.pool, PP_CANCEL, apr_time_from_sec(30)));
    T_EQ(t.ran, 0);
    T_EQ(t.other_reports, 0);
    t_assert_accounted(ns.pool);
    apr_pool_destroy(p);
}

/* A drain that timed out can be turned into a cancel. */
static void test_drain_then_cancel(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    tally t;
    pp_stats_t st;

    memset(&t, 0, sizeof(t));
    apr_pool_create(&p, t_root);
    pool = tally_pool(p, &t, 2);
    fill_behind_gate(pool, &gate, 2, &t, 1000);
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_msec(20)), APR_TIMEUP);
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_sec(30)));
    T_EQ(t.ran, 0);
    T_EQ(t.released, 1000);
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, 1000);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

void t_register_shutdown(void)
{
    CU_pSuite s = CU_add_suite("shutdown", NULL, NULL);

    CU_add_test(s, "drain with 100,000 queued runs them all", test_drain_runs_everything);
    CU_add_test(s, "cancel with 100,000 queued drops and releases each", test_cancel_drops_and_releases);
    CU_add_test(s, "outside submitters racing a drain or a cancel: none lost",
                test_submitters_race_shutdown);
    CU_add_test(s, "timeout while a task blocks, then again", test_timeout_then_repeat);
    CU_add_test(s, "submit after shutdown; shutdown twice", test_submit_after_shutdown_and_twice);
    CU_add_test(s, "destroying the parent pool drains and joins", test_parent_pool_destruction_drains);
    CU_add_test(s, "shutdown from inside a task", test_shutdown_from_a_task);
    CU_add_test(s, "shutdown releases a blocked submitter", test_shutdown_releases_blocked_submitter);
    CU_add_test(s, "a timed-out drain becomes a cancel", test_drain_then_cancel);
    CU_add_test(s, "cancel drops the tasks in the workers' deques", test_cancel_drops_deque_tasks);
}
