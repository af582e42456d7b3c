/* SPDX-License-Identifier: Apache-2.0 */
/* The pool core: exactly-once, wakeups, nesting, failures, names, stacks, idle. */
#include "config.h"
#include "testutil.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ exactly once */

static apr_status_t hit_task(void *arg, pp_task_ctx_t *ctx)
{
    volatile apr_uint32_t *hit = arg;

    (void)ctx;
    apr_atomic_inc32(hit);
    return APR_SUCCESS;
}

typedef struct producer {
    pp_pool_t *pool;
    pp_group_t *group;
    volatile apr_uint32_t *hits;
    apr_uint32_t from, to;
    apr_uint32_t errors;
} producer;

static void produce(void *arg)
{
    producer *pr = arg;
    apr_uint32_t i;

    for (i = pr->from; i < pr->to; i++)
        if (pp_submit_ex(pr->pool, hit_task, (void *)&pr->hits[i], pr->group, 0)
            != APR_SUCCESS)
            pr->errors++;
}

static void check_exactly_once(apr_uint32_t producers, apr_uint32_t total)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    producer pr[8];
    void *args[8];
    volatile apr_uint32_t *hits;
    apr_uint32_t i, bad = 0, errors = 0;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    hits = calloc(total, sizeof(*hits));
    CU_ASSERT_PTR_NOT_NULL_FATAL(hits);
    for (i = 0; i < producers; i++) {
        pr[i].pool = pool;
        pr[i].group = g;
        pr[i].hits = hits;
        pr[i].from = total / producers * i;
        pr[i].to = i + 1 == producers ? total : total / producers * (i + 1);
        pr[i].errors = 0;
        args[i] = &pr[i];
    }
    if (producers == 1)
        produce(&pr[0]);
    else
        t_run_threads(producers, produce, args);
    T_OK(pp_group_wait(g, apr_time_from_sec(120)));
    for (i = 0; i < producers; i++)
        errors += pr[i].errors;
    for (i = 0; i < total; i++)
        bad += hits[i] != 1;
    T_EQ(errors, 0);
    T_EQ(bad, 0);
    pp_pool_stats(pool, &st);
    T_EQ(st.submitted, total);
    T_EQ(st.completed, total);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    free((void *)hits);
    apr_pool_destroy(p);
}

static void test_exactly_once_1_producer(void)
{
    check_exactly_once(1, t_scaled(1000000));
}

static void test_exactly_once_4_producers(void)
{
    check_exactly_once(4, t_scaled(1000000));
}

/* ---------------------------------------------------------- lost wakeups */

/* Until every worker has announced itself idle and counted its park, 10 s
 * at most; 1 if they all did. parks - unparks never overstates the idle
 * workers: a worker counts its park after it joined the idle list, a waker
 * counts the unpark as it takes one off, and pp_pool_stats reads the parks
 * first. Such a worker may not be inside its park yet: a submit now races
 * with its last steps into the park, the window a lost wakeup hides in.
 * A worker searches a while before it parks, longer under the sanitizers
 * and valgrind. */
static int wait_all_parked(pp_pool_t *pool)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    pp_stats_t st;

    for (;;) {
        pp_pool_stats(pool, &st);
        if (st.parks - st.unparks == st.threads)
            return 1;
        if (apr_time_now() > deadline)
            return 0;
        apr_thread_yield();
    }
}

/* Each round submits one task and waits for it: the pool is idle between
 * rounds. A lost wakeup shows as a timeout (the task sat queued while its
 * worker slept). Without the search phase (spin 0) every eighth round
 * waits until all workers are idle before it submits, so that round must
 * wake one (asserted through the counts); the others submit at once and
 * race with the worker on its way into the park, and which comes first is
 * up to the machine (under wine the submit did in over half the rounds).
 * With the default search phase a worker may catch every task while it
 * polls (it did under wine), so only the rounds are checked. */
