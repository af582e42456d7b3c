/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Correctness at the edges: one test per defect found when the library was
 * used the way an embedding service uses it (issue 10's numbered items are
 * named in each test's title). Each fails on the code before its fix.
 */
#include "config.h"
#include "testutil.h"
#include "parkpool/plugin.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <string.h>

/* Run fn(arg) on a thread and wait up to `seconds` for it to return:
 * a call that used to hang fails the test instead of the whole run (the
 * thread is then left behind). Non-zero when it returned in time. */
typedef struct bounded {
    t_thread_fn fn;
    void *arg;
    volatile apr_uint32_t done;
} bounded;

static void bounded_main(void *data)
{
    bounded *b = data;

    b->fn(b->arg);
    apr_atomic_set32(&b->done, 1);
}

static int returns_within(t_thread_fn fn, void *arg, int seconds)
{
    bounded *b = apr_pcalloc(t_root, sizeof(*b));
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(seconds);
    t_thread *t;

    b->fn = fn;
    b->arg = arg;
    t = t_spawn(bounded_main, b);
    while (!apr_atomic_read32(&b->done) && apr_time_now() < deadline)
        apr_sleep(1000);
    if (!apr_atomic_read32(&b->done))
        return 0;
    t_join(t);
    return 1;
}

static void wait_blocked(pp_pool_t *pool, apr_uint64_t n)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    pp_stats_t st;

    do {
        pp_pool_stats(pool, &st);
        if (st.blocked >= n)
            return;
        apr_sleep(500);
    } while (apr_time_now() < deadline);
    CU_FAIL_FATAL("submitters never blocked");
}

/* ------------------------------------------------ 1: room for the right waiter */

typedef struct room {
    pp_pool_t *pool;
    volatile apr_uint32_t single_done;
    apr_status_t batch_rv, single_rv;
    apr_uint32_t count;
} room;

/* Waits (5 s at most) for the single submitter: if the freed slot went to
 * the batch waiter, which cannot use it, this waits in vain. */
static apr_status_t wait_for_single(void *arg, pp_task_ctx_t *ctx)
{
    room *r = arg;
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(5);

    (void)ctx;
    while (!apr_atomic_read32(&r->single_done))
        if (apr_time_now() > deadline)
            return APR_TIMEUP;
        else
            apr_sleep(200);
    return APR_SUCCESS;
}

static void submit_batch_of_two(void *arg)
{
    room *r = arg;
    pp_task_fn fns[2] = { t_count_task, t_count_task };
    void *args[2] = { &r->count, &r->count };

    r->batch_rv = pp_submit_batch(r->pool, fns, args, 2, NULL);
}

static void submit_single(void *arg)
{
    room *r = arg;

    r->single_rv = pp_submit(r->pool, t_count_task, &r->count);
    apr_atomic_set32(&r->single_done, 1);
}

