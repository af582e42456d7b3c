/* SPDX-License-Identifier: Apache-2.0 */
/* What a service embedding the pool uses beyond tasks: thread hooks,
 * task observation and timing, pause and resume, timed submits. */
#include "config.h"
#include "testutil.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <stddef.h>
#include <string.h>

#define MAXW 8

/* ---- thread hooks */

typedef struct hooks {
    volatile apr_uint32_t starts[MAXW], stops[MAXW];
    volatile apr_uint32_t fail_worker;    /* its start fails; MAXW: none */
    volatile apr_uint32_t wrong_thread;   /* a hook or task saw another thread's mark */
} hooks;

/* Which worker's start hook ran on this thread (index + 1), 0 if none:
 * a task and the stop hook must find their own worker's here. */
static _Thread_local apr_uint32_t t_mark;

static apr_status_t on_start(apr_uint32_t worker, void *baton)
{
    hooks *h = baton;

    if (worker >= MAXW || t_mark != 0)
        apr_atomic_inc32(&h->wrong_thread);
    if (worker == h->fail_worker)
        return APR_EACCES;
    t_mark = worker + 1;
    apr_atomic_inc32(&h->starts[worker % MAXW]);
    return APR_SUCCESS;
}

static void on_stop(apr_uint32_t worker, void *baton)
{
    hooks *h = baton;

    if (t_mark != worker + 1)
        apr_atomic_inc32(&h->wrong_thread);
    apr_atomic_inc32(&h->stops[worker % MAXW]);
}

static apr_status_t mark_task(void *arg, pp_task_ctx_t *ctx)
{
    hooks *h = arg;

    if (t_mark != pp_task_worker(ctx) + 1)
        apr_atomic_inc32(&h->wrong_thread);
    return APR_SUCCESS;
}

static pp_pool_t *hooked_pool(apr_pool_t *p, hooks *h, apr_uint32_t threads, apr_status_t want)
{
    pp_config_t cfg;
    pp_pool_t *pool = NULL;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.on_thread_start = on_start;
    cfg.on_thread_stop = on_stop;
    cfg.baton = h;
    T_STATUS(pp_pool_create(&pool, &cfg, p), want);
    return pool;
}

/* A drain starts no worker while one is active (parkpool.h,
 * on_thread_start): a worker that leaves the drain early, while a
 * searcher still holds a batch it took, is not replaced by the searcher's
 * handshake. That window is narrow, so many pools go through it. */
static void test_thread_hooks(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_pool_t *pool;
    apr_uint32_t i, round, rounds = t_scaled(200), bad = 0;

    for (round = 0; round < rounds && !bad; round++) {
        memset((void *)&h, 0, sizeof(h));
        h.fail_worker = MAXW;
        apr_pool_create(&p, t_root);
        pool = hooked_pool(p, &h, 4, APR_SUCCESS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
        for (i = 0; i < 4; i++)    /* every start hook ran before the pool was handed out */
            bad |= h.starts[i] != 1;
        for (i = 0; i < 2000; i++)
            bad |= pp_submit(pool, mark_task, &h) != APR_SUCCESS;
        pp_pool_destroy(pool);
        for (i = 0; i < MAXW; i++)
            bad |= h.starts[i] != (i < 4) || h.stops[i] != (i < 4);
        bad |= h.wrong_thread != 0;
        apr_pool_destroy(p);
    }
    /* The last round's counts say how it went wrong. */
    for (i = 0; i < MAXW; i++) {
        T_EQ_AT(i, h.starts[i], i < 4);
        T_EQ_AT(i, h.stops[i], i < 4);
    }
    T_EQ(h.wrong_thread, 0);
    T_EQ(round, rounds);
}

static apr_status_t exit_thread_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    t_os_thread_exit();
    return APR_SUCCESS;    /* not reached */
}

/* A task that ends its thread: that thread is told it stops, the one
 * that takes the worker's place that it starts; each thread once. */