static void check_no_lost_wakeup(apr_uint32_t spin, apr_uint32_t rounds)
{
    static const apr_uint32_t workers[] = { 1, 2, 4, 8 };
    apr_uint32_t w, r;

    for (w = 0; w < sizeof(workers) / sizeof(workers[0]); w++) {
        apr_pool_t *p;
        pp_pool_t *pool;
        pp_config_t cfg;
        pp_group_t *g;
        volatile apr_uint32_t ran = 0;
        apr_uint32_t timeouts = 0, stuck = 0;
        pp_stats_t st;

        apr_pool_create(&p, t_root);
        pp_config_init(&cfg);
        cfg.threads = workers[w];
        cfg.spin = spin;
        T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
        T_OK_FATAL(pp_group_create(&g, p));
        for (r = 0; r < rounds; r++) {
            if (spin == 0 && r % 8 == 0 && !wait_all_parked(pool))
                stuck++;
            T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0));
            if (pp_group_wait(g, apr_time_from_sec(1)) != APR_SUCCESS) {
                timeouts++;
                T_OK(pp_group_wait(g, -1));
            }
        }
        T_EQ(timeouts, 0);
        T_EQ(stuck, 0);
        T_EQ(ran, rounds);
        pp_pool_stats(pool, &st);
        if (spin == 0) {    /* each waiting round: one unpark, one park */
            CU_ASSERT(st.unparks >= rounds / 8);
            CU_ASSERT(st.parks >= rounds / 8);
        }
        /* One unpark per wake at most: never more than the submits. */
        CU_ASSERT(st.unparks <= st.submitted);
        T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
        t_assert_accounted(pool);
        apr_pool_destroy(p);
    }
}

static void test_no_lost_wakeup(void)
{
    pp_config_t cfg;

    pp_config_init(&cfg);
    check_no_lost_wakeup(0, t_scaled(100000));
    check_no_lost_wakeup(cfg.spin, t_scaled(50000));
}

/* Wakes one worker per task: with all workers idle, one submit must not
 * wake the others (the herd a broadcast would cause). Each round starts
 * with every worker parked and ends when the one woken has parked again:
 * then exactly one unpark and one park happened. */
static void test_one_wake_per_submit(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *g;
    volatile apr_uint32_t ran = 0;
    pp_stats_t before, after;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 8, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    CU_ASSERT(wait_all_parked(pool));
    pp_pool_stats(pool, &before);
    T_EQ(before.parks, 8);
    for (i = 0; i < 100; i++) {
        pp_pool_stats(pool, &before);
        T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0));
        T_OK(pp_group_wait(g, -1));
        CU_ASSERT(wait_all_parked(pool));    /* the woken one too */
        apr_sleep(apr_time_from_msec(1));    /* room for a herd to show */
        pp_pool_stats(pool, &after);
        T_EQ(after.unparks - before.unparks, 1);
        T_EQ(after.parks - before.parks, 1);
    }
    T_EQ(ran, 100);
    apr_pool_destroy(p);
}

/* ---------------------------------------------------------------- batch */

/* Let every worker park, submit a batch of n, wait: the unparks it took. */
static apr_uint64_t batch_wakeups(pp_pool_t *pool, pp_group_t *g, const pp_task_fn *fns,
                                  void *const *args, apr_uint32_t n)
{
    pp_stats_t before, after;

    CU_ASSERT(wait_all_parked(pool));
    pp_pool_stats(pool, &before);
    T_OK(pp_submit_batch(pool, fns, args, n, g));
    T_OK(pp_group_wait(g, -1));
    pp_pool_stats(pool, &after);
    return after.unparks - before.unparks;
}

