/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pp_soak: long stress for `make soak`, not `make check`. Two workloads on
 * the park backend this build has (configure --with-park picks it):
 *
 *   ping-pong  one outside thread submits a task and waits for it, round
 *              after round: every round parks and unparks a worker;
 *   fan-out    trees of tasks that submit their children from inside, into
 *              the workers' deques, stolen by the others.
 *
 * A watchdog thread reads the pool's counters every 100 ms: tasks queued,
 * every worker parked and no task finished for a whole second is a stall
 * (a lost wakeup), and the run fails at once. So does a miscount at the
 * end. usage: pp_soak [ROUNDS] [WORKERS]; ROUNDS defaults to 10^7.
 */
#include "config.h"
#include "parkpool/parkpool.h"

#include <apr_atomic.h>
#include <apr_general.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct soak {
    pp_pool_t *pool;
    volatile apr_uint32_t stop, stalled;
    apr_uint64_t last_done;
    apr_time_t since;
} soak;

static apr_status_t nothing(void *arg, pp_task_ctx_t *ctx)
{
    (void)arg;
    (void)ctx;
    return APR_SUCCESS;
}

/* A node of a fan-out tree: arg is its depth left. */
static apr_status_t fan(void *arg, pp_task_ctx_t *ctx);

static pp_pool_t *fan_pool;

static apr_status_t fan(void *arg, pp_task_ctx_t *ctx)
{
    apr_uintptr_t depth = (apr_uintptr_t)arg;
    apr_status_t rv = APR_SUCCESS;

    (void)ctx;
    if (depth > 0) {
        rv = pp_submit(fan_pool, fan, (void *)(depth - 1));
        if (rv == APR_SUCCESS)
            rv = pp_submit(fan_pool, fan, (void *)(depth - 1));
    }
    return rv;
}

static void *APR_THREAD_FUNC watchdog(apr_thread_t *t, void *data)
{
    soak *s = data;
    pp_stats_t st;

    (void)t;
    while (!apr_atomic_read32(&s->stop)) {
        apr_sleep(apr_time_from_msec(100));
        pp_pool_stats(s->pool, &st);
        if (st.completed + st.failed != s->last_done || st.queued == 0 || st.threads_idle < st.threads) {
            s->last_done = st.completed + st.failed;
            s->since = apr_time_now();
            continue;
        }
        if (apr_time_now() - s->since > apr_time_from_sec(1)) {
            fprintf(stderr, "pp_soak: STALL: %" APR_UINT64_T_FMT " queued, all %"
                    APR_UINT64_T_FMT " workers parked, nothing done for a second\n",
                    st.queued, st.threads);
            apr_atomic_set32(&s->stalled, 1);
            exit(2);
        }
    }
    return NULL;
}

static int check_counts(pp_pool_t *pool, const char *what, apr_uint64_t want)
{
    pp_stats_t st;

    pp_pool_stats(pool, &st);
    if (st.completed != want || st.failed || st.cancelled || st.queued || st.running) {
        fprintf(stderr, "pp_soak: %s: %" APR_UINT64_T_FMT " completed of %" APR_UINT64_T_FMT
                ", %" APR_UINT64_T_FMT " failed, %" APR_UINT64_T_FMT " cancelled, %"
                APR_UINT64_T_FMT " queued, %" APR_UINT64_T_FMT " running\n", what,
                st.completed, want, st.failed, st.cancelled, st.queued, st.running);
        return 1;
    }
    printf("pp_soak: %s: %" APR_UINT64_T_FMT " tasks, %" APR_UINT64_T_FMT " parks, %"
           APR_UINT64_T_FMT " unparks\n", what, st.completed, st.parks, st.unparks);
    return 0;
}

/* Runs one workload on a pool of its own under the watchdog. */
static int run(const char *what, apr_uint64_t rounds, apr_uint32_t workers, int fan_out,
               apr_pool_t *p)
{
    apr_uint64_t i, want = 0;
    apr_thread_t *dog;
    apr_status_t rv;
    pp_config_t cfg;
    pp_group_t *g;
    soak s;
    int bad;

    memset(&s, 0, sizeof(s));
    pp_config_init(&cfg);
    cfg.threads = workers;
    if (pp_pool_create(&s.pool, &cfg, p) != APR_SUCCESS || pp_group_create(&g, p) != APR_SUCCESS
        || apr_thread_create(&dog, NULL, watchdog, &s, p) != APR_SUCCESS)
        return 1;
    s.since = apr_time_now();
    fan_pool = s.pool;
    for (i = 0; i < rounds; i += fan_out ? 1023 : 1) {
        rv = pp_submit_ex(s.pool, fan_out ? fan : nothing, fan_out ? (void *)9 : NULL, g, 0);
        if (rv == APR_SUCCESS)
            rv = pp_group_wait(g, -1);
        if (rv != APR_SUCCESS) {
            fprintf(stderr, "pp_soak: %s: round %" APR_UINT64_T_FMT " failed\n", what, i);
            return 1;
        }
        want += fan_out ? 1023 : 1;
    }
    rv = pp_pool_shutdown(s.pool, PP_DRAIN, -1);
    apr_atomic_set32(&s.stop, 1);
    apr_thread_join(&rv, dog);
    bad = check_counts(s.pool, what, want);
    pp_pool_destroy(s.pool);
    return bad;
}

int main(int argc, char **argv)
{
    apr_uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000u;
    apr_uint32_t workers = argc > 2 ? (apr_uint32_t)strtoul(argv[2], NULL, 10) : 4;
    apr_pool_t *p;
    int bad;

    if (rounds == 0 || workers == 0) {
        fprintf(stderr, "usage: pp_soak [ROUNDS] [WORKERS]\n");
        return 2;
    }
    apr_initialize();
    apr_pool_create(&p, NULL);
    printf("pp_soak: %" APR_UINT64_T_FMT " rounds, %u workers, park backend %s\n", rounds,
           workers, pp_park_backend());
    bad = run("ping-pong", rounds, workers, 0, p);
    bad |= run("fan-out", rounds, workers, 1, p);
    apr_pool_destroy(p);
    apr_terminate();
    printf(bad ? "0 passed, 1 failed\n" : "1 passed, 0 failed\n");
    return bad;
}