static void test_thread_hooks_replaced(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    apr_uint32_t i, starts = 0, stops = 0;

    memset((void *)&h, 0, sizeof(h));
    h.fail_worker = MAXW;
    apr_pool_create(&p, t_root);
    pool = hooked_pool(p, &h, 2, APR_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    T_OK(pp_group_create(&g, p));
    T_OK(pp_submit_ex(pool, exit_thread_task, NULL, g, 0));
    T_STATUS(pp_group_wait(g, -1), APR_SUCCESS);
    for (i = 0; i < 200; i++)
        T_OK(pp_submit_ex(pool, mark_task, &h, g, 0));
    T_OK(pp_group_wait(g, -1));
    pp_pool_destroy(pool);
    for (i = 0; i < 2; i++) {
        starts += h.starts[i];
        stops += h.stops[i];
        T_EQ_AT(i, h.starts[i], h.stops[i]);
    }
    T_EQ(starts, 3);
    T_EQ(stops, 3);
    T_EQ(h.wrong_thread, 0);
    apr_pool_destroy(p);
}

/* A start hook that fails fails the pool's creation with its status; the
 * workers that had started are stopped (and told), none is left. */
static void test_thread_start_fails(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_pool_t *pool;
    apr_uint32_t i;
    int base = t_os_thread_count();

    memset((void *)&h, 0, sizeof(h));
    h.fail_worker = 2;
    apr_pool_create(&p, t_root);
    pool = hooked_pool(p, &h, 4, APR_EACCES);
    CU_ASSERT_PTR_NULL(pool);
    for (i = 0; i < 4; i++) {
        T_EQ_AT(i, h.starts[i], i != 2);
        T_EQ_AT(i, h.stops[i], h.starts[i]);
    }
    T_EQ(h.wrong_thread, 0);
    CU_ASSERT(t_thread_count_settles(base) <= base);
    apr_pool_destroy(p);
}

static apr_status_t noop(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

/* ---- task observation and timing */

typedef struct seen {
    apr_thread_mutex_t *lock;
    apr_uint32_t ended, failed, named, bad_worker, timed, untimed, disordered;
} seen;

static void on_end(const pp_task_info_t *info, void *baton)
{
    seen *s = baton;

    apr_thread_mutex_lock(s->lock);
    s->ended++;
    s->failed += info->status != APR_SUCCESS;
    s->named += strcmp(info->name, "obs") == 0;
    s->bad_worker += info->worker >= 3;
    if (info->queued == 0 && info->started == 0 && info->ended == 0)
        s->untimed++;
    else if (info->queued > 0 && info->queued <= info->started && info->started <= info->ended)
        s->timed++;
    else
        s->disordered++;
    apr_thread_mutex_unlock(s->lock);
}

static apr_status_t odd_fails(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    return ((apr_uintptr_t)arg & 1) ? APR_EGENERAL : APR_SUCCESS;
}

static void observe(int timing)
{
    seen s;
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    pp_task_t t;
    apr_uintptr_t i;

    memset(&s, 0, sizeof(s));
    apr_pool_create(&p, t_root);
    apr_thread_mutex_create(&s.lock, APR_THREAD_MUTEX_DEFAULT, p);
    pp_config_init(&cfg);
    cfg.threads = 3;
    cfg.on_task_end = on_end;
    cfg.timing = timing;
    cfg.baton = &s;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK(pp_group_create(&g, p));
    memset(&t, 0, sizeof(t));
    t.fn = odd_fails;
    t.name = "obs";
    for (i = 0; i < 1000; i++) {
        t.arg = (void *)i;
        T_OK(pp_submit_task(pool, &t, g, 0));
    }
    T_OK(pp_group_wait(g, -1));
    T_STATUS(pp_group_status(g), APR_EGENERAL);
    T_EQ(s.ended, 1000);    /* told before the group hears of it */
    T_EQ(s.failed, 500);
    T_EQ(s.named, 1000);
    T_EQ(s.bad_worker, 0);
    T_EQ(s.disordered, 0);
    T_EQ(timing ? s.timed : s.untimed, 1000);
    pp_pool_stats(pool, &st);
    if (!timing)
        T_EQ(st.run_us_max + st.run_us_p50 + st.wait_us_max + st.wait_us_p99, 0);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

static void test_task_end(void)
{
    observe(0);
    observe(1);
}

static apr_status_t sleep_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_sleep((apr_interval_time_t)(apr_uintptr_t)arg);
    return APR_SUCCESS;
}

/* One worker, ten tasks of 20 ms queued at once: each runs about 20 ms,
 * and the k-th waited about 20k ms. The figures are lower bounds (a
 * loaded machine only makes them longer) and ordered. */
static void test_timing_stats(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool;
    pp_stats_t st;
    t_gate gate;
    int i;

    memset(&gate, 0, sizeof(gate));
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.timing = 1;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 10; i++)
        T_OK(pp_submit(pool, sleep_task, (void *)(apr_uintptr_t)20000));
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 11);
    T_EQ(st.queued_peak, 10);
    T_EQ(st.threads_peak, 1);
    CU_ASSERT(st.run_us_p50 >= 20000 && st.run_us_p90 >= st.run_us_p50);
    CU_ASSERT(st.run_us_p99 >= st.run_us_p90 && st.run_us_max >= st.run_us_p99);
    CU_ASSERT(st.run_us_p99 >= 20000 && st.run_us_max >= 20000);
    /* Waits: the gate's is short; of the others the longest is 9 runs. */
    CU_ASSERT(st.wait_us_max >= 9 * 20000);
    CU_ASSERT(st.wait_us_p50 >= 4 * 20000 && st.wait_us_p90 >= 8 * 20000);
    CU_ASSERT(st.wait_us_p99 <= st.wait_us_max && st.wait_us_p50 <= st.wait_us_p90);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* ---- pause and resume */

/* Wait (10 s at most) until the stats field at offset `field` reads n. */
static void stat_settles(pp_pool_t *pool, apr_size_t field, apr_uint64_t n)
{
    pp_stats_t st;
    apr_uint64_t got = 0;
    int i;

    for (i = 0; i < 10000; i++) {
        pp_pool_stats(pool, &st);
        got = *(const apr_uint64_t *)((const char *)&st + field);
        if (got == n)
            return;
        apr_sleep(1000);
    }
    T_EQ(got, n);
}

/* n workers parked; n workers alive. */
#define idle_settles(pool, n) stat_settles((pool), offsetof(pp_stats_t, threads_idle), (n))
#define threads_settle(pool, n) stat_settles((pool), offsetof(pp_stats_t, threads), (n))

static void test_pause_holds(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    volatile apr_uint32_t ran = 0;
    double before, used;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 3, 0);
    T_OK(pp_group_create(&g, p));
    T_OK(pp_pool_pause(pool));
    T_OK(pp_pool_pause(pool));    /* twice is no error */
    for (i = 0; i < 300; i++)
        T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0));
    T_STATUS(pp_group_wait(g, apr_time_from_msec(100)), APR_TIMEUP);
    T_EQ(ran, 0);
    idle_settles(pool, 3);
    /* Held tasks, sleeping workers: no CPU. */
    before = t_os_cpu_seconds();
    apr_sleep(apr_time_from_msec(500));
    used = t_os_cpu_seconds() - before;
    CU_ASSERT(used < 0.020);
    pp_pool_stats(pool, &st);
    T_EQ(st.queued, 300);
    T_EQ(st.running, 0);
    T_EQ(ran, 0);
    T_OK(pp_pool_resume(pool));
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(ran, 300);
    T_OK(pp_pool_resume(pool));    /* not paused: nothing to do */
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* A task holds its worker at a gate, then queues children in its own
 * deque: after a pause, none of them starts, though they were queued
 * without the lock; a resume finds them. */