static void test_batch(void)
{
    enum { N = 10000 };
    static pp_task_fn fns[N];
    static void *args[N];
    static volatile apr_uint32_t hits[N];
    apr_pool_t *p;
    pp_pool_t *pool, *bounded;
    pp_group_t *g;
    pp_stats_t after;
    apr_uint64_t wakes;
    apr_uint32_t i, bad = 0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 8, 0);
    T_OK_FATAL(pp_group_create(&g, p));
    for (i = 0; i < N; i++) {
        fns[i] = hit_task;
        args[i] = (void *)&hits[i];
        hits[i] = 0;
    }
    T_OK(pp_submit_batch(pool, fns, args, N, g));
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    for (i = 0; i < N; i++)
        bad += hits[i] != 1;
    T_EQ(bad, 0);

    /* min(n, idle) wake-ups: 3 for a batch of 3, at most 8 for 100. */
    CU_ASSERT(batch_wakeups(pool, g, fns, args, 3) <= 3);
    wakes = batch_wakeups(pool, g, fns, args, 100);
    CU_ASSERT(wakes >= 1 && wakes <= 8);

    /* Bad input queues nothing and leaves the group done. */
    fns[5] = NULL;
    T_STATUS(pp_submit_batch(pool, fns, args, 10, g), APR_EINVAL);
    fns[5] = hit_task;
    T_STATUS(pp_submit_batch(NULL, fns, args, 10, g), APR_EINVAL);
    T_STATUS(pp_submit_batch(pool, fns, NULL, 10, g), APR_EINVAL);
    T_OK(pp_submit_batch(pool, fns, args, 0, g));
    bounded = t_pool(p, 1, 8);
    T_STATUS(pp_submit_batch(bounded, fns, args, 9, g), APR_EINVAL);
    T_OK(pp_submit_batch(bounded, fns, args, 8, g));
    T_OK(pp_group_wait(g, -1));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_STATUS(pp_submit_batch(pool, fns, args, 10, g), PP_ESHUTDOWN);
    T_OK(pp_group_wait(g, 0));
    pp_pool_stats(pool, &after);
    T_EQ(after.submitted, N + 3 + 100);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* -------------------------------------------------------------- nesting */

typedef struct tree {
    pp_pool_t *pool;
    pp_group_t *group;
    volatile apr_uint32_t nodes, errors;
    apr_uint32_t depth;
} tree;

/* One tree at a time; a node's argument is its level, so the test
 * allocates nothing per task. */
static tree *the_tree;

static apr_status_t tree_task(void *arg, pp_task_ctx_t *ctx)
{
    apr_uintptr_t level = (apr_uintptr_t)arg;
    tree *t = the_tree;

    (void)ctx;
    apr_atomic_inc32(&t->nodes);
    if (level + 1 < t->depth) {
        int k;
        for (k = 0; k < 2; k++)
            if (pp_submit_ex(t->pool, tree_task, (void *)(level + 1), t->group, 0)
                != APR_SUCCESS)
                apr_atomic_inc32(&t->errors);
    }
    return APR_SUCCESS;
}

static void check_tree(apr_uint32_t capacity)
{
    apr_pool_t *p;
    tree t;

    apr_pool_create(&p, t_root);
    memset(&t, 0, sizeof(t));
    t.pool = t_pool(p, 4, capacity);
    t.depth = 17;    /* 2^17 - 1 nodes */
    T_OK_FATAL(pp_group_create(&t.group, p));
    the_tree = &t;
    T_OK(pp_submit_ex(t.pool, tree_task, (void *)0, t.group, 0));
    T_OK(pp_group_wait(t.group, apr_time_from_sec(120)));
    T_EQ(t.errors, 0);
    T_EQ(t.nodes, (1u << 17) - 1);
    T_OK(pp_pool_shutdown(t.pool, PP_DRAIN, -1));
    t_assert_accounted(t.pool);
    apr_pool_destroy(p);
}

static void test_nested_fanout(void)
{
    check_tree(0);
}

static void test_nested_fanout_bounded(void)
{
    check_tree(64);
}

/* A task that queues n children in its worker's deque and then waits
 * for them: only other workers, stealing, can run them. */
typedef struct spread {
    pp_pool_t *pool;
    apr_uint32_t n, parent;
    volatile apr_uint32_t ran, errors, all_ran, parent_ran_one;
} spread;

static apr_status_t spread_child(void *arg, pp_task_ctx_t *ctx)
{
    spread *s = arg;

    if (pp_task_worker(ctx) == s->parent)
        apr_atomic_set32(&s->parent_ran_one, 1);
    apr_atomic_inc32(&s->ran);
    return APR_SUCCESS;
}

