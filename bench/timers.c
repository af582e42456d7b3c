/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How late timers run: 10,000 one-shot timers, their delays uniform over
 * half a second (the same pseudo-random ones for every row), each noting
 * on CLOCK_MONOTONIC how long after its due time it started. Rows:
 * parkpool (pp_schedule, 2 workers), APR-util's apr_thread_pool_schedule
 * (2 threads), and the limit: one thread sleeping to each due time in
 * turn with clock_nanosleep(TIMER_ABSTIME), what the kernel's timers give
 * with nothing in the way. p50, p99 and max lateness in microseconds,
 * each the median over --reps runs. An idle machine is the premise: on a
 * loaded one every row is as late as its threads are descheduled.
 */
#include "config.h"
#include "timers.h"
#include "parkpool/parkpool.h"

#include <apr_atomic.h>
#include <apr_thread_pool.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct one {
    apr_int64_t due;     /* ns, CLOCK_MONOTONIC */
    apr_int64_t late;    /* ns after due that it started */
} one;

static volatile apr_uint32_t fired;

static apr_int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (apr_int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void note(one *o)
{
    o->late = mono_ns() - o->due;
    apr_atomic_inc32(&fired);
}

static apr_status_t pp_fire(void *arg, pp_task_ctx_t *ctx)
{
    (void)ctx;
    note(arg);
    return APR_SUCCESS;
}

static void *APR_THREAD_FUNC apr_fire(apr_thread_t *thread, void *arg)
{
    (void)thread;
    note(arg);
    return NULL;
}

/* The delays, in microseconds: the same for every row and run. */
static void make_delays(apr_interval_time_t *delay, unsigned n, apr_interval_time_t span)
{
    apr_uint32_t seed = 12345;
    unsigned i;

    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        delay[i] = (apr_interval_time_t)((seed >> 4) % (apr_uint32_t)span);
    }
}

/* Until every timer fired (10 s past the last due time at most). */
static int all_fired(unsigned n, apr_interval_time_t span)
{
    apr_time_t until = apr_time_now() + span + apr_time_from_sec(10);

    while (apr_atomic_read32(&fired) < n && apr_time_now() < until)
        apr_sleep(1000);
    return apr_atomic_read32(&fired) == n;
}

static int run_pp(one *o, const apr_interval_time_t *delay, unsigned n, apr_interval_time_t span)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    pp_task_t t = { .fn = pp_fire };
    unsigned i;
    int rc = -1;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    pp_config_init(&cfg);
    cfg.threads = 2;
    if (pp_pool_create(&pool, &cfg, p) == APR_SUCCESS) {
        for (i = 0; i < n; i++) {
            t.arg = &o[i];
            o[i].due = mono_ns() + delay[i] * 1000;
            if (pp_schedule(NULL, pool, &t, delay[i], 0, NULL) != APR_SUCCESS)
                break;
        }
        rc = i == n && all_fired(n, span) ? 0 : -1;
    }
    apr_pool_destroy(p);
    return rc;
}

static int run_apr(one *o, const apr_interval_time_t *delay, unsigned n,
                   apr_interval_time_t span)
{
    apr_pool_t *p;
    apr_thread_pool_t *tp;
    unsigned i;
    int rc = -1;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    if (apr_thread_pool_create(&tp, 2, 2, p) == APR_SUCCESS) {
        for (i = 0; i < n; i++) {
            o[i].due = mono_ns() + delay[i] * 1000;
            if (apr_thread_pool_schedule(tp, apr_fire, &o[i], delay[i], NULL) != APR_SUCCESS)
                break;
        }
        rc = i == n && all_fired(n, span) ? 0 : -1;
        apr_thread_pool_destroy(tp);
    }
    apr_pool_destroy(p);
    return rc;
}

static int cmp_due(const void *a, const void *b)
{
    const one *x = a, *y = b;

    return x->due < y->due ? -1 : x->due > y->due;
}

/* The limit: one thread, sleeping to each due time in order. */
static int run_limit(one *o, const apr_interval_time_t *delay, unsigned n)
{
    apr_int64_t t0 = mono_ns();
    struct timespec ts;
    unsigned i;

    for (i = 0; i < n; i++)
        o[i].due = t0 + delay[i] * 1000;
    qsort(o, n, sizeof(*o), cmp_due);
    for (i = 0; i < n; i++) {
        ts.tv_sec = (time_t)(o[i].due / 1000000000);
        ts.tv_nsec = (long)(o[i].due % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
            ;
        note(&o[i]);
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    apr_int64_t x = *(const apr_int64_t *)a, y = *(const apr_int64_t *)b;

    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

#define ROWS 3
#define STATS 3    /* p50, p99, max */

int pp_bench_timers(unsigned reps, int quick)
{
    static const char *const row_name[ROWS] = { "parkpool", "apr_thread_pool", "limit:nanosleep" };
    unsigned n = quick ? 1000 : 10000, r, k, i, s;
    apr_interval_time_t span = quick ? 100000 : 500000;
    apr_interval_time_t *delay = malloc(n * sizeof(*delay));
    one *o = malloc(n * sizeof(*o));
    apr_int64_t *late = malloc(n * sizeof(*late));
    double *fig = malloc((size_t)ROWS * STATS * reps * sizeof(*fig));
    int rc = 0;

    if (!delay || !o || !late || !fig) {
        rc = -1;
        goto out;
    }
    make_delays(delay, n, span);
    printf("\ntimers: %u one-shot timers, delays uniform in [0, %d) ms, 2 workers; "
           "lateness in us after the due time, median of %u\n",
           n, (int)(span / 1000), reps);
    printf("%-16s %10s %10s %10s\n", "pool", "p50", "p99", "max");
    /* The rows take turns in each rep, so that a spell of load hits all. */
    for (r = 0; r < reps && rc == 0; r++) {
        for (k = 0; k < ROWS && rc == 0; k++) {
            apr_atomic_set32(&fired, 0);
            rc = k == 0 ? run_pp(o, delay, n, span)
               : k == 1 ? run_apr(o, delay, n, span) : run_limit(o, delay, n);
            for (i = 0; i < n; i++)
                late[i] = o[i].late;
            qsort(late, n, sizeof(*late), cmp_i64);
            fig[(k * STATS + 0) * reps + r] = late[n / 2] / 1000.0;
            fig[(k * STATS + 1) * reps + r] = late[n - 1 - n / 100] / 1000.0;
            fig[(k * STATS + 2) * reps + r] = late[n - 1] / 1000.0;
        }
    }
    for (k = 0; k < ROWS && rc == 0; k++) {
        printf("%-16s", row_name[k]);
        for (s = 0; s < STATS; s++) {
            double *v = &fig[(k * STATS + s) * reps];
            qsort(v, reps, sizeof(*v), cmp_double);
            printf(" %10.0f", v[reps / 2]);
        }
        printf("\n");
    }
out:
    free(delay);
    free(o);
    free(late);
    free(fig);
    fflush(stdout);
    return rc;
}
