/* SPDX-License-Identifier: Apache-2.0 */
/* Delayed and periodic tasks (pp_schedule, pp_timer_cancel). Times are
 * only ever checked from below ("not before its delay") or with a wide
 * margin: these machines are shared and noisy; lateness is measured in
 * make bench. */
#include "config.h"
#include "testutil.h"

#include <apr_time.h>
#include <stdlib.h>
#include <string.h>

#define RUNS_MAX 64

typedef struct ticker {
    volatile apr_uint32_t runs, released, inside, most_inside, errors, cancelled_seen;
    apr_time_t start[RUNS_MAX], end[RUNS_MAX];
    apr_interval_time_t sleep;       /* how long each run takes */
    t_gate *gate;                    /* runs wait on it, if set */
    pp_timer_t *self;                /* cancel it from inside run number stop_at */
    apr_uint32_t stop_at;
    apr_status_t self_rv;
} ticker;

static apr_status_t tick_task(void *arg, pp_task_ctx_t *ctx)
{
    ticker *k = arg;
    apr_uint32_t i = apr_atomic_inc32(&k->runs), in = apr_atomic_inc32(&k->inside) + 1;
    apr_uint32_t most;

    while ((most = k->most_inside) < in && apr_atomic_cas32(&k->most_inside, in, most) != most)
        ;
    if (i < RUNS_MAX)
        k->start[i] = apr_time_now();
    if (k->gate)
        t_gate_task(k->gate, ctx);
    if (k->sleep)
        apr_sleep(k->sleep);
    if (k->self && i + 1 == k->stop_at)
        k->self_rv = pp_timer_cancel(k->self);
    if (i < RUNS_MAX)
        k->end[i] = apr_time_now();
    apr_atomic_dec32(&k->inside);
    return APR_SUCCESS;
}

static void tick_release(void *arg)
{
    ticker *k = arg;

    apr_atomic_inc32(&k->released);
}

static void on_error(apr_status_t rv, const char *name, void *baton)
{
    ticker *k = baton;

    if (rv == PP_ECANCELLED)
        apr_atomic_inc32(&k->cancelled_seen);
    else
        apr_atomic_inc32(&k->errors);
    (void)name;
}

static pp_task_t ticking(ticker *k, const char *name)
{
    pp_task_t t;

    memset(&t, 0, sizeof(t));
    t.fn = tick_task;
    t.arg = k;
    t.release = tick_release;
    t.name = name;
    return t;
}

static pp_pool_t *timer_pool(apr_pool_t *p, apr_uint32_t threads, ticker *reports)
{
    pp_config_t cfg;
    pp_pool_t *pool;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.on_task_error = on_error;
    cfg.baton = reports;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    return pool;
}

/* Wait (10 s at most) until *v reaches n. */
static void wait_for(volatile apr_uint32_t *v, apr_uint32_t n)
{
    int i;

    for (i = 0; i < 10000 && *v < n; i++)
        apr_sleep(1000);
    T_EQ_FATAL(*v >= n, 1);
}

/* A one-shot timer runs once, not before its delay; its group waits for
 * it; its release runs once; it counts as one task; no handle: its
 * memory goes by itself (the sanitizer runs see a leak otherwise). */
/* The end of each test: every task accounted for, the pool and its
 * memory gone. */