typedef struct parent {
    pp_pool_t *pool;
    pp_group_t *g;
    t_gate gate;
    volatile apr_uint32_t ran;
} parent;

static apr_status_t count_child(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(&((parent *)arg)->ran);
    return APR_SUCCESS;
}

static apr_status_t parent_task(void *arg, pp_task_ctx_t *ctx)
{
    parent *pa = arg;
    int i;

    t_gate_task(&pa->gate, ctx);
    for (i = 0; i < 50; i++)
        if (pp_submit_ex(pa->pool, count_child, pa, pa->g, 0) != APR_SUCCESS)
            return APR_EGENERAL;
    return APR_SUCCESS;
}

static void test_pause_running(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    parent pa;
    pp_stats_t st;

    memset(&pa, 0, sizeof(pa));
    apr_pool_create(&p, t_root);
    pool = pa.pool = t_pool(p, 2, 0);
    T_OK(pp_group_create(&pa.g, p));
    T_OK(pp_submit_ex(pool, parent_task, &pa, pa.g, 0));
    t_gate_wait_arrived(&pa.gate, 1);
    T_OK(pp_pool_pause(pool));
    t_gate_open(&pa.gate);    /* the running task finishes; its children wait */
    idle_settles(pool, 2);
    T_STATUS(pp_group_wait(pa.g, apr_time_from_msec(50)), APR_TIMEUP);
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 1);
    T_EQ(st.queued, 50);
    T_EQ(pa.ran, 0);
    T_OK(pp_pool_resume(pool));
    T_OK(pp_group_wait(pa.g, apr_time_from_sec(30)));
    T_EQ(pa.ran, 50);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* A paused pool's shutdown drains (everything runs) or cancels (all
 * dropped) as asked; a pause after shutdown began is refused. */
static void pause_then(int how)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;
    volatile apr_uint32_t ran = 0;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 0);
    T_OK(pp_pool_pause(pool));
    for (i = 0; i < 100; i++)
        T_OK(pp_submit(pool, t_count_task, (void *)&ran));
    T_OK(pp_pool_shutdown(pool, how, apr_time_from_sec(30)));
    pp_pool_stats(pool, &st);
    T_EQ(ran, how == PP_DRAIN ? 100 : 0);
    T_EQ(st.cancelled, how == PP_DRAIN ? 0 : 100);
    T_STATUS(pp_pool_pause(pool), PP_ESHUTDOWN);
    T_OK(pp_pool_resume(pool));
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