static void test_room_goes_to_a_waiter_that_fits(void)
{
    apr_pool_t *p;
    room r;
    t_gate gate;
    pp_group_t *g;
    t_thread *batch, *single;

    memset(&r, 0, sizeof(r));
    memset(&gate, 0, sizeof(gate));
    apr_pool_create(&p, t_root);
    r.pool = t_pool(p, 1, 2);
    T_OK_FATAL(pp_group_create(&g, p));
    T_OK(pp_submit(r.pool, t_hold_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    /* Full: the task that waits for the single submitter, then one more. */
    T_OK(pp_submit_ex(r.pool, wait_for_single, &r, g, 0));
    T_OK(pp_submit(r.pool, t_count_task, &r.count));
    batch = t_spawn(submit_batch_of_two, &r);      /* waits first */
    wait_blocked(r.pool, 1);
    single = t_spawn(submit_single, &r);            /* then this one */
    wait_blocked(r.pool, 2);
    t_gate_open(&gate);
    /* The worker takes wait_for_single: one slot frees, which only the
     * single submitter can use. */
    T_OK(pp_group_wait(g, apr_time_from_sec(30)));
    T_OK(pp_group_status(g));
    t_join(single);
    t_join(batch);
    T_OK(r.single_rv);
    T_OK(r.batch_rv);
    T_OK(pp_pool_shutdown(r.pool, PP_DRAIN, -1));
    T_EQ(r.count, 4);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 2: huge timeouts, monotonic waits */

typedef struct huge {
    pp_pool_t *pool;
    pp_group_t *group;
    apr_status_t rv;
} huge;

static apr_status_t short_nap(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    apr_sleep(apr_time_from_msec(20));
    return APR_SUCCESS;
}

static void group_wait_max(void *arg)
{
    huge *h = arg;

    h->rv = pp_group_wait(h->group, APR_INT64_MAX);
}

static void drain_max(void *arg)
{
    huge *h = arg;

    h->rv = pp_pool_shutdown(h->pool, PP_DRAIN, APR_INT64_MAX);
}

static void test_huge_timeouts_mean_no_limit(void)
{
    apr_pool_t *p;
    huge h;

    memset(&h, 0, sizeof(h));
    apr_pool_create(&p, t_root);
    h.pool = t_pool(p, 2, 0);
    T_OK_FATAL(pp_group_create(&h.group, p));
    T_OK(pp_submit_ex(h.pool, short_nap, NULL, h.group, 0));
    CU_ASSERT_FATAL(returns_within(group_wait_max, &h, 20));
    T_OK(h.rv);
    T_OK(pp_submit_ex(h.pool, short_nap, NULL, h.group, 0));
    h.rv = APR_EGENERAL;
    CU_ASSERT_FATAL(returns_within(drain_max, &h, 20));
    T_OK(h.rv);
    T_OK(pp_group_wait(h.group, APR_INT64_MAX - 1));
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 3: drops in flight keep the pool */

typedef struct slow_drops {
    pp_group_t *group;
    volatile apr_uint32_t drops;
    apr_status_t rv;
} slow_drops;

static void slow_drop_report(apr_status_t status, const char *name, void *baton)
{
    slow_drops *d = baton;

    (void)name;
    if (status == PP_ECANCELLED) {
        apr_sleep(2000);
        apr_atomic_inc32(&d->drops);
    }
}

static void cancel_group(void *arg)
{
    slow_drops *d = arg;

    d->rv = pp_group_cancel(d->group);
}

/* One worker, held in gate, reporting drops slowly into d. */
static pp_pool_t *slow_drop_pool(apr_pool_t *p, slow_drops *d, t_gate *gate)
{
    pp_config_t cfg;
    pp_pool_t *pool;

    memset(d, 0, sizeof(*d));
    memset(gate, 0, sizeof(*gate));
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.on_task_error = slow_drop_report;
    cfg.baton = d;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK(pp_submit(pool, t_hold_task, gate));
    t_gate_wait_arrived(gate, 1);
    return pool;
}

static void test_destroy_waits_for_a_group_cancel(void)
{
    apr_pool_t *p, *gp;
    pp_pool_t *pool;
    slow_drops d;
    t_gate gate;
    t_thread *t;
    apr_uint32_t i, ran = 0;

    apr_pool_create(&p, t_root);
    apr_pool_create(&gp, t_root);    /* the group outlives the pool */
    pool = slow_drop_pool(p, &d, &gate);
    T_OK_FATAL(pp_group_create(&d.group, gp));
    for (i = 0; i < 50; i++)
        T_OK(pp_submit_ex(pool, t_count_task, &ran, d.group, 0));
    t = t_spawn(cancel_group, &d);
    while (apr_atomic_read32(&d.drops) == 0)
        apr_sleep(200);
    t_gate_open(&gate);
    /* The canceller took the 50 tasks out of the queue and drops them
     * slowly; the destroy must not free the pool under it. */
    pp_pool_destroy(pool);
    T_EQ(apr_atomic_read32(&d.drops), 50);
    t_join(t);
    T_OK(d.rv);
    T_EQ(ran, 0);
    T_STATUS(pp_group_status(d.group), PP_ECANCELLED);
    apr_pool_destroy(gp);
    apr_pool_destroy(p);
}

typedef struct two_cancels {
    pp_pool_t *pool;
    apr_status_t rv;
} two_cancels;

static void cancel_pool(void *arg)
{
    two_cancels *c = arg;

    c->rv = pp_pool_shutdown(c->pool, PP_CANCEL, -1);
}

/* parkpool run's second Ctrl-C: one thread cancels (dropping slowly)
 * while another's shutdown returns and destroys the pool. */
static void test_destroy_waits_for_a_cancelling_thread(void)
{
    apr_pool_t *p;
    two_cancels c;
    slow_drops d;
    t_gate gate;
    t_thread *t;
    apr_uint32_t i, ran = 0;

    apr_pool_create(&p, t_root);
    c.pool = slow_drop_pool(p, &d, &gate);
    for (i = 0; i < 50; i++)
        T_OK(pp_submit(c.pool, t_count_task, &ran));
    t = t_spawn(cancel_pool, &c);
    while (apr_atomic_read32(&d.drops) == 0)
        apr_sleep(200);
    t_gate_open(&gate);
    pp_pool_destroy(c.pool);
    T_EQ(apr_atomic_read32(&d.drops), 50);
    t_join(t);
    T_OK(c.rv);
    T_EQ(ran, 0);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 5: destroyed from its own task */

typedef struct self_destroy {
    pp_pool_t *pool;
    apr_pool_t *parent;
    volatile apr_uint32_t returned;
    volatile apr_uint32_t count;
} self_destroy;

static apr_status_t destroy_own_pool(void *arg, pp_task_ctx_t *ctx)
{
    self_destroy *s = arg;

    (void)ctx;
    pp_pool_destroy(s->pool);
    apr_atomic_set32(&s->returned, 1);
    return APR_SUCCESS;
}

static apr_status_t destroy_own_parent(void *arg, pp_task_ctx_t *ctx)
{
    self_destroy *s = arg;

    (void)ctx;
    apr_pool_destroy(s->parent);
    apr_atomic_set32(&s->returned, 1);
    return APR_SUCCESS;
}

static void self_destroy_case(pp_task_fn fn)
{
    /* Not on the stack: the pool's last worker may still be on its way
     * out when this returns, and nothing here waits for it but the OS. */
    self_destroy *s = apr_pcalloc(t_root, sizeof(*s));
    int before = t_os_thread_count();
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    apr_uint32_t i;

    apr_pool_create(&s->parent, t_root);
    s->pool = t_pool(s->parent, 3, 0);
    for (i = 0; i < 100; i++)
        T_OK(pp_submit(s->pool, t_count_task, (void *)&s->count));
    T_OK(pp_submit(s->pool, fn, s));
    while (!apr_atomic_read32(&s->returned) && apr_time_now() < deadline)
        apr_sleep(500);
    CU_ASSERT_FATAL(apr_atomic_read32(&s->returned));
    /* The drain it started ran everything, and the last worker out freed
     * the pool and let the OS reap the threads (ASan and valgrind in CI
     * check that nothing was used after it or leaked). */
    T_EQ(t_thread_count_settles(before), before);
    T_EQ(apr_atomic_read32(&s->count), 100);
}

static void test_destroy_from_own_task(void)
{
    self_destroy_case(destroy_own_pool);
}

static void test_parent_destroyed_from_own_task(void)
{
    self_destroy_case(destroy_own_parent);
}

/* ------------------------------------------------ 4: a task frees its group's pool */

typedef struct request {
    apr_pool_t *rp;       /* the request's pool: its group lives there */
    pp_group_t *group;
    volatile apr_uint32_t left;
} request;

/* The last of the request's tasks frees the request. */
static apr_status_t request_part(void *arg, pp_task_ctx_t *ctx)
{
    request *r = arg;

    (void)ctx;
    if (apr_atomic_dec32(&r->left) == 0)
        apr_pool_destroy(r->rp);
    return APR_SUCCESS;
}

static void test_task_frees_its_groups_pool(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    request r[20];
    int i, k;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    for (i = 0; i < 20; i++) {
        apr_pool_create(&r[i].rp, p);
        T_OK_FATAL(pp_group_create(&r[i].group, r[i].rp));
        r[i].left = 10;
        for (k = 0; k < 10; k++)
            T_OK(pp_submit_ex(pool, request_part, &r[i], r[i].group, 0));
    }
    /* Each group is freed by its last task's leave (ASan and valgrind in
     * CI see any use after that); the pool just drains. */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    for (i = 0; i < 20; i++)
        T_EQ_AT(i, r[i].left, 0);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 9, 12: registries and their tasks */

static void *held_of_test;    /* parse_held's answer */

typedef struct held {
    t_gate gate;
    apr_pool_t *rp;    /* the registry's pool */
    volatile apr_uint32_t destroyed;
} held;

static apr_status_t held_run(void *arg, pp_task_ctx_t *ctx)
{
    return t_hold_task(&((held *)arg)->gate, ctx);
}

static void destroy_registry_pool(void *arg)
{
    held *h = arg;

    apr_pool_destroy(h->rp);
    apr_atomic_set32(&h->destroyed, 1);
}

static void test_copied_type_keeps_its_registry(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_registry_t *reg;
    pp_task_type_t t = { "edge.hold", "held", NULL, held_run, NULL, NULL };
    pp_task_type_t copy;
    held h;
    t_thread *th;

    memset(&h, 0, sizeof(h));
    apr_pool_create(&p, t_root);
    apr_pool_create(&h.rp, t_root);
    pool = t_pool(p, 1, 0);
    T_OK_FATAL(pp_registry_create(&reg, h.rp));
    T_OK_FATAL(pp_registry_add(reg, &t));
    copy = *pp_registry_find(reg, "edge.hold");    /* a copy, not the pointer */
    T_OK(pp_submit_typed(pool, &copy, &h, NULL));
    t_gate_wait_arrived(&h.gate, 1);
    th = t_spawn(destroy_registry_pool, &h);
    apr_sleep(apr_time_from_msec(100));
    /* The registry (and the plugin it would unload) waits for the task. */
    T_EQ(apr_atomic_read32(&h.destroyed), 0);
    t_gate_open(&h.gate);
    t_join(th);
    T_EQ(h.destroyed, 1);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

static apr_status_t destroy_own_registry(void *arg, pp_task_ctx_t *ctx)
{
    held *h = arg;

    (void)ctx;
    apr_pool_destroy(h->rp);
    apr_atomic_set32(&h->destroyed, 1);
    return APR_SUCCESS;
}

static apr_status_t parse_held(void **arg, const char *text, apr_pool_t *p)
{
    (void)text;
    (void)p;
    *arg = held_of_test;
    return APR_SUCCESS;
}

static void test_registry_destroyed_from_own_task(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_registry_t *reg;
    pp_task_type_t t = { "edge.selfdestroy", "frees its registry", parse_held,
                         destroy_own_registry, NULL, NULL };
    held h;

    memset(&h, 0, sizeof(h));
    held_of_test = &h;
    apr_pool_create(&p, t_root);
    apr_pool_create(&h.rp, t_root);
    pool = t_pool(p, 2, 0);
    T_OK_FATAL(pp_registry_create(&reg, h.rp));
    T_OK_FATAL(pp_registry_add(reg, &t));
    T_OK(pp_submit_named(pool, reg, "edge.selfdestroy", "", NULL));
    /* It used to wait for itself for ever: the drain never ended. */
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, apr_time_from_sec(20)));
    T_EQ(h.destroyed, 1);
    apr_pool_destroy(p);
}

typedef struct adding {
    pp_registry_t *reg;
    char names[300][24];
    volatile apr_uint32_t added;
    apr_uint32_t missing;
} adding;

static apr_status_t noop_run(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

static void add_types(void *arg)
{
    adding *a = arg;
    apr_uint32_t i;

    for (i = 0; i < 300; i++) {
        pp_task_type_t t = { a->names[i], "", NULL, noop_run, NULL, NULL };
        T_OK(pp_registry_add(a->reg, &t));
        apr_atomic_set32(&a->added, i + 1);
    }
}

static void find_types(void *arg)
{
    adding *a = arg;
    apr_uint32_t n, i;

    do {
        n = apr_atomic_read32(&a->added);
        for (i = 0; i < n; i++)
            if (!pp_registry_find(a->reg, a->names[i]))
                a->missing++;
        pp_registry_find(a->reg, "edge.none");
    } while (n < 300);
}

/* Item 15: lookups may run while types are added (TSan sees the rest). */
static void test_registry_add_while_finding(void)
{
    apr_pool_t *p;
    adding *a;
    t_thread *adder, *finder;
    int i;

    apr_pool_create(&p, t_root);
    a = apr_pcalloc(p, sizeof(*a));
    for (i = 0; i < 300; i++)
        apr_snprintf(a->names[i], sizeof(a->names[i]), "edge.t%d", i);
    T_OK_FATAL(pp_registry_create(&a->reg, p));
    finder = t_spawn(find_types, a);
    adder = t_spawn(add_types, a);
    t_join(adder);
    t_join(finder);
    T_EQ(a->missing, 0);
    T_EQ(pp_registry_count(a->reg), 300);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 10: a cancel keeps its timeout */

typedef struct slow_release {
    volatile apr_uint32_t released, ran;
} slow_release;

static apr_status_t count_ran(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(&((slow_release *)arg)->ran);
    return APR_SUCCESS;
}

static void release_slowly(void *arg)
{
    apr_sleep(10000);
    apr_atomic_inc32(&((slow_release *)arg)->released);
}

static void test_cancel_keeps_its_timeout(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    slow_release r;
    pp_task_t task = { .fn = count_ran, .release = release_slowly, .name = "slow" };
    t_gate gate;
    apr_time_t took;
    apr_uint32_t i;
    pp_stats_t st;

    memset(&r, 0, sizeof(r));
    memset(&gate, 0, sizeof(gate));
    task.arg = &r;
    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK(pp_submit(pool, t_hold_task, &gate));
    t_gate_wait_arrived(&gate, 1);
    for (i = 0; i < 300; i++)
        T_OK(pp_submit_task(pool, &task, NULL, 0));
    /* 300 releases of 10 ms each: 3 s to drop them all, against a
     * 100 ms limit. */
    took = apr_time_now();
    T_STATUS(pp_pool_shutdown(pool, PP_CANCEL, apr_time_from_msec(100)), APR_TIMEUP);
    took = apr_time_now() - took;
    CU_ASSERT(took < apr_time_from_sec(2));
    CU_ASSERT(apr_atomic_read32(&r.released) < 300);
    /* The rest is dropped by the worker once free, each exactly once. */
    t_gate_open(&gate);
    T_OK(pp_pool_shutdown(pool, PP_CANCEL, -1));
    T_EQ(r.released, 300);
    T_EQ(r.ran, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.cancelled, 300);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* ------------------------------------------------ 15: small crashes and lies */

static void test_stats_into_null(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    pp_pool_stats(pool, NULL);
    pp_pool_stats(NULL, NULL);
    memset(&st, 0xff, sizeof(st));
    pp_pool_stats(NULL, &st);
    T_EQ(st.submitted, 0);
    T_EQ(st.threads, 0);
    apr_pool_destroy(p);
}

typedef struct storm {
    pp_pool_t *pool;
    volatile apr_uint32_t stop;
    volatile apr_uint32_t over;
    apr_uint32_t reads;
} storm;

static apr_status_t storm_task(void *arg, pp_task_ctx_t *ctx);

static apr_status_t storm_leaf(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

/* Each storm task queues 8 leaves and itself again until told to stop. */
static apr_status_t storm_task(void *arg, pp_task_ctx_t *ctx)
{
    storm *s = arg;
    int i;

    (void)ctx;
    for (i = 0; i < 8; i++)
        pp_submit(s->pool, storm_leaf, NULL);
    if (!apr_atomic_read32(&s->stop))
        pp_submit(s->pool, storm_task, s);
    return APR_SUCCESS;
}

static void read_stats(void *arg)
{
    storm *s = arg;
    pp_stats_t st;
    apr_uint32_t i;

    for (i = 0; i < s->reads; i++) {
        pp_pool_stats(s->pool, &st);
        if (st.running > st.threads)
            apr_atomic_inc32(&s->over);
    }
}

static void test_running_never_exceeds_the_workers(void)
{
    apr_pool_t *p;
    storm s;
    void *args[2];
    int i;

    memset(&s, 0, sizeof(s));
    s.reads = t_scaled(200000);
    apr_pool_create(&p, t_root);
    s.pool = t_pool(p, 4, 0);
    for (i = 0; i < 4; i++)
        T_OK(pp_submit(s.pool, storm_task, &s));
    args[0] = args[1] = &s;
    /* Two readers beside four busy workers on (in CI) two cores: the
     * readers are preempted between their reads of the counters. */
    t_run_threads(2, read_stats, args);
    apr_atomic_set32(&s.stop, 1);
    T_OK(pp_pool_shutdown(s.pool, PP_DRAIN, -1));
    T_EQ(s.over, 0);
    t_assert_accounted(s.pool);
    apr_pool_destroy(p);
}

/* Item 6: a fork copies a pool whose workers then do not exist. In the
 * child, with one typed task of the parent's running and one queued (in a
 * group) at the fork: submits fail with PP_ESHUTDOWN, waits return, the
 * destroy and apr_terminate() (the child's exit: the group's and the
 * registry's cleanups) do not hang, and a new pool works. Each failed
 * check sets a bit of the child's exit status. */
typedef struct forked {
    pp_pool_t *pool;
    pp_group_t *group;
    pp_registry_t *reg;
    const pp_task_type_t *hold;
    apr_pool_t *p;
    held h;
    volatile apr_uint32_t ran;
} forked;

static const pp_task_type_t fork_hold_type = {
    "edge.fork_hold", "holds its worker until the test opens its gate",
    NULL, held_run, NULL, NULL
};

static int in_fork_child(void *arg)
{
    forked *f = arg;
    apr_pool_t *p;
    pp_pool_t *fresh;
    volatile apr_uint32_t ran = 0;
    int bad = 0;

    bad |= (pp_submit(f->pool, t_count_task, (void *)&f->ran) != PP_ESHUTDOWN) << 0;
    bad |= (pp_submit_ex(f->pool, t_count_task, (void *)&f->ran, f->group, 0) != PP_ESHUTDOWN) << 1;
    bad |= (pp_group_wait(f->group, -1) != PP_ESHUTDOWN) << 2;
    bad |= (pp_pool_shutdown(f->pool, PP_DRAIN, -1) != APR_SUCCESS) << 3;
    bad |= (pp_submit_typed(f->pool, f->hold, &f->h, NULL) != PP_ESHUTDOWN) << 7;
    pp_pool_destroy(f->pool);
#ifndef T_TSAN
    if (apr_pool_create(&p, NULL) == APR_SUCCESS && pp_pool_create(&fresh, NULL, p) == APR_SUCCESS) {
        bad |= (pp_submit(fresh, t_count_task, (void *)&ran) != APR_SUCCESS) << 4;
        pp_pool_destroy(fresh);
        bad |= (ran != 1) << 5;
    }
    else {
        bad |= 1 << 6;
    }
#else
    (void)p;
    (void)fresh;
    (void)ran;
#endif
    apr_terminate();    /* the group's APR pool goes here, as at exit */
    return bad;
}

static void test_fork_child(void)
{
    forked f;
    int rv;

    memset(&f, 0, sizeof(f));
    apr_pool_create(&f.p, t_root);
    f.pool = t_pool(f.p, 1, 0);
    T_OK_FATAL(pp_group_create(&f.group, f.p));
    T_OK_FATAL(pp_registry_create(&f.reg, f.p));
    T_OK_FATAL(pp_registry_add(f.reg, &fork_hold_type));
    f.hold = pp_registry_find(f.reg, "edge.fork_hold");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.hold);
    T_OK(pp_submit_typed(f.pool, f.hold, &f.h, f.group));
    T_OK(pp_submit_ex(f.pool, t_count_task, (void *)&f.ran, f.group, 0));
    t_gate_wait_arrived(&f.h.gate, 1);
    rv = t_os_fork_run(in_fork_child, &f, 30);
    if (rv != -1)
        T_EQ(rv, 0);
    t_gate_open(&f.h.gate);
    T_OK(pp_group_wait(f.group, apr_time_from_sec(30)));
    T_EQ(f.ran, 1);
    apr_pool_destroy(f.p);
}

/* Item 16: a task that ends its worker's thread. The task fails with
 * PP_ETHREADEXIT (reported, released, its group told), so do the tasks
 * that its worker was running around it (a fork-join parent helping while
 * it waited), a new thread takes the worker's place, and the pool runs
 * on and shuts down. Before the fix the shutdown never returned. */
typedef struct deaths {
    pp_pool_t *pool;
    apr_pool_t *sub;    /* for the parent's group: its frame never returns */
    volatile apr_uint32_t exits_reported, released, logged, ran;
} deaths;

static void death_report(apr_status_t status, const char *name, void *baton)
{
    deaths *d = baton;

    (void)name;
    if (status == PP_ETHREADEXIT)
        apr_atomic_inc32(&d->exits_reported);
}

static void death_log(int level, const char *msg, void *baton)
{
    deaths *d = baton;

    if (level == PP_LOG_ERROR && strstr(msg, "ended the thread"))
        apr_atomic_inc32(&d->logged);
}

static void death_release(void *arg)
{
    apr_atomic_inc32(&((deaths *)arg)->released);
}

static apr_status_t exit_thread_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    t_os_thread_exit();
    return APR_SUCCESS;    /* not reached */
}

/* Submits exit_thread_task in a group of its own and waits for it, so
 * that it runs nested in this worker (one worker) and ends both. */
static apr_status_t waits_for_exit(void *arg, pp_task_ctx_t *ctx)
{
    deaths *d = arg;
    pp_task_t t = { .fn = exit_thread_task, .release = death_release, .name = "exits" };
    pp_group_t *g;

    (void)ctx;
    t.arg = d;
    if (pp_group_create(&g, d->sub) == APR_SUCCESS && pp_submit_task(d->pool, &t, g, 0) == APR_SUCCESS)
        pp_group_wait(g, -1);
    return APR_SUCCESS;    /* not reached */
}

static apr_status_t count_deaths_ran(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    apr_atomic_inc32(&((deaths *)arg)->ran);
    return APR_SUCCESS;
}

static void test_task_ends_its_thread(void)
{
    apr_pool_t *p;
    pp_group_t *g;
    pp_config_t cfg;
    pp_stats_t st;
    deaths d;
    pp_task_t t = { .fn = exit_thread_task, .release = death_release, .name = "exits" };
    pp_task_t parent = { .fn = waits_for_exit, .release = death_release, .name = "waits" };
    pp_strand_t *s;
    int i;

    memset(&d, 0, sizeof(d));
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.on_task_error = death_report;
    cfg.on_log = death_log;
    cfg.baton = &d;
    T_OK_FATAL(pp_pool_create(&d.pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&g, p));
    apr_pool_create(&d.sub, p);
    t.arg = parent.arg = &d;
    T_OK(pp_submit_task(d.pool, &t, g, 0));
    T_OK_FATAL(pp_group_wait(g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(g), PP_ETHREADEXIT);
    T_EQ(d.exits_reported, 1);
    T_EQ(d.released, 1);
    /* Nested: the parent helping in its wait runs the child that exits. */
    T_OK(pp_submit_task(d.pool, &parent, g, 0));
    T_OK_FATAL(pp_group_wait(g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(g), PP_ETHREADEXIT);
    T_EQ(d.exits_reported, 3);
    T_EQ(d.released, 3);
    /* The replacement runs what comes next. */
    for (i = 0; i < 100; i++)
        T_OK(pp_submit_ex(d.pool, count_deaths_ran, &d, g, 0));
    T_OK_FATAL(pp_group_wait(g, apr_time_from_sec(30)));
    T_EQ(d.ran, 100);
    /* In a strand's turn: the strand's later tasks still run, in a turn
     * the dying thread queued. */
    T_OK(pp_strand_create(&s, d.pool, p));
    t.strand = s;
    T_OK(pp_submit_task(d.pool, &t, g, 0));
    for (i = 0; i < 50; i++) {
        pp_task_t c = { .fn = count_deaths_ran, .arg = &d, .strand = s };
        T_OK(pp_submit_task(d.pool, &c, g, 0));
    }
    T_OK_FATAL(pp_group_wait(g, apr_time_from_sec(30)));
    T_STATUS(pp_group_status(g), PP_ETHREADEXIT);
    T_EQ(d.exits_reported, 4);
    T_EQ(d.ran, 150);
    T_OK(pp_pool_shutdown(d.pool, PP_DRAIN, apr_time_from_sec(30)));
    pp_pool_stats(d.pool, &st);
    T_EQ(st.failed, 4);
    T_EQ(st.completed, 150);
    T_EQ(d.logged, 3);
    t_assert_accounted(d.pool);
    apr_pool_destroy(p);
}

/* Item 13: starting N workers costs O(N). Each new worker parks at once,
 * before pp_pool_create() returns, without polling the queues (which
 * made every start scan every deque, for thousands of polls, and wake
 * the earlier workers to do the same: -j 4096 took 209 s). So a pool just
 * made has parked each worker exactly once and unparked none; a drain of
 * an idle pool parks nobody again. */
static void test_start_is_linear(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 64, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.parks, 64);
    T_EQ(st.unparks, 0);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    pp_pool_stats(pool, &st);
    T_EQ(st.parks, 64);
    T_EQ(st.unparks, 64);
    apr_pool_destroy(p);
}

void t_register_edges(void)
{
    CU_pSuite s = CU_add_suite("edges", NULL, NULL);

    CU_add_test(s, "1: a freed slot goes to a waiter that fits", test_room_goes_to_a_waiter_that_fits);
    CU_add_test(s, "2: APR_INT64_MAX timeouts wait without limit", test_huge_timeouts_mean_no_limit);
    CU_add_test(s, "3: destroy waits for a group cancel's drops", test_destroy_waits_for_a_group_cancel);
    CU_add_test(s, "3: destroy waits for another thread's cancel", test_destroy_waits_for_a_cancelling_thread);
    CU_add_test(s, "5: pp_pool_destroy from one of its own tasks", test_destroy_from_own_task);
    CU_add_test(s, "5: the parent pool destroyed from a task", test_parent_destroyed_from_own_task);
    CU_add_test(s, "4: a task frees its group's APR pool", test_task_frees_its_groups_pool);
    CU_add_test(s, "6: a forked child's pools refuse work and free", test_fork_child);
    CU_add_test(s, "9: a copied task type keeps its registry", test_copied_type_keeps_its_registry);
    CU_add_test(s, "12: a registry destroyed from its own task", test_registry_destroyed_from_own_task);
    CU_add_test(s, "15: registry lookups while types are added", test_registry_add_while_finding);
    CU_add_test(s, "10: a cancel keeps its timeout while dropping", test_cancel_keeps_its_timeout);
    CU_add_test(s, "15: pp_pool_stats into NULL", test_stats_into_null);
    CU_add_test(s, "15: running never exceeds the workers", test_running_never_exceeds_the_workers);
    CU_add_test(s, "16: a task that ends its worker's thread", test_task_ends_its_thread);
    CU_add_test(s, "13: a new pool's workers park once, without searching", test_start_is_linear);
}