static void finish(pp_pool_t *pool, apr_pool_t *p)
{
    t_assert_accounted(pool);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* ... after a drain, for a test in which nothing failed or was dropped. */
static void drain_clean(pp_pool_t *pool, apr_pool_t *p, const ticker *reports)
{
    T_EQ(reports->cancelled_seen + reports->errors, 0);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    finish(pool, p);
}

static void test_one_shot(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    ticker k, rep;
    pp_task_t t;
    apr_time_t before;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    T_OK(pp_group_create(&g, p));
    t = ticking(&k, "once");
    before = apr_time_now();
    T_OK(pp_schedule(NULL, pool, &t, apr_time_from_msec(30), 0, g));
    pp_pool_stats(pool, &st);
    T_EQ(st.timers, 1);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(k.runs, 1);
    T_EQ(k.released, 1);    /* before the group let go */
    CU_ASSERT(k.start[0] - before >= apr_time_from_msec(30) - 200);
    apr_sleep(apr_time_from_msec(50));
    T_EQ(k.runs, 1);
    pp_pool_stats(pool, &st);
    T_EQ(st.timers, 0);
    T_EQ(st.submitted, 1);
    T_EQ(st.completed, 1);
    drain_clean(pool, p, &rep);
}

/* A periodic timer runs again and again, one run at a time even with
 * runs longer than its period and workers to spare; a cancel stops it
 * (release once, the group done) and no run follows. */
static void test_periodic_one_at_a_time(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_timer_t *timer;
    ticker k, rep;
    pp_task_t t;
    apr_uint32_t runs;
    apr_status_t rv;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 4, &rep);
    T_OK(pp_group_create(&g, p));
    k.sleep = 3000;    /* three periods */
    t = ticking(&k, "every");
    T_OK(pp_schedule(&timer, pool, &t, 0, 1000, g));
    wait_for(&k.runs, 8);
    T_STATUS(pp_group_wait(g, 0), APR_TIMEUP);    /* it goes on */
    rv = pp_timer_cancel(timer);
    CU_ASSERT(rv == APR_SUCCESS || rv == APR_EBUSY);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(k.released, 1);
    runs = k.runs;
    apr_sleep(apr_time_from_msec(30));
    T_EQ(k.runs, runs);
    T_EQ(k.most_inside, 1);
    drain_clean(pool, p, &rep);
}

/* Ticks missed while a run could not start (the pool paused) are
 * skipped, not run back to back: after the resume, one run, then the
 * period again. */
static void test_missed_ticks_skipped(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_timer_t *timer;
    ticker k, rep;
    pp_task_t t;
    apr_uint32_t soon;
    apr_status_t rv;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    T_OK(pp_pool_pause(pool));
    t = ticking(&k, "paused");
    T_OK(pp_schedule(&timer, pool, &t, 0, apr_time_from_msec(40), NULL));
    apr_sleep(apr_time_from_msec(400));    /* ten periods */
    T_EQ(k.runs, 0);
    T_OK(pp_pool_resume(pool));
    wait_for(&k.runs, 1);
    apr_sleep(apr_time_from_msec(10));
    soon = k.runs;
    CU_ASSERT(soon <= 3);    /* catching up would make it about ten */
    wait_for(&k.runs, soon + 2);    /* and it goes on at its period */
    rv = pp_timer_cancel(timer);
    CU_ASSERT(rv == APR_SUCCESS || rv == APR_EBUSY);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(k.released, 1);
    finish(pool, p);
}

/* Cancel before the time: APR_SUCCESS, released at once, never runs, the
 * group done; cancel during a run: APR_EBUSY, the run completes, nothing
 * follows, released after it; cancel of a timer that ended: APR_SUCCESS. */
static void test_cancel(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_timer_t *timer;
    pp_stats_t st;
    ticker k, rep;
    t_gate gate;
    pp_task_t t;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    memset(&gate, 0, sizeof(gate));
    pool = timer_pool(p, 2, &rep);
    T_OK(pp_group_create(&g, p));
    t = ticking(&k, "later");
    T_OK(pp_schedule(&timer, pool, &t, apr_time_from_sec(600), 0, g));
    T_OK(pp_timer_cancel(timer));
    T_EQ(k.released, 1);
    T_OK(pp_group_wait(g, 0));
    pp_pool_stats(pool, &st);
    T_EQ(st.timers, 0);
    T_EQ(st.submitted, 0);

    k.gate = &gate;
    T_OK(pp_schedule(&timer, pool, &t, 0, 1000, g));
    t_gate_wait_arrived(&gate, 1);
    T_STATUS(pp_timer_cancel(timer), APR_EBUSY);
    T_EQ(k.released, 1);
    t_gate_open(&gate);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(k.released, 2);
    T_EQ(k.runs, 1);
    apr_sleep(apr_time_from_msec(20));
    T_EQ(k.runs, 1);

    k.gate = NULL;
    T_OK(pp_schedule(&timer, pool, &t, 0, 0, g));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(k.runs, 2);
    T_OK(pp_timer_cancel(timer));    /* ended: gives the handle back */
    T_EQ(k.released, 3);
    T_STATUS(pp_timer_cancel(NULL), APR_EINVAL);
    drain_clean(pool, p, &rep);
}