static void test_pause_shutdown(void)
{
    pause_then(PP_DRAIN);
    pause_then(PP_CANCEL);
    T_STATUS(pp_pool_pause(NULL), APR_EINVAL);
    T_STATUS(pp_pool_resume(NULL), APR_EINVAL);
}

/* Producers (outside, and tasks queueing children in their deques) race
 * a thread that pauses and resumes as fast as it can: after the last
 * resume, every task runs. A wake-up lost to a pause leaves the group
 * waiting on a task in a queue nobody looks at. */
typedef struct churn {
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t ran, stop, errors;
} churn;

static apr_status_t churn_child(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(&((churn *)arg)->ran);
    return APR_SUCCESS;
}

static apr_status_t churn_task(void *arg, pp_task_ctx_t *ctx)
{
    churn *c = arg;

    (void)ctx;
    apr_atomic_inc32(&c->ran);
    if (pp_submit_ex(c->pool, churn_child, c, c->g, 0) != APR_SUCCESS)
        apr_atomic_inc32(&c->errors);
    return APR_SUCCESS;
}

#define CHURN_PRODUCERS 3
#define CHURN_TASKS 20000

static void churn_produce(void *arg)
{
    churn *c = arg;
    apr_uint32_t i, n = t_scaled(CHURN_TASKS);

    for (i = 0; i < n; i++)
        if (pp_submit_ex(c->pool, churn_task, c, c->g, 0) != APR_SUCCESS)
            apr_atomic_inc32(&c->errors);
}

static void churn_toggle(void *arg)
{
    churn *c = arg;

    while (!apr_atomic_read32(&c->stop)) {
        pp_pool_pause(c->pool);
        apr_thread_yield();
        pp_pool_resume(c->pool);
    }
}

static void test_pause_churn(void)
{
    apr_pool_t *p;
    churn c;
    t_thread *producers[CHURN_PRODUCERS], *toggler;
    int i;

    memset(&c, 0, sizeof(c));
    apr_pool_create(&p, t_root);
    c.pool = t_pool(p, 3, 0);
    T_OK(pp_group_create(&c.g, p));
    toggler = t_spawn(churn_toggle, &c);
    for (i = 0; i < CHURN_PRODUCERS; i++)
        producers[i] = t_spawn(churn_produce, &c);
    for (i = 0; i < CHURN_PRODUCERS; i++)
        t_join(producers[i]);
    apr_atomic_set32(&c.stop, 1);
    t_join(toggler);
    T_OK(pp_pool_resume(c.pool));
    T_OK(pp_group_wait(c.g, apr_time_from_sec(60)));
    T_EQ(c.ran, 2 * CHURN_PRODUCERS * t_scaled(CHURN_TASKS));
    T_EQ(c.errors, 0);
    pp_pool_destroy(c.pool);
    apr_pool_destroy(p);
}

/* ---- elastic workers */

static pp_pool_t *elastic_pool(apr_pool_t *p, hooks *h, apr_uint32_t threads,
                               apr_uint32_t min, apr_interval_time_t idle,
                               apr_uint32_t max_blocking)
{
    pp_config_t cfg;
    pp_pool_t *pool = NULL;

    pp_config_init(&cfg);
    cfg.threads = threads;
    cfg.min_threads = min;
    cfg.idle_timeout = idle;
    cfg.max_blocking = max_blocking;
    if (h) {
        cfg.on_thread_start = on_start;
        cfg.on_thread_stop = on_stop;
        cfg.baton = h;
    }
    T_OK(pp_pool_create(&pool, &cfg, p));
    return pool;
}

static apr_uint32_t sum(volatile apr_uint32_t *a)
{
    apr_uint32_t i, n = 0;

    for (i = 0; i < MAXW; i++)
        n += a[i];
    return n;
}

/* One worker to begin with; four at once when four tasks need them (and
 * no more: the fifth waits); back to one after idle_timeout; and again.
 * The thread hooks see every thread that came and went, once each. */
