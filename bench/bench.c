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
 * Pools are driven through one small adapter (create, submit, wait for
 * all, destroy) so that peers can stand beside parkpool in the same run.
 */
#include "parkpool/parkpool.h"

#include <apr_atomic.h>
#include <apr_general.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef void (*bench_fn)(void *arg);

typedef struct adapter {
    const char *name;
    void *(*create)(unsigned workers, apr_pool_t *p);
    int (*submit)(void *pool, bench_fn fn, void *arg);
    void (*wait_all)(void *pool);
    void (*destroy)(void *pool);
} adapter;

/* ------------------------------------------------------------ parkpool */

typedef struct pp_bench_pool {
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_group_t *group;
} pp_bench_pool;

static void *pp_create(unsigned workers, apr_pool_t *parent)
{
    pp_bench_pool *b;
    pp_config_t cfg;
    apr_pool_t *p;

    apr_pool_create(&p, parent);
    b = apr_pcalloc(p, sizeof(*b));
    b->p = p;
    pp_config_init(&cfg);
    cfg.threads = workers;
    if (pp_pool_create(&b->pool, &cfg, p) != APR_SUCCESS
        || pp_group_create(&b->group, p) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return NULL;
    }
    return b;
}

static int pp_submit_bench(void *pool, bench_fn fn, void *arg);

static void pp_wait_all(void *pool)
{
    pp_group_wait(((pp_bench_pool *)pool)->group, -1);
}

static void pp_destroy(void *pool)
{
    apr_pool_destroy(((pp_bench_pool *)pool)->p);
}

static const adapter parkpool_adapter = {
    "parkpool", pp_create, pp_submit_bench, pp_wait_all, pp_destroy
};

/* ------------------------------------------------------------ tasks */

static volatile apr_uint32_t counter;

static void add_one(void *arg)
{
    (void)arg;
    apr_atomic_inc32(&counter);
}

static apr_status_t pp_add_one(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    apr_atomic_inc32(&counter);
    return APR_SUCCESS;
}

static int pp_submit_bench(void *pool, bench_fn fn, void *arg)
{
    pp_bench_pool *b = pool;

    /* Every workload submits add_one; parkpool runs its native twin
     * (pp_add_one) so that no trampoline call is charged to it. */
    (void)fn;
    return pp_submit_ex(b->pool, pp_add_one, arg, b->group, 0) == APR_SUCCESS ? 0 : -1;
}

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
        pr->a->submit(pr->pool, add_one, NULL);
    return NULL;
}

/* W1 (producers = 1) and W2: ns per task. */
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
    a->wait_all(pool);
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
    for (i = 0; i < rounds; i++) {
        double t0 = now_s();
        a->submit(pool, add_one, NULL);
        a->wait_all(pool);
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
    for (i = 0; i < 1000; i++)
        a->submit(pool, add_one, NULL);
    a->wait_all(pool);
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
    const adapter *a = &parkpool_adapter;
    apr_pool_t *p;
    unsigned div = 1, reps = 5, w, r;
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
    printf("%-10s %2s %12s %12s %12s %12s %12s\n", "pool", "N",
           "W1 ns/task", "W2 ns/task", "W3 med us", "W3 p99 us", "W4 cpu s");
    for (w = 0; w < sizeof(worker_counts) / sizeof(worker_counts[0]); w++) {
        unsigned n = worker_counts[w];
        double w1[99], w2[99], w3m[99], w3p[99], w4[99], pp[2];

        for (r = 0; r < reps; r++) {
            w1[r] = run_throughput(a, n, 1, 1000000 / div, p);
            w2[r] = run_throughput(a, n, 4, 1000000 / div, p);
            run_pingpong(a, n, 100000 / div, p, pp);
            w3m[r] = pp[0];
            w3p[r] = pp[1];
            /* W4 is defined for a 4-worker pool; N=2 is shown for contrast. */
            w4[r] = run_idle(a, n, idle_s, p);
        }
        printf("%-10s %2u %12.1f %12.1f %12.2f %12.2f %12.3f\n", a->name, n,
               median(w1, (int)reps), median(w2, (int)reps), median(w3m, (int)reps),
               median(w3p, (int)reps), median(w4, (int)reps));
        fflush(stdout);
    }
    apr_pool_destroy(p);
    apr_terminate();
    return 0;
}