/* A run cancels its own timer (reading the handle the schedule wrote
 * before the run could start): APR_EBUSY, and no run follows. */
static void test_cancel_from_own_run(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    ticker k, rep;
    pp_task_t t;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    T_OK(pp_group_create(&g, p));
    k.stop_at = 3;
    t = ticking(&k, "self");
    T_OK(pp_schedule(&k.self, pool, &t, 0, 500, g));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(k.runs, 3);
    T_STATUS(k.self_rv, APR_EBUSY);
    T_EQ(k.released, 1);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    finish(pool, p);
}

/* A timer due sooner than the one the timer thread sleeps to wakes it:
 * it does not wait for the later one. */
static void test_earlier_timer_wakes(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_timer_t *later;
    ticker k, rep;
    pp_task_t t;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 1, &rep);
    T_OK(pp_group_create(&g, p));
    t = ticking(&k, "x");
    T_OK(pp_schedule(&later, pool, &t, apr_time_from_sec(600), 0, NULL));
    apr_sleep(apr_time_from_msec(20));    /* the thread sleeps to it */
    T_OK(pp_schedule(NULL, pool, &t, apr_time_from_msec(5), 0, g));
    T_OK(pp_group_wait(g, apr_time_from_sec(5)));
    T_EQ(k.runs, 1);
    T_OK(pp_timer_cancel(later));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    finish(pool, p);
}

/* Many timers with random delays, scheduled from several threads at
 * once: every one runs exactly once and none before its time; one
 * timer thread for all of them. */
typedef struct many {
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t early, ran, bad;
    apr_uint32_t seed;
} many;

typedef struct one_timer {
    many *m;
    apr_time_t due;
} one_timer;

static apr_status_t due_task(void *arg, pp_task_ctx_t *ctx)
{
    one_timer *o = arg;

    (void)ctx;
    if (apr_time_now() + 200 < o->due)
        apr_atomic_inc32(&o->m->early);
    apr_atomic_inc32(&o->m->ran);
    return APR_SUCCESS;
}

#define MANY_PER_THREAD 500

static void schedule_many(void *arg)
{
    many *m = arg;
    one_timer *o = malloc(MANY_PER_THREAD * sizeof(*o));
    apr_uint32_t i, seed = apr_atomic_inc32(&m->seed) * 2654435761u + 1;
    pp_task_t t;

    memset(&t, 0, sizeof(t));
    t.fn = due_task;
    t.release = NULL;
    for (i = 0; i < t_scaled(MANY_PER_THREAD); i++) {
        apr_interval_time_t delay;
        seed = seed * 1103515245u + 12345u;
        delay = (seed >> 8) % 50000;
        o[i].m = m;
        o[i].due = apr_time_now() + delay;
        t.arg = &o[i];
        t.priority = (int)(seed % 3) - 1;
        if (pp_schedule(NULL, m->pool, &t, delay, 0, m->g) != APR_SUCCESS)
            apr_atomic_inc32(&m->bad);
    }
    pp_group_wait(m->g, -1);    /* o must outlive its timers */
    free(o);
}

static void test_many_timers(void)
{
    apr_pool_t *p;
    many m;
    ticker rep;
    pp_stats_t st;
    int before = t_os_thread_count();

    apr_pool_create(&p, t_root);
    memset(&m, 0, sizeof(m));
    memset(&rep, 0, sizeof(rep));
    m.pool = timer_pool(p, 2, &rep);
    T_OK(pp_group_create(&m.g, p));
    t_run_threads(4, schedule_many, (void *[]){ &m, &m, &m, &m });
    T_OK(pp_group_wait(m.g, apr_time_from_sec(30)));
    T_EQ(m.bad, 0);
    T_EQ(m.ran, 4 * t_scaled(MANY_PER_THREAD));
    T_EQ(m.early, 0);
    if (before >= 0)    /* the workers and one timer thread */
        T_EQ(t_thread_count_settles(before + 2 + 1), before + 2 + 1);
    pp_pool_stats(m.pool, &st);
    T_EQ(st.completed, 4 * t_scaled(MANY_PER_THREAD));
    T_OK(pp_pool_shutdown(m.pool, PP_DRAIN, -1));
    t_assert_accounted(m.pool);
    pp_pool_destroy(m.pool);
    apr_pool_destroy(p);
}

