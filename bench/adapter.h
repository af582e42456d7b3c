/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How pp_bench drives a pool: one small adapter per pool, the same tasks
 * for all. The adapters of pools written in another language or built
 * with other flags (OpenMP in peer_omp.c, oneTBB in peer_tbb.cc) live in
 * files of their own and are found through the declarations here.
 */
#ifndef PP_BENCH_ADAPTER_H
#define PP_BENCH_ADAPTER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_bench_adapter {
    const char *name;
    int peer;                      /* a peer for the ratio, or parkpool itself */
    void *(*create)(unsigned workers);
    void (*submit)(void *pool, void *arg);    /* queue one pp_bench_task(arg) */
    void (*destroy)(void *pool);
    /* Pools whose tasks are made by their own threads (an OpenMP team, a
     * oneTBB arena) run the submitting code as one of theirs: body(arg)
     * on this thread, inside the pool. NULL: body(arg) is just called. */
    void (*enter)(void *pool, void (*body)(void *), void *arg);
    /* Such pools also wait by helping: run this thread's submitted tasks
     * until they are done (taskwait, task_group::wait), before the
     * harness's own wait. NULL: the harness's wait alone. */
    void (*help)(void *pool);
    /* Whether threads outside the pool may submit (W2's four producers):
     * an OpenMP task can only be made by a thread of its team. */
    int outside;
} pp_bench_adapter;

/** What every adapter's task runs: the workload's task, with arg. */
void pp_bench_task(void *arg);

#ifdef HAVE_OPENMP
/** OpenMP tasks (peer_omp.c). */
extern const pp_bench_adapter pp_bench_omp;
#endif
#ifdef HAVE_TBB
/** oneTBB's task_group in a task_arena (peer_tbb.cc). */
extern const pp_bench_adapter pp_bench_tbb;
#endif

#ifdef __cplusplus
}
#endif

#endif
