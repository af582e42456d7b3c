/* SPDX-License-Identifier: Apache-2.0 */
/* The inline ring queue (src/core/queue.c) and the shared queue's
 * priority levels on top of it (src/core/prioq.c). */
#include "config.h"
#include "testutil.h"
#include "core/fault.h"
#include "core/prioq.h"
#include "core/queue.h"
#include "core/theap.h"

#include <stdlib.h>

static pp__entry_t entry(apr_uintptr_t i, pp_group_t *g)
{
    pp__entry_t e = { NULL, (void *)i, NULL, NULL, g, 0, 0 };
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

/* Room made for a wrapped ring that is not full (a reserve): the entries
 * past the old end and the ones pushed after them keep their order. */
static void test_queue_reserve_wrapped(void)
{
    pp__queue_t q;
    pp__entry_t e;
    apr_uintptr_t i, next = 0;

    T_OK_FATAL(pp__queue_init(&q, 16));
    for (i = 0; i < 12; i++) {    /* head to 12 */
        e = entry(i, NULL);
        pp__queue_push(&q, &e);
        pp__queue_pop(&q, &e);
    }
    for (i = 0; i < 10; i++) {    /* 12..15, then 0..5 */
        e = entry(i, NULL);
        T_OK(pp__queue_push(&q, &e));
    }
    T_OK(pp__queue_reserve(&q, 100));
    T_EQ(pp__queue_size(&q), 128);
    for (i = 10; i < 110; i++) {
        e = entry(i, NULL);
        T_OK(pp__queue_push(&q, &e));
    }
    T_EQ(pp__queue_size(&q), 128);    /* reserved: no growth on the way */
    while (pp__queue_pop(&q, &e)) {
        T_EQ_AT(next, (apr_uintptr_t)e.arg, next);
        next++;
    }
    T_EQ(next, 110);
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

static apr_status_t prio_push(pp__prioq_t *q, int prio, apr_uintptr_t i, pp_group_t *g)
{
    pp__entry_t e = entry(i, g);

    return pp__prioq_push(q, pp__prio_level(prio), &e);
}

/* Pop everything; the args in order into got (n at most). */
static apr_uint32_t prio_drain(pp__prioq_t *q, apr_uintptr_t *got, apr_uint32_t n)
{
    pp__entry_t e;
    apr_uint32_t k = 0;

    while (k < n && pp__prioq_pop(q, &e))
        got[k++] = (apr_uintptr_t)e.arg;
    return k;
}

/* HIGH before NORMAL before LOW, each level first come, first served. */
static void test_prioq_order(void)
{
    static const int prio[] = { PP_PRIO_LOW, PP_PRIO_NORMAL, PP_PRIO_HIGH };
    static const apr_uintptr_t want[] = { 2, 5, 8, 1, 4, 7, 0, 3, 6 };
    apr_uintptr_t got[16], i;
    pp__prioq_t q;

    T_EQ(pp__prio_level(PP_PRIO_HIGH), 0);
    T_EQ(pp__prio_level(PP_PRIO_NORMAL), 1);
    T_EQ(pp__prio_level(PP_PRIO_LOW), 2);
    T_EQ(pp__prio_level(2), PP__LEVELS);
    T_EQ(pp__prio_level(-2), PP__LEVELS);
    T_OK_FATAL(pp__prioq_init(&q, 4));
    /* NORMAL alone: no other levels are made. */
    T_OK(prio_push(&q, PP_PRIO_NORMAL, 100, NULL));
    CU_ASSERT_PTR_NULL(q.more);
    T_EQ(prio_drain(&q, got, 16), 1);
    T_EQ(pp__prioq_next(&q), PP__LEVELS);
    /* The first HIGH or LOW push makes them; without memory it fails
     * and nothing is queued. */
    pp__fault_arm(PP__FAULT_QUEUE_GROW, 1);
    T_STATUS(prio_push(&q, PP_PRIO_LOW, 100, NULL), APR_ENOMEM);
    CU_ASSERT_PTR_NULL(q.more);
    T_EQ(pp__prioq_len(&q), 0);
    for (i = 0; i < 9; i++)
        T_OK(prio_push(&q, prio[i % 3], i, NULL));
    CU_ASSERT_PTR_NOT_NULL(q.more);
    T_EQ(pp__prioq_len(&q), 9);
    T_EQ_FATAL(prio_drain(&q, got, 16), 9);
    for (i = 0; i < 9; i++)
        T_EQ_AT(i, got[i], want[i]);
    T_EQ(pp__prioq_next(&q), PP__LEVELS);
    pp__prioq_destroy(&q);
}

/* No level starves: PP_PRIO_PASS takes above a waiting level, then one
 * of its own; a level that stops waiting starts its count again. */
static void test_prioq_pass_bound(void)
{
    apr_uintptr_t got[512], i;
    apr_uint32_t n;
    pp__prioq_t q;

    T_OK_FATAL(pp__prioq_init(&q, 0));
    T_OK(prio_push(&q, PP_PRIO_LOW, 1000, NULL));
    T_OK(prio_push(&q, PP_PRIO_NORMAL, 2000, NULL));
    for (i = 0; i < 300; i++)
        T_OK(prio_push(&q, PP_PRIO_HIGH, i, NULL));
    n = prio_drain(&q, got, 512);
    T_EQ_FATAL(n, 302);
    for (i = 0; i < PP_PRIO_PASS; i++)
        T_EQ_AT(i, got[i], i);
    T_EQ(got[PP_PRIO_PASS], 1000);        /* passed over most: the lowest first */
    T_EQ(got[PP_PRIO_PASS + 1], 2000);
    for (i = PP_PRIO_PASS + 2; i < n; i++)
        T_EQ_AT(i, got[i], i - 2);
    /* Two LOW tasks under a HIGH flood: one in every PP_PRIO_PASS + 1. */
    T_OK(prio_push(&q, PP_PRIO_LOW, 1000, NULL));
    T_OK(prio_push(&q, PP_PRIO_LOW, 1001, NULL));
    for (i = 0; i < 3 * PP_PRIO_PASS; i++)
        T_OK(prio_push(&q, PP_PRIO_HIGH, i, NULL));
    n = prio_drain(&q, got, 512);
    T_EQ_FATAL(n, 3 * PP_PRIO_PASS + 2);
    T_EQ(got[PP_PRIO_PASS], 1000);
    T_EQ(got[2 * PP_PRIO_PASS + 1], 1001);
    /* An empty level's count starts again: a LOW task pushed after many
     * HIGH takes waits its own PP_PRIO_PASS. */
    for (i = 0; i < PP_PRIO_PASS; i++)
        T_OK(prio_push(&q, PP_PRIO_HIGH, i, NULL));
    T_EQ(prio_drain(&q, got, PP_PRIO_PASS / 2), PP_PRIO_PASS / 2);
    T_OK(prio_push(&q, PP_PRIO_LOW, 1002, NULL));
    for (i = 0; i < PP_PRIO_PASS; i++)
        T_OK(prio_push(&q, PP_PRIO_HIGH, i, NULL));
    n = prio_drain(&q, got, 512);
    T_EQ(got[PP_PRIO_PASS], 1002);
    pp__prioq_destroy(&q);
}

/* A batch counts a pass per task; a group comes out of every level
 * (HIGH's first), an unpushed batch is gone, a moved queue keeps all. */
static void test_prioq_group_move_unpush(void)
{
    int g;
    apr_uintptr_t got[64], i;
    pp__prioq_t q, moved;
    pp__queue_t out;
    pp__entry_t e;

    T_OK_FATAL(pp__prioq_init(&q, 0));
    memset(&out, 0, sizeof(out));
    for (i = 0; i < 12; i++)
        T_OK(prio_push(&q, (int)(i % 3) - 1, i, i % 2 ? (pp_group_t *)&g : NULL));
    T_OK(pp__prioq_take_group(&q, (pp_group_t *)&g, &out));
    T_EQ(pp__prioq_len(&q), 6);
    T_EQ(pp__queue_len(&out), 6);
    /* Odd i, by level: HIGH (i % 3 == 2) 5, 11; NORMAL 1, 7; LOW 3, 9. */
    {
        static const apr_uintptr_t want[] = { 5, 11, 1, 7, 3, 9 };
        for (i = 0; pp__queue_pop(&out, &e); i++)
            T_EQ_AT(i, (apr_uintptr_t)e.arg, want[i]);
    }
    T_OK(prio_push(&q, PP_PRIO_LOW, 100, NULL));
    T_OK(prio_push(&q, PP_PRIO_LOW, 101, NULL));
    pp__prioq_unpush(&q, pp__prio_level(PP_PRIO_LOW), 2);
    pp__prioq_move(&moved, &q);
    T_EQ(pp__prioq_len(&q), 0);
    T_EQ_FATAL(prio_drain(&moved, got, 64), 6);
    T_EQ(got[0], 2);    /* HIGH: 2, 8; NORMAL: 4, 10 (odd ones taken); LOW: 0, 6 */
    T_EQ(got[5], 6);
    /* A batch of PP_PRIO_PASS NORMAL tasks passes a waiting LOW as often. */
    T_OK(prio_push(&q, PP_PRIO_LOW, 1, NULL));
    T_OK(prio_push(&q, PP_PRIO_NORMAL, 2, NULL));
    pp__prioq_taken(&q, pp__prio_level(PP_PRIO_NORMAL), PP_PRIO_PASS);
    T_EQ(pp__prioq_next(&q), pp__prio_level(PP_PRIO_LOW));
    pp__prioq_destroy(&q);
    pp__prioq_destroy(&moved);
    pp__queue_destroy(&out);
}


/* The timers' heap against a plain scan: random pushes (many equal due
 * times among them) and removals from anywhere; the top is always the
 * earliest, ties first in first out, and every node knows its index. */
#define HEAP_NODES 2000

static void test_theap_against_scan(void)
{
    pp__theap_t h;
    pp__theap_node_t *node = calloc(HEAP_NODES, sizeof(*node));
    char *in = calloc(HEAP_NODES, 1);
    apr_uint32_t i, k, seed = 7, count = 0, bad = 0, order = 0;

    memset(&h, 0, sizeof(h));
    for (k = 0; k < 20000; k++) {
        apr_uint32_t j, best = HEAP_NODES;
        seed = seed * 1103515245u + 12345u;
        i = (seed >> 8) % HEAP_NODES;
        if (!in[i]) {
            node[i].due = (seed >> 20) % 64;    /* ties on purpose */
            T_OK(pp__theap_push(&h, &node[i]));
            in[i] = 1;
            count++;
        }
        else if ((seed >> 4) & 1) {
            pp__theap_remove(&h, &node[i]);    /* from anywhere */
            in[i] = 0;
            count--;
        }
        else if (h.n > 0) {
            pp__theap_node_t *top = pp__theap_top(&h);
            for (j = 0; j < HEAP_NODES; j++)
                if (in[j] && (best == HEAP_NODES || node[j].due < node[best].due
                              || (node[j].due == node[best].due && node[j].seq < node[best].seq)))
                    best = j;
            order += top != &node[best];
            pp__theap_remove(&h, top);
            in[top - node] = 0;
            count--;
        }
        for (j = 0; j < h.n; j++)
            bad += h.v[j]->at != j;
        T_EQ_FATAL(h.n, count);
    }
    T_EQ(order, 0);
    T_EQ(bad, 0);
    pp__theap_destroy(&h);
    free(node);
    free(in);
}

void t_register_queue(void)
{
    CU_pSuite s = CU_add_suite("queue", NULL, NULL);

    CU_add_test(s, "FIFO across wrap and growth", test_queue_fifo_across_growth);
    CU_add_test(s, "room made in a wrapped ring keeps the order", test_queue_reserve_wrapped);
    CU_add_test(s, "timer heap: earliest first, ties in order, removal anywhere",
                test_theap_against_scan);
    CU_add_test(s, "take a group's entries, keep order", test_queue_take_group);
    CU_add_test(s, "failed growth keeps the contents", test_queue_grow_failure_keeps_contents);
    CU_add_test(s, "a burst's ring is freed when it empties", test_queue_shrinks_after_a_burst);
    CU_add_test(s, "priorities: HIGH, NORMAL, LOW, each in order", test_prioq_order);
    CU_add_test(s, "priorities: a waiting level is passed over at most PP_PRIO_PASS times",
                test_prioq_pass_bound);
    CU_add_test(s, "priorities: groups, moves, batches across the levels",
                test_prioq_group_move_unpush);
}
