/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/pp_hang: a suite with a test that never returns, built only for
 * tests/sh/watchdog.sh, which checks that the per-test watchdog
 * (tests/support/watchdog.h) names it and ends the program. The tests
 * before it each run a third of the limit, together longer than it: the
 * limit is a test's, not the program's.
 */
#include "config.h"
#include "testutil.h"
#include "watchdog.h"

#include <apr_time.h>

static void third_of_the_limit(void)
{
    apr_sleep(apr_time_from_sec(t_watchdog_limit()) / 3);
    CU_PASS("slept a third of the limit");
}

static void never_returns(void)
{
    for (;;)
        apr_sleep(apr_time_from_sec(1));
}

static void t_register_hang(void)
{
    CU_pSuite s = CU_add_suite("watchdog", NULL, NULL);

    CU_add_test(s, "a test a third of the limit long passes", third_of_the_limit);
    CU_add_test(s, "a second such test passes", third_of_the_limit);
    CU_add_test(s, "a third such test passes", third_of_the_limit);
    CU_add_test(s, "a fourth such test passes", third_of_the_limit);
    CU_add_test(s, "a test that never returns", never_returns);
}

const t_suite_fn t_suites[] = { t_register_hang, NULL };