static apr_status_t spread_parent(void *arg, pp_task_ctx_t *ctx)
{
    spread *s = arg;
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(20);
    apr_uint32_t i;

    s->parent = pp_task_worker(ctx);
    for (i = 0; i < s->n; i++)
        if (pp_submit(s->pool, spread_child, s) != APR_SUCCESS)
            apr_atomic_inc32(&s->errors);
    while (apr_atomic_read32(&s->ran) < s->n && apr_time_now() < deadline)
        apr_sleep(200);
    apr_atomic_set32(&s->all_ran, apr_atomic_read32(&s->ran) == s->n);
    return APR_SUCCESS;
}

/* The nested submits wake a parked worker, which steals them (a half at a
 * time) while their submitter is busy. */
static void test_idle_workers_steal(void)
{
    apr_pool_t *p;
    spread s;
    pp_group_t *g;
    pp_stats_t st;
    int threads;

    for (threads = 2; threads <= 4; threads += 2) {
        apr_pool_create(&p, t_root);
        memset((void *)&s, 0, sizeof(s));
        s.pool = t_pool(p, (apr_uint32_t)threads, 0);
        s.n = 200;    /* fits the submitter's deque */
        T_OK_FATAL(pp_group_create(&g, p));
        CU_ASSERT(wait_all_parked(s.pool));
        T_OK(pp_submit_ex(s.pool, spread_parent, &s, g, 0));
        T_OK(pp_group_wait(g, apr_time_from_sec(60)));
        T_EQ(s.errors, 0);
        T_EQ(s.all_ran, 1);
        T_EQ(s.parent_ran_one, 0);
        T_OK(pp_pool_shutdown(s.pool, PP_DRAIN, -1));
        pp_pool_stats(s.pool, &st);
        T_EQ(st.completed, 201);
        t_assert_accounted(s.pool);
        apr_pool_destroy(p);
    }
}

/* ---------------------------------------------------- failure isolation */

typedef struct failures {
    volatile apr_uint32_t reported;
    volatile apr_uint32_t status_sum;
    volatile apr_uint32_t bad_name;
} failures;

static void on_error(apr_status_t status, const char *name, void *baton)
{
    failures *f = baton;

    apr_atomic_inc32(&f->reported);
    apr_atomic_add32(&f->status_sum, (apr_uint32_t)(status - APR_OS_START_USERERR));
    if (!name || strcmp(name, "failing") != 0)
        apr_atomic_inc32(&f->bad_name);
}

static apr_status_t fail_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    return (apr_status_t)(apr_uintptr_t)arg;
}

/* Holds its worker until `want` distinct workers have checked in: proves
 * that many workers are alive and taking tasks at once. */
typedef struct roll_call {
    volatile apr_uint32_t seen_mask, want;
} roll_call;

static apr_status_t roll_call_task(void *arg, pp_task_ctx_t *ctx)
{
    roll_call *rc = arg;
    apr_uint32_t bit = 1u << pp_task_worker(ctx), old;
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);

    do
        old = apr_atomic_read32(&rc->seen_mask);
    while (apr_atomic_cas32(&rc->seen_mask, old | bit, old) != old);
    while ((apr_uint32_t)__builtin_popcount(apr_atomic_read32(&rc->seen_mask)) < rc->want
           && apr_time_now() < deadline)
        apr_sleep(200);
    return APR_SUCCESS;
}

