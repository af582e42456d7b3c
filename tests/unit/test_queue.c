/* SPDX-License-Identifier: Apache-2.0 */
/* The inline ring queue (src/core/queue.c). */
#include "config.h"
#include "testutil.h"
#include "core/fault.h"
#include "core/queue.h"

static pp__entry_t entry(apr_uintptr_t i, pp_group_t *g)
{
    pp__entry_t e = { NULL, (void *)i, NULL, NULL, g, 0 };
    return e;
}

static void test_queue_fifo_across_growth(void)
{
    pp__queue_t q;
    pp__entry_t e;
    apr_uintptr_t i, next = 0;

    T_OK_FATAL(pp__queue_init(&q, 4));
    /* Interleave pushes and pops so the ring wraps before it grows. */
    for (i = 0; i < 10000; i++) {
        e = entry(i, NULL);
        T_OK(pp__queue_push(&q, &e));
        if (i % 3 == 0) {
            CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
            T_EQ_AT(i, (apr_uintptr_t)e.arg, next);
            next++;
        }
    }
    T_EQ(pp__queue_len(&q), 10000 - next);
    while (pp__queue_pop(&q, &e)) {
        T_EQ((apr_uintptr_t)e.arg, next);
        next++;
    }
    T_EQ(next, 10000);
    CU_ASSERT_FALSE(pp__queue_pop(&q, &e));
    pp__queue_destroy(&q);
}

static void test_queue_take_group(void)
{
    pp__queue_t q, out;
    pp__entry_t e;
    pp_group_t *g = (pp_group_t *)&q;    /* only compared, never used */
    apr_uintptr_t i, kept = 0, taken = 0;

    T_OK_FATAL(pp__queue_init(&q, 16));
    T_OK_FATAL(pp__queue_init(&out, 0));
    /* Wrap the ring first so the compaction crosses its end. */
    for (i = 0; i < 10; i++) {
        e = entry(0, NULL);
        pp__queue_push(&q, &e);
        pp__queue_pop(&q, &e);
    }
    for (i = 0; i < 1000; i++) {
        e = entry(i, i % 3 == 1 ? g : NULL);
        T_OK(pp__queue_push(&q, &e));
    }
    T_OK(pp__queue_take_group(&q, g, &out));
    T_EQ(pp__queue_len(&out), 333);
    T_EQ(pp__queue_len(&q), 667);
    while (pp__queue_pop(&q, &e)) {
        while (kept % 3 == 1)
            kept++;
        T_EQ((apr_uintptr_t)e.arg, kept);
        CU_ASSERT_PTR_NULL(e.group);
        kept++;
    }
    while (pp__queue_pop(&out, &e)) {
        T_EQ((apr_uintptr_t)e.arg, 3 * taken + 1);
        CU_ASSERT_PTR_EQUAL(e.group, g);
        taken++;
    }
    T_EQ(taken, 333);
    pp__queue_destroy(&q);
    pp__queue_destroy(&out);
}

static void test_queue_grow_failure_keeps_contents(void)
{
    pp__queue_t q;
    pp__entry_t e;
    apr_uintptr_t i;

    T_OK_FATAL(pp__queue_init(&q, 16));
    for (i = 0; i < 16; i++) {
        e = entry(i, NULL);
        T_OK(pp__queue_push(&q, &e));
    }
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);
    e = entry(99, NULL);
    T_STATUS(pp__queue_push(&q, &e), APR_ENOMEM);
    T_EQ(pp__queue_len(&q), 16);
    T_OK(pp__queue_push(&q, &e));    /* the fault fired once, then disarmed */
    for (i = 0; i < 16; i++) {
        CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
        T_EQ_AT(i, (apr_uintptr_t)e.arg, i);
    }
    CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
    T_EQ((apr_uintptr_t)e.arg, 99);
    pp__queue_destroy(&q);
}

/* Issue 10, item 15: a burst's ring goes back when the burst is over. */
static void test_queue_shrinks_after_a_burst(void)
{
    pp__queue_t q;
    pp__entry_t e;
    apr_uintptr_t i;

    T_OK_FATAL(pp__queue_init(&q, 256));
    T_EQ(pp__queue_size(&q), 256);
    for (i = 0; i < 100000; i++) {
        e = entry(i, NULL);
        T_OK(pp__queue_push(&q, &e));
    }
    CU_ASSERT(pp__queue_size(&q) >= 100000);
    for (i = 0; i < 99999; i++)
        CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
    CU_ASSERT(pp__queue_size(&q) >= 100000);    /* not while it holds any */
    CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
    T_EQ((apr_uintptr_t)e.arg, 99999);
    T_EQ(pp__queue_size(&q), 0);     /* freed with the last pop */
    e = entry(7, NULL);
    T_OK(pp__queue_push(&q, &e));
    T_EQ(pp__queue_size(&q), 256);   /* back at its resting size */
    CU_ASSERT_TRUE(pp__queue_pop(&q, &e));
    T_EQ((apr_uintptr_t)e.arg, 7);
    T_EQ(pp__queue_size(&q), 256);   /* a resting ring stays */
    pp__queue_destroy(&q);
}

void t_register_queue(void)
{
    CU_pSuite s = CU_add_suite("queue", NULL, NULL);

    CU_add_test(s, "FIFO across wrap and growth", test_queue_fifo_across_growth);
    CU_add_test(s, "take a group's entries, keep order", test_queue_take_group);
    CU_add_test(s, "failed growth keeps the contents", test_queue_grow_failure_keeps_contents);
    CU_add_test(s, "a burst's ring is freed when it empties", test_queue_shrinks_after_a_burst);
}