static void test_elastic(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;
    t_gate gate;
    int round, i;

    memset((void *)&h, 0, sizeof(h));
    h.fail_worker = MAXW;
    apr_pool_create(&p, t_root);
    pool = elastic_pool(p, &h, 4, 1, apr_time_from_msec(50), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    pp_pool_stats(pool, &st);
    T_EQ(st.threads, 1);
    T_EQ(sum(h.starts), 1);
    for (round = 0; round < 2; round++) {
        memset(&gate, 0, sizeof(gate));
        for (i = 0; i < 5; i++)
            T_OK(pp_submit(pool, t_gate_task, &gate));
        t_gate_wait_arrived(&gate, 4);    /* four ran at once */
        apr_sleep(apr_time_from_msec(20));
        pp_pool_stats(pool, &st);
        T_EQ(st.threads, 4);
        T_EQ(gate.arrived, 4);            /* the fifth waits for a worker */
        T_EQ(st.queued, 1);
        t_gate_open(&gate);
        threads_settle(pool, 1);          /* the three extra ones retire */
        pp_pool_stats(pool, &st);
        T_EQ(st.completed, 5 * (round + 1));
        T_EQ(st.threads_peak, 4);
        T_EQ(sum(h.stops), 3 * (round + 1));
    }
    pp_pool_destroy(pool);
    T_EQ(sum(h.starts), 7);
    T_EQ(sum(h.stops), 7);
    T_EQ(h.wrong_thread, 0);
    apr_pool_destroy(p);
}

/* Retired and restarted workers under load: tasks from outside and from
 * tasks, with an idle_timeout short enough that workers come and go all
 * the time; every task runs once, and an idle pool ends at min_threads. */
static apr_status_t spawn_child(void *arg, pp_task_ctx_t *ctx)
{
    churn *c = arg;

    (void)ctx;
    apr_atomic_inc32(&c->ran);
    if ((apr_atomic_read32(&c->ran) & 7) == 0)
        apr_sleep(200);    /* now and then long enough to need help */
    if (pp_submit_ex(c->pool, churn_child, c, c->g, 0) != APR_SUCCESS)
        apr_atomic_inc32(&c->errors);
    return APR_SUCCESS;
}

static void elastic_produce(void *arg)
{
    churn *c = arg;
    apr_uint32_t i, n = t_scaled(5000);

    for (i = 0; i < n; i++) {
        if (pp_submit_ex(c->pool, spawn_child, c, c->g, 0) != APR_SUCCESS)
            apr_atomic_inc32(&c->errors);
        if (i % 64 == 0)
            apr_sleep(300);    /* gaps in which workers retire */
    }
}

static void test_elastic_churn(void)
{
    apr_pool_t *p;
    churn c;
    t_thread *producers[2];
    pp_stats_t st;
    int i;

    memset(&c, 0, sizeof(c));
    apr_pool_create(&p, t_root);
    c.pool = elastic_pool(p, NULL, 4, 1, 200, 0);
    T_OK(pp_group_create(&c.g, p));
    for (i = 0; i < 2; i++)
        producers[i] = t_spawn(elastic_produce, &c);
    for (i = 0; i < 2; i++)
        t_join(producers[i]);
    T_OK(pp_group_wait(c.g, apr_time_from_sec(60)));
    T_EQ(c.ran, 2 * 2 * t_scaled(5000));
    T_EQ(c.errors, 0);
    threads_settle(c.pool, 1);
    pp_pool_stats(c.pool, &st);
    CU_ASSERT(st.threads_peak <= 4);
    pp_pool_destroy(c.pool);
    apr_pool_destroy(p);
}

/* An elastic pool paused with one worker left: what was queued meanwhile
 * gets workers started for it on the resume, up to threads at once. */
static void test_elastic_paused(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate;
    int i;

    memset(&gate, 0, sizeof(gate));
    apr_pool_create(&p, t_root);
    pool = elastic_pool(p, NULL, 3, 1, apr_time_from_msec(50), 0);
    T_OK(pp_pool_pause(pool));
    for (i = 0; i < 3; i++)
        T_OK(pp_submit(pool, t_gate_task, &gate));
    apr_sleep(apr_time_from_msec(20));
    T_EQ(gate.arrived, 0);
    T_OK(pp_pool_resume(pool));
    t_gate_wait_arrived(&gate, 3);    /* three at once: two were started */
    t_gate_open(&gate);
    threads_settle(pool, 1);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* A worker started on demand whose start hook fails leaves at once, and
 * on_log says so; the tasks it was started for still run, on the workers
 * there are. */
static volatile apr_uint32_t start_fail_logged;

static void count_start_fail(int level, const char *message, void *baton)
{
    (void)baton;
    if (level == PP_LOG_ERROR && strstr(message, "on_thread_start failed"))
        apr_atomic_inc32(&start_fail_logged);
}

static void test_elastic_start_fails(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t ran = 0;
    int i;

    memset((void *)&h, 0, sizeof(h));
    h.fail_worker = 1;    /* the first slot a start takes */
    apr_atomic_set32(&start_fail_logged, 0);
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 3;
    cfg.min_threads = 1;
    cfg.on_thread_start = on_start;
    cfg.on_thread_stop = on_stop;
    cfg.on_log = count_start_fail;
    cfg.baton = &h;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK(pp_group_create(&g, p));
    for (i = 0; i < 200; i++)
        T_OK(pp_submit_ex(pool, sleep_task, (void *)(apr_uintptr_t)100, g, 0));
    for (i = 0; i < 200; i++)
        T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0));
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_EQ(ran, 200);
    CU_ASSERT(apr_atomic_read32(&start_fail_logged) >= 1);
    pp_pool_destroy(pool);
    T_EQ(h.starts[0], h.stops[0]);
    T_EQ(h.starts[1], 0);    /* never started, never stopped */
    T_EQ(h.stops[1], 0);
    T_EQ(h.wrong_thread, 0);
    apr_pool_destroy(p);
}

