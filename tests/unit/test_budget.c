/* SPDX-License-Identifier: Apache-2.0 */
/* The search budget's rules (src/core/budget.h), at their edges. */
#include "config.h"
#include "testutil.h"
#include "core/budget.h"

/* The cap on polling workers: fewer than half of those
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

/* A burst wakes workers up to the cores, no further; beyond them, only
 * the one a task is owed when nobody searches. */
static void test_wake_room(void)
{
    apr_uint32_t want, searching, up;

    /* 2 cores, nobody up: a burst of 5 wakes 2, of 1 wakes 1. */
    T_EQ(pp__wake_room(5, 0, 0, 2), 2);
    T_EQ(pp__wake_room(1, 0, 0, 2), 1);
    /* One searching (so up): one more of 3 asked for. */
    T_EQ(pp__wake_room(3, 1, 1, 2), 1);
    /* Up to the cores: with a searcher nobody, without one exactly one. */
    T_EQ(pp__wake_room(3, 1, 2, 2), 0);
    T_EQ(pp__wake_room(3, 0, 2, 2), 1);
    T_EQ(pp__wake_room(3, 0, 9, 2), 1);
    /* Never more than asked for, and at least the one owed. */
    for (up = 0; up <= 8; up++)
        for (searching = 0; searching <= up; searching++)
            for (want = 0; want <= 8; want++) {
                apr_uint32_t n = pp__wake_room(want, searching, up, 4);
                CU_ASSERT(n <= want);
                CU_ASSERT(n >= (want > 0 && searching == 0));
                CU_ASSERT(n <= (up < 4 ? 4 - up : 1));
            }
}

/* The floor is 1/16 of the bound, but never 0 while the bound allows a
 * poll: a budget halved to 0 could never grow back. */
static void test_floor(void)
{
    T_EQ(pp__budget_floor(4000), 250);
    T_EQ(pp__budget_floor(10), 1);
    T_EQ(pp__budget_floor(0), 0);
}

/* A search that paid off doubles the budget, up to the bound. */
static void test_paid_doubles(void)
{
    T_EQ(pp__budget_paid(250, 4000), 500);
    T_EQ(pp__budget_paid(2000, 4000), 4000);
    T_EQ(pp__budget_paid(2001, 4000), 4000);
    T_EQ(pp__budget_paid(3, 5), 5);
    T_EQ(pp__budget_paid(1u << 20, 1u << 20), 1u << 20);
}

/* A search that found nothing halves the budget, down to the floor. */
static void test_missed_halves(void)
{
    T_EQ(pp__budget_missed(4000, 250), 2000);
    T_EQ(pp__budget_missed(300, 250), 250);
    T_EQ(pp__budget_missed(1, 1), 1);
    T_EQ(pp__budget_missed(0, 0), 0);
}

/* After a sleep that a search within the bound would have spared, twice
 * the polls it would have taken; a longer sleep, or one the budget
 * covered, changes nothing. */
static void test_slept_grows(void)
{
    T_EQ(pp__budget_slept(250, 4000, 100), 250);     /* 200 polls: no more */
    T_EQ(pp__budget_slept(250, 4000, 1000), 2000);
    T_EQ(pp__budget_slept(250, 4000, 3000), 4000);   /* within the bound */
    T_EQ(pp__budget_slept(250, 4000, 4000), 4000);
    T_EQ(pp__budget_slept(250, 4000, 4001), 250);    /* no search spares it */
    T_EQ(pp__budget_slept(250, 4000, (apr_uint64_t)1 << 40), 250);
    T_EQ(pp__budget_slept(250, 4000, 0), 250);
    T_EQ(pp__budget_slept(4000, 4000, 1000), 4000);  /* never shrinks */
}

/* For every bound: fruitless searches end on the floor, fruitful ones
 * climb back to the bound, and the budget never leaves [floor, max]. */
static void test_stays_in_bounds(void)
{
    apr_uint32_t max, spin, n;

    for (max = 0; max <= 5000; max += max < 64 ? 1 : 97) {
        apr_uint32_t least = pp__budget_floor(max), bad = 0;

        for (spin = max, n = 0; n < 40; n++) {
            spin = pp__budget_missed(spin, least);
            bad += spin < least || spin > max;
        }
        T_EQ_AT(max, spin, least);
        for (n = 0; n < 40; n++) {
            spin = pp__budget_paid(spin, max);
            bad += spin < least || spin > max;
        }
        T_EQ_AT(max, spin, max);
        T_EQ_AT(max, bad, 0);
    }
}

/* A worker's budget after a search that missed: halved, and its polling
 * speed measured only over enough polls to tell (and only when timed). */
static void test_missed_search_measures(void)
{
    pp__budget_t b = { 4000, 0 };

    pp__budget_missed_search(&b, 0, 250, 0);         /* no polling at all */
    T_EQ(b.spin, 4000);
    pp__budget_missed_search(&b, 4000, 250, 0);      /* never timed */
    T_EQ(b.spin, 2000);
    T_EQ(b.polls_per_us, 0);
    pp__budget_missed_search(&b, PP__BUDGET_TIMED_MIN - 1, 250, apr_time_now() - 1000);
    T_EQ(b.polls_per_us, 0);                         /* too few to tell */
    pp__budget_missed_search(&b, 4000, 250, apr_time_now() - 1000000);
    T_EQ(b.polls_per_us, 1);                         /* slower than one a microsecond */
    T_EQ(b.spin, 500);
}

/* A wake-up after a sleep grows the budget by what polling would have
 * cost, at the last measured speed; unmeasured, nothing changes. */
static void test_woke_grows(void)
{
    pp__budget_t b = { 250, 0 };

    pp__budget_woke(&b, 4000, 1000);
    T_EQ(b.spin, 250);                               /* speed unknown */
    b.polls_per_us = 2;
    pp__budget_woke(&b, 4000, 500);                  /* 1000 polls would have done */
    T_EQ(b.spin, 2000);
    pp__budget_woke(&b, 4000, -5);                   /* the clock stepped back */
    T_EQ(b.spin, 2000);
}

void t_register_budget(void)
{
    CU_pSuite s = CU_add_suite("budget", NULL, NULL);

    CU_add_test(s, "fewer than half the workers up poll, one always may", test_poll_cap);
    CU_add_test(s, "a burst wakes workers up to the cores; past them one, if owed",
                test_wake_room);
    CU_add_test(s, "the floor is 1/16 of the bound, never 0 while it allows a poll", test_floor);
    CU_add_test(s, "a search that paid off doubles it, within the bound", test_paid_doubles);
    CU_add_test(s, "a search that found nothing halves it, to the floor", test_missed_halves);
    CU_add_test(s, "a sleep a search would have spared grows it", test_slept_grows);
    CU_add_test(s, "every bound: it stays within [floor, bound]", test_stays_in_bounds);
    CU_add_test(s, "a missed search halves it and measures the polling speed",
                test_missed_search_measures);
    CU_add_test(s, "a wake-up grows it at the measured speed", test_woke_grows);
}
