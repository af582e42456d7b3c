/* SPDX-License-Identifier: Apache-2.0 */
/* The sync seam (src/os/sync.h): deadlines and timed waits. */
#include "config.h"
#include "testutil.h"
#include "os/sync.h"

static void test_deadlines_saturate(void)
{
    apr_time_t now = pp__clock_mono();

    T_EQ(pp__deadline(-1), PP__FOREVER);
    T_EQ(pp__deadline(APR_INT64_MIN), PP__FOREVER);
    T_EQ(pp__deadline(APR_INT64_MAX), PP__FOREVER);
    T_EQ(pp__deadline(APR_INT64_MAX - now + 10), PP__FOREVER);
    CU_ASSERT(pp__deadline(0) >= now);
    CU_ASSERT(pp__deadline(0) < now + apr_time_from_sec(60));
    CU_ASSERT(pp__deadline(apr_time_from_sec(1)) >= now + apr_time_from_sec(1));
}

/* The timed wait counts on the monotonic clock: it ends no sooner than
 * its deadline there (a wall-clock wait could, after a step forward, and
 * would last longer after a step back; the clock is not stepped here). */
static void test_timed_wait_is_monotonic(void)
{
    pp__mutex_t *m;
    pp__cond_t *c;
    apr_pool_t *p;
    apr_time_t deadline;
    apr_status_t rv = APR_SUCCESS;

    apr_pool_create(&p, t_root);
    T_OK_FATAL(pp__mutex_create(&m, p));
    T_OK_FATAL(pp__cond_create(&c, p));
    deadline = pp__clock_mono() + apr_time_from_msec(30);
    pp__mutex_lock(m);
    while (rv == APR_SUCCESS)
        rv = pp__cond_wait_until(c, m, deadline);
    pp__mutex_unlock(m);
    T_STATUS(rv, APR_TIMEUP);
    CU_ASSERT(pp__clock_mono() >= deadline);
    apr_pool_destroy(p);
}

void t_register_sync(void)
{
    CU_pSuite s = CU_add_suite("sync", NULL, NULL);

    CU_add_test(s, "2: deadlines saturate", test_deadlines_saturate);
    CU_add_test(s, "2: timed waits run on the monotonic clock", test_timed_wait_is_monotonic);
}