/* A pool whose only work is a timer far off uses no CPU while it waits. */
static void test_idle_timers_cost_nothing(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_timer_t *timer[100];
    ticker k, rep;
    pp_task_t t;
    double cpu;
    int i;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    t = ticking(&k, "far");
    for (i = 0; i < 100; i++)
        T_OK(pp_schedule(&timer[i], pool, &t, apr_time_from_sec(600 + i), apr_time_from_sec(1),
                         NULL));
    apr_sleep(apr_time_from_msec(50));    /* everybody settles */
    cpu = t_os_cpu_seconds();
    apr_sleep(apr_time_from_msec(300));
    CU_ASSERT(t_os_cpu_seconds() - cpu < 0.02);
    for (i = 0; i < 100; i += 2)
        T_OK(pp_timer_cancel(timer[i]));
    T_EQ(k.released, 50);
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, -1));
    /* The other half are dropped by the shutdown, each reported once. */
    T_EQ(rep.cancelled_seen, 50);
    T_EQ(k.released, 100);
    T_EQ(k.runs, 0);
    for (i = 1; i < 100; i += 2)
        T_OK(pp_timer_cancel(timer[i]));    /* handles given back */
    finish(pool, p);
}

/* A drain runs no further ticks: it does not wait for timers to come
 * due; each waiting timer, and a periodic one's next tick, is reported
 * once and released; later schedules fail. */
static void test_shutdown_drops_ticks(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    ticker k, rep, per;
    pp_task_t t;
    apr_time_t t0;
    int how;

    for (how = PP_DRAIN; how <= PP_CANCEL; how++) {
        apr_pool_create(&p, t_root);
        memset(&k, 0, sizeof(k));
        memset(&per, 0, sizeof(per));
        memset(&rep, 0, sizeof(rep));
        pool = timer_pool(p, 2, &rep);
        T_OK(pp_group_create(&g, p));
        t = ticking(&k, "w");
        T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(600), 0, g));
        T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(600), apr_time_from_sec(1), g));
        T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(300), 0, NULL));
        t = ticking(&per, "p");
        T_OK(pp_schedule(NULL, pool, &t, 0, 200, g));
        wait_for(&per.runs, 3);
        t0 = apr_time_now();
        T_OK(pp_pool_shutdown(pool, how, apr_time_from_sec(30)));
        CU_ASSERT(apr_time_now() - t0 < apr_time_from_sec(20));
        T_EQ(k.runs, 0);
        T_EQ(k.released, 3);
        T_EQ(per.released, 1);
        /* Three waiting, and the periodic one's next (or queued) tick. */
        T_EQ(rep.cancelled_seen, 4);
        T_EQ(rep.errors, 0);
        T_OK(pp_group_wait(g, 0));
        T_STATUS(pp_group_status(g), PP_ECANCELLED);
        T_STATUS(pp_schedule(NULL, pool, &t, 0, 0, NULL), PP_ESHUTDOWN);
        finish(pool, p);
    }
}

/* pp_group_cancel() drops the group's timers waiting for their time
 * (reported, released) and stops its periodic ones; other timers go on. */
static void test_group_cancel_drops_timers(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g, *other;
    ticker k, rep, per;
    pp_task_t t;
    apr_uint32_t runs;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&per, 0, sizeof(per));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    T_OK(pp_group_create(&g, p));
    T_OK(pp_group_create(&other, p));
    t = ticking(&k, "g");
    T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(600), 0, g));
    T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(600), 0, g));
    t = ticking(&per, "p");
    T_OK(pp_schedule(NULL, pool, &t, 0, 300, g));
    T_OK(pp_schedule(NULL, pool, &t, apr_time_from_sec(600), 0, other));
    wait_for(&per.runs, 3);
    T_OK(pp_group_cancel(g));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(g), PP_ECANCELLED);
    T_EQ(k.released, 2);
    T_EQ(per.released, 1);
    runs = per.runs;
    apr_sleep(apr_time_from_msec(20));
    T_EQ(per.runs, runs);
    T_EQ(rep.cancelled_seen, 3);
    T_STATUS(pp_group_wait(other, 0), APR_TIMEUP);    /* not its business */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_OK(pp_group_wait(other, 0));
    T_EQ(per.released, 2);
    finish(pool, p);
}