static void test_elastic_config(void)
{
    apr_pool_t *p;
    pp_config_t cfg;
    pp_pool_t *pool = NULL;

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.min_threads = 3;
    T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EINVAL);
    cfg.min_threads = 1;
    cfg.idle_timeout = -1;
    T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EINVAL);
    cfg.idle_timeout = 0;
    cfg.max_blocking = 100000;
    T_STATUS(pp_pool_create(&pool, &cfg, p), APR_EINVAL);
    CU_ASSERT_PTR_NULL(pool);
    apr_pool_destroy(p);
}

/* ---- blocking compensation */

typedef struct barrier {
    volatile apr_uint32_t arrived;
    apr_uint32_t n;
    apr_interval_time_t limit;
    int bracket;
} barrier;

/* Wait until n tasks are here (or the limit passes: then fail). */
static apr_status_t barrier_task(void *arg, pp_task_ctx_t *ctx)
{
    barrier *b = arg;
    apr_time_t end = apr_time_now() + b->limit;
    apr_status_t rv = APR_SUCCESS;

    if (b->bracket)
        pp_task_block_begin(ctx);
    apr_atomic_inc32(&b->arrived);
    while (apr_atomic_read32(&b->arrived) < b->n) {
        if (apr_time_now() > end) {
            rv = APR_TIMEUP;
            break;
        }
        apr_sleep(500);
    }
    if (b->bracket)
        pp_task_block_end(ctx);
    return rv;
}

static void run_barrier(apr_uint32_t threads, apr_uint32_t max_blocking, int bracket,
                        apr_interval_time_t limit, apr_status_t want, apr_uint32_t peak)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_stats_t st;
    barrier b;
    int i;

    memset(&b, 0, sizeof(b));
    b.n = 4;
    b.limit = limit;
    b.bracket = bracket;
    apr_pool_create(&p, t_root);
    pool = elastic_pool(p, NULL, threads, 0, 0, max_blocking);
    T_OK(pp_group_create(&g, p));
    for (i = 0; i < 4; i++)
        T_OK(pp_submit_ex(pool, barrier_task, &b, g, 0));
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_STATUS(pp_group_status(g), want);
    pp_pool_stats(pool, &st);
    T_EQ(st.threads_peak, peak);
    threads_settle(pool, threads);    /* the stand-ins leave as they idle */
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

static void test_block_sections(void)
{
    /* 2 workers, 4 tasks that each wait for all 4: in block sections,
     * two more workers stand in; without, they cannot all meet. */
    run_barrier(2, 0, 1, apr_time_from_sec(30), APR_SUCCESS, 4);
    run_barrier(2, 0, 0, apr_time_from_msec(200), APR_TIMEUP, 2);
    /* max_blocking bounds the stand-ins: 1 more, 3 at once, no meeting. */
    run_barrier(2, 1, 1, apr_time_from_msec(200), APR_TIMEUP, 3);
    /* PP_BLOCKING_NONE: threads is a hard bound, block sections or not. */
    run_barrier(2, PP_BLOCKING_NONE, 1, apr_time_from_msec(200), APR_TIMEUP, 2);
}

/* A drain whose only worker enters a block section starts one worker for
 * what is queued behind it (parkpool.h, on_thread_start): here the
 * blocked task waits for the queued one, so without that start the drain
 * could not end. */
typedef struct drain_latch {
    volatile apr_uint32_t draining, opened;
} drain_latch;

static apr_status_t blocks_until_opened(void *arg, pp_task_ctx_t *ctx)
{
    drain_latch *l = arg;
    apr_time_t end = apr_time_now() + apr_time_from_sec(10);

    while (!apr_atomic_read32(&l->draining) && apr_time_now() < end)
        apr_sleep(1000);
    pp_task_block_begin(ctx);
    while (!apr_atomic_read32(&l->opened) && apr_time_now() < end)
        apr_sleep(1000);
    pp_task_block_end(ctx);
    return apr_atomic_read32(&l->opened) ? APR_SUCCESS : APR_TIMEUP;
}

