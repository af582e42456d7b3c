/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pp_bench: parkpool beside its peers, the same workloads in one run.
 *
 *   W1  1 producer submits 1,000,000 tasks that each do one atomic add;
 *       ns per task, from the first submit until all are done
 *   W2  4 producers x 250,000 tasks, likewise
 *   W3  ping-pong: submit one task and wait for it, 100,000 rounds;
 *       median and p99 round trip in microseconds
 *   W4  CPU seconds the process uses while a 4-worker pool sits idle 2 s
 *   W5  2,000 bursts of 64 tasks of ~2 us CPU each, a burst waited for,
 *       then 200 us of sleep; wall and CPU milliseconds
 *   W6  nested fan-out: a binary tree of 262,143 tasks, each submitting
 *       its two children from inside the pool; ns per task, until the
 *       last task's subtree join counter brings the root's to zero
 *
 * for 2 and 4 workers, against APR-util's apr_thread_pool, GLib's
 * GThreadPool (exclusive, N threads), libuv's uv_queue_work
 * (UV_THREADPOOL_SIZE=N), OpenMP tasks (peer_omp.c) and oneTBB's
 * task_group in a task_arena (peer_tbb.cc) when configure found them.
 * OpenMP and oneTBB run the submitting thread inside their team or arena
 * beside N workers, and it helps run tasks while it waits (taskwait,
 * task_group::wait), as their users write it; OpenMP has no W2 figure,
 * since only a team's threads can make its tasks. And two limits written
 * here: a spinning single-producer/single-consumer hand-off (the least a
 * dispatch can cost) and a raw futex ping-pong between two threads (the
 * least a park/unpark round trip can cost).
 *
 * Every figure is the median of --reps runs (default 5), with the least
 * and greatest beside it (flagged '*' when they spread over more than a
 * quarter of the median: noise may have decided it), taken in rounds:
 * one run of every figure, then the next round, so that a spell of load
 * from the machine's other tenants spoils one run of many figures, not all
 * runs of one. Each run is a
 * child process of its own: no pool's threads or caches linger into the
 * next run, libuv's process-wide pool size can differ per run, and a run
 * that exceeds --timeout seconds is killed and shown as "hang", never
 * waited on. --quick divides the counts by 20 for a smoke run; --only
 * parkpool,libuv runs just those pools (the ratio needs parkpool and a
 * peer), --work W1,W6 just those workloads (STRAND: the strand table,
 * strands.c; TIMER: the timer lateness table, timers.c; MAIN: the main
 * job, mainjob.c). The table goes to stdout, and as results.csv, results.json and plot.dat (for
 * bench/plot.gp, `make bench-plot`) into --out DIR. Speed is reported,
 * never asserted: these machines are shared and noisy; judge the ratios
 * of one run, not absolute figures across runs.
 *
 * "pp spin=0" is parkpool whose workers sleep as soon as the queue is
 * empty (no spin phase), "pp timing" parkpool with cfg.timing on (the
 * price of the wait and run percentiles), "pp prio" parkpool with its
 * submits spread over the three priorities (the price of mixed levels);
 * none is parkpool's figure nor a peer in the ratio.
 *
 * Pools are driven through one small adapter (create, submit, destroy) and
 * the same tasks, which end by counting themselves done on a word that the
 * waiting thread sleeps on with a futex (W6's on a join counter per tree
 * node, the root's last): every pool pays the same for its tasks and for
 * being waited on, so only dispatch and wake-up differ.
 */
#include "config.h"
#include "parkpool/parkpool.h"
#include "adapter.h"
#include "mainjob.h"
#include "strands.h"
#include "timers.h"

#include <apr_atomic.h>
#include <apr_general.h>
#include <apr_thread_pool.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_GLIB
#include <glib.h>
#endif
#ifdef HAVE_LIBUV
#include <uv.h>
#endif

#define HANG (-1.0)      /* a run killed by the timeout */
#define NA   (-2.0)      /* not measured for this row */

typedef pp_bench_adapter adapter;

/* ------------------------------------------------------------ the tasks */

static void (*task_fn)(void *arg);         /* what every adapter's task runs */
static const adapter *cur_adapter;         /* for nested submits (W6) */
static void *cur_pool;
static volatile apr_uint32_t counter;      /* W1/W2's work */
static volatile apr_uint32_t completed;    /* tasks finished, futex word */
static volatile apr_uint32_t target;       /* the waiter sleeps until completed is this */
static apr_pool_t *root;

void pp_bench_task(void *arg)
{
    task_fn(arg);
}

static void futex_wake(volatile apr_uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait(volatile apr_uint32_t *word, apr_uint32_t val)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* Only the task that reaches the waiter's target wakes it: a wake per
 * task would time the harness (a futex syscall each, and a waiter that
 * keeps getting scheduled on the same two cores) instead of the pool. */
static void complete(void)
{
    apr_uint32_t done = apr_atomic_inc32(&completed) + 1;

    if (done == apr_atomic_read32(&target))
        futex_wake(&completed);
}

/* Sleep until `n` tasks have completed since the last reset. The target
 * is published with a full barrier before completed is read, and a task
 * reads the target after its locked increment: either the waiter sees the
 * last increment, or that task sees the target and wakes it. */
static void wait_completed(apr_uint32_t n)
{
    apr_uint32_t v;

    apr_atomic_xchg32(&target, n);
    while ((v = apr_atomic_read32(&completed)) < n)
        futex_wait(&completed, v);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
           + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void task_add(void *arg)
{
    (void)arg;
    apr_atomic_inc32(&counter);
    complete();
}

static void task_spin(void *arg)
{
    double end = now_s() + 2e-6;

    (void)arg;
    while (now_s() < end)
        ;
    complete();
}

#define TREE_DEPTH 18    /* 2^18 - 1 = 262,143 tasks */
static unsigned tree_depth = TREE_DEPTH;

static apr_uint32_t tree_nodes;          /* 2^tree_depth - 1 */
static apr_uint32_t *tree_pending;       /* per node: itself + children left */

/* Node i and everything below it are done: a join counter per node,
 * the root's ends the run. Counting every task on the one completed word
 * instead made W6 time the harness: 27% of parkpool's samples were that
 * word's locked add, moving between the cores twice per task. */
static void tree_done(apr_uint32_t i)
{
    while (!apr_atomic_dec32(&tree_pending[i])) {
        if (i == 0) {
            complete();
            return;
        }
        i = (i - 1) / 2;
    }
}

/* Node i of a binary tree in an array: children 2i+1 and 2i+2. */
static void task_tree(void *arg)
{
    apr_uint32_t i = (apr_uint32_t)(apr_uintptr_t)arg;

    if (2 * i + 1 < tree_nodes) {
        cur_adapter->submit(cur_pool, (void *)(apr_uintptr_t)(2 * i + 1));
        cur_adapter->submit(cur_pool, (void *)(apr_uintptr_t)(2 * i + 2));
    }
    tree_done(i);
}

/* ------------------------------------------------------------ parkpool */

static apr_status_t pp_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    pp_bench_task(arg);
    return APR_SUCCESS;
}

/* The defaults, but for the search budget (spin < 0: the default) and
 * cfg.timing. */
static void *pp_create_with(unsigned workers, long spin, int timing)
{
    pp_pool_t *pool;
    pp_config_t cfg;

    pp_config_init(&cfg);
    cfg.threads = workers;
    if (spin >= 0)
        cfg.spin = (apr_uint32_t)spin;
    cfg.timing = timing;
    return pp_pool_create(&pool, &cfg, root) == APR_SUCCESS ? pool : NULL;
}

static void *pp_create(unsigned workers)
{
    return pp_create_with(workers, -1, 0);
}

/* Workers that sleep as soon as the queue is empty (cfg.spin = 0): what
 * the default spin buys, and what it costs in W4 and W5. */
static void *pp_create_nospin(unsigned workers)
{
    return pp_create_with(workers, 0, 0);
}

/* cfg.timing on: three clock reads and two histogram counts per task. */
static void *pp_create_timing(unsigned workers)
{
    return pp_create_with(workers, -1, 1);
}

static void pp_submit1(void *pool, void *arg)
{
    pp_submit(pool, pp_task, arg);
}

/* Priorities in use: each submit (per producer thread) at the next of
 * HIGH, NORMAL and LOW, so all three levels of the shared queue hold
 * tasks and every take chooses among them. */
static void pp_submit_prio(void *pool, void *arg)
{
    static _Thread_local unsigned next;
    pp_task_t t = { .fn = pp_task, .arg = arg, .priority = (int)(next++ % 3) - 1 };

    pp_submit_task(pool, &t, NULL, 0);
}

static void pp_destroy1(void *pool)
{
    pp_pool_destroy(pool);
}

/* ------------------------------------------------------------ apr_thread_pool */

static void *APR_THREAD_FUNC atp_task(apr_thread_t *t, void *arg)
{
    (void)t;
    pp_bench_task(arg);
    return NULL;
}

static void *atp_create(unsigned workers)
{
    apr_thread_pool_t *tp;

    return apr_thread_pool_create(&tp, workers, workers, root) == APR_SUCCESS ? tp : NULL;
}

static void atp_submit(void *pool, void *arg)
{
    apr_thread_pool_push(pool, atp_task, arg, APR_THREAD_TASK_PRIORITY_NORMAL, NULL);
}

static void atp_destroy(void *pool)
{
    apr_thread_pool_destroy(pool);
}

/* ------------------------------------------------------------ GLib */

#ifdef HAVE_GLIB
/* GLib refuses NULL data: arguments travel one up. */
static void glib_task(gpointer data, gpointer user)
{
    (void)user;
    pp_bench_task((void *)((apr_uintptr_t)data - 1));
}

static void *glib_create(unsigned workers)
{
    return g_thread_pool_new(glib_task, NULL, (gint)workers, TRUE, NULL);
}

static void glib_submit(void *pool, void *arg)
{
    g_thread_pool_push(pool, (gpointer)((apr_uintptr_t)arg + 1), NULL);
}

static void glib_destroy(void *pool)
{
    g_thread_pool_free(pool, FALSE, TRUE);
}
#endif

/* ------------------------------------------------------------ libuv */

#ifdef HAVE_LIBUV
/*
 * uv_queue_work may only be called on its loop's thread. Submitters hand
 * arguments to that thread through a mutex-guarded vector and
 * uv_async_send (which coalesces); the loop queues each as work. This
 * hand-off is what any program with producers outside the loop pays.
 */
typedef struct uvp_item {
    uv_work_t req;
    void *arg;
    struct uvp_item *next;
} uvp_item;

typedef struct uvp_pool {
    uv_loop_t loop;
    uv_async_t async, stop;
    pthread_t thread;
    pthread_mutex_t lock;
    void **in, **out;          /* guarded by lock: in; the loop's: out */
    size_t n, in_cap, out_cap; /* swapped with the vectors */
    uvp_item *free_items;       /* the loop's */
} uvp_pool;

static void uvp_work(uv_work_t *req)
{
    pp_bench_task(((uvp_item *)req)->arg);
}

static void uvp_after(uv_work_t *req, int status)
{
    uvp_item *it = (uvp_item *)req;
    uvp_pool *u = req->loop->data;

    (void)status;
    it->next = u->free_items;
    u->free_items = it;
}

static void uvp_async(uv_async_t *h)
{
    uvp_pool *u = h->data;
    void **batch;
    size_t n, i, cap;

    pthread_mutex_lock(&u->lock);
    batch = u->in;
    n = u->n;
    cap = u->in_cap;
    u->in = u->out;
    u->in_cap = u->out_cap;
    u->out = batch;
    u->out_cap = cap;
    u->n = 0;
    pthread_mutex_unlock(&u->lock);
    for (i = 0; i < n; i++) {
        uvp_item *it = u->free_items;
        if (it)
            u->free_items = it->next;
        else if (!(it = malloc(sizeof(*it))))
            abort();
        it->arg = batch[i];
        uv_queue_work(&u->loop, &it->req, uvp_work, uvp_after);
    }
}

static void uvp_stop(uv_async_t *h)
{
    uvp_pool *u = h->data;

    uv_close((uv_handle_t *)&u->async, NULL);
    uv_close((uv_handle_t *)&u->stop, NULL);
}

static void *uvp_loop(void *data)
{
    uvp_pool *u = data;

    uv_run(&u->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void *uvp_create(unsigned workers)
{
    uvp_pool *u = calloc(1, sizeof(*u));
    char n[16];

    if (!u)
        return NULL;
    /* Read once per process, at the first uv_queue_work: each run is a
     * process of its own, so each gets its own size. */
    snprintf(n, sizeof(n), "%u", workers);
    setenv("UV_THREADPOOL_SIZE", n, 1);
    u->in_cap = u->out_cap = 1 << 16;
    u->in = malloc(u->in_cap * sizeof(void *));
    u->out = malloc(u->out_cap * sizeof(void *));
    pthread_mutex_init(&u->lock, NULL);
    uv_loop_init(&u->loop);
    u->loop.data = u;
    u->async.data = u->stop.data = u;
    uv_async_init(&u->loop, &u->async, uvp_async);
    uv_async_init(&u->loop, &u->stop, uvp_stop);
    pthread_create(&u->thread, NULL, uvp_loop, u);
    return u;
}

static void uvp_submit(void *pool, void *arg)
{
    uvp_pool *u = pool;

    pthread_mutex_lock(&u->lock);
    if (u->n == u->in_cap) {
        /* Only the vector being filled grows; its size travels with it. */
        u->in_cap *= 2;
        if (!(u->in = realloc(u->in, u->in_cap * sizeof(void *))))
            abort();
    }
    u->in[u->n++] = arg;
    pthread_mutex_unlock(&u->lock);
    uv_async_send(&u->async);
}

static void uvp_destroy(void *pool)
{
    uvp_pool *u = pool;

    uv_async_send(&u->stop);
    pthread_join(u->thread, NULL);
    uv_loop_close(&u->loop);
    while (u->free_items) {
        uvp_item *it = u->free_items;
        u->free_items = it->next;
        free(it);
    }
    free(u->in);
    free(u->out);
    free(u);
}
#endif

static const adapter pp_default = { "parkpool", 0, pp_create, pp_submit1, pp_destroy1,
                                   NULL, NULL, 1 };
static const adapter pp_nospin = { "pp spin=0", 0, pp_create_nospin, pp_submit1, pp_destroy1,
                                   NULL, NULL, 1 };
static const adapter pp_timing = { "pp timing", 0, pp_create_timing, pp_submit1, pp_destroy1,
                                   NULL, NULL, 1 };
static const adapter pp_prio = { "pp prio", 0, pp_create, pp_submit_prio, pp_destroy1,
                                 NULL, NULL, 1 };
static const adapter apr_tp = { "apr_tp", 1, atp_create, atp_submit, atp_destroy,
                                NULL, NULL, 1 };
#ifdef HAVE_GLIB
static const adapter glib = { "glib", 1, glib_create, glib_submit, glib_destroy, NULL, NULL, 1 };
#endif
#ifdef HAVE_LIBUV
static const adapter libuv = { "libuv", 1, uvp_create, uvp_submit, uvp_destroy, NULL, NULL, 1 };
#endif

static const adapter *const adapters[] = {
    &pp_default, &pp_nospin, &pp_timing, &pp_prio, &apr_tp,
#ifdef HAVE_GLIB
    &glib,
#endif
#ifdef HAVE_LIBUV
    &libuv,
#endif
#ifdef HAVE_OPENMP
    &pp_bench_omp,
#endif
#ifdef HAVE_TBB
    &pp_bench_tbb,
#endif
};
#define NADAPTERS (sizeof(adapters) / sizeof(adapters[0]))

/* ------------------------------------------------------------ workloads */

/*
 * Each workload's submitting part is a body that runs where the pool's
 * submits belong (in_pool: for OpenMP and oneTBB, inside the team or the
 * arena, as their users write it) and waits with wait_tasks: such a pool
 * first helps run what this thread submitted, then the harness sleeps
 * until the tasks have counted themselves done, the same for every pool.
 */
typedef struct job {
    const adapter *a;
    void *pool;
    unsigned n;          /* tasks, rounds or bursts */
    double *out;
} job;

static void in_pool(job *j, void (*body)(void *))
{
    if (j->a->enter)
        j->a->enter(j->pool, body, j);
    else
        body(j);
}

static void wait_tasks(const job *j, apr_uint32_t n)
{
    if (j->a->help)
        j->a->help(j->pool);
    wait_completed(n);
}

static void *APR_THREAD_FUNC produce(apr_thread_t *t, void *data)
{
    job *j = data;
    unsigned i;

    (void)t;
    for (i = 0; i < j->n; i++)
        j->a->submit(j->pool, NULL);
    return NULL;
}

static void start(const adapter *a, void *pool, void (*fn)(void *))
{
    task_fn = fn;
    cur_adapter = a;
    cur_pool = pool;
    apr_atomic_set32(&counter, 0);
    apr_atomic_set32(&completed, 0);
    apr_atomic_set32(&target, 0);
}

/* W1: one producer, ns per task until all are done. */
static void w1_body(void *data)
{
    job *j = data;
    double t0 = now_s();

    produce(NULL, j);
    wait_tasks(j, j->n);
    j->out[0] = (now_s() - t0) * 1e9 / j->n;
}

/* W1 (producers = 1) and W2: ns per task, until all are done. W2's
 * producers are threads of their own, outside the pool. */
static void w_throughput(const adapter *a, unsigned workers, unsigned producers,
                         unsigned total, double out[2])
{
    void *pool;
    apr_thread_t *th[16];
    job j;
    double t0;
    unsigned i;

    if (producers > 1 && !a->outside)
        return;    /* no figure: it cannot take outside submits */
    pool = a->create(workers);
    start(a, pool, task_add);
    j.a = a;
    j.pool = pool;
    j.n = total / producers;
    j.out = out;
    if (producers == 1) {
        in_pool(&j, w1_body);
    }
    else {
        t0 = now_s();
        for (i = 0; i < producers; i++)
            apr_thread_create(&th[i], NULL, produce, &j, root);
        for (i = 0; i < producers; i++) {
            apr_status_t rv;
            apr_thread_join(&rv, th[i]);
        }
        wait_completed(j.n * producers);
        out[0] = (now_s() - t0) * 1e9 / (j.n * producers);
    }
    if (apr_atomic_read32(&counter) != j.n * producers)
        out[0] = NA;    /* lost tasks: no figure */
    a->destroy(pool);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void w3_body(void *data)
{
    job *j = data;
    double *lat = malloc(j->n * sizeof(*lat));
    unsigned i;

    if (!lat)
        return;
    /* The harness's wait alone, even where the pool would help: W3 times
     * a hand-off and a wake-up, and a waiter that helps finds its one
     * task still in its own queue and runs it itself (oneTBB's round trip
     * is then a function call). */
    for (i = 0; i < j->n; i++) {
        double t0 = now_s();
        j->a->submit(j->pool, NULL);
        wait_completed(i + 1);
        lat[i] = (now_s() - t0) * 1e6;
    }
    qsort(lat, j->n, sizeof(*lat), cmp_double);
    j->out[0] = lat[j->n / 2];
    j->out[1] = lat[(unsigned)(j->n * 0.99)];
    free(lat);
}

/* A pool of its own for one body: made, started with task fn, gone after. */
static void run_job(const adapter *a, unsigned workers, unsigned n, double out[2],
                    void (*fn)(void *), void (*body)(void *))
{
    job j = { a, a->create(workers), n, out };

    start(a, j.pool, fn);
    in_pool(&j, body);
    a->destroy(j.pool);
}

/* W3: round trips in microseconds, median and p99. */
static void w_pingpong(const adapter *a, unsigned workers, unsigned rounds, double out[2])
{
    run_job(a, workers, rounds, out, task_add, w3_body);
}

static void w4_body(void *data)
{
    job *j = data;

    produce(NULL, j);
    wait_tasks(j, j->n);
}

/* W4: CPU seconds over an idle interval, after one warm-up burst. */
static void w_idle(const adapter *a, unsigned workers, double seconds, double out[2])
{
    job j = { a, a->create(workers), 1000, out };
    double c0;

    start(a, j.pool, task_add);
    in_pool(&j, w4_body);
    apr_sleep(apr_time_from_msec(50));
    c0 = cpu_s();
    apr_sleep((apr_interval_time_t)(seconds * APR_USEC_PER_SEC));
    out[0] = cpu_s() - c0;
    a->destroy(j.pool);
}

static void w5_body(void *data)
{
    job *j = data;
    double t0 = now_s(), c0 = cpu_s();
    unsigned b, i;

    for (b = 0; b < j->n; b++) {
        for (i = 0; i < 64; i++)
            j->a->submit(j->pool, NULL);
        wait_tasks(j, (b + 1) * 64);
        apr_sleep(200);
    }
    j->out[0] = (now_s() - t0) * 1e3;
    j->out[1] = (cpu_s() - c0) * 1e3;
}

/* W5: bursts; wall and CPU milliseconds for all of them. */
static void w_bursts(const adapter *a, unsigned workers, unsigned bursts, double out[2])
{
    run_job(a, workers, bursts, out, task_spin, w5_body);
}

static void w6_body(void *data)
{
    job *j = data;
    double t0 = now_s();

    j->a->submit(j->pool, (void *)(apr_uintptr_t)0);
    wait_tasks(j, 1);
    j->out[0] = (now_s() - t0) * 1e9 / tree_nodes;
}

/* W6: nested fan-out, ns per task. */
static void w_tree(const adapter *a, unsigned workers, double out[2])
{
    job j = { a, a->create(workers), 1, out };
    apr_uint32_t i;

    tree_nodes = (1u << tree_depth) - 1;
    tree_pending = malloc(tree_nodes * sizeof(*tree_pending));
    if (!tree_pending) {
        out[0] = NA;
        a->destroy(j.pool);
        return;
    }
    for (i = 0; i < tree_nodes; i++)
        tree_pending[i] = 2 * i + 1 < tree_nodes ? 3 : 1;
    start(a, j.pool, task_tree);
    in_pool(&j, w6_body);
    a->destroy(j.pool);
    free(tree_pending);
}

/* ------------------------------------------------------------ the limits */

#define SPSC_SIZE 1024
static void *volatile spsc_ring[SPSC_SIZE];
static volatile apr_uint32_t spsc_head, spsc_tail, spsc_total;

static void *spsc_consumer(void *data)
{
    apr_uint32_t n = 0;

    (void)data;
    while (n < spsc_total) {
        apr_uint32_t tail = __atomic_load_n(&spsc_tail, __ATOMIC_ACQUIRE);
        while (spsc_head != tail) {
            task_fn(spsc_ring[spsc_head % SPSC_SIZE]);
            __atomic_store_n(&spsc_head, spsc_head + 1, __ATOMIC_RELEASE);
            n++;
        }
    }
    return NULL;
}

/* A spinning single-producer/single-consumer ring: what a dispatch costs
 * with no lock, no sleep and no wake-up at all. */
static void limit_spsc(unsigned total, double out[2])
{
    pthread_t t;
    double t0;
    unsigned i;

    start(NULL, NULL, task_add);
    spsc_total = total;
    spsc_head = spsc_tail = 0;
    pthread_create(&t, NULL, spsc_consumer, NULL);
    t0 = now_s();
    for (i = 0; i < total; i++) {
        while (spsc_tail - __atomic_load_n(&spsc_head, __ATOMIC_ACQUIRE) == SPSC_SIZE)
            ;
        spsc_ring[spsc_tail % SPSC_SIZE] = NULL;
        __atomic_store_n(&spsc_tail, spsc_tail + 1, __ATOMIC_RELEASE);
    }
    wait_completed(total);
    out[0] = (now_s() - t0) * 1e9 / total;
    pthread_join(t, NULL);
}

static volatile apr_uint32_t ping, pong;

static void *futex_ponger(void *data)
{
    unsigned rounds = *(unsigned *)data, i;

    for (i = 1; i <= rounds; i++) {
        while (__atomic_load_n(&ping, __ATOMIC_ACQUIRE) < i)
            futex_wait(&ping, i - 1);
        __atomic_store_n(&pong, i, __ATOMIC_RELEASE);
        futex_wake(&pong);
    }
    return NULL;
}

/* Two threads that sleep on futexes and wake each other: what one park
 * and unpark round trip costs with nothing else around it. */
static void limit_futex(unsigned rounds, double out[2])
{
    double *lat = malloc(rounds * sizeof(*lat));
    pthread_t t;
    unsigned i;

    ping = pong = 0;
    pthread_create(&t, NULL, futex_ponger, &rounds);
    for (i = 1; i <= rounds; i++) {
        double t0 = now_s();
        __atomic_store_n(&ping, i, __ATOMIC_RELEASE);
        futex_wake(&ping);
        while (__atomic_load_n(&pong, __ATOMIC_ACQUIRE) < i)
            futex_wait(&pong, i - 1);
        lat[i - 1] = (now_s() - t0) * 1e6;
    }
    pthread_join(t, NULL);
    qsort(lat, rounds, sizeof(*lat), cmp_double);
    out[0] = lat[rounds / 2];
    out[1] = lat[(unsigned)(rounds * 0.99)];
    free(lat);
}

/* ------------------------------------------------------------ runs */

enum { W1, W2, W3, W4, W5, W6, NWORK };
#define NCOLS 8
static const char *const col_name[NCOLS] = {
    "W1 ns/task", "W2 ns/task", "W3 med us", "W3 p99 us", "W4 cpu s",
    "W5 wall ms", "W5 cpu ms", "W6 ns/task"
};
static const char *const col_key[NCOLS] = {
    "w1_ns_per_task", "w2_ns_per_task", "w3_median_us", "w3_p99_us", "w4_cpu_s",
    "w5_wall_ms", "w5_cpu_ms", "w6_ns_per_task"
};
static const int col_work[NCOLS] = { W1, W2, W3, W3, W4, W5, W5, W6 };
static const int col_digits[NCOLS] = { 1, 1, 2, 2, 3, 1, 1, 1 };

typedef struct params {
    unsigned div, reps;
    double idle_s, timeout_s;
} params;

/* Runs one workload in a child process; HANG if it outlives the timeout. */
static void run_child(const adapter *a, int work, int limit, unsigned workers,
                      const params *pr, double out[2])
{
    int fd[2], status;
    pid_t pid;
    double got[2] = { NA, NA };
    struct pollfd pfd;
    ssize_t n = 0;

    out[0] = out[1] = NA;
    if (pipe(fd) != 0)
        return;
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        apr_pool_create(&root, NULL);
        if (limit)
            (work == W1 ? limit_spsc(1000000 / pr->div, got) : limit_futex(100000 / pr->div, got));
        else if (work == W1)
            w_throughput(a, workers, 1, 1000000 / pr->div, got);
        else if (work == W2)
            w_throughput(a, workers, 4, 1000000 / pr->div, got);
        else if (work == W3)
            w_pingpong(a, workers, 100000 / pr->div, got);
        else if (work == W4)
            w_idle(a, 4, pr->idle_s, got);
        else if (work == W5)
            w_bursts(a, workers, 2000 / pr->div, got);
        else
            w_tree(a, workers, got);
        if (write(fd[1], got, sizeof(got)) != (ssize_t)sizeof(got))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    pfd.fd = fd[0];
    pfd.events = POLLIN;
    if (poll(&pfd, 1, (int)(pr->timeout_s * 1000)) == 1)
        n = read(fd[0], got, sizeof(got));
    close(fd[0]);
    if (n != (ssize_t)sizeof(got)) {
        kill(pid, SIGKILL);
        got[0] = got[1] = HANG;
    }
    waitpid(pid, &status, 0);
    if (n == (ssize_t)sizeof(got) && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        got[0] = got[1] = NA;    /* finished its figures but died on the way out */
    out[0] = got[0];
    out[1] = got[1];
}

#define NROWS_MAX 32
typedef struct row {
    const char *name;
    unsigned workers;
    int peer;            /* counts for the ratio's "best peer" */
    double fig[NCOLS];   /* the median of the repetitions */
    double lo[NCOLS], hi[NCOLS];    /* their least and greatest */
} row;

/* One measured figure pair: a workload for one row (or a limit), with
 * every repetition's result. */
typedef struct cell {
    const adapter *a;    /* NULL for a limit */
    int work, limit;
    unsigned workers;
    row *r;              /* the medians go to r->fig[col], and [col + 1] if two */
    int col;
    int two;             /* the workload has a second figure */
    double v[2][99];
} cell;

/* The median of the repetitions; a hang in any makes the figure a hang. */
static void median(cell *c, unsigned reps)
{
    unsigned r, k;

    for (k = 0; k < (c->two ? 2u : 1u); k++) {
        int hang = 0, na = 0;
        for (r = 0; r < reps; r++) {
            hang |= c->v[k][r] == HANG;
            na |= c->v[k][r] == NA;
        }
        if (hang || na) {
            c->r->fig[c->col + k] = hang ? HANG : NA;
            continue;
        }
        qsort(c->v[k], reps, sizeof(double), cmp_double);
        c->r->fig[c->col + k] = reps % 2 ? c->v[k][reps / 2]
                                         : (c->v[k][reps / 2 - 1] + c->v[k][reps / 2]) / 2;
        c->r->lo[c->col + k] = c->v[k][0];
        c->r->hi[c->col + k] = c->v[k][reps - 1];
    }
}

/* Every cell's repetition r, then r + 1: the repetitions of one figure are
 * spread over the whole run, so a spell of load from other tenants of the
 * machine spoils one repetition of many figures (which the median drops)
 * rather than every repetition of a few. */
static void measure_all(cell *cells, int ncells, const params *pr)
{
    double got[2];
    unsigned r;
    int k;

    for (r = 0; r < pr->reps; r++) {
        fprintf(stderr, "pp_bench: repetition %u of %u\n", r + 1, pr->reps);
        for (k = 0; k < ncells; k++) {
            run_child(cells[k].a, cells[k].work, cells[k].limit, cells[k].workers, pr, got);
            cells[k].v[0][r] = got[0];
            cells[k].v[1][r] = got[1];
        }
    }
    for (k = 0; k < ncells; k++)
        median(&cells[k], pr->reps);
}

/* ------------------------------------------------------------ output */

static void print_fig(FILE *f, double v, int digits, int width)
{
    if (v == HANG)
        fprintf(f, " %*s", width, "hang");
    else if (v < 0)
        fprintf(f, " %*s", width, "-");
    else
        fprintf(f, " %*.*f", width, digits, v);
}

/* Whether a figure's repetitions spread over more than a quarter of it:
 * noise from the machine's other tenants may have decided it. */
static int noisy(const row *r, int c)
{
    return r->fig[c] > 0 && r->hi[c] - r->lo[c] > 0.25 * r->fig[c];
}

static void print_row(const row *r)
{
    int c;

    printf("%-12s %2u", r->name, r->workers);
    for (c = 0; c < NCOLS; c++) {
        print_fig(stdout, r->fig[c], col_digits[c], 10);
        putchar(noisy(r, c) ? '*' : ' ');
    }
    printf("\n");
    fflush(stdout);
}

/* A figure's least and greatest repetition, "lo-hi", in four digits. */
static void print_range(const row *r, int c)
{
    char buf[32];

    if (r->fig[c] < 0)
        snprintf(buf, sizeof(buf), "-");
    else
        snprintf(buf, sizeof(buf), "%.4g-%.4g", r->lo[c], r->hi[c]);
    printf(" %13s", buf);
}

/* parkpool over the best peer, per column: below 1 is better. */
static void print_ratio(const char *label, const row *pp, const row *rows, int nrows,
                        int peers)
{
    int c, k;

    printf("%-12s %2u", label, pp->workers);
    for (c = 0; c < NCOLS; c++) {
        double best = -1;
        const row *by = NULL;
        for (k = 0; k < nrows; k++)
            if (rows[k].workers == pp->workers && rows[k].peer == peers && &rows[k] != pp
                && rows[k].fig[c] >= 0 && (best < 0 || rows[k].fig[c] < best)) {
                best = rows[k].fig[c];
                by = &rows[k];
            }
        /* An idle CPU of 0.000 against 0.000 is a tie, not a ratio. A
         * ratio of a noisy figure is flagged as the figure is. */
        if (pp->fig[c] >= 0 && best > 0 && (c != 4 || best >= 0.001 || pp->fig[c] >= 0.001))
            printf(" %10.2f%c", pp->fig[c] / (best > 0.0005 ? best : 0.0005),
                   noisy(pp, c) || noisy(by, c) ? '*' : ' ');
        else
            printf(" %11s", "-");
    }
    printf("\n");
}

static void json_fig(FILE *f, double v, int digits)
{
    if (v == HANG)
        fprintf(f, "\"hang\"");
    else if (v < 0)
        fprintf(f, "null");
    else
        fprintf(f, "%.*f", digits + 1, v);
}

/* mkdir -p: 0, or -1 with errno. */
static int make_dirs(const char *dir)
{
    char path[4096], *s;

    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (s = path + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return -1;
            *s = c;
            if (!c)
                break;
        }
    }
    return 0;
}

/* Where results go without --out: $XDG_CACHE_HOME/parkpool/bench, else
 * ~/.cache/parkpool/bench, else ./parkpool-bench. */
static const char *default_out_dir(void)
{
    static char dir[4096];
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

    if (cache && cache[0] == '/')
        snprintf(dir, sizeof(dir), "%s/parkpool/bench", cache);
    else if (home && home[0] == '/')
        snprintf(dir, sizeof(dir), "%s/.cache/parkpool/bench", home);
    else
        snprintf(dir, sizeof(dir), "parkpool-bench");
    return dir;
}

/* Closes f: 0, or -1 (and says so) if anything written to it failed. */
static int finish_file(FILE *f, const char *path)
{
    int bad = ferror(f);

    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "pp_bench: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");

    if (!f)
        fprintf(stderr, "pp_bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

/* The result files in dir: 0, or -1 after saying which failed. */
static int write_files(const char *dir, const row *rows, int nrows, const params *pr)
{
    char path[4096];
    FILE *f;
    int k, c, rc = 0;
    unsigned w;

    snprintf(path, sizeof(path), "%s/results.csv", dir);
    if ((f = open_out(path)) == NULL)
        return -1;
    {
        fprintf(f, "pool,workers");
        for (c = 0; c < NCOLS; c++)
            fprintf(f, ",%s,%s_min,%s_max", col_key[c], col_key[c], col_key[c]);
        fprintf(f, "\n");
        for (k = 0; k < nrows; k++) {
            fprintf(f, "%s,%u", rows[k].name, rows[k].workers);
            for (c = 0; c < NCOLS; c++) {
                double v = rows[k].fig[c];
                if (v == HANG)
                    fprintf(f, ",hang,,");
                else if (v < 0)
                    fprintf(f, ",,,");
                else
                    fprintf(f, ",%.*f,%.*f,%.*f", col_digits[c] + 1, v, col_digits[c] + 1,
                            rows[k].lo[c], col_digits[c] + 1, rows[k].hi[c]);
            }
            fprintf(f, "\n");
        }
        rc |= finish_file(f, path);
    }
    snprintf(path, sizeof(path), "%s/results.json", dir);
    if ((f = open_out(path)) == NULL)
        return -1;
    {
        fprintf(f, "{\"parkpool\":\"%s\",\"park_backend\":\"%s\",\"reps\":%u,\"quick\":%s,"
                "\"rows\":[", pp_version(), pp_park_backend(), pr->reps,
                pr->div > 1 ? "true" : "false");
        for (k = 0; k < nrows; k++) {
            fprintf(f, "%s\n {\"pool\":\"%s\",\"workers\":%u", k ? "," : "", rows[k].name,
                    rows[k].workers);
            for (c = 0; c < NCOLS; c++) {
                fprintf(f, ",\"%s\":", col_key[c]);
                json_fig(f, rows[k].fig[c], col_digits[c]);
                if (rows[k].fig[c] >= 0)
                    fprintf(f, ",\"%s_min\":%.*f,\"%s_max\":%.*f", col_key[c],
                            col_digits[c] + 1, rows[k].lo[c], col_key[c], col_digits[c] + 1,
                            rows[k].hi[c]);
            }
            fprintf(f, "}");
        }
        fprintf(f, "\n]}\n");
        rc |= finish_file(f, path);
    }
    /* For bench/plot.gp: one block per column, a line per worker count,
     * one field per pool (limits left out; NaN where there is no figure). */
    snprintf(path, sizeof(path), "%s/plot.dat", dir);
    if ((f = open_out(path)) == NULL)
        return -1;
    {
        for (c = 0; c < NCOLS; c++) {
            fprintf(f, "# %s\nN", col_name[c]);
            for (k = 0; k < nrows && rows[k].workers == rows[0].workers; k++)
                if (rows[k].peer >= 0)    /* quoted: "pp spin=0" is one column */
                    fprintf(f, " \"%s\"", rows[k].name);
            fprintf(f, "\n");
            for (w = 2; w <= 4; w += 2) {
                fprintf(f, "%u", w);
                for (k = 0; k < nrows; k++)
                    if (rows[k].workers == w && rows[k].peer >= 0) {
                        if (rows[k].fig[c] >= 0)
                            fprintf(f, " %g", rows[k].fig[c]);
                        else
                            fprintf(f, " NaN");
                    }
                fprintf(f, "\n");
            }
            fprintf(f, "\n\n");
        }
        rc |= finish_file(f, path);
    }
    return rc;
}

/* Whether name is one of the comma-separated names in list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (; *list; list += strcspn(list, ",") + (list[strcspn(list, ",")] == ',')) {
        if (strncmp(list, name, n) == 0 && (list[n] == ',' || list[n] == '\0'))
            return 1;
        if (!list[strcspn(list, ",")])
            break;
    }
    return 0;
}

/* Whether workload w (W1...) is in the comma-separated list ("W1,W6"):
 * every workload when there is no list. */
static int work_listed(const char *list, int w)
{
    char name[16];

    snprintf(name, sizeof(name), "W%d", w + 1);
    return !list || listed(list, name);
}

/* Whether a --work list names any of W1 to W6. */
static int any_pool_work(const char *list)
{
    int w;

    for (w = 0; w < NWORK; w++)
        if (work_listed(list, w))
            return 1;
    return 0;
}

/* Whether every name in a --work list is W1 to W6, STRAND or MAIN. */
static int works_valid(const char *list)
{
    size_t n;

    for (;; list += n + 1) {
        n = strcspn(list, ",");
        if ((n != 2 || list[0] != 'W' || list[1] < '1' || list[1] > '0' + NWORK)
            && (n != 4 || strncmp(list, "MAIN", 4) != 0)
            && (n != 6 || strncmp(list, "STRAND", 6) != 0)
            && (n != 5 || strncmp(list, "TIMER", 5) != 0))
            return 0;
        if (!list[n])
            return 1;
    }
}

static void add_cell(cell *c, const adapter *a, int work, int limit, unsigned workers,
                     row *r, int col, int two)
{
    c->a = a;
    c->work = work;
    c->limit = limit;
    c->workers = workers;
    c->r = r;
    c->col = col;
    c->two = two;
}

/* The first row with the same worker count as rows[k]: parkpool's. */
static const row *first_of(const row *rows, int k)
{
    while (k > 0 && rows[k - 1].workers == rows[k].workers)
        k--;
    return &rows[k];
}

static void usage(void)
{
    fprintf(stderr, "usage: pp_bench [--quick] [--reps N] [--timeout SECONDS] [--out DIR]\n"
                    "                [--only POOL,POOL...] [--work W1,W6,STRAND,TIMER,MAIN...]\n"
                    "--out: made if missing; default $XDG_CACHE_HOME/parkpool/bench, or\n"
                    "~/.cache/parkpool/bench\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static const unsigned worker_counts[] = { 2, 4 };
    params pr = { 1, 5, 2.0, 120.0 };
    const char *out_dir = NULL, *only = NULL, *works = NULL, *parkpool = "parkpool";
    static row rows[NROWS_MAX];
    static cell cells[NROWS_MAX * NWORK];
    row *spsc, *fx;
    int nrows = 0, ncells = 0, i, c;
    unsigned w, k;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            pr.div = 20;
            pr.reps = 1;
            pr.idle_s = 0.5;
            pr.timeout_s = 30;
            tree_depth = TREE_DEPTH - 4;
        }
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            pr.reps = (unsigned)atoi(argv[++i]);
            if (pr.reps < 1 || pr.reps > 99)
                usage();
        }
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            pr.timeout_s = atof(argv[++i]);
            if (pr.timeout_s <= 0)
                usage();
        }
        else if (strcmp(argv[i], "--parkpool") == 0 && i + 1 < argc) {
            parkpool = argv[++i];
        }
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
        }
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        }
        else if (strcmp(argv[i], "--work") == 0 && i + 1 < argc) {
            works = argv[++i];
            if (!works_valid(works))
                usage();
        }
        else {
            usage();
        }
    }
    /* Before the hour of measuring: a folder that cannot be made fails now. */
    if (!out_dir)
        out_dir = default_out_dir();
    if (make_dirs(out_dir) != 0) {
        fprintf(stderr, "pp_bench: cannot make the results folder %s: %s\n", out_dir,
                strerror(errno));
        return 2;
    }
    apr_initialize();

    printf("parkpool %s, park backend %s, median of %u run%s%s, %.0f s timeout per run\n",
           pp_version(), pp_park_backend(), pr.reps, pr.reps == 1 ? "" : "s",
           pr.div > 1 ? " (quick: counts / 20, tree / 16)" : "", pr.timeout_s);
#ifndef HAVE_GLIB
    printf("(GLib not found by configure: no glib row)\n");
#endif
#ifndef HAVE_LIBUV
    printf("(libuv not found by configure: no libuv row)\n");
#endif
#ifndef HAVE_OPENMP
    printf("(OpenMP not found by configure: no openmp row)\n");
#endif
#ifndef HAVE_TBB
    printf("(oneTBB not found by configure: no onetbb row)\n");
#endif
    printf("W4 is always a 4-worker pool; the limits do not depend on N.\n");
    fflush(stdout);
    if (works && !any_pool_work(works)) {    /* --work MAIN, STRAND or TIMER alone */
        int rc = 0;
        if (listed(works, "STRAND"))
            rc = pp_bench_strands(pr.reps, pr.div > 1);
        if (rc == 0 && listed(works, "TIMER"))
            rc = pp_bench_timers(pr.reps, pr.div > 1);
        if (rc == 0 && listed(works, "MAIN"))
            rc = pp_bench_main_job(parkpool, pr.reps, pr.div > 1);
        apr_terminate();
        return rc == 0 ? 0 : 1;
    }
    /* The rows, and a cell for each workload of each row. */
    for (w = 0; w < sizeof(worker_counts) / sizeof(worker_counts[0]); w++) {
        for (k = 0; k < NADAPTERS; k++) {
            row *r;
            if (only && !listed(only, adapters[k]->name))
                continue;
            r = &rows[nrows++];
            r->name = adapters[k]->name;
            r->workers = worker_counts[w];
            r->peer = adapters[k]->peer;
            for (c = 0; c < NCOLS; c++) {
                r->fig[c] = NA;
                /* A workload's second figure comes from the same runs. */
                if ((c > 0 && col_work[c] == col_work[c - 1]) || !work_listed(works, col_work[c]))
                    continue;
                add_cell(&cells[ncells++], adapters[k], col_work[c], 0, r->workers,
                         r, c, c + 1 < NCOLS && col_work[c + 1] == col_work[c]);
            }
        }
    }
    /* The limits, once: they do not depend on N. */
    spsc = &rows[nrows++];
    fx = &rows[nrows++];
    spsc->name = "limit:spsc";
    fx->name = "limit:futex";
    spsc->workers = fx->workers = 2;
    spsc->peer = fx->peer = -1;
    for (c = 0; c < NCOLS; c++)
        spsc->fig[c] = fx->fig[c] = NA;
    if (work_listed(works, W1))
        add_cell(&cells[ncells++], NULL, W1, 1, 2, spsc, 0, 0);
    if (work_listed(works, W3))
        add_cell(&cells[ncells++], NULL, W3, 1, 2, fx, 2, 1);

    measure_all(cells, ncells, &pr);

    printf("%-12s %2s", "pool", "N");
    for (c = 0; c < NCOLS; c++)
        printf(" %11s", col_name[c]);
    printf("\n");
    for (k = 0; k < (unsigned)nrows - 2; k++) {
        print_row(&rows[k]);
        if (k + 3 == (unsigned)nrows || rows[k + 1].workers != rows[k].workers)
            print_ratio("ratio", first_of(rows, (int)k), rows, nrows - 2, 1);
    }
    /* parkpool's distance to the limits, at N=2. */
    print_row(spsc);
    print_row(fx);
    printf("%-12s %2u", "vs limits", 2u);
    for (c = 0; c < NCOLS; c++) {
        double lim = c == 0 ? spsc->fig[0] : (c == 2 || c == 3) ? fx->fig[c] : NA;
        if (lim > 0 && rows[0].fig[c] >= 0 && rows[0].peer == 0)
            printf(" %11.2f", rows[0].fig[c] / lim);
        else
            printf(" %11s", "-");
    }
    printf("\n");
    if (pr.reps > 1) {
        printf("*: the repetitions spread over more than 25%% of the median (noise may decide\n"
               "   it; a ratio is flagged when either figure is). Least-greatest of %u runs:\n",
               pr.reps);
        printf("%-12s %2s", "pool", "N");
        for (c = 0; c < NCOLS; c++)
            printf(" %13s", col_name[c]);
        printf("\n");
        for (k = 0; k < (unsigned)nrows; k++) {
            printf("%-12s %2u", rows[k].name, rows[k].workers);
            for (c = 0; c < NCOLS; c++)
                print_range(&rows[k], c);
            printf("\n");
        }
    }
    if (write_files(out_dir, rows, nrows, &pr) != 0) {
        apr_terminate();
        return 1;
    }
    printf("written: %s/results.csv, results.json, plot.dat\n", out_dir);
    if ((!works || listed(works, "STRAND")) && pp_bench_strands(pr.reps, pr.div > 1) != 0) {
        apr_terminate();
        return 1;
    }
    if ((!works || listed(works, "TIMER")) && pp_bench_timers(pr.reps, pr.div > 1) != 0) {
        apr_terminate();
        return 1;
    }
    if (!works || listed(works, "MAIN")) {
        fflush(stdout);
        if (pp_bench_main_job(parkpool, pr.reps, pr.div > 1) != 0) {
            apr_terminate();
            return 1;
        }
    }
    apr_terminate();
    return 0;
}
