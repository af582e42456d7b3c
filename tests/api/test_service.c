/* SPDX-License-Identifier: Apache-2.0 */
/* What a service embedding the pool uses beyond tasks: thread hooks,
 * task observation and timing, pause and resume, timed submits. */
#include "config.h"
#include "testutil.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>

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

static void test_thread_hooks(void)
{
    static hooks h;
    apr_pool_t *p;
    pp_pool_t *pool;
    apr_uint32_t i;

    memset((void *)&h, 0, sizeof(h));
    h.fail_worker = MAXW;
    apr_pool_create(&p, t_root);
    pool = hooked_pool(p, &h, 4, APR_SUCCESS);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    for (i = 0; i < 4; i++)    /* every start hook ran before the pool was handed out */
        T_EQ_AT(i, h.starts[i], 1);
    for (i = 0; i < 2000; i++)
        T_OK(pp_submit(pool, mark_task, &h));
    pp_pool_destroy(pool);
    for (i = 0; i < MAXW; i++) {
        T_EQ_AT(i, h.starts[i], i < 4);
        T_EQ_AT(i, h.stops[i], i < 4);
    }
    T_EQ(h.wrong_thread, 0);
    apr_pool_destroy(p);
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

/* Wait (5 s at most) until the pool has n workers parked. */
static void idle_settles(pp_pool_t *pool, apr_uint64_t n)
{
    pp_stats_t st;
    int i;

    for (i = 0; i < 5000; i++) {
        pp_pool_stats(pool, &st);
        if (st.threads_idle == n)
            return;
        apr_sleep(1000);
    }
    T_EQ(st.threads_idle, n);
}

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
}