static apr_status_t opens_latch(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_set32(&((drain_latch *)arg)->opened, 1);
    return APR_SUCCESS;
}

static void test_drain_starts_for_blocked(void)
{
    drain_latch l = { 0, 0 };
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK(pp_submit(pool, blocks_until_opened, &l));
    T_OK(pp_submit(pool, opens_latch, &l));
    /* Started, not awaited: the task blocks only once the drain began. */
    T_STATUS(pp_pool_shutdown(pool, PP_DRAIN, 0), APR_TIMEUP);
    apr_atomic_set32(&l.draining, 1);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(30)));
    T_EQ(l.opened, 1);
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 2);
    T_EQ(st.failed, 0);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

/* More workers than cores: a burst wakes no more than the cores at once
 * (pp__wake_room), yet tasks that need every worker at once, not in block
 * sections, still meet: each worker that finds work while more waits
 * wakes the next. Fixed and elastic, from outside and from a task. */
typedef struct burst {
    barrier b;
    pp_pool_t *pool;
    pp_group_t *g;
} burst;

static apr_status_t submit_all(void *arg, pp_task_ctx_t *ctx)
{
    burst *u = arg;
    apr_uint32_t i;

    (void)ctx;
    for (i = 0; i < u->b.n; i++)
        if (pp_submit_ex(u->pool, barrier_task, &u->b, u->g, 0) != APR_SUCCESS)
            return APR_EGENERAL;
    return APR_SUCCESS;
}

static void test_more_workers_than_cores(void)
{
    apr_uint32_t n = (apr_uint32_t)t_os_cpu_count() + 3, min, i, inside;

    for (inside = 0; inside < 2; inside++)
        for (min = 0; min < 2; min++) {
            apr_pool_t *p;
            pp_pool_t *pool;
            pp_group_t *g;
            pp_stats_t st;
            burst u;

            memset(&u, 0, sizeof(u));
            u.b.n = n;
            u.b.limit = apr_time_from_sec(30);
            apr_pool_create(&p, t_root);
            /* The submitting task's worker then takes one of them. */
            pool = u.pool = elastic_pool(p, NULL, n, min, 0, 0);
            T_OK(pp_group_create(&g, p));
            u.g = g;
            if (inside)
                T_OK(pp_submit_ex(pool, submit_all, &u, g, 0));
            else
                for (i = 0; i < n; i++)
                    T_OK(pp_submit_ex(pool, barrier_task, &u.b, g, 0));
            T_OK(pp_group_wait(g, apr_time_from_sec(60)));
            T_OK(pp_group_status(g));
            pp_pool_stats(pool, &st);
            T_EQ(st.threads_peak, n);
            pp_pool_destroy(pool);
            apr_pool_destroy(p);
        }
}

/* A task on pool A waits for a group on pool B whose task needs a task
 * queued on A: A's only worker cannot help (the group is B's), so it
 * stands aside while it sleeps, and another worker runs A's task. */
typedef struct cross {
    pp_pool_t *a, *b;
    pp_group_t *gb;
    volatile apr_uint32_t z_ran;
} cross;

static apr_status_t z_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_set32(&((cross *)arg)->z_ran, 1);
    return APR_SUCCESS;
}

static apr_status_t y_task(void *arg, pp_task_ctx_t *ctx)
{
    cross *c = arg;
    apr_time_t end = apr_time_now() + apr_time_from_sec(30);

    (void)ctx;
    while (!apr_atomic_read32(&c->z_ran))
        if (apr_time_now() > end)
            return APR_TIMEUP;
        else
            apr_sleep(500);
    return APR_SUCCESS;
}

static apr_status_t x_task(void *arg, pp_task_ctx_t *ctx)
{
    cross *c = arg;
    apr_status_t rv;

    (void)ctx;
    rv = pp_submit_ex(c->b, y_task, c, c->gb, 0);
    if (rv == APR_SUCCESS)
        rv = pp_submit(c->a, z_task, c);    /* queued behind x on A */
    if (rv == APR_SUCCESS)
        rv = pp_group_wait(c->gb, apr_time_from_sec(30));
    return rv == APR_SUCCESS ? pp_group_status(c->gb) : rv;
}

