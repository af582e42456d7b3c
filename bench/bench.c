/*
 * pp_bench: dispatch cost, wake latency and idle cost of parkpool.
 *
 *   W1  1 producer submits 1,000,000 tasks that each do one atomic add;
 *       ns per task, from the first submit until all are done
 *   W2  4 producers x 250,000 tasks, likewise
 *   W3  ping-pong: submit one task and wait for it, 100,000 rounds;
 *       median and p99 round trip in microseconds
 *   W4  CPU seconds the process uses while a pool sits idle for 2 s
 *
 * for 2 and 4 workers. Each figure is the median of --reps runs (default
 * 5). --quick divides the counts by 20 for a smoke run. Speed is reported,
 * never asserted: these machines are shared and noisy.
 *
 * Pools are driven through one small adapter (create, submit, destroy)
 * and the same task: one atomic add, then a completion count that the
 * waiting thread sleeps on with a futex. Every pool pays the same for its
 * tasks and for being waited on, so only dispatch and wake-up differ.
 * Peers: APR-util's apr_thread_pool, and GLib's GThreadPool (exclusive, N
 * threads) when configure found GLib. libuv's uv_queue_work is not here
 * yet: it may only be called from its loop's thread, and its pool size is
 * fixed per process.
 */
#include "config.h"
#include "parkpool/parkpool.h"

#include <apr_atomic.h>
#include <apr_thread_pool.h>
#include <apr_general.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_GLIB
#include <glib.h>
#endif

typedef struct adapter {
    const char *name;
    void *(*create)(unsigned workers, apr_pool_t *p);
    void (*submit)(void *pool);    /* queue one bench_task() */
    void (*destroy)(void *pool);
} adapter;

/* ------------------------------------------------------------ the task */

static volatile apr_uint32_t counter;     /* the task's work */
static volatile apr_uint32_t completed;   /* tasks finished, futex word */
static volatile apr_uint32_t waiting;     /* a waiter may sleep on completed */