static void test_failure_isolation(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    pp_group_t *g;
    failures f = { 0, 0, 0 };
    roll_call rc = { 0, 4 };
    volatile apr_uint32_t ran = 0;
    apr_uint32_t i, nfail = 1000, expect_sum = 0;
    pp_stats_t st;

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 4;
    cfg.on_task_error = on_error;
    cfg.baton = &f;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK_FATAL(pp_group_create(&g, p));
    for (i = 0; i < nfail; i++) {
        pp_task_t t = { .fn = fail_task, .name = "failing" };
        apr_status_t code = APR_OS_START_USERERR + 1 + (i % 7);
        t.arg = (void *)(apr_uintptr_t)code;
        expect_sum += 1 + (i % 7);
        T_OK(pp_submit_task(pool, &t, g, 0));
    }
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_EQ(f.reported, nfail);
    T_EQ(f.status_sum, expect_sum);
    T_EQ(f.bad_name, 0);
    CU_ASSERT_NOT_EQUAL(pp_group_status(g), APR_SUCCESS);
    pp_pool_stats(pool, &st);
    T_EQ(st.failed, nfail);
    T_EQ(st.completed, 0);

    /* Every worker lives on: four tasks that each wait until four distinct
     * workers hold one, then the next 10,000 tasks. */
    for (i = 0; i < 4; i++)
        T_OK(pp_submit_ex(pool, roll_call_task, &rc, g, 0));
    for (i = 0; i < 10000; i++)
        T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, g, 0));
    T_OK(pp_group_wait(g, apr_time_from_sec(60)));
    T_EQ(__builtin_popcount(rc.seen_mask), 4);
    T_EQ(ran, 10000);
    T_OK(pp_group_status(g));    /* a new round */
    pp_pool_stats(pool, &st);
    T_EQ(st.completed, 10004);
    T_EQ(st.failed, nfail);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* -------------------------------------------------------- bounded queue */

typedef struct blocked_submit {
    pp_pool_t *pool;
    volatile apr_uint32_t done;
    apr_status_t rv;
    volatile apr_uint32_t *counter;
} blocked_submit;

static void submit_blocking(void *arg)
{
    blocked_submit *b = arg;

    b->rv = pp_submit(b->pool, t_count_task, (void *)b->counter);
    apr_atomic_set32(&b->done, 1);
}

static void test_bounded_queue(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    t_gate gate = { 0, 0, 0 };
    volatile apr_uint32_t ran = 0;
    blocked_submit b;
    t_thread *t;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 2, 8);
    for (i = 0; i < 2; i++)
        T_OK(pp_submit(pool, t_gate_task, &gate));
    t_gate_wait_arrived(&gate, 2);
    for (i = 0; i < 8; i++)
        T_OK(pp_submit_ex(pool, t_count_task, (void *)&ran, NULL, PP_NOWAIT));
    T_STATUS(pp_submit_ex(pool, t_count_task, (void *)&ran, NULL, PP_NOWAIT), PP_EFULL);
    /* A blocking submit waits for room rather than failing or overfilling. */
    b.pool = pool;
    b.done = 0;
    b.rv = APR_EGENERAL;
    b.counter = &ran;
    t = t_spawn(submit_blocking, &b);
    apr_sleep(apr_time_from_msec(50));
    T_EQ(apr_atomic_read32(&b.done), 0);
    t_gate_open(&gate);
    t_join(t);
    T_OK(b.rv);
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(ran, 9);
    t_assert_accounted(pool);
    apr_pool_destroy(p);
}

/* ------------------------------------------------------------- output */

typedef struct lines {
    volatile apr_uint32_t n, bad;
} lines;

static void on_output(const char *line, const char *name, void *baton)
{
    lines *l = baton;

    apr_atomic_inc32(&l->n);
    if (strcmp(line, "hello") != 0 || strcmp(name, "greeter") != 0)
        apr_atomic_inc32(&l->bad);
}

static apr_status_t emit_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    pp_task_emit(ctx, "hello");
    pp_task_emit(ctx, NULL);    /* ignored */
    return APR_SUCCESS;
}

static void test_emit(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    lines l = { 0, 0 };
    pp_task_t t = { .fn = emit_task, .name = "greeter" };
    int i;

    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 2;
    cfg.on_output = on_output;
    cfg.baton = &l;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    for (i = 0; i < 100; i++)
        T_OK(pp_submit_task(pool, &t, NULL, 0));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(l.n, 100);
    T_EQ(l.bad, 0);
    apr_pool_destroy(p);
}

/* pp_task_write: bytes exactly to on_write; to on_output, a line per LF
 * (a line ends at a NUL; the piece after the last LF is a line too). */
typedef struct written {
    char   bytes[64];
    size_t len;
    char   lines[64];    /* on_output's lines, each followed by '|' */
} written;

