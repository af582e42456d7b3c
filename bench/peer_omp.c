/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pp_bench's OpenMP peer, written as OpenMP's users write tasks: a
 * parallel region of N workers and the submitting thread, which alone
 * runs the workload's body in a `single` construct and makes each task
 * with `#pragma omp task`; it waits with `taskwait`, running tasks of its
 * own meanwhile. Tasks made inside tasks (W6) are the team's too. The
 * runtime's own settings (OMP_WAIT_POLICY, GOMP_SPINCOUNT) stay as a user
 * gets them.
 */
#include "config.h"
#include "adapter.h"

#include <omp.h>
#include <stdlib.h>

typedef struct omp_pool {
    int threads;    /* the team: N workers and the submitter */
} omp_pool;

static void *omp_create(unsigned workers)
{
    omp_pool *p = malloc(sizeof(*p));

    if (p)
        p->threads = (int)workers + 1;
    return p;
}

static void omp_submit(void *pool, void *arg)
{
    (void)pool;
#pragma omp task firstprivate(arg)
    pp_bench_task(arg);
}

/* The team's threads start with the first region and stay parked between
 * regions, so only the first run of a process pays for making them; the
 * harness times inside the body. */
static void omp_enter(void *pool, void (*body)(void *), void *arg)
{
    omp_pool *p = pool;

#pragma omp parallel num_threads(p->threads)
#pragma omp single
    body(arg);
}

/* The tasks this thread made, run here if no worker has taken them yet;
 * W6's deeper tasks are children of the root's, which the harness then
 * waits for as it waits for every pool's. */
static void omp_help(void *pool)
{
    (void)pool;
#pragma omp taskwait
}

static void omp_destroy(void *pool)
{
    free(pool);
}

const pp_bench_adapter pp_bench_omp = {
    "openmp", 1, omp_create, omp_submit, omp_destroy, omp_enter, omp_help, 0
};
