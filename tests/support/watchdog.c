/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-test watchdog (watchdog.h). CUnit 2.1's basic runner owns the
 * test start and end handlers, so the watchdog sees a test begin and end
 * by standing in for its function: each registered test's function is
 * swapped for watched(), which looks up the real one by the test CUnit
 * says is running, tells the watchdog's thread, and calls it. The thread
 * and the runner share only what the mutex guards, so ThreadSanitizer
 * runs of the suites see no race in it.
 */
#include "watchdog.h"

#include <CUnit/CUnit.h>
#include <CUnit/TestDB.h>
#include <CUnit/TestRun.h>
#include <apr_hash.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <apr_time.h>

#include <stdio.h>
#include <stdlib.h>

static apr_hash_t *real_fn;          /* CU_pTest -> its CU_TestFunc */
static apr_interval_time_t limit;
static int print_times;
static apr_thread_t *thread;
/* Unmanaged: a forked child's apr_terminate() must not destroy the
 * condition the parent's thread waits on (glibc would wait for it). */
static apr_pool_t *pool;

/* Under lock: */
static apr_thread_mutex_t *lock;
static apr_thread_cond_t *changed;
static const char *suite_name, *test_name;
static apr_time_t began;              /* 0: no test running */
static int stopping;

typedef struct { CU_TestFunc fn; } real_t;

unsigned t_watchdog_limit(void)
{
    const char *s = getenv("PP_TEST_TIMEOUT");
    char *end;
    unsigned long v;

    if (!s || !*s)
        return T_WATCHDOG_DEFAULT;
    v = strtoul(s, &end, 10);
    if (*end || v < 1 || v > 86400) {
        fprintf(stderr, "PP_TEST_TIMEOUT=%s is not a number of seconds from 1 to 86400;"
                " the limit stays %u s\n", s, T_WATCHDOG_DEFAULT);
        return T_WATCHDOG_DEFAULT;
    }
    return (unsigned)v;
}

static void *APR_THREAD_FUNC watch(apr_thread_t *self, void *arg)
{
    (void)arg;
    apr_thread_mutex_lock(lock);
    while (!stopping) {
        apr_time_t now = apr_time_now();

        if (!began) {
            apr_thread_cond_wait(changed, lock);
        }
        else if (now - began < limit) {
            apr_thread_cond_timedwait(changed, lock, began + limit - now);
        }
        else {
            /* What CUnit printed so far goes to the log before the end. */
            fflush(stdout);
            fprintf(stderr, "\nHANG: %s / %s: still running after %u s (PP_TEST_TIMEOUT)\n",
                    suite_name, test_name, (unsigned)apr_time_sec(limit));
            fflush(stderr);
            _Exit(99);
        }
    }
    apr_thread_mutex_unlock(lock);
    apr_thread_exit(self, APR_SUCCESS);
    return NULL;
}

static void set_running(const char *suite, const char *test, apr_time_t when)
{
    apr_thread_mutex_lock(lock);
    suite_name = suite;
    test_name = test;
    began = when;
    apr_thread_cond_signal(changed);
    apr_thread_mutex_unlock(lock);
}

static void watched(void)
{
    CU_pTest t = CU_get_current_test();
    CU_pSuite s = CU_get_current_suite();
    real_t *real = apr_hash_get(real_fn, &t, sizeof t);
    apr_time_t start = apr_time_now();

    set_running(s->pName, t->pName, start);
    real->fn();
    set_running(NULL, NULL, 0);
    if (print_times)
        fprintf(stderr, "time: %s / %s: %.3f s\n", s->pName, t->pName,
                (double)(apr_time_now() - start) / APR_USEC_PER_SEC);
}

void t_watchdog_idle(void)
{
    set_running(NULL, NULL, 0);
}

void t_watchdog_stop(void)
{
    apr_status_t rv;

    if (!thread)
        return;
    apr_thread_mutex_lock(lock);
    stopping = 1;
    apr_thread_cond_signal(changed);
    apr_thread_mutex_unlock(lock);
    apr_thread_join(&rv, thread);
    thread = NULL;
    apr_pool_destroy(pool);
}

apr_status_t t_watchdog_start(void)
{
    CU_pSuite s;
    CU_pTest t;
    apr_status_t rv;

    if ((rv = apr_pool_create_unmanaged(&pool)) != APR_SUCCESS)
        return rv;
    limit = apr_time_from_sec(t_watchdog_limit());
    print_times = getenv("PP_TEST_TIMES") != NULL;
    real_fn = apr_hash_make(pool);
    for (s = CU_get_registry()->pSuite; s; s = s->pNext) {
        for (t = s->pTest; t; t = t->pNext) {
            CU_pTest *key = apr_palloc(pool, sizeof *key);
            real_t *real = apr_palloc(pool, sizeof *real);

            *key = t;
            real->fn = t->pTestFunc;
            apr_hash_set(real_fn, key, sizeof *key, real);
            t->pTestFunc = watched;
        }
    }
    if ((rv = apr_thread_mutex_create(&lock, APR_THREAD_MUTEX_DEFAULT, pool)) != APR_SUCCESS
        || (rv = apr_thread_cond_create(&changed, pool)) != APR_SUCCESS
        || (rv = apr_thread_create(&thread, NULL, watch, NULL, pool)) != APR_SUCCESS)
        thread = NULL;
    return rv;
}