static void on_write_bytes(const char *data, apr_size_t len, const char *name, void *baton)
{
    written *w = baton;

    (void)name;
    memcpy(w->bytes + w->len, data, len);
    w->len += len;
}

static void on_output_lines(const char *line, const char *name, void *baton)
{
    written *w = baton;

    (void)name;
    strcat(w->lines, line);
    strcat(w->lines, "|");
}

static apr_status_t write_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    pp_task_write(ctx, "a\r\nb\0c\n", 7);
    pp_task_write(ctx, "last", 4);
    pp_task_write(ctx, NULL, 3);    /* ignored */
    return APR_SUCCESS;
}

static void run_writer(written *w, int bytes)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    pp_task_t t = { .fn = write_task, .name = "writer" };

    memset(w, 0, sizeof(*w));
    apr_pool_create(&p, t_root);
    pp_config_init(&cfg);
    cfg.threads = 1;
    cfg.on_output = on_output_lines;
    cfg.on_write = bytes ? on_write_bytes : NULL;
    cfg.baton = w;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    T_OK(pp_submit_task(pool, &t, NULL, 0));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    apr_pool_destroy(p);
}

static void test_write_bytes(void)
{
    written w;

    run_writer(&w, 1);
    T_EQ_FATAL(w.len, 11);
    CU_ASSERT(memcmp(w.bytes, "a\r\nb\0c\nlast", 11) == 0);
    CU_ASSERT_STRING_EQUAL(w.lines, "");
}

static void test_write_lines(void)
{
    written w;

    run_writer(&w, 0);
    CU_ASSERT_STRING_EQUAL(w.lines, "a|b|last|");
}

/* --------------------------------------------------------------- idle */

static void test_idle_burns_no_cpu(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    volatile apr_uint32_t ran = 0;
    double before, used;
    int i;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 4, 0);
    /* Wake everybody once, then let them settle into park. */
    for (i = 0; i < 1000; i++)
        T_OK(pp_submit(pool, t_count_task, (void *)&ran));
    apr_sleep(apr_time_from_msec(100));
    before = t_os_cpu_seconds();
    apr_sleep(apr_time_from_sec(1));
    used = t_os_cpu_seconds() - before;
    CU_ASSERT(used < 0.020);
    if (used >= 0.020)
        fprintf(stderr, "\n    idle pool used %.3f s of CPU in 1 s\n", used);
    apr_pool_destroy(p);
}

/* ------------------------------------------------- names, stack, index */

typedef struct thread_facts {
    volatile apr_uint32_t bad_name, bad_index, ran;
    apr_size_t stack[8];
    const char *prefix;
    roll_call rc;
} thread_facts;

/* Records what its worker looks like, then holds the worker until every
 * worker has checked in, so n such tasks cover all n workers. */
static apr_status_t facts_task(void *arg, pp_task_ctx_t *ctx)
{
    thread_facts *f = arg;
    apr_uint32_t idx = pp_task_worker(ctx);
    char name[32] = "", suffix[16], want[64];
    apr_size_t keep;

    if (idx >= f->rc.want) {
        apr_atomic_inc32(&f->bad_index);
        return APR_SUCCESS;
    }
    if (t_os_thread_name(name, sizeof(name)) != 0)
        apr_cpystrn(name, "(the OS cannot tell)", sizeof(name));
    /* 15 bytes are kept (Linux's limit): the prefix is cut, never the index. */
    apr_snprintf(suffix, sizeof(suffix), "-%u", idx);
    keep = strlen(f->prefix);
    if (keep + strlen(suffix) > 15)
        keep = 15 - strlen(suffix);
    apr_snprintf(want, sizeof(want), "%.*s%s", (int)keep, f->prefix, suffix);
    if (strcmp(name, want) != 0)
        apr_atomic_inc32(&f->bad_name);
    f->stack[idx] = t_os_stack_size();
    apr_atomic_inc32(&f->ran);
    return roll_call_task(&f->rc, ctx);
}

