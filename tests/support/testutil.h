/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the CUnit suites. */
#ifndef PP_TESTUTIL_H
#define PP_TESTUTIL_H

#include "parkpool/parkpool.h"
#include "testos.h"

#include <CUnit/CUnit.h>
#include <apr_atomic.h>
#include <apr_thread_proc.h>

/* ThreadSanitizer cannot start threads in the child of a multi-threaded
 * fork: such checks are skipped under it. */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif

/* The root pool of the run; each test makes its own subpool of it. */
extern apr_pool_t *t_root;

/* Where the test plugins were built (beside the test program). */
extern const char *t_plugin_dir;
/* Where the bundled plugins were built (plugins/.libs in the build tree). */
extern const char *t_bundled_dir;

/* n divided by $PP_TEST_SCALE (default 1, at least 1): valgrind runs the
 * same tests with smaller counts. */
apr_uint32_t t_scaled(apr_uint32_t n);

/* A pool of `threads` workers (capacity 0 = unbounded) in p; fails the
 * test (fatally) if it cannot be created. */
pp_pool_t *t_pool(apr_pool_t *p, apr_uint32_t threads, apr_uint32_t capacity);

/* Threads for the tests' own producers and parkers. */
typedef void (*t_thread_fn)(void *arg);
typedef struct t_thread t_thread;
t_thread *t_spawn(t_thread_fn fn, void *arg);
void t_join(t_thread *t);
/* Run fn(args[i]) (or fn(NULL)) on n threads at once and join them. */
void t_run_threads(apr_uint32_t n, t_thread_fn fn, void **args);

/* t_os_thread_count() once it is down to expect, or after 5 s whatever it is. */
int t_thread_count_settles(int expect);

/* A gate: gate tasks block until it opens or their pool/group is cancelled. */
typedef struct t_gate {
    volatile apr_uint32_t open, arrived, left;
} t_gate;
apr_status_t t_gate_task(void *gate, pp_task_ctx_t *ctx);
/* The same, deaf to cancellation: for a test whose timed-out shutdown must
 * find the task still running, however slowly the shutdown itself runs. */
apr_status_t t_hold_task(void *gate, pp_task_ctx_t *ctx);
/* Wait (10 s at most, else fail) until n gate tasks are blocked in the gate. */
void t_gate_wait_arrived(t_gate *g, apr_uint32_t n);
void t_gate_open(t_gate *g);

/* A task that submits n copies of `child` (in `group`, which may be NULL)
 * from inside the pool, so into its worker's own deque, counting refused
 * submits in errors; then holds its worker like t_hold_task on gate. */
typedef struct t_nest {
    pp_pool_t *pool;
    pp_group_t *group;
    pp_task_t child;
    apr_uint32_t n;
    t_gate gate;
    volatile apr_uint32_t errors;
} t_nest;
apr_status_t t_nest_then_hold(void *nest, pp_task_ctx_t *ctx);

/* A task that adds 1 to the apr_uint32_t it is given. */
apr_status_t t_count_task(void *counter, pp_task_ctx_t *ctx);

/* Assertions that say what they saw: a failure prints both values (a
 * status with its text), and T_EQ_AT the index of the loop it failed in,
 * where CUnit's own print only the expression. */
void t_check(int ok, const char *expr, const char *got, const char *want, long index,
             unsigned line, const char *file, int fatal);
void t_check_eq(apr_int64_t got, apr_int64_t want, const char *expr, long index,
                unsigned line, const char *file, int fatal);
void t_check_status(apr_status_t got, apr_status_t want, const char *expr, unsigned line,
                    const char *file, int fatal);

#define T_EQ(a, b) t_check_eq((apr_int64_t)(a), (apr_int64_t)(b), #a " == " #b, -1, \
                              __LINE__, __FILE__, CU_FALSE)
#define T_EQ_FATAL(a, b) t_check_eq((apr_int64_t)(a), (apr_int64_t)(b), #a " == " #b, -1, \
                                    __LINE__, __FILE__, CU_TRUE)
#define T_EQ_AT(i, a, b) t_check_eq((apr_int64_t)(a), (apr_int64_t)(b), #a " == " #b, \
                                    (long)(i), __LINE__, __FILE__, CU_FALSE)
#define T_STATUS(a, b) t_check_status((a), (b), #a " == " #b, __LINE__, __FILE__, CU_FALSE)
#define T_STATUS_FATAL(a, b) t_check_status((a), (b), #a " == " #b, __LINE__, __FILE__, CU_TRUE)
#define T_OK(expr) T_STATUS((expr), APR_SUCCESS)
#define T_OK_FATAL(expr) T_STATUS_FATAL((expr), APR_SUCCESS)

/* Assert the accounting identity at a quiescent point. */
void t_assert_accounted(pp_pool_t *pool);

/* Suites: each program's table of registration functions, NULL-ended
 * (tests/unit/suites.c, tests/api/suites.c). */
typedef void (*t_suite_fn)(void);
extern const t_suite_fn t_suites[];

void t_register_park(void);
void t_register_queue(void);
void t_register_deque(void);
void t_register_budget(void);
void t_register_sync(void);
void t_register_faults(void);
void t_register_histo(void);
void t_register_inject(void);

void t_register_pool(void);
void t_register_shutdown(void);
void t_register_group(void);
void t_register_config(void);
void t_register_plugin(void);
void t_register_bundled(void);
void t_register_edges(void);
void t_register_nested(void);
void t_register_service(void);
void t_register_order(void);
void t_register_timer(void);

#endif