static apr_status_t nop(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

static void test_bad_arguments(void)
{
    apr_pool_t *p, *sp;
    pp_pool_t *pool;
    pp_strand_t *strand;
    pp_timer_t *timer = NULL;
    pp_task_t t;

    apr_pool_create(&p, t_root);
    apr_pool_create(&sp, p);
    pool = t_pool(p, 1, 0);
    memset(&t, 0, sizeof(t));
    T_STATUS(pp_schedule(&timer, pool, &t, 0, 0, NULL), APR_EINVAL);    /* no fn */
    t.fn = nop;
    T_STATUS(pp_schedule(&timer, NULL, &t, 0, 0, NULL), APR_EINVAL);
    T_STATUS(pp_schedule(&timer, pool, NULL, 0, 0, NULL), APR_EINVAL);
    T_STATUS(pp_schedule(&timer, pool, &t, -1, 0, NULL), APR_EINVAL);
    T_STATUS(pp_schedule(&timer, pool, &t, 0, -1, NULL), APR_EINVAL);
    t.priority = 7;
    T_STATUS(pp_schedule(&timer, pool, &t, 0, 0, NULL), APR_EINVAL);
    t.priority = 0;
    t.not_after = apr_time_now();
    T_STATUS(pp_schedule(&timer, pool, &t, 0, 0, NULL), APR_EINVAL);
    t.not_after = 0;
    T_OK(pp_strand_create(&strand, pool, sp));
    t.strand = strand;
    T_STATUS(pp_schedule(&timer, pool, &t, 0, 0, NULL), APR_EINVAL);
    CU_ASSERT_PTR_NULL(timer);
    t.strand = NULL;
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_STATUS(pp_schedule(&timer, pool, &t, 0, 0, NULL), PP_ESHUTDOWN);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* Destroying a pool with timers pending (no shutdown call first) drops
 * them, released, and frees handles nobody gave back. */
static void test_destroy_with_timers(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_timer_t *timer;
    ticker k, rep;
    pp_task_t t;

    apr_pool_create(&p, t_root);
    memset(&k, 0, sizeof(k));
    memset(&rep, 0, sizeof(rep));
    pool = timer_pool(p, 2, &rep);
    t = ticking(&k, "d");
    T_OK(pp_schedule(&timer, pool, &t, apr_time_from_sec(600), 0, NULL));
    T_OK(pp_schedule(NULL, pool, &t, 0, 100, NULL));
    wait_for(&k.runs, 2);
    apr_pool_destroy(p);    /* the pool with it */
    T_EQ(k.released, 2);
    T_EQ(rep.cancelled_seen, 2);
}

void t_register_timer(void)
{
    CU_pSuite s = CU_add_suite("timer", NULL, NULL);

    CU_add_test(s, "one-shot: once, not early, group, release, stats", test_one_shot);
    CU_add_test(s, "periodic: one run at a time; cancel stops it", test_periodic_one_at_a_time);
    CU_add_test(s, "missed ticks are skipped", test_missed_ticks_skipped);
    CU_add_test(s, "cancel: before, during and after a run", test_cancel);
    CU_add_test(s, "a run cancels its own timer", test_cancel_from_own_run);
    CU_add_test(s, "an earlier timer wakes the timer thread", test_earlier_timer_wakes);
    CU_add_test(s, "2,000 timers from 4 threads: each once, none early", test_many_timers);
    CU_add_test(s, "idle timers use no CPU; cancel and shutdown release each once",
                test_idle_timers_cost_nothing);
    CU_add_test(s, "drain and cancel drop waiting ticks, reported once", test_shutdown_drops_ticks);
    CU_add_test(s, "group cancel drops its timers", test_group_cancel_drops_timers);
    CU_add_test(s, "bad arguments", test_bad_arguments);
    CU_add_test(s, "destroying the pool drops its timers", test_destroy_with_timers);
}