static void test_group_wait_stands_aside(void)
{
    apr_pool_t *p;
    pp_group_t *ga;
    cross c;

    memset(&c, 0, sizeof(c));
    apr_pool_create(&p, t_root);
    c.a = t_pool(p, 1, 0);
    c.b = t_pool(p, 1, 0);
    T_OK(pp_group_create(&ga, p));
    T_OK(pp_group_create(&c.gb, p));
    T_OK(pp_submit_ex(c.a, x_task, &c, ga, 0));
    T_OK(pp_group_wait(ga, apr_time_from_sec(60)));
    T_OK(pp_group_status(ga));
    T_EQ(c.z_ran, 1);
    pp_pool_destroy(c.a);
    pp_pool_destroy(c.b);
    apr_pool_destroy(p);
}

/* ---- timed submit */

typedef struct timed {
    pp_pool_t *pool;
    apr_status_t rv;
} timed;

static void submit_waits(void *arg)
{
    timed *t = arg;
    pp_task_t task;

    memset(&task, 0, sizeof(task));
    task.fn = noop;
    t->rv = pp_submit_timed(t->pool, &task, NULL, apr_time_from_sec(30));
}

static void test_submit_timed(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    pp_task_t task;
    t_gate gate;
    timed t;
    t_thread *th;
    apr_time_t t0;
    pp_stats_t st;

    memset(&gate, 0, sizeof(gate));
    memset(&task, 0, sizeof(task));
    task.fn = noop;
    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 2);
    T_OK(pp_group_create(&g, p));
    T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    T_OK(pp_submit_timed(pool, &task, g, 0));    /* room: no wait */
    T_OK(pp_submit_timed(pool, &task, g, 0));
    T_STATUS(pp_submit_timed(pool, &task, g, 0), APR_TIMEUP);
    t0 = apr_time_now();
    T_STATUS(pp_submit_timed(pool, &task, g, apr_time_from_msec(50)), APR_TIMEUP);
    CU_ASSERT(apr_time_now() - t0 >= apr_time_from_msec(45));
    T_STATUS(pp_submit_ex(pool, noop, NULL, g, PP_NOWAIT), PP_EFULL);
    pp_pool_stats(pool, &st);
    T_EQ(st.blocked, 0);    /* the timed-out waiters are gone */
    /* A waiter gets in when room is made within its time. */
    t.pool = pool;
    t.rv = APR_EGENERAL;
    th = t_spawn(submit_waits, &t);
    apr_sleep(apr_time_from_msec(20));
    t_gate_open(&gate);
    t_join(th);
    T_OK(t.rv);
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));    /* the timed-out ones are not in it */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 4);
    T_STATUS(pp_submit_timed(pool, &task, NULL, 0), PP_ESHUTDOWN);
    T_STATUS(pp_submit_timed(NULL, &task, NULL, 0), APR_EINVAL);
    pp_pool_destroy(pool);
    apr_pool_destroy(p);
}

void t_register_service(void)
{
    CU_pSuite s = CU_add_suite("service", NULL, NULL);

    CU_add_test(s, "thread hooks: each worker's start and stop once, on its thread",
                test_thread_hooks);
    CU_add_test(s, "thread hooks: a replaced thread stops, its successor starts",
                test_thread_hooks_replaced);
    CU_add_test(s, "a failing start hook fails pool creation cleanly", test_thread_start_fails);
    CU_add_test(s, "on_task_end: every task's name, status, worker (and times)", test_task_end);
    CU_add_test(s, "timing: wait and run percentiles, peaks", test_timing_stats);
    CU_add_test(s, "pause holds queued tasks at no CPU; resume runs them", test_pause_holds);
    CU_add_test(s, "pause lets running tasks finish and holds what they queue",
                test_pause_running);
    CU_add_test(s, "a paused pool drains or cancels as asked", test_pause_shutdown);
    CU_add_test(s, "pause and resume racing producers lose no task", test_pause_churn);
    CU_add_test(s, "pp_submit_timed: waits at most its timeout for room", test_submit_timed);
    CU_add_test(s, "elastic: workers start on demand up to threads, retire when idle",
                test_elastic);
    CU_add_test(s, "elastic: workers coming and going lose no task", test_elastic_churn);
    CU_add_test(s, "elastic: a resume starts workers for what waited", test_elastic_paused);
    CU_add_test(s, "elastic: a failing start hook of a later worker loses no task",
                test_elastic_start_fails);
    CU_add_test(s, "elastic: bad min_threads, idle_timeout, max_blocking", test_elastic_config);
    CU_add_test(s, "block sections: stand-in workers, bounded by max_blocking",
                test_block_sections);
    CU_add_test(s, "a drain whose workers all block starts one for the queue",
                test_drain_starts_for_blocked);
    CU_add_test(s, "more workers than cores: tasks that need them all get them",
                test_more_workers_than_cores);
    CU_add_test(s, "a task waiting for another pool's group stands aside",
                test_group_wait_stands_aside);
}