static void bench_task(void)
{
    apr_atomic_inc32(&counter);
    apr_atomic_inc32(&completed);
    if (apr_atomic_read32(&waiting))
        syscall(SYS_futex, &completed, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Sleep until `target` tasks have completed since the last reset. */
static void wait_completed(apr_uint32_t target)
{
    apr_uint32_t v;

    apr_atomic_set32(&waiting, 1);
    while ((v = apr_atomic_read32(&completed)) < target)
        syscall(SYS_futex, &completed, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
    apr_atomic_set32(&waiting, 0);
}

/* ------------------------------------------------------------ parkpool */

static apr_status_t pp_task(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    bench_task();
    return APR_SUCCESS;
}

static void *pp_create(unsigned workers, apr_pool_t *parent)
{
    pp_pool_t *pool;
    pp_config_t cfg;

    pp_config_init(&cfg);
    cfg.threads = workers;
    return pp_pool_create(&pool, &cfg, parent) == APR_SUCCESS ? pool : NULL;
}

static void pp_submit1(void *pool)
{
    pp_submit(pool, pp_task, NULL);
}

static void pp_destroy1(void *pool)
{
    pp_pool_destroy(pool);
}

/* ------------------------------------------------------------ apr_thread_pool */

static void *APR_THREAD_FUNC atp_task(apr_thread_t *t, void *arg)
{
    (void)t;
    (void)arg;
    bench_task();
    return NULL;
}

static void *atp_create(unsigned workers, apr_pool_t *parent)
{
    apr_thread_pool_t *tp;

    return apr_thread_pool_create(&tp, workers, workers, parent) == APR_SUCCESS ? tp : NULL;
}

static void atp_submit(void *pool)
{
    apr_thread_pool_push(pool, atp_task, NULL, APR_THREAD_TASK_PRIORITY_NORMAL, NULL);
}

static void atp_destroy(void *pool)
{
    apr_thread_pool_destroy(pool);
}

/* ------------------------------------------------------------ GLib */

#ifdef HAVE_GLIB
static void glib_task(gpointer data, gpointer user)
{
    (void)data;
    (void)user;
    bench_task();
}

static void *glib_create(unsigned workers, apr_pool_t *parent)
{
    (void)parent;
    return g_thread_pool_new(glib_task, NULL, (gint)workers, TRUE, NULL);
}

static void glib_submit(void *pool)
{
    g_thread_pool_push(pool, GINT_TO_POINTER(1), NULL);    /* NULL data is refused */
}

static void glib_destroy(void *pool)
{
    g_thread_pool_free(pool, FALSE, TRUE);
}
#endif

static const adapter adapters[] = {
    { "parkpool", pp_create, pp_submit1, pp_destroy1 },
    { "apr_tp", atp_create, atp_submit, atp_destroy },
#ifdef HAVE_GLIB
    { "glib", glib_create, glib_submit, glib_destroy },
#endif
};
#define NADAPTERS (sizeof(adapters) / sizeof(adapters[0]))

/* ------------------------------------------------------------ helpers */

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ------------------------------------------------------------ workloads */

typedef struct producer {
    const adapter *a;
    void *pool;
    unsigned n;
} producer;

static void *APR_THREAD_FUNC produce(apr_thread_t *t, void *data)
{
    producer *pr = data;
    unsigned i;

    (void)t;
    for (i = 0; i < pr->n; i++)
        pr->a->submit(pr->pool);
    return NULL;
}

/* W1 (producers = 1) and W2: ns per task, until all are done. */
static double run_throughput(const adapter *a, unsigned workers, unsigned producers,
                             unsigned total, apr_pool_t *p)
{
    void *pool = a->create(workers, p);
    apr_thread_t *th[16];
    producer pr;
    double t0, dt;
    unsigned i;

    if (!pool)
        return -1;
    apr_atomic_set32(&counter, 0);
    apr_atomic_set32(&completed, 0);
    pr.a = a;
    pr.pool = pool;
    pr.n = total / producers;
    t0 = now_s();
    if (producers == 1) {
        produce(NULL, &pr);
    }
    else {
        for (i = 0; i < producers; i++)
            apr_thread_create(&th[i], NULL, produce, &pr, p);
        for (i = 0; i < producers; i++) {
            apr_status_t rv;
            apr_thread_join(&rv, th[i]);
        }
    }
    wait_completed(pr.n * producers);
    dt = now_s() - t0;
    if (apr_atomic_read32(&counter) != pr.n * producers)
        fprintf(stderr, "pp_bench: %s lost tasks\n", a->name);
    a->destroy(pool);
    return dt * 1e9 / (pr.n * producers);
}

/* W3: round trips in microseconds; median and p99 in out[0], out[1]. */
static void run_pingpong(const adapter *a, unsigned workers, unsigned rounds,
                         apr_pool_t *p, double out[2])
{
    void *pool = a->create(workers, p);
    double *lat = malloc(rounds * sizeof(*lat));
    unsigned i;

    out[0] = out[1] = -1;
    if (!pool || !lat) {
        free(lat);
        if (pool)
            a->destroy(pool);
        return;
    }
    apr_atomic_set32(&completed, 0);
    for (i = 0; i < rounds; i++) {
        double t0 = now_s();
        a->submit(pool);
        wait_completed(i + 1);
        lat[i] = (now_s() - t0) * 1e6;
    }
    qsort(lat, rounds, sizeof(*lat), cmp_double);
    out[0] = lat[rounds / 2];
    out[1] = lat[(unsigned)(rounds * 0.99)];
    free(lat);
    a->destroy(pool);
}

/* W4: CPU seconds over an idle interval (after one warm-up burst). */
static double run_idle(const adapter *a, unsigned workers, double seconds, apr_pool_t *p)
{
    void *pool = a->create(workers, p);
    double c0, used;
    unsigned i;

    if (!pool)
        return -1;
    apr_atomic_set32(&completed, 0);
    for (i = 0; i < 1000; i++)
        a->submit(pool);
    wait_completed(1000);
    apr_sleep(apr_time_from_msec(50));
    c0 = cpu_s();
    apr_sleep((apr_interval_time_t)(seconds * APR_USEC_PER_SEC));
    used = cpu_s() - c0;
    a->destroy(pool);
    return used;
}

/* ------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr, "usage: pp_bench [--quick] [--reps N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static const unsigned worker_counts[] = { 2, 4 };
    static const char *const cols[] = { "W1 ns/task", "W2 ns/task", "W3 med us", "W3 p99 us",
                                        "W4 cpu s" };
    apr_pool_t *p;
    unsigned div = 1, reps = 5, w, r, k, c;
    double idle_s = 2.0;
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            div = 20;
            reps = 1;
            idle_s = 0.5;
        }
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = (unsigned)atoi(argv[++i]);
            if (reps < 1 || reps > 99)
                usage();
        }
        else {
            usage();
        }
    }
    apr_initialize();
    apr_pool_create(&p, NULL);

    printf("parkpool %s, park backend %s, median of %u run%s%s\n", pp_version(),
           pp_park_backend(), reps, reps == 1 ? "" : "s", div > 1 ? " (quick: counts / 20)" : "");
#ifndef HAVE_GLIB
    printf("(GLib not found by configure: its column is skipped)\n");
#endif
    printf("%-10s %2s", "pool", "N");
    for (c = 0; c < 5; c++)
        printf(" %12s", cols[c]);
    printf("\n");
    for (w = 0; w < sizeof(worker_counts) / sizeof(worker_counts[0]); w++) {
        unsigned n = worker_counts[w];
        double fig[NADAPTERS][5];

        for (k = 0; k < NADAPTERS; k++) {
            const adapter *a = &adapters[k];
            double v[5][99], pp[2];

            for (r = 0; r < reps; r++) {
                v[0][r] = run_throughput(a, n, 1, 1000000 / div, p);
                v[1][r] = run_throughput(a, n, 4, 1000000 / div, p);
                run_pingpong(a, n, 100000 / div, p, pp);
                v[2][r] = pp[0];
                v[3][r] = pp[1];
                v[4][r] = run_idle(a, n, idle_s, p);
            }
            printf("%-10s %2u", a->name, n);
            for (c = 0; c < 5; c++) {
                fig[k][c] = median(v[c], (int)reps);
                printf(" %12.*f", c < 2 ? 1 : c < 4 ? 2 : 3, fig[k][c]);
            }
            printf("\n");
            fflush(stdout);
        }
        /* parkpool's figure over the best peer's: below 1 is better. */
        printf("%-10s %2u", "ratio", n);
        for (c = 0; c < 5; c++) {
            double best = -1;
            for (k = 1; k < NADAPTERS; k++)
                if (fig[k][c] >= 0 && (best < 0 || fig[k][c] < best))
                    best = fig[k][c];
            /* An idle CPU figure of 0.000 against 0.000 is a tie, not a ratio. */
            if (best > 0 && (c != 4 || best >= 0.001 || fig[0][c] >= 0.001))
                printf(" %12.2f", fig[0][c] / (best > 0.0005 ? best : 0.0005));
            else
                printf(" %12s", "-");
        }
        printf("\n");
    }
    apr_pool_destroy(p);
    apr_terminate();
    return 0;
}
