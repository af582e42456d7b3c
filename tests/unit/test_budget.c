/* SPDX-License-Identifier: Apache-2.0 */
/* The search budget's rules (src/core/budget.h), at their edges. */
#include "config.h"
#include "testutil.h"
#include "core/budget.h"

/* The cap on polling workers (pool_private.h): fewer than half of those
 * up poll, and one always may, so a lone worker still catches the next
 * task without a wake-up. */
static void test_poll_cap(void)
{
    apr_uint32_t up;

    for (up = 1; up <= 64; up++) {
        CU_ASSERT(pp__may_poll(up, 0));
        CU_ASSERT(pp__may_poll(up, (up - 1) / 2));
        CU_ASSERT(!pp__may_poll(up, (up + 1) / 2));
    }
    CU_ASSERT(!pp__may_poll(2, 1));    /* of two, one polls */
    CU_ASSERT(pp__may_poll(4, 1) && !pp__may_poll(4, 2));
}

/* The search budget's rules (pool_private.h), at their edges. */
static void test_budget_rules(void)
{
    apr_uint32_t max, spin, n;

    CU_ASSERT_EQUAL(pp__budget_floor(4000), 250);
    CU_ASSERT_EQUAL(pp__budget_floor(10), 1);    /* not 0: it could never grow back */
    CU_ASSERT_EQUAL(pp__budget_floor(0), 0);

    CU_ASSERT_EQUAL(pp__budget_paid(250, 4000), 500);
    CU_ASSERT_EQUAL(pp__budget_paid(2000, 4000), 4000);
    CU_ASSERT_EQUAL(pp__budget_paid(2001, 4000), 4000);
    CU_ASSERT_EQUAL(pp__budget_paid(3, 5), 5);
    CU_ASSERT_EQUAL(pp__budget_paid(1u << 20, 1u << 20), 1u << 20);

    CU_ASSERT_EQUAL(pp__budget_missed(4000, 250), 2000);
    CU_ASSERT_EQUAL(pp__budget_missed(300, 250), 250);
    CU_ASSERT_EQUAL(pp__budget_missed(1, 1), 1);
    CU_ASSERT_EQUAL(pp__budget_missed(0, 0), 0);

    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 100), 250);     /* 200 polls: no more */
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 1000), 2000);
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 3000), 4000);   /* within the bound */
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 4000), 4000);
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 4001), 250);    /* no search spares it */
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, (apr_uint64_t)1 << 40), 250);
    CU_ASSERT_EQUAL(pp__budget_slept(250, 4000, 0), 250);
    CU_ASSERT_EQUAL(pp__budget_slept(4000, 4000, 1000), 4000);  /* never shrinks */

    /* Every bound: fruitless searches end on the floor, fruitful ones
     * climb back to the bound, always within [floor, max]. */
    for (max = 0; max <= 5000; max += max < 64 ? 1 : 97) {
        apr_uint32_t least = pp__budget_floor(max), bad = 0;

        for (spin = max, n = 0; n < 40; n++) {
            spin = pp__budget_missed(spin, least);
            bad += spin < least || spin > max;
        }
        CU_ASSERT_EQUAL(spin, least);
        for (n = 0; n < 40; n++) {
            spin = pp__budget_paid(spin, max);
            bad += spin < least || spin > max;
        }
        CU_ASSERT_EQUAL(spin, max);
        CU_ASSERT_EQUAL(bad, 0);
    }
}

void t_register_budget(void)
{
    CU_pSuite s = CU_add_suite("budget", NULL, NULL);

    CU_add_test(s, "fewer than half the workers up poll, one always may", test_poll_cap);
    CU_add_test(s, "search budget: floor, doubling, halving, after a sleep", test_budget_rules);
}
