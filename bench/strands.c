/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a strand costs: 100,000 tiny tasks submitted round-robin to S
 * strands (S = 1, 16, 1024) of a 2-worker pool, from the first submit
 * until a group wait says all ended, against the same tasks submitted
 * plainly to the same kind of pool. With one strand the tasks run one at
 * a time (a strand's whole point), so that row is about a strand's
 * hand-over cost, not about parallelism. Medians of --reps runs.
 */
#include "config.h"
#include "strands.h"
#include "parkpool/parkpool.h"

#include <apr_atomic.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>

static volatile apr_uint32_t done;

static apr_status_t tiny(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    apr_atomic_inc32(&done);
    return APR_SUCCESS;
}

/* ns per task for n tasks over nstrands strands (0: none), or -1. */
static double run_once(unsigned nstrands, unsigned n)
{
    apr_pool_t *p;
    pp_pool_t *pool;
    pp_config_t cfg;
    pp_group_t *g;
    pp_strand_t **s = NULL;
    pp_task_t t = { .fn = tiny };
    apr_time_t t0;
    double ns = -1;
    unsigned i;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    pp_config_init(&cfg);
    cfg.threads = 2;
    if (pp_pool_create(&pool, &cfg, p) != APR_SUCCESS || pp_group_create(&g, p) != APR_SUCCESS)
        goto out;
    if (nstrands) {
        s = apr_palloc(p, nstrands * sizeof(*s));
        for (i = 0; i < nstrands; i++)
            if (pp_strand_create(&s[i], pool, p) != APR_SUCCESS)
                goto out;
    }
    apr_atomic_set32(&done, 0);
    t0 = apr_time_now();
    for (i = 0; i < n; i++) {
        t.strand = nstrands ? s[i % nstrands] : NULL;
        if (pp_submit_task(pool, &t, g, 0) != APR_SUCCESS)
            goto out;
    }
    if (pp_group_wait(g, -1) == APR_SUCCESS && apr_atomic_read32(&done) == n)
        ns = (double)(apr_time_now() - t0) * 1000.0 / n;
out:
    apr_pool_destroy(p);    /* the strands first (made last), then the pool */
    return ns;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp);
    return v[n / 2];
}

int pp_bench_strands(unsigned reps, int quick)
{
    static const unsigned counts[] = { 1, 16, 1024 };
    unsigned n = quick ? 5000 : 100000, k, r;
    double *with = malloc(reps * sizeof(*with)), *plain = malloc(reps * sizeof(*plain));
    int rc = 0;

    if (!with || !plain) {
        free(with);
        free(plain);
        return -1;
    }
    printf("\nstrands: %u tasks round-robin over S strands, 2 workers, ns/task, median of %u\n",
           n, reps);
    printf("%-8s %12s %12s %8s\n", "S", "pp strands", "pp plain", "ratio");
    for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        /* Alternate the two, so that a spell of load hits both alike. */
        for (r = 0; r < reps; r++) {
            with[r] = run_once(counts[k], n);
            plain[r] = run_once(0, n);
            if (with[r] < 0 || plain[r] < 0)
                rc = -1;
        }
        if (rc != 0)
            break;
        printf("%-8u %12.1f %12.1f %8.2f\n", counts[k], median(with, reps), median(plain, reps),
               median(with, reps) / median(plain, reps));
    }
    free(with);
    free(plain);
    fflush(stdout);
    return rc;
}