static void check_threads(const char *prefix, apr_size_t stack, apr_size_t expect)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    thread_facts f;
    apr_uint32_t i;

    apr_pool_create(&p, t_root);
    memset(&f, 0, sizeof(f));
    f.prefix = prefix;
    f.rc.want = 3;
    pp_config_init(&cfg);
    cfg.threads = 3;
    cfg.name_prefix = prefix;
    cfg.stack_size = stack;
    T_OK_FATAL(pp_pool_create(&pool, &cfg, p));
    for (i = 0; i < 3; i++)
        T_OK(pp_submit(pool, facts_task, &f));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    T_EQ(f.ran, 3);
    T_EQ(__builtin_popcount(f.rc.seen_mask), 3);
    T_EQ(f.bad_name, 0);
    T_EQ(f.bad_index, 0);
    for (i = 0; i < 3; i++)
        CU_ASSERT(t_os_stack_fits(f.stack[i], expect));
    apr_pool_destroy(p);
}

static void test_thread_names_and_stack(void)
{
    check_threads("tname", 0, 2 * 1024 * 1024);
    check_threads("a-very-long-worker-prefix", 256 * 1024, 256 * 1024);
}

static apr_status_t deep_stack_task(void *arg, pp_task_ctx_t *ctx)
{
    volatile char buf[1536 * 1024];
    apr_size_t i;
    unsigned sum = 0;

    (void)ctx;
    for (i = 0; i < sizeof(buf); i += 4096)
        buf[i] = (char)i;
    for (i = 0; i < sizeof(buf); i += 4096)
        sum += (unsigned char)buf[i];
    *(unsigned *)arg = sum + 1;
    return APR_SUCCESS;
}

static void test_deep_stack_on_default(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    unsigned result = 0;

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 1, 0);
    T_OK(pp_submit(pool, deep_stack_task, &result));
    T_OK(pp_pool_shutdown(pool, PP_DRAIN, -1));
    CU_ASSERT_NOT_EQUAL(result, 0);
    apr_pool_destroy(p);
}

static void test_thread_count_follows_pool(void)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    int base = t_os_thread_count();

    apr_pool_create(&p, t_root);
    pool = t_pool(p, 5, 0);
    if (base >= 0)
        CU_ASSERT(t_os_thread_count() >= base + 5);
    pp_pool_destroy(pool);
    if (base >= 0)
        CU_ASSERT(t_thread_count_settles(base) <= base);
    apr_pool_destroy(p);
}

void t_register_pool(void)
{
    CU_pSuite s = CU_add_suite("pool", NULL, NULL);

    CU_add_test(s, "1,000,000 tasks from 1 producer run exactly once", test_exactly_once_1_producer);
    CU_add_test(s, "1,000,000 tasks from 4 producers run exactly once", test_exactly_once_4_producers);
    CU_add_test(s, "no lost wakeup: 150,000 rounds x 1/2/4/8 workers", test_no_lost_wakeup);
    CU_add_test(s, "one submit wakes at most one worker", test_one_wake_per_submit);
    CU_add_test(s, "batch submit: once each, min(n, idle) wake-ups", test_batch);
    CU_add_test(s, "nested fan-out of 2^17 tasks", test_nested_fanout);
    CU_add_test(s, "nested fan-out on a queue of capacity 64", test_nested_fanout_bounded);
    CU_add_test(s, "idle workers steal a busy worker's queued tasks", test_idle_workers_steal);
    CU_add_test(s, "failing tasks are counted, reported, isolated", test_failure_isolation);
    CU_add_test(s, "bounded queue: PP_EFULL and blocking submit", test_bounded_queue);
    CU_add_test(s, "pp_task_emit reaches on_output", test_emit);
    CU_add_test(s, "pp_task_write: bytes exactly to on_write", test_write_bytes);
    CU_add_test(s, "pp_task_write: lines to on_output without on_write", test_write_lines);
    CU_add_test(s, "idle pool burns no CPU", test_idle_burns_no_cpu);
    CU_add_test(s, "thread names and stack sizes", test_thread_names_and_stack);
    CU_add_test(s, "1.5 MiB of stack on the default stack", test_deep_stack_on_default);
    CU_add_test(s, "threads start with the pool and go with it", test_thread_count_follows_pool);
}
